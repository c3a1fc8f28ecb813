"""Requests a stdio client sends without waiting for the answers: all run in order and all are answered."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.helpers import child_env, serve_argv

INIT = {"jsonrpc": "2.0", "id": "init", "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
WAIT_S = 120  # a hang detector, not a speed requirement


def _memory_call(id_: int, **arguments: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call",
            "params": {"name": "memory", "arguments": {"target": "memory", **arguments}}}


def _pipe(home: Path, messages: list[dict[str, Any]]) -> tuple[int, dict[Any, dict[str, Any]]]:
    """Start ``serve``, write initialize, initialized and ``messages`` at once, close stdin at once
    (as ``printf ... | hermes-memory serve`` does); return the exit status and the answers by id."""
    lines = "".join(json.dumps(m) + "\n" for m in [INIT, INITIALIZED, *messages])
    done = subprocess.run(serve_argv(home), input=lines, capture_output=True, text=True, encoding="utf-8",
                          env=child_env(), timeout=WAIT_S)
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return done.returncode, {a["id"]: a for a in answers}


def _result(answer: dict[str, Any]) -> dict[str, Any]:
    assert "result" in answer, answer
    return json.loads(answer["result"]["content"][0]["text"])


def _entries(home: Path) -> list[str]:
    text = (home / "memories" / "MEMORY.md").read_text(encoding="utf-8")
    return [e.strip() for e in text.split("\n§\n") if e.strip()]


def test_requests_read_before_stdin_closed_are_all_answered_before_the_server_exits(hermes_home: Path) -> None:
    """The SDK cancelled the requests still running when stdin closed: five adds were written to
    MEMORY.md but only initialize was answered. Every add is answered, then the server exits 0."""
    adds = [_memory_call(i, action="add", content=f"closing entry {i}") for i in range(5)]
    rc, answers = _pipe(hermes_home, adds)
    assert rc == 0
    assert sorted(a for a in answers if a != "init") == list(range(5)), answers
    assert all(_result(answers[i])["success"] is True for i in range(5)), answers
    assert sorted(_entries(hermes_home)) == [f"closing entry {i}" for i in range(5)]


def test_pipelined_add_replace_pairs_run_in_the_order_sent(hermes_home: Path) -> None:
    """The SDK runs each request as its own task, so a pipelined replace could run before its add
    (and fail) and adds landed out of order. 20 add -> replace pairs, sent at once in each of 5
    server runs: every replace succeeds and MEMORY.md holds the entries in the order sent."""
    (hermes_home / "config.yaml").write_text("memory:\n  memory_char_limit: 100000\n", encoding="utf-8")
    expected: list[str] = []
    for run in range(5):
        calls = []
        for i in range(20):
            name = f"run {run} entry {i:02d}"
            calls.append(_memory_call(2 * i, action="add", content=f"{name} added"))
            calls.append(_memory_call(2 * i + 1, action="replace", old_text=f"{name} added",
                                      content=f"{name} replaced"))
            expected.append(f"{name} replaced")
        rc, answers = _pipe(hermes_home, calls)
        assert rc == 0
        failed = {i: _result(answers[i]) for i in range(40) if _result(answers[i]).get("success") is not True}
        assert not failed, (run, failed)
        assert _entries(hermes_home) == expected, run


#: Runs ``serve`` with the end-of-input grace raised to an hour, so a request the server wrongly
#: waits for shows as a hang (the subprocess timeout) rather than as a 30 s delay.
_PATIENT_SERVE = ("import sys; import hermes_memory.mcp.stdio_lines as lines; lines.EOF_GRACE_S = 3600.0; "
                  "from hermes_memory.cli.main import main; sys.argv[0] = 'hermes-memory'; main()")


@pytest.mark.slow
def test_a_cancel_naming_the_request_id_as_a_string_ends_the_wait_at_end_of_input(hermes_home: Path) -> None:
    """The SDK correlates the id "1" with the request id 1 and cancels that request (no answer); the
    end-of-input wait counted ids as sent, so it went on waiting for an answer to 1 for the whole
    grace. The add is held in flight by another process holding MEMORY.md's lock."""
    from hermes_memory.memory.lock import SidecarLock

    (hermes_home / "memories").mkdir(exist_ok=True)
    lock = SidecarLock(hermes_home / "memories" / "MEMORY.md.lock")
    lock.acquire(5)
    try:
        lines = "".join(json.dumps(m) + "\n" for m in [
            INIT, INITIALIZED, _memory_call(1, action="add", content="held by the lock"),
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "1", "reason": "user"}}])
        argv = [serve_argv(hermes_home)[0], "-c", _PATIENT_SERVE, "--home", str(hermes_home), "serve",
                "--transport", "stdio"]
        done = subprocess.run(argv, input=lines, capture_output=True, text=True, encoding="utf-8",
                              env=child_env(), timeout=WAIT_S)
    finally:
        lock.release()
    answers = {a["id"]: a for a in (json.loads(line) for line in done.stdout.splitlines() if line.strip())}
    assert done.returncode == 0, done.stderr
    assert set(answers) == {"init"}, answers  # the cancelled add is not answered, as the SDK does
