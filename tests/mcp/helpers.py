"""Helpers for the MCP server tests: real server subprocesses driven by the SDK's own client."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import TextContent

from mcp import ClientSession, StdioServerParameters
from tests.helpers.signals import with_default_sigint

PY = sys.executable


def child_env(**extra: str) -> dict[str, str]:
    """This process's environment (PYTHONPATH included, so the worktree's code runs) plus ``extra``."""
    env = dict(os.environ)
    env.update(extra)
    return env


def serve_argv(home: Path, *extra: str, transport: str = "stdio") -> list[str]:
    return [PY, "-m", "hermes_memory", "--home", str(home), "serve", "--transport", transport, *extra]


@asynccontextmanager
async def stdio_session(home: Path, *extra: str) -> AsyncIterator[ClientSession]:
    """An initialised SDK client session with a fresh ``serve --transport stdio`` subprocess."""
    argv = serve_argv(home, *extra)
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=child_env())
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@asynccontextmanager
async def http_session(url: str, token: str | None = None) -> AsyncIterator[ClientSession]:
    """An initialised SDK client session over streamable HTTP (optionally with a bearer token)."""
    headers = {"Authorization": f"Bearer {token}"} if token else None
    client = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0))
    async with client, streamable_http_client(url, http_client=client) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def call(session: ClientSession, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """Call a tool and return its JSON result (the text content, parsed)."""
    result = await session.call_tool(name, args)
    assert result.content and result.content[0].type == "text", result
    return json.loads(result.content[0].text)


async def read_text(session: ClientSession, uri: str) -> str:
    result = await session.read_resource(uri)
    return result.contents[0].text  # type: ignore[union-attr]


class HttpServer:
    """``serve --transport http --port 0 --json`` in a subprocess; ``url`` is what it printed."""

    def __init__(self, home: Path, *extra: str, argv: list[str] | None = None, env: dict[str, str] | None = None,
                 json_output: bool = True) -> None:
        self.argv = argv or serve_argv(home, "--port", "0", *(["--json"] if json_output else []), *extra,
                                       transport="http")
        self.env = env or child_env()
        self.json_output = json_output
        self.proc: subprocess.Popen[str] | None = None
        self.stdout_text = ""
        self.info: dict[str, Any] = {}
        self.url = ""
        self._stderr_path = home.parent / f"serve-{os.getpid()}-{id(self)}.stderr"

    def __enter__(self) -> HttpServer:
        self._stderr = open(self._stderr_path, "w+")  # noqa: SIM115 - closed in __exit__
        self.proc = subprocess.Popen(with_default_sigint(self.argv), stdout=subprocess.PIPE, stderr=self._stderr, text=True,
                                     env=self.env)
        assert self.proc.stdout is not None
        lines: list[str] = []
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise AssertionError(f"server exited before it was ready (rc={self.proc.wait()}):\n"
                                     + "".join(lines) + self.stderr())
            lines.append(line)
            self.stdout_text = "".join(lines)
            if self.json_output:
                try:
                    self.info = json.loads(self.stdout_text)
                except ValueError:
                    continue
                self.url = self.info["url"]
                return self
            if line.startswith("Serving;"):
                for ln in lines:
                    if ln.startswith("URL:"):
                        self.url = ln.split(None, 1)[1].strip()
                return self

    def stderr(self) -> str:
        self._stderr.flush()
        return Path(self._stderr_path).read_text()

    def __exit__(self, *exc: object) -> None:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()
        self._stderr.close()


NOTES_PLUGIN = textwrap.dedent('''
    """A tiny user plugin: a `notes` tool over a JSON file, and a log of mirrored memory writes."""
    import json
    from pathlib import Path

    from hermes_memory.providers.base import MemoryProvider


    class NotesProvider(MemoryProvider):
        @property
        def name(self):
            return "notes"

        def is_available(self):
            return True

        def initialize(self, session_id, **kwargs):
            self.home = Path(kwargs["hermes_home"])
            self.platform = kwargs["platform"]

        def get_tool_schemas(self):
            return [{"name": "notes", "description": "Keep short notes.",
                     "parameters": {"type": "object",
                                    "properties": {"action": {"type": "string", "enum": ["add", "list"]},
                                                   "text": {"type": "string"}},
                                    "required": ["action"]}}]

        def _file(self):
            return self.home / "notes.json"

        def handle_tool_call(self, tool_name, args, **kwargs):
            notes = json.loads(self._file().read_text()) if self._file().exists() else []
            if args["action"] == "add":
                notes.append(args.get("text", ""))
                self._file().write_text(json.dumps(notes))
                return json.dumps({"success": True, "count": len(notes), "platform": self.platform})
            return json.dumps({"success": True, "notes": notes})

        def shutdown(self):
            with open(self.home / "shutdown.log", "a") as fh:
                fh.write("shutdown\\n")

        def on_memory_write(self, action, target, content, metadata=None):
            with open(self.home / "mirrored.jsonl", "a") as fh:
                fh.write(json.dumps([action, target, content]) + "\\n")
''')
"""A user plugin: a ``notes`` tool over notes.json, mirrored memory writes in mirrored.jsonl, shutdown.log."""


def install_notes_plugin(home: Path) -> None:
    """Install :data:`NOTES_PLUGIN` as the user plugin ``notes`` in ``home`` and select it as the provider."""
    folder = home / "plugins" / "notes"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(NOTES_PLUGIN, encoding="utf-8")
    (folder / "plugin.yaml").write_text("name: notes\ndescription: Test notes provider\n", encoding="utf-8")
    (home / "config.yaml").write_text("memory:\n  provider: notes\n", encoding="utf-8")


BAD_ARGUMENTS: list[tuple[dict[str, Any], str]] = [
    ({"action": "add", "target": "bogus", "content": "x"}, "target"),
    ({"action": "add", "content": "no target given"}, "target"),
    ({"action": "add", "target": "memory", "content": 42}, "content"),
    ({"action": "delete", "target": "memory", "old_text": "x"}, "action"),
    ({"action": "add", "target": "memory", "conten": "typo"}, "conten"),
    ({"target": "memory", "operations": [{"action": "add", "content": "ok"}, {"action": "drop"}]},
     "operations[1].action"),
    ({"target": "memory", "operations": "not a list"}, "operations"),
    ({"action": "add", "target": "user", "content": "x", "user_id": "../escape"}, "user_id"),
]


def memory_files(home: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in sorted((home / "memories").rglob("*")) if p.is_file()}


async def assert_refused_without_writing(session: ClientSession, home: Path) -> None:
    """Every BAD_ARGUMENTS call is an MCP -32602 error naming its field, and no file changes."""
    before = memory_files(home)
    for args, field in BAD_ARGUMENTS:
        with pytest.raises(MCPError) as info:
            await session.call_tool("memory", args)
        err = info.value.error
        assert err.code == -32602, (args, err)
        assert f"field '{field}'" in err.message, (args, err.message)
        assert field in err.data["fields"]
        assert memory_files(home) == before, args
    assert not (home / "memories" / "users").exists()


CLAUDE_CODE_TRANSCRIPT = [
    {"type": "summary", "summary": "Rotating staging credentials", "leafUuid": "a2"},
    {"type": "user", "sessionId": "0f6c1d2e-5b7a-4c3e-9d1f-2a8b7c6d5e4f", "uuid": "u1", "parentUuid": None,
     "timestamp": "2026-01-05T10:00:00.000Z", "cwd": "/home/dev/shop", "version": "2.0.14",
     "message": {"role": "user", "content": "How do I rotate the staging database credentials?"}},
    {"type": "assistant", "sessionId": "0f6c1d2e-5b7a-4c3e-9d1f-2a8b7c6d5e4f", "uuid": "a1", "parentUuid": "u1",
     "timestamp": "2026-01-05T10:00:05.000Z", "cwd": "/home/dev/shop",
     "message": {"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                 "content": [{"type": "text", "text": "Run scripts/rotate_creds.sh --env staging, then restart "
                              "the pgbouncer pool so it picks up the new password."}],
                 "usage": {"input_tokens": 120, "output_tokens": 40}}},
    {"type": "user", "sessionId": "0f6c1d2e-5b7a-4c3e-9d1f-2a8b7c6d5e4f", "uuid": "u2", "parentUuid": "a1",
     "timestamp": "2026-01-05T10:01:00.000Z", "cwd": "/home/dev/shop",
     "message": {"role": "user", "content": [{"type": "text", "text": "Thanks, the pgbouncer restart fixed it."}]}},
]


def import_claude_code_transcript(home: Path) -> Path:
    """Write a small Claude Code JSONL transcript and import it with `sessions import` (in-process CLI)."""
    from typer.testing import CliRunner

    from hermes_memory.cli.main import app

    path = home.parent / "transcript.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in CLAUDE_CODE_TRANSCRIPT), encoding="utf-8")
    result = CliRunner().invoke(app, ["--home", str(home), "sessions", "import", str(path),
                                      "--format", "claude_code"])
    assert result.exit_code == 0, result.output
    return path


@contextmanager
def serving_in_thread(server: Any) -> Iterator[str]:
    """Serve ``server`` (a :class:`~hermes_memory.mcp.server.MemoryServer`) over streamable HTTP on
    127.0.0.1 from a thread of this process, so a test can look at its state; yields the MCP URL."""
    import asyncio
    import threading
    import time

    from hermes_memory.httpguard import bind_socket
    from hermes_memory.mcp.server import HTTP_PATH

    sock = bind_socket("127.0.0.1", 0)
    http = server.http_server(host="127.0.0.1", token=None)
    thread = threading.Thread(target=lambda: asyncio.run(http.serve(sockets=[sock])), daemon=True)
    thread.start()
    deadline = time.monotonic() + 60  # a hang detector, not a speed requirement
    while not http.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the HTTP server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}{HTTP_PATH}"
    finally:
        http.should_exit = True
        thread.join(30)
        sock.close()


def text_of(block: object) -> str:
    """The text of one MCP content block (a tool result's ``content[i]`` or a prompt message's
    ``content``), failing the test when the server sent another kind of block (image, audio,
    resource): every tool and prompt of ours answers in text."""
    assert isinstance(block, TextContent), f"expected a text content block, got {block!r}"
    return block.text
