"""Gemini CLI through the same hook code path: SessionStart and BeforeAgent inject context in its
protocol, AfterAgent records the turn, SessionEnd ends the session (payloads as its hooks
reference documents them: base fields plus ``source``, ``prompt``, ``prompt_response``, ``reason``)."""

from __future__ import annotations

import json
from pathlib import Path

from hermes_memory.providers.fencing import CONTEXT_NOTE
from hermes_memory.sessions.db import SessionDB
from tests.hooks.helpers import cli, run_hook


def _base(event: str, sid: str) -> dict:
    return {"session_id": sid, "transcript_path": f"/home/dev/.gemini/tmp/abc/chats/session-{sid}.json",
            "cwd": "/home/dev/proj", "hook_event_name": event, "timestamp": "2026-11-02T10:00:00.000Z"}


def test_gemini_cli_session_records_turns_and_recalls_them_in_the_next_session(hermes_home: Path) -> None:
    assert cli("memory", "add", "--target", "user", "The user's dog is called Biscuit.").returncode == 0
    r = run_hook("SessionStart", {**_base("SessionStart", "g1"), "source": "startup"}, client="gemini-cli")
    doc = json.loads(r.stdout)
    assert doc["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "Biscuit" in doc["hookSpecificOutput"]["additionalContext"]
    assert "Gemini CLI hooks" in doc["hookSpecificOutput"]["additionalContext"]
    r = run_hook("AfterAgent", {**_base("AfterAgent", "g1"), "prompt": "Our release train leaves on Thursdays.",
                                "prompt_response": "Got it: releases on Thursdays.", "stop_hook_active": False},
                 client="gemini-cli")
    assert r.returncode == 0 and r.stdout == ""
    r = run_hook("SessionEnd", {**_base("SessionEnd", "g1"), "reason": "exit"}, client="gemini-cli")
    assert r.returncode == 0 and r.stdout == ""
    with SessionDB(hermes_home / "state.db") as db:
        row = db.get_session("gemini-g1")
        assert row["source"] == "gemini_cli" and row["cwd"] == "/home/dev/proj"
        assert row["end_reason"] == "gemini-cli:exit"
        assert [m["role"] for m in db.get_messages("gemini-g1")] == ["user", "assistant"]
    r = run_hook("BeforeAgent", {**_base("BeforeAgent", "g2"), "prompt": "when does the release train leave?"},
                 client="gemini-cli", budget=20)
    doc = json.loads(r.stdout)
    ctx = doc["hookSpecificOutput"]["additionalContext"]
    assert doc["hookSpecificOutput"]["hookEventName"] == "BeforeAgent"
    assert CONTEXT_NOTE in ctx and "Thursdays" in ctx
