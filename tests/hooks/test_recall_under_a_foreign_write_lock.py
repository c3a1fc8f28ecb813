"""The UserPromptSubmit hook's recall finds an earlier session while a second process holds a long
write transaction on state.db (``BEGIN IMMEDIATE`` / ``EXCLUSIVE``, as the Hermes Agent's own
writes or an import do), and leaves the file byte-identical. Before, the hook's open of the store
synced its index in a write transaction, so recall ran out of its budget and injected nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_memory.sessions.db import SessionDB
from tests.helpers.foreign_lock import file_bytes, foreign_write_lock
from tests.hooks.helpers import run_hook


@pytest.mark.parametrize("mode", ["IMMEDIATE", "EXCLUSIVE"])
def test_recall_finds_an_earlier_session_while_another_process_holds_a_write_transaction(
        hermes_home: Path, mode: str) -> None:
    db_path = hermes_home / "state.db"
    with SessionDB(db_path) as db:
        db.create_session("s1", source="cli")
        db.append_message("s1", "user", "where do we deploy the zebrafish service?")
        db.append_message("s1", "assistant", "The zebrafish service deploys to cluster quokka-seven.")
    payload = {"session_id": "new-session", "hook_event_name": "UserPromptSubmit", "cwd": "/home/dev/proj",
               "permission_mode": "default", "prompt": "which cluster do we deploy the zebrafish service to?"}
    with foreign_write_lock(db_path, mode):
        before = file_bytes(db_path)
        r = run_hook("UserPromptSubmit", payload, budget=5)
        assert file_bytes(db_path) == before
    assert r.returncode == 0, r.stderr
    assert "quokka-seven" in json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
