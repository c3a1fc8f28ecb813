"""The memory server over stdio, driven by the official SDK client against a real subprocess."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from hermes_memory.agent.prompt import MEMORY_GUIDANCE, SESSION_SEARCH_GUIDANCE
from hermes_memory.mcp.server import URI_MEMORY_MD, URI_SNAPSHOT, URI_USER_MD
from hermes_memory.memory import MEMORY_TOOL_SCHEMA, MemoryStore, memory_tool
from tests.helpers.signals import with_default_sigint
from tests.helpers.values import present
from tests.mcp.helpers import (
    assert_refused_without_writing,
    call,
    child_env,
    import_claude_code_transcript,
    install_notes_plugin,
    read_text,
    serve_argv,
    stdio_session,
    text_of,
)


def _write_config(home: Path, text: str) -> None:
    (home / "config.yaml").write_text(text, encoding="utf-8")


def test_stdio_lists_tools_resources_and_the_guidance_prompt(hermes_home: Path) -> None:
    async def main() -> None:
        async with stdio_session(hermes_home) as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert {"memory", "session_search"} <= set(tools)
            # Same schema as the agent's memory tool, plus the optional per-user profile field and
            # the MCP-only `read` action (for which `target` is optional).
            schema = dict(tools["memory"].input_schema)
            props = dict(schema["properties"])
            agent = MEMORY_TOOL_SCHEMA["parameters"]["properties"]
            assert props.pop("user_id")["type"] == "string"
            assert props.pop("action")["enum"] == [*agent["action"]["enum"], "read"]
            assert props.pop("target")["enum"] == agent["target"]["enum"]
            assert props == {k: v for k, v in agent.items() if k not in ("action", "target")}
            assert schema["required"] == [r for r in MEMORY_TOOL_SCHEMA["parameters"]["required"] if r != "target"]
            assert present(tools["memory"].description, "the memory tool's description").startswith(MEMORY_TOOL_SCHEMA["description"])

            uris = {str(r.uri) for r in (await s.list_resources()).resources}
            assert uris == {URI_SNAPSHOT, URI_MEMORY_MD, URI_USER_MD}

            prompts = [p.name for p in (await s.list_prompts()).prompts]
            assert prompts == ["memory_guidance"]
            prompt = text_of((await s.get_prompt("memory_guidance")).messages[0].content)
            assert MEMORY_GUIDANCE in prompt and SESSION_SEARCH_GUIDANCE in prompt  # the agent's own texts

    anyio.run(main)


def test_stdio_add_replace_remove_match_the_agents_memory_tool(hermes_home: Path, tmp_path: Path) -> None:
    """Every result is the memory_tool JSON: the same calls on a twin home give identical JSON and files."""
    calls: list[dict[str, Any]] = [
        {"action": "add", "target": "memory", "content": "Project uses Python 3.11"},
        {"action": "add", "target": "user", "content": "Prefers short answers"},
        {"action": "add", "target": "memory", "content": "Project uses Python 3.11"},  # duplicate: success, no write
        {"action": "replace", "target": "memory", "old_text": "3.11", "content": "Project uses Python 3.12"},
        {"action": "remove", "target": "memory", "old_text": "nothing like this"},
        {"action": "add", "target": "memory", "content": "Deploys with make release"},
        {"action": "remove", "target": "memory", "old_text": "make release"},
        {"target": "memory", "operations": [{"action": "add", "content": "CI runs on push"},
                                            {"action": "add", "content": "Tests use pytest"}]},
    ]

    async def main() -> list[dict]:
        async with stdio_session(hermes_home) as s:
            return [await call(s, "memory", c) for c in calls]

    via_mcp = anyio.run(main)

    twin = tmp_path / "twin"
    store = MemoryStore(twin / "memories")
    store.load_from_disk()
    direct = [json.loads(memory_tool(store=store, **c)) for c in calls]
    assert via_mcp == direct
    assert [r["success"] for r in via_mcp] == [True, True, True, True, False, True, True, True]
    for name in ("MEMORY.md", "USER.md"):
        assert (hermes_home / "memories" / name).read_bytes() == (twin / "memories" / name).read_bytes()
    assert MemoryStore(hermes_home / "memories").memory_entries == [
        "Project uses Python 3.12", "CI runs on push", "Tests use pytest"]


def test_stdio_snapshot_is_frozen_for_the_session_and_files_are_live(hermes_home: Path) -> None:
    seed = MemoryStore(hermes_home / "memories")
    seed.add("memory", "Seeded before the session")

    async def first() -> tuple[str, str, str]:
        async with stdio_session(hermes_home) as s:
            before = await read_text(s, URI_SNAPSHOT)
            result = await call(s, "memory", {"action": "add", "target": "memory", "content": "Written mid-session"})
            assert result["success"] is True
            after = await read_text(s, URI_SNAPSHOT)
            live = await read_text(s, URI_MEMORY_MD)
            prompt = text_of((await s.get_prompt("memory_guidance")).messages[0].content)
            assert "Seeded before the session" in prompt and "Written mid-session" not in prompt
            return before, after, live

    before, after, live = anyio.run(first)
    assert "Seeded before the session" in before and "MEMORY (your personal notes)" in before
    assert after == before  # frozen: the write is not in this session's snapshot
    assert "Written mid-session" in live and "Seeded before the session" in live

    async def second() -> str:
        async with stdio_session(hermes_home) as s:
            return await read_text(s, URI_SNAPSHOT)

    assert "Written mid-session" in anyio.run(second)  # the next session's snapshot has it


def test_bad_arguments_and_unknown_tools_get_an_mcp_error_naming_the_field_and_write_nothing(hermes_home: Path) -> None:
    seed = MemoryStore(hermes_home / "memories")
    seed.add("memory", "Existing entry")
    seed.add("user", "Existing profile entry")

    async def main() -> None:
        async with stdio_session(hermes_home) as s:
            await assert_refused_without_writing(s, hermes_home)
            with pytest.raises(MCPError) as info:
                await s.call_tool("no_such_tool", {})
            assert info.value.error.code == -32602 and "no_such_tool" in info.value.error.message
            # The session is still usable afterwards.
            assert (await call(s, "memory", {"action": "add", "target": "memory", "content": "ok"}))["success"]

    anyio.run(main)
    assert MemoryStore(hermes_home / "memories").memory_entries == ["Existing entry", "ok"]


def test_per_user_profiles_by_argument_and_by_server_flag(hermes_home: Path) -> None:
    async def by_argument() -> None:
        async with stdio_session(hermes_home) as s:
            r = await call(s, "memory", {"action": "add", "target": "user", "content": "Alice likes tea",
                                         "user_id": "alice"})
            assert r["success"] is True
            r = await call(s, "memory", {"action": "add", "target": "user", "content": "Default user likes coffee"})
            assert r["success"] is True

    anyio.run(by_argument)
    assert "Alice likes tea" in (hermes_home / "memories" / "users" / "alice" / "USER.md").read_text()
    assert "Alice" not in (hermes_home / "memories" / "USER.md").read_text()

    async def fixed_user() -> None:
        async with stdio_session(hermes_home, "--user-id", "alice") as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert "user_id" not in tools["memory"].input_schema["properties"]
            assert "Alice likes tea" in await read_text(s, URI_USER_MD)
            assert "Alice likes tea" in await read_text(s, URI_SNAPSHOT)
            with pytest.raises(MCPError) as info:
                await s.call_tool("memory", {"action": "add", "target": "user", "content": "x", "user_id": "bob"})
            assert "field 'user_id'" in info.value.error.message

    anyio.run(fixed_user)
    assert not (hermes_home / "memories" / "users" / "bob").exists()


def test_disabled_user_profile_removes_the_user_target(hermes_home: Path) -> None:
    _write_config(hermes_home, "memory:\n  user_profile_enabled: false\n")

    async def main() -> MCPError:
        async with stdio_session(hermes_home) as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert tools["memory"].input_schema["properties"]["target"]["enum"] == ["memory"]
            with pytest.raises(MCPError) as info:
                await s.call_tool("memory", {"action": "add", "target": "user", "content": "x"})
            return info.value

    assert "field 'target'" in anyio.run(main).error.message
    assert not (hermes_home / "memories" / "USER.md").exists()


def test_stdio_stdout_carries_only_protocol_messages(hermes_home: Path) -> None:
    """Drive the server by hand: every line it writes to stdout is a JSON-RPC message."""
    requests: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "raw-test", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "memory", "arguments": {"action": "add", "target": "memory", "content": "raw line"}}},
        {"jsonrpc": "2.0", "id": 4, "method": "resources/read", "params": {"uri": URI_SNAPSHOT}},
    ]
    proc = subprocess.Popen(serve_argv(hermes_home), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=child_env())
    assert proc.stdin is not None and proc.stdout is not None
    messages = []
    for request in requests:
        proc.stdin.write(json.dumps(request) + "\n")
        proc.stdin.flush()
        while "id" in request:  # wait for this request's answer; every line must be JSON-RPC
            line = proc.stdout.readline()
            assert line, proc.stderr.read() if proc.stderr else ""
            message = json.loads(line)
            messages.append(message)
            if message.get("id") == request["id"]:
                break
    proc.stdin.close()
    rest = proc.stdout.read()
    stderr = proc.stderr.read() if proc.stderr else ""
    assert proc.wait(timeout=60) == 0, stderr
    assert rest.strip() == ""
    assert all(m.get("jsonrpc") == "2.0" for m in messages)
    by_id = {m["id"]: m for m in messages if "id" in m}
    assert set(by_id) == {1, 2, 3, 4}
    assert by_id[1]["result"]["serverInfo"]["name"] == "hermes-memory"
    assert json.loads(by_id[3]["result"]["content"][0]["text"])["success"] is True
    assert "MEMORY" not in by_id[4]["result"]["contents"][0]["text"]  # snapshot was empty at start


def test_session_search_finds_sessions_imported_from_a_transcript(hermes_home: Path) -> None:
    import_claude_code_transcript(hermes_home)

    async def main() -> None:
        async with stdio_session(hermes_home) as s:
            found = await call(s, "session_search", {"query": "rotate staging credentials"})
            assert found["success"] is True and found["mode"] == "discovery"
            assert found["count"] >= 1
            top = found["results"][0]
            assert "rotate" in json.dumps(top["hits"]).lower()
            read = await call(s, "session_search", {"session_id": top["session_id"]})
            assert "pgbouncer" in json.dumps(read["messages"])
            browse = await call(s, "session_search", {})
            assert browse["mode"] == "browse" and browse["count"] == 1
            with pytest.raises(MCPError) as info:
                await s.call_tool("session_search", {"query": "x", "limit": "three"})
            assert "field 'limit'" in info.value.error.message

    anyio.run(main)


def test_session_search_echoes_the_searched_part_of_a_long_query_not_the_whole_query(hermes_home: Path) -> None:
    """Only the first 2,048 characters of a query are searched, yet a 2.1 MB query came back whole in
    a 4.2 MB answer. The answer echoes the 2,048 searched characters and says the query was cut and
    how long it was (structured content checked against the tool's output schema by the client)."""
    import_claude_code_transcript(hermes_home)
    query = "rotate staging credentials " + "x" * 200_000

    async def main() -> None:
        async with stdio_session(hermes_home) as s:
            result = await s.call_tool("session_search", {"query": query})
            found = json.loads(text_of(result.content[0]))
            assert found["success"] is True and found["count"] >= 1
            assert found["query"] == query[:2048]
            assert found["query_truncated"] is True and found["query_chars"] == len(query)
            assert len(json.dumps(found)) < 100_000
            assert result.structured_content == found
            short = await call(s, "session_search", {"query": "rotate staging credentials"})
            assert short["query"] == "rotate staging credentials" and "query_truncated" not in short

    anyio.run(main)


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}


@pytest.mark.parametrize(("signame", "code"), [("SIGTERM", 0), ("SIGINT", 130)])
def test_stdio_server_exits_on_a_signal_while_its_client_keeps_stdin_open(
        hermes_home: Path, signame: str, code: int) -> None:
    """MCP clients stop a stdio server with SIGTERM when closing stdin is not enough; the SDK's stdin
    reader thread is blocked in read() and used to keep the process alive forever after the signal."""
    install_notes_plugin(hermes_home)
    proc = subprocess.Popen(with_default_sigint(serve_argv(hermes_home)), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=child_env(), text=True)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(INIT) + "\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["result"]["serverInfo"]["name"] == "hermes-memory"
        proc.send_signal(getattr(signal, signame))
        try:
            rc = proc.wait(timeout=60)  # a hang detector, not a speed requirement
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            pytest.fail(f"stdio server still running 60 s after {signame} (stdin still open)")
        assert rc == code, proc.stderr.read() if proc.stderr else ""
        assert proc.stdout.read() == ""  # nothing but protocol on stdout
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream:
                stream.close()
    assert (hermes_home / "shutdown.log").read_text() == "shutdown\n"  # the provider was shut down
