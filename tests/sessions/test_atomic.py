"""SessionDB.atomic(): one write transaction with the bounded retries, inside or outside batch()."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hermes_memory.errors import SessionStoreError
from hermes_memory.sessions.db import SessionDB
from tests.helpers.values import present


def test_atomic_commits_the_block(db: SessionDB, make_db) -> None:
    db.create_session("s")
    with db.atomic() as conn:
        conn.execute("UPDATE sessions SET title = 'one' WHERE id = 's'")
        conn.execute("UPDATE sessions SET model = 'm' WHERE id = 's'")
    row = make_db().get_session("s")  # another connection sees it committed
    assert (row["title"], row["model"]) == ("one", "m")


def test_atomic_rolls_back_on_an_exception_and_reraises_it(db: SessionDB) -> None:
    db.create_session("s")
    with pytest.raises(KeyError), db.atomic() as conn:
        conn.execute("UPDATE sessions SET title = 'gone' WHERE id = 's'")
        raise KeyError("stop")
    assert present(db.get_session("s"))["title"] is None
    if db.backend == "sqlite":  # PostgreSQL: the pooled connection went back rolled back
        assert not db.conn.in_transaction
    db.set_session_title("s", "after")  # the store is usable again
    assert present(db.get_session("s"))["title"] == "after"


def test_database_error_in_atomic_becomes_session_store_error(db: SessionDB) -> None:
    db.create_session("s")
    with pytest.raises(SessionStoreError, match="write failed"), db.atomic() as conn:
        conn.execute("UPDATE sessions SET title = 'x' WHERE id = 's'")
        conn.execute("INSERT INTO no_such_table VALUES (1)")
    assert present(db.get_session("s"))["title"] is None


def test_atomic_waits_out_a_lock_then_gives_up_with_a_clear_error(tmp_path: Path) -> None:
    db = SessionDB(tmp_path / "state.db", timeout=0.01, write_retries=2)
    holder = sqlite3.connect(tmp_path / "state.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(SessionStoreError, match="stayed locked after 2 retries"), db.atomic():
            pytest.fail("the block must not run without the write lock")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with db.atomic() as conn:  # free again: works
        conn.execute("INSERT INTO sessions (id, source, started_at) VALUES ('t', 'cli', 0)")
    assert db.get_session("t") is not None
    db.close()


def test_atomic_inside_batch_is_one_savepoint(db: SessionDB) -> None:
    db.create_session("s")
    with db.batch():
        with db.atomic() as conn:
            conn.execute("UPDATE sessions SET title = 'kept' WHERE id = 's'")
        with pytest.raises(ValueError), db.atomic() as conn:
            conn.execute("UPDATE sessions SET model = 'undone' WHERE id = 's'")
            raise ValueError("refused")
    row = present(db.get_session("s"))
    assert (row["title"], row["model"]) == ("kept", None)


def test_atomic_on_a_closed_db_raises(db: SessionDB) -> None:
    db.close()
    with pytest.raises(SessionStoreError, match="closed"), db.atomic():
        pass


def test_batch_commits_per_chunk_and_a_raise_drops_only_the_open_chunk(db: SessionDB, make_db) -> None:
    """Both engines: reads inside the batch see its writes; another connection sees the chunks
    committed so far; a refused write undoes only itself; raising drops the open chunk only."""
    other = make_db()
    with pytest.raises(RuntimeError), db.batch(commit_every=2):
        db.create_session("a", title="T")
        assert db.get_session("a") is not None  # this thread reads its own batch
        with pytest.raises(ValueError, match="already in use"):
            db.create_session("b", title="T")  # refused inside the batch: undoes only itself
        db.create_session("b")  # the second write: the chunk commits
        assert other.get_session("b") is not None
        db.create_session("c")  # the open chunk
        assert other.get_session("c") is None
        raise RuntimeError("stop")
    assert {s["id"] for s in other.list_sessions()} == {"a", "b"}
    assert db.get_session("c") is None and present(db.get_session("b"))["title"] is None
