"""Helpers for the hook tests: realistic Claude Code transcripts, hook subprocesses, test plugins.

Transcript records follow what Claude Code writes to ``~/.claude/projects/<project>/<session>.jsonl``:
``type``, ``uuid``, ``parentUuid``, ``sessionId``, ``cwd``, ``gitBranch``, ``version``,
``timestamp`` and a ``message``; an assistant API message is written as one record per content
block, each repeating ``message.id`` and ``usage``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

PY = sys.executable


class Transcript:
    """Append Claude Code records to a ``.jsonl`` file, as the CLI does while a session runs."""

    def __init__(self, path: Path, session_id: str, *, cwd: str = "/home/dev/proj", branch: str = "main") -> None:
        self.path = path
        self.session_id = session_id
        self.cwd = cwd
        self.branch = branch
        self.parent: str | None = None
        self.n = 0
        path.parent.mkdir(parents=True, exist_ok=True)

    def _rec(self, kind: str, message: dict[str, Any]) -> dict[str, Any]:
        self.n += 1
        rid = str(uuid.uuid4())
        rec = {"parentUuid": self.parent, "isSidechain": False, "userType": "external", "cwd": self.cwd,
               "sessionId": self.session_id, "version": "2.1.328", "gitBranch": self.branch, "type": kind,
               "message": message, "uuid": rid,
               "timestamp": f"2026-11-02T10:{self.n // 60 % 60:02d}:{self.n % 60:02d}.000Z"}
        self.parent = rid
        return rec

    def write(self, *records: dict[str, Any], partial: str = "") -> None:
        with open(self.path, "a", encoding="utf-8") as fh:
            for r in records:
                fh.write(json.dumps(r) + "\n")
            fh.write(partial)

    def user(self, text: str) -> dict[str, Any]:
        return self._rec("user", {"role": "user", "content": text})

    def assistant_text(self, text: str, mid: str | None = None, out_tokens: int = 7) -> dict[str, Any]:
        return self._rec("assistant", {
            "id": mid or f"msg_{uuid.uuid4().hex[:12]}", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 11, "cache_creation_input_tokens": 5, "cache_read_input_tokens": 3,
                      "output_tokens": out_tokens}})

    def tool_use(self, tool_id: str, name: str, args: dict[str, Any], mid: str | None = None) -> dict[str, Any]:
        return self._rec("assistant", {
            "id": mid or f"msg_{uuid.uuid4().hex[:12]}", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": args}],
            "stop_reason": "tool_use", "stop_sequence": None,
            "usage": {"input_tokens": 11, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 3,
                      "output_tokens": 4}})

    def tool_result(self, tool_id: str, text: str) -> dict[str, Any]:
        return self._rec("user", {"role": "user", "content": [
            {"tool_use_id": tool_id, "type": "tool_result", "content": text}]})

    def turn(self, user: str, answer: str) -> None:
        self.write(self.user(user), self.assistant_text(answer))


def run_hook(event: str, payload: dict[str, Any], *, env: dict[str, str] | None = None, client: str = "claude-code",
             budget: float | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run ``python -m hermes_memory hooks run EVENT`` as a client would, payload on stdin."""
    cmd = [PY, "-m", "hermes_memory", "hooks", "run", event, "--client", client]
    if budget is not None:
        cmd += ["--budget", str(budget)]
    return subprocess.run(cmd, input=json.dumps(payload), capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=timeout)


def cli(*args: str, env: dict[str, str] | None = None, cwd: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the ``hermes-memory`` CLI in a subprocess."""
    return subprocess.run([PY, "-m", "hermes_memory", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, cwd=cwd, timeout=120)


NOISY_PLUGIN = '''
"""A provider that prints to stdout everywhere it can, and can be slow or point at a dead server."""
import os
import socket
import sys
import time
import warnings

from hermes_memory.providers.base import MemoryProvider

print("NOISY BANNER at import")
warnings.warn("noisy plugin deprecation warning", DeprecationWarning)


class NoisyProvider(MemoryProvider):
    @property
    def name(self):
        return "noisy"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        print("NOISY BANNER in initialize")
        sys.stdout.flush()
        os.write(1, b"NOISY raw fd write\\n")

    def get_tool_schemas(self):
        return []

    def system_prompt_block(self):
        print("NOISY BANNER in system_prompt_block")
        return "## Noisy provider\\nnoisy-provider-block-marker"

    def prefetch(self, query, *, session_id=""):
        print("NOISY BANNER in prefetch")
        mode = os.environ.get("NOISY_MODE", "")
        if mode == "sleep":
            time.sleep(60)
        if mode == "block":  # stuck until the test releases it (NOISY_RELEASE appears): no clock involved
            with open(os.environ["NOISY_STARTED"], "w", encoding="utf-8") as fh:
                fh.write("prefetch started")
            while not os.path.exists(os.environ["NOISY_RELEASE"]):
                time.sleep(0.05)
            with open(os.environ["NOISY_STARTED"], "a", encoding="utf-8") as fh:
                fh.write(" and finished")
        if mode == "dead":
            socket.create_connection(("127.0.0.1", 1), timeout=2)
        return "noisy-recall-marker about " + query[:40]

    def sync_turn(self, user_content, assistant_content, *, session_id=""):
        path = os.environ.get("NOISY_SYNC_FILE")
        if path:
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(f"{session_id}|{user_content}|{assistant_content}\\n")
'''


def install_noisy_plugin(home: Path) -> None:
    """Put the noisy provider in ``home/plugins/noisy`` and select it in ``config.yaml``."""
    folder = home / "plugins" / "noisy"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "__init__.py").write_text(NOISY_PLUGIN, encoding="utf-8")
    (home / "config.yaml").write_text("memory:\n  provider: noisy\n", encoding="utf-8")
