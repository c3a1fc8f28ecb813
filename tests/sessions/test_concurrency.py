"""B26: concurrent writers. Real threads, real processes, one SQLite file."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from hermes_memory.errors import SessionStoreError
from hermes_memory.sessions.db import SessionDB
from tests.helpers.values import present


def test_B26_wal_mode_on_the_connection(sqlite_db: SessionDB) -> None:
    """SQLite only: the journal mode of the connection."""
    db = sqlite_db
    assert db.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_B26_append_waits_for_a_short_foreign_write_lock(tmp_path: Path) -> None:
    db = SessionDB(tmp_path / "state.db")
    db.create_session("s1")
    other = sqlite3.connect(tmp_path / "state.db", isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO sessions (id, source, started_at) VALUES ('other', 'cli', 1.0)")
    locked = threading.Event()

    def release() -> None:
        locked.set()
        time.sleep(2.0)
        other.execute("COMMIT")

    t = threading.Thread(target=release)
    t.start()
    locked.wait()
    mid = db.append_message("s1", "user", "hello")
    t.join()
    assert present(db.get_message(mid))["content"] == "hello"
    assert [r["id"] for r in db.search_messages("hello")] == [mid]
    assert db.get_session("other") is not None
    other.close()
    db.close()


def test_B26_a_lock_held_past_all_retries_is_an_explicit_error(tmp_path: Path) -> None:
    # Short waits so the test is quick: 0.2 s busy timeout x (3 retries + 1). The lock is held
    # until the append has given up, so success would be impossible without a bug.
    db = SessionDB(tmp_path / "state.db", timeout=0.2, write_retries=3)
    db.create_session("s1")
    other = sqlite3.connect(tmp_path / "state.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(SessionStoreError, match="stayed locked after 3 retries"):
            db.append_message("s1", "user", "blocked")
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert db.message_count("s1") == 0
    assert present(db.get_session("s1"))["message_count"] == 0
    db.append_message("s1", "user", "after release")
    assert db.message_count("s1") == 1
    db.close()


def test_B26_eight_threads_on_one_object(db: SessionDB) -> None:
    db.create_session("s1")

    def worker(n: int) -> None:
        for i in range(50):
            db.append_message("s1", "user", f"thread{n} msg{i} quokka")

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert db.message_count() == 400
    msgs = db.get_messages("s1")
    assert len({m["id"] for m in msgs}) == 400
    for n in range(8):  # each thread's messages in the order it wrote them
        mine = [m["content"] for m in msgs if m["content"].startswith(f"thread{n} ")]
        assert mine == [f"thread{n} msg{i} quokka" for i in range(50)]
    if db.backend == "sqlite":  # SQLite's own FTS5 index kept in step
        assert db.conn.execute(
            "SELECT count(*) FROM hm_messages_fts WHERE hm_messages_fts MATCH 'quokka'").fetchone()[0] == 400
    assert present(db.get_session("s1"))["message_count"] == 400


WORKER = textwrap.dedent(
    """
    import sys
    from hermes_memory.sessions.db import SessionDB
    path, n, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    db = SessionDB(path)
    sid = db.create_session(f"proc{n}")
    for i in range(count):
        db.append_message(sid, "user" if i % 2 == 0 else "assistant", f"proc{n} item{i} marker{n}x{i}")
    db.close()
    """
)


@pytest.mark.slow
def test_B26_four_processes_times_2000_appends_all_present_and_findable(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    SessionDB(path).close()
    procs = [
        subprocess.Popen([sys.executable, "-c", WORKER, str(path), str(n), "2000"], stderr=subprocess.PIPE)
        for n in range(4)
    ]
    errors = [p.communicate(timeout=600)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], errors
    db = SessionDB(path)
    try:
        assert db.message_count() == 8000
        for n in range(4):
            assert present(db.get_session(f"proc{n}"))["message_count"] == 2000
            assert db.conn.execute(
                "SELECT count(*) FROM hm_messages_fts WHERE hm_messages_fts MATCH ?", (f'"proc{n}"',)
            ).fetchone()[0] == 2000
        for n, i in ((0, 0), (1, 1999), (2, 1000), (3, 1234)):
            rows = db.search_messages(f"marker{n}x{i}")
            assert [r["session_id"] for r in rows] == [f"proc{n}"]
        assert db.fts_integrity_check()
    finally:
        db.close()
