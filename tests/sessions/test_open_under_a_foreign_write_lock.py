"""Opening a store whose schema and index are current takes no write lock and writes nothing, so
it reads at once while another process holds a long write transaction (the Hermes Agent's own
writes, an import); a write still waits its bounded retries and fails with the clear message; an
open that truly must migrate fails with a message saying what holds the file and how to retry."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hermes_memory.errors import SessionStoreError
from hermes_memory.sessions.db import SessionDB
from tests.helpers.foreign_lock import COMMITTED_TEXT, file_bytes, foreign_write_lock

MODES = ["IMMEDIATE", "EXCLUSIVE"]


def _seed(path: Path) -> int:
    """A store with session ``s1``; returns the id of its one message about otters."""
    with SessionDB(path) as db:
        db.create_session("s1", source="cli")
        db.set_session_title("s1", "otter notes")
        otters = db.append_message("s1", "user", "where do sea otters sleep")
        db.append_message("s1", "assistant", "floating on their backs, holding hands")
    return otters


@pytest.mark.parametrize("mode", MODES)
def test_an_open_of_a_current_store_reads_while_another_process_holds_a_write_transaction(
        tmp_path: Path, mode: str) -> None:
    path = tmp_path / "state.db"
    otters = _seed(path)
    with foreign_write_lock(path, mode):
        before = file_bytes(path)
        # one attempt, no retries: any write on open (migration, index sync, probe) would fail at once
        db = SessionDB(path, timeout=0.05, write_retries=0)
        try:
            assert db.migration["layout"] == "current" and db.migration["index"]["action"] == "none"
            assert [s["id"] for s in db.search_sessions()] == ["s1"]
            assert [m["content"] for m in db.get_messages("s1")][-1] == COMMITTED_TEXT
            assert [m["id"] for m in db.search_messages("otters")] == [otters]
        finally:
            db.close()
        assert file_bytes(path) == before


@pytest.mark.parametrize("mode", MODES)
def test_a_write_under_a_foreign_write_transaction_still_waits_its_retries_and_fails_clearly(
        tmp_path: Path, mode: str) -> None:
    path = tmp_path / "state.db"
    _seed(path)
    with foreign_write_lock(path, mode) as holder:
        before = file_bytes(path)
        with SessionDB(path, timeout=0.05, write_retries=3) as db:
            with pytest.raises(SessionStoreError, match="stayed locked after 3 retries") as err:
                db.append_message("s1", "user", "refused")
        assert f"Another process (process {holder.pid}: " in str(err.value)
        assert file_bytes(path) == before


def test_an_open_that_must_migrate_under_a_foreign_lock_fails_saying_what_holds_it(tmp_path: Path) -> None:
    """A store whose triggers were dropped (the reference rebuilt ``messages``) needs a catch-up, a
    write: with the lock held throughout, the open gives up after its bounded retries, says that
    another process writes to the file and to retry, and changes nothing."""
    path = tmp_path / "state.db"
    _seed(path)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("DROP TRIGGER hm_messages_index_ai")
    conn.close()
    with foreign_write_lock(path, "IMMEDIATE") as holder:
        before = file_bytes(path)
        with pytest.raises(SessionStoreError) as err:
            SessionDB(path, timeout=0.05, write_retries=2)
        text = str(err.value)
        assert "another process held a write transaction" in text and "Retry when it has finished" in text
        assert str(path) in text and "nothing was changed" in text
        assert f"held by process {holder.pid} (" in text  # which process, from /proc/locks
        assert file_bytes(path) == before
    with SessionDB(path) as db:  # once the lock is gone the same open brings the index up to date
        assert db.migration["index"]["action"] == "caught_up"
        assert [m["session_id"] for m in db.search_messages("agent")] == ["s1"]


def test_a_second_open_of_a_current_store_writes_nothing_to_the_file(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    _seed(path)
    keeper = sqlite3.connect(path)  # keeps the WAL (the last close would checkpoint and delete it)
    keeper.execute("SELECT count(*) FROM sessions").fetchone()
    before = file_bytes(path)
    changes_before = keeper.execute("SELECT value FROM hm_meta WHERE key = 'index_changes'").fetchone()
    with SessionDB(path) as db:
        assert db.migration["layout"] == "current"
        assert db.conn.total_changes == 0
    assert file_bytes(path) == before
    assert keeper.execute("SELECT value FROM hm_meta WHERE key = 'index_changes'").fetchone() == changes_before
    keeper.close()


def test_an_open_kept_out_by_a_rollback_journal_writer_says_retry_never_move_it_aside(tmp_path: Path) -> None:
    """Without WAL (a file another program switched to a rollback journal) a writer's EXCLUSIVE lock
    keeps readers out: the open fails with the lock message and the advice to retry, never with
    "not a usable session database ... move it aside", which would have a user discard good data."""
    path = tmp_path / "state.db"
    _seed(path)
    conn = sqlite3.connect(path, isolation_level=None)
    assert conn.execute("PRAGMA journal_mode=DELETE").fetchone()[0] == "delete"
    conn.close()
    with foreign_write_lock(path, "EXCLUSIVE"):
        before = file_bytes(path)
        with pytest.raises(SessionStoreError) as err:
            SessionDB(path, timeout=0.05, write_retries=0)
        text = str(err.value)
        assert "could not be read" in text and "Retry when it has finished" in text
        assert "Move it aside" not in text
        assert file_bytes(path) == before
