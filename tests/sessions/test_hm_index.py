"""Our hm_* full-text objects: first build, O(1) reopen, incremental catch-up after rows were added,
deleted or changed while our triggers were absent, and a rebuild (of ours only) when our index is
damaged. Real SQLite files; another program's writes are plain sqlite3 connections."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hermes_memory.sessions import hmindex
from hermes_memory.sessions.db import SessionDB

BACKENDS = ("sqlite",)  # SQLite only: our hm_* FTS5 index inside state.db


def _seed(path: Path, n: int = 30) -> None:
    db = SessionDB(path)
    db.create_session("s1")
    for i in range(n):
        db.append_message("s1", "user", f"seed message {i} about otters")
    db.append_message("s1", "user", "记忆断裂的问题")
    db.close()


def _reference_rows(path: Path) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'hm\\_%' ESCAPE '\\' "
                            "AND name NOT LIKE 'sqlite_autoindex_hm%' ORDER BY name").fetchall()
    finally:
        conn.close()


def _ids(db: SessionDB, q: str) -> set[int]:
    return {r["id"] for r in db.search_messages(q, limit=500, raise_errors=True)}


def test_reopen_with_our_triggers_present_does_nothing(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    _seed(path)
    other = sqlite3.connect(path)  # another writer: our triggers run in its transaction
    other.execute("INSERT INTO messages(session_id, role, content, timestamp) VALUES ('s1', 'user', 'quokka', 1)")
    other.execute("DELETE FROM messages WHERE content = 'seed message 3 about otters'")
    other.commit()
    other.close()
    db = SessionDB(path)
    try:
        assert db.migration["index"]["action"] == "none"
        assert len(_ids(db, "quokka")) == 1 and len(_ids(db, "otters")) == 29
        assert hmindex.meta_get(db.conn, "full_builds") == "1"
    finally:
        db.close()


def test_rows_added_deleted_changed_while_our_triggers_were_absent_are_caught_up(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    _seed(path)
    other = sqlite3.connect(path)
    for name in hmindex.TRIGGER_NAMES:
        other.execute(f"DROP TRIGGER {name}")
    other.executemany("INSERT INTO messages(session_id, role, content, timestamp) VALUES ('s1', 'user', ?, 1)",
                      [(f"wombat {i}",) for i in range(5)] + [("新的会议安排",)])
    other.execute("DELETE FROM messages WHERE content IN ('seed message 1 about otters', 'seed message 2 about otters',"
                  " 'seed message 4 about otters')")
    other.execute("UPDATE messages SET content = 'now about badgers' WHERE content LIKE 'seed message 5 %'")
    other.execute("UPDATE messages SET content = 'tool output', role = 'tool', tool_name = 'terminal' "
                  "WHERE content LIKE 'seed message 6 %'")
    other.commit()
    other.close()
    before = _reference_rows(path)
    db = SessionDB(path)
    try:
        report = db.migration["index"]
        assert report["action"] == "caught_up" and report["triggers_missing"] is True
        # changed: messages 5 and 6 themselves, and the turns right after a deleted or changed one
        # (3 after 2, 7 after 6), whose indexed previous-turn text had gone stale
        assert (report["added"], report["deleted"], report["changed"]) == (6, 3, 4), report
        assert len(_ids(db, "wombat")) == 5 and len(_ids(db, "会议")) == 1
        assert len(_ids(db, "otters")) == 30 - 3 - 2
        assert len(_ids(db, "badgers")) == 1
        assert [r["role"] for r in db.search_messages("terminal", limit=5)] == ["tool"]
        assert db.fts_integrity_check()
        assert hmindex.meta_get(db.conn, "full_builds") == "1"  # no rebuild: only the rows that moved
        assert {n for (n,) in db.conn.execute("SELECT name FROM sqlite_master WHERE type='trigger' AND name LIKE 'hm%'")} \
            == set(hmindex.TRIGGER_NAMES)
    finally:
        db.close()
    assert _reference_rows(path) == before  # catching up touched nothing of the reference's
    again = SessionDB(path)
    assert again.migration["index"]["action"] == "none"
    again.close()


def test_verification_of_changed_rows_is_bounded_per_open(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "state.db"
    _seed(path, n=25)
    other = sqlite3.connect(path)
    for name in hmindex.TRIGGER_NAMES:
        other.execute(f"DROP TRIGGER {name}")
    other.execute("UPDATE messages SET content = 'changed into a heron' WHERE content LIKE 'seed message 20 %'")
    other.commit()
    other.close()
    monkeypatch.setattr(hmindex, "VERIFY_BATCH", 10)
    seen = []
    for _ in range(3):
        db = SessionDB(path)
        seen.append((db.migration["index"]["verified"], db.migration["index"]["changed"], len(_ids(db, "heron"))))
        db.close()
    # 26 rows, 10 per open: the changed row (the 21st) is found on the third open, not before,
    # with the turn after it (indexed with the changed row's old text as its previous turn)
    assert seen == [(10, 0, 0), (10, 0, 0), (6, 2, 1)]
    db = SessionDB(path)
    assert db.migration["index"]["verified"] == 0 and db.migration["index"]["action"] == "none"
    db.close()


def test_messages_table_rebuilt_by_another_program_drops_triggers_and_we_catch_up(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    _seed(path)
    other = sqlite3.connect(path, isolation_level=None)
    sql = other.execute("SELECT sql FROM sqlite_master WHERE name = 'messages'").fetchone()[0]
    other.execute("BEGIN")
    other.execute(sql.replace("CREATE TABLE IF NOT EXISTS messages", "CREATE TABLE messages_new", 1)
                  .replace("CREATE TABLE messages", "CREATE TABLE messages_new", 1))
    other.execute("INSERT INTO messages_new SELECT * FROM messages")
    other.execute("DROP TABLE messages")
    other.execute("ALTER TABLE messages_new RENAME TO messages")
    other.execute("INSERT INTO messages(session_id, role, content, timestamp) VALUES ('s1', 'user', 'platypus', 1)")
    other.execute("COMMIT")
    assert other.execute("SELECT count(*) FROM sqlite_master WHERE type='trigger'").fetchone()[0] == 0
    other.close()
    db = SessionDB(path)
    try:
        report = db.migration["index"]
        assert report["action"] == "caught_up" and (report["added"], report["deleted"]) == (1, 0)
        assert len(_ids(db, "platypus")) == 1 and len(_ids(db, "otters")) == 30
        names = {n for (n,) in db.conn.execute("SELECT name FROM sqlite_master WHERE type='trigger'")}
        # ours are back; the reference's are its own to restore (it does on its next open)
        assert names == set(hmindex.TRIGGER_NAMES)
    finally:
        db.close()


def test_damaged_index_is_rebuilt_and_only_ours(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    _seed(path)
    before = _reference_rows(path)
    conn = sqlite3.connect(path)
    ref_fts = conn.execute("SELECT rowid, content FROM messages_fts ORDER BY rowid").fetchall()
    conn.execute("UPDATE hm_messages_fts_data SET block = randomblob(length(block)) WHERE id = 10")  # structure
    conn.commit()
    conn.close()
    db = SessionDB(path)
    try:
        assert db.migration["index"]["action"] == "rebuilt" and db.migration["fts_rebuilt"] is True
        assert len(_ids(db, "otters")) == 30
        assert db.fts_integrity_check()
        assert [tuple(r) for r in db.conn.execute("SELECT rowid, content FROM messages_fts ORDER BY rowid")] == ref_fts
    finally:
        db.close()
    assert _reference_rows(path) == before


def test_a_structure_record_that_makes_fts5_run_out_of_memory_is_damage_and_rebuilt(tmp_path: Path) -> None:
    """A damaged structure record can read as a wild segment count: FTS5 then answers SQLITE_NOMEM,
    which Python raises as MemoryError, not DatabaseError. That is still our damaged index: the
    file opens, ours is rebuilt, the reference's objects are untouched. The 14 bytes are one of
    the random blocks (10 in 500) that did this to SQLite's FTS5 here."""
    path = tmp_path / "state.db"
    _seed(path)
    before = _reference_rows(path)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE hm_messages_fts_data SET block = ? WHERE id = 10",
                 (bytes.fromhex("b81916e75971913bb02682b2ccd3"),))
    conn.commit()
    conn.close()
    db = SessionDB(path)
    try:
        assert db.migration["index"]["action"] == "rebuilt"
        assert len(_ids(db, "otters")) == 30
        assert db.fts_integrity_check()
    finally:
        db.close()
    assert _reference_rows(path) == before


