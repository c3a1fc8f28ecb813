"""Gemini CLI through the same hook code path: SessionStart and BeforeAgent inject context in its
protocol, AfterAgent records the turn, SessionEnd ends the session (payloads as its hooks
reference documents them: base fields plus ``source``, ``prompt``, ``prompt_response``, ``reason``)."""

from __future__ import annotations

import json
from pathlib import Path

from hermes_memory.providers.fencing import CONTEXT_NOTE
from hermes_memory.sessions.db import SessionDB
from tests.helpers.values import present
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
        row = present(db.get_session("gemini-g1"))
        assert row["source"] == "gemini_cli" and row["cwd"] == "/home/dev/proj"
        assert row["end_reason"] == "gemini-cli:exit"
        assert [m["role"] for m in db.get_messages("gemini-g1")] == ["user", "assistant"]
    r = run_hook("BeforeAgent", {**_base("BeforeAgent", "g2"), "prompt": "when does the release train leave?"},
                 client="gemini-cli", budget=20)
    doc = json.loads(r.stdout)
    ctx = doc["hookSpecificOutput"]["additionalContext"]
    assert doc["hookSpecificOutput"]["hookEventName"] == "BeforeAgent"
    assert CONTEXT_NOTE in ctx and "Thursdays" in ctx


def test_real_gemini_cli_request_carries_snapshot_and_recall_and_turns_are_recorded(
        tmp_path: Path, hermes_home: Path) -> None:
    import os
    import subprocess

    from tests.hooks.fake_gemini import FakeGeminiServer
    from tests.hooks.npm_cli import ensure_gemini

    exe = ensure_gemini()
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    # the user's own settings: API-key auth, no usage statistics, hooks on
    (home / ".gemini" / "settings.json").write_text(json.dumps({
        "hooksConfig": {"enabled": True}, "privacy": {"usageStatisticsEnabled": False},
        "security": {"auth": {"selectedType": "gemini-api-key"}}}, indent=2))
    project = tmp_path / "proj"
    project.mkdir()
    env = {**os.environ, "HOME": str(home), "HERMES_HOME": str(hermes_home), "GEMINI_API_KEY": "local-test-key",
           "GEMINI_CLI_TRUST_WORKSPACE": "true"}
    assert cli("memory", "add", "--target", "user", "The user's dog is called Biscuit.", env=env).returncode == 0
    assert cli("hooks", "install", "gemini-cli", "--recall-budget", "10", env=env).returncode == 0
    with FakeGeminiServer(default="Noted.") as server:
        env["GOOGLE_GEMINI_BASE_URL"] = server.url
        for prompt in ("Remember: our staging cluster is named quokka-seven.", "What is our staging cluster named?"):
            r = subprocess.run([exe, "-p", prompt], env=env, cwd=project, capture_output=True, text=True, timeout=300)
            assert r.returncode == 0, r.stderr[-2000:]
        bodies = [json.dumps(q.body) for q in server.requests]
    assert any("The user's dog is called Biscuit." in b for b in bodies)
    # Gemini CLI HTML-escapes hook context (&lt;memory-context&gt;); the note and the recall get through
    assert any("recalled memory context, NOT new user input" in b and "quokka-seven" in b for b in bodies)
    with SessionDB(hermes_home / "state.db") as db:
        sessions = db.list_sessions(source="gemini_cli")
        assert len(sessions) == 2 and all(s["ended_at"] and s["cwd"] == str(project) for s in sessions)
        firsts = {db.get_messages(s["id"])[0]["content"] for s in sessions}
    # the prompt as the user typed it: the snapshot the CLI prefixed to it is not recorded
    assert firsts == {"Remember: our staging cluster is named quokka-seven.", "What is our staging cluster named?"}


def test_real_gemini_cli_runs_our_hooks_from_a_settings_file_with_comments(tmp_path: Path, hermes_home: Path) -> None:
    """Gemini CLI reads settings with comments; after install it still reads the file (our entries
    included: the snapshot reaches the model) and every comment of the user's is still there."""
    import os
    import subprocess

    from hermes_memory.hooks.jsonedit import comment_spans
    from tests.hooks.fake_gemini import FakeGeminiServer
    from tests.hooks.npm_cli import ensure_gemini

    exe = ensure_gemini()
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    settings = home / ".gemini" / "settings.json"
    text = ('// my Gemini CLI settings\n{\n  /* hooks must be on for hermes-memory */\n'
            '  "hooksConfig": {"enabled": true}, // since 0.2x\n'
            '  "privacy": {"usageStatisticsEnabled": false},\n'
            '  "security": {"auth": {"selectedType": "gemini-api-key"}} // API key from the env\n}\n')
    settings.write_text(text)
    project = tmp_path / "proj"
    project.mkdir()
    env = {**os.environ, "HOME": str(home), "HERMES_HOME": str(hermes_home), "GEMINI_API_KEY": "local-test-key",
           "GEMINI_CLI_TRUST_WORKSPACE": "true"}
    assert cli("memory", "add", "--target", "user", "The user's dog is called Biscuit.", env=env).returncode == 0
    r = cli("hooks", "install", "gemini-cli", env=env)
    assert r.returncode == 0, r.stderr
    edited = settings.read_text()
    assert [edited[s:e] for s, e in comment_spans(edited)] == [text[s:e] for s, e in comment_spans(text)]
    with FakeGeminiServer(default="Noted.") as server:
        env["GOOGLE_GEMINI_BASE_URL"] = server.url
        r = subprocess.run([exe, "-p", "What is my dog called?"], env=env, cwd=project, capture_output=True,
                           text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
        bodies = [json.dumps(q.body) for q in server.requests]
    assert any("The user's dog is called Biscuit." in b for b in bodies)
    assert cli("hooks", "uninstall", "gemini-cli", env=env).returncode == 0
    assert settings.read_text() == text
