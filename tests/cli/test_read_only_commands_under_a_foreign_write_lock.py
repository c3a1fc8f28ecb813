"""Read-only commands answer from the stored data at once while another process (the Hermes
Agent, an import) holds a long write transaction on state.db, ``BEGIN IMMEDIATE`` or ``BEGIN
EXCLUSIVE``, and leave the file byte-identical. Before, every open synced its index in a write
transaction and these commands failed after about 20 s."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hermes_memory.cli.main import app
from hermes_memory.sessions.db import SessionDB
from tests.helpers.foreign_lock import COMMITTED_TEXT, file_bytes, foreign_write_lock

runner = CliRunner()


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    with SessionDB(home / "state.db") as db:
        db.create_session("s1", source="cli")
        db.set_session_title("s1", "otter notes")
        db.append_message("s1", "user", "where do sea otters sleep")
        db.append_message("s1", "assistant", "floating on their backs, holding hands")
    return home


@pytest.mark.parametrize("mode", ["IMMEDIATE", "EXCLUSIVE"])
def test_read_only_commands_answer_from_the_stored_data_while_another_process_holds_a_write_transaction(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    monkeypatch.delenv("HERMES_DATABASE_URL", raising=False)
    home = _home(tmp_path)
    db_path = home / "state.db"
    with foreign_write_lock(db_path, mode):
        before = file_bytes(db_path)

        def run(*args: str) -> str:
            r = runner.invoke(app, ["--home", str(home), *args])
            assert r.exit_code == 0, f"{' '.join(args)}: {r.output}"
            return r.stdout

        listed = json.loads(run("sessions", "list", "--json"))
        assert [s["id"] for s in listed["sessions"]] == ["s1"]  # the uncommitted session is not seen
        assert "otter notes" in run("sessions", "show", "s1")
        assert COMMITTED_TEXT in run("sessions", "show", "s1")
        assert "otters" in run("sessions", "search", "otters")
        exported = json.loads(run("sessions", "export"))
        assert [s["id"] for s in exported] == ["s1"]
        assert COMMITTED_TEXT in json.dumps(exported)
        run("memory", "show")
        assert json.loads(run("status", "--json"))["home_exists"] is True
        assert file_bytes(db_path) == before