def test_first_build_of_a_large_history_goes_in_chunks_and_keeps_concurrent_writes(tmp_path: Path, monkeypatch) -> None:
    from hermes_memory.sessions.migrations import migrate

    path = tmp_path / "state.db"
    conn = sqlite3.connect(path, isolation_level=None)  # a reference-like file: no hm_* objects yet
    from hermes_memory.sessions import refschema

    refschema.create_reference_schema(conn)
    conn.execute("INSERT INTO sessions(id, source, started_at) VALUES ('s1', 'cli', 1)")
    conn.executemany("INSERT INTO messages(session_id, role, content, timestamp) VALUES ('s1', 'user', ?, 1)",
                     [(f"history row {i} gecko",) for i in range(35)])
    monkeypatch.setattr(hmindex, "BUILD_CHUNK", 10)
    conn.execute("BEGIN IMMEDIATE")
    report = migrate(conn)  # the open's own transaction: tables and triggers only
    conn.execute("COMMIT")
    assert report["index"]["action"] == "built"
    assert conn.execute("SELECT count(*) FROM hm_messages_fts").fetchone()[0] == 0
    conn.execute("BEGIN IMMEDIATE")
    assert hmindex.backfill_step(conn) == {"indexed": 10, "pending": True}
    conn.execute("COMMIT")
    # another program writes between two chunks: our triggers already run in its transactions
    conn.execute("INSERT INTO messages(session_id, role, content, timestamp) VALUES ('s1', 'user', 'new salamander', 1)")
    conn.execute("UPDATE messages SET content = 'rewritten newt' WHERE content = 'history row 20 gecko'")
    conn.execute("DELETE FROM messages WHERE content IN ('history row 3 gecko', 'history row 30 gecko')")
    conn.close()
    db = SessionDB(path)  # a later open finishes the build
    try:
        assert db.migration["index"]["backfilled"] == 25 - 1
        assert len(_ids(db, "gecko")) == 35 - 1 - 2 and len(_ids(db, "salamander")) == 1
        assert len(_ids(db, "newt")) == 1
        assert db.fts_integrity_check()
        assert hmindex.meta_get(db.conn, "backfill_next_id") is None
    finally:
        db.close()


def test_long_lived_connection_catches_up_when_another_program_rebuilds_messages(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    _seed(path)
    db = SessionDB(path)  # stays open, like `serve`
    try:
        assert len(_ids(db, "otters")) == 30
        other = sqlite3.connect(path, isolation_level=None)
        sql = other.execute("SELECT sql FROM sqlite_master WHERE name = 'messages'").fetchone()[0]
        other.execute("BEGIN")
        other.execute(sql.replace("CREATE TABLE IF NOT EXISTS messages", "CREATE TABLE messages_new", 1)
                      .replace("CREATE TABLE messages", "CREATE TABLE messages_new", 1))
        other.execute("INSERT INTO messages_new SELECT * FROM messages")
        other.execute("DROP TABLE messages")
        other.execute("ALTER TABLE messages_new RENAME TO messages")
        other.execute("COMMIT")
        other.execute("INSERT INTO messages(session_id, role, content, timestamp) VALUES ('s1', 'user', 'capybara', 1)")
        other.close()
        assert len(_ids(db, "capybara")) == 1  # found without reopening
        assert {n for (n,) in db.conn.execute("SELECT name FROM sqlite_master WHERE type='trigger'")} \
            == set(hmindex.TRIGGER_NAMES)
    finally:
        db.close()
