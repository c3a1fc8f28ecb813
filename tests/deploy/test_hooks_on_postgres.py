"""The Claude Code hooks on a home configured for PostgreSQL: the session start carries the memory
held in the database, a finished turn is recorded there and recalled by the next session, and the
home gets no state.db and no memory files."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import yaml

from hermes_memory.memory.pg import PgMemoryStore
from tests.helpers.values import present
from tests.hooks.helpers import Transcript, run_hook


def _payload(event: str, sid: str, **extra: object) -> dict:
    return {"session_id": sid, "hook_event_name": event, "cwd": "/home/dev/proj", "permission_mode": "default",
            **extra}


def test_hooks_record_and_recall_through_postgres(tmp_path: Path, hermes_home: Path, pg_url: str) -> None:
    (hermes_home / "config.yaml").write_text(yaml.safe_dump({"storage": {"backend": "postgres", "url": pg_url}}))
    assert PgMemoryStore(pg_url).add("memory", "Builds run with make ci, never plain pytest.")["success"]
    # The schema exists before the first hook, as after `storage migrate`: a hook that has to create it
    # on a loaded machine may run out of its time budget and (by design) answer nothing.
    from hermes_memory.sessions.pg import PgSessionDB

    PgSessionDB(pg_url).close()
    r = run_hook("SessionStart", _payload("SessionStart", "s-1", source="startup", model="claude-sonnet-4-5"),
                 budget=20)
    assert r.returncode == 0 and r.stdout, r.stderr
    ctx = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Builds run with make ci" in ctx
    t = Transcript(tmp_path / "projects" / "p" / "s-1.jsonl", "s-1")
    t.turn("We deploy the zebrafish service to the cluster named quokka-seven.", "Noted, quokka-seven.")
    r = run_hook("Stop", _payload("Stop", "s-1", transcript_path=str(t.path), stop_hook_active=False))
    assert r.returncode == 0 and r.stdout == "", r.stderr
    with psycopg.connect(pg_url) as conn:
        row = conn.execute("SELECT source, system_prompt FROM sessions WHERE id = 'cc-s-1'").fetchone()
        n = present(conn.execute("SELECT count(*) FROM messages WHERE session_id = 'cc-s-1'").fetchone())[0]
    assert row is not None and row[0] == "claude_code" and row[1] == ctx and n == 2
    prompt = "which cluster do we deploy the zebrafish service to?"
    r = run_hook("UserPromptSubmit", _payload("UserPromptSubmit", "s-2", prompt=prompt), budget=20)
    assert r.returncode == 0, r.stderr
    assert "quokka-seven" in json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    assert not (hermes_home / "state.db").exists() and not list((hermes_home / "memories").rglob("*.md"))
