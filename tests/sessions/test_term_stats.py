"""Cached document frequencies (sessions/term_stats.py) stay exact: after appends, deletes, updates,
rows inserted below the newest id, writes by another program on another connection, and a home
whose counting triggers were missing (indexed by an older version). Real SQLite files."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hermes_memory.sessions import hmindex, term_stats
from hermes_memory.sessions.db import SessionDB
from tests.helpers.values import present

WORDS = ("otters", "badger", "heron", "walrus", "running")


def truth(db: SessionDB, word: str) -> int:
    """Rows of our index holding ``word``, counted by matching it (no cache involved)."""
    return db.conn.execute("SELECT count(*) FROM hm_messages_fts WHERE hm_messages_fts MATCH ?",
                           ('"' + word + '"',)).fetchone()[0]


def cached(db: SessionDB, words: tuple[str, ...] = WORDS) -> dict[str, int]:
    stats = db._term_stats
    stems = stats.stems(db.conn, list(words))
    return dict(zip(words, stats.doc_freqs(db.conn, [[(w, stems[w])] for w in words]), strict=True))


def assert_exact(db: SessionDB) -> None:
    assert cached(db) == {w: truth(db, w) for w in WORDS}


def _seed(db: SessionDB) -> None:
    db.create_session("s1")
    db.append_messages("s1", [{"role": "user", "content": f"message {i} about otters and a badger"} for i in range(20)])
    db.append_message("s1", "assistant", "the heron was running")


def _other_program(path: Path, *sql: str) -> None:
    """Run ``sql`` on a plain sqlite3 connection of its own (another program's writes) and commit."""
    other = sqlite3.connect(path)
    for statement in sql:
        other.execute(statement)
    other.commit()
    other.close()


def _seeded_home(path: Path) -> None:
    db = SessionDB(path)
    _seed(db)
    db.close()


def test_cache_is_used_and_counts_rows_appended_since(tmp_path: Path) -> None:
    db = SessionDB(tmp_path / "state.db")
    try:
        _seed(db)
        assert_exact(db)
        stems = db._term_stats.stems(db.conn, ["otters"])
        # cached with the newest indexed id: 20 rows, and the heron reply indexed with the turn before it
        assert db._term_stats.dfs[present(stems["otters"])][0] == 21
        db.append_messages("s1", [{"role": "user", "content": "more otters, runs and runners"}] * 3)
        assert_exact(db)
        assert db._term_stats.dfs[present(stems["otters"])][0] == 24
    finally:
        db.close()


def test_deletes_updates_and_inserts_below_the_newest_id_invalidate_the_cache(tmp_path: Path) -> None:
    db = SessionDB(tmp_path / "state.db")
    try:
        _seed(db)
        assert_exact(db)
        first = db.conn.execute("SELECT min(id) FROM messages").fetchone()[0]
        db.update_message_content(first + 1, "now about a walrus")
        assert_exact(db)
        db._execute_write(lambda c: c.execute("DELETE FROM messages WHERE id = ?", (first + 2,)))
        assert_exact(db)
        # an explicit id below the newest (a deleted id reused): not an append
        db._execute_write(lambda c: c.execute(
            "INSERT INTO messages(id, session_id, role, content, timestamp) VALUES (?, 's1', 'user', ?, 1)",
            (first + 2, "otters return with a walrus")))
        assert_exact(db)
        db.delete_session("s1")
        assert_exact(db)
        assert cached(db) == dict.fromkeys(WORDS, 0)
    finally:
        db.close()


def test_another_programs_writes_on_its_own_connection_keep_the_cache_exact(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    db = SessionDB(path)
    try:
        _seed(db)
        assert_exact(db)  # warm
        _other_program(path, "INSERT INTO messages(session_id, role, content, timestamp) "
                             "VALUES ('s1', 'user', 'badger den', 2)",
                       "DELETE FROM messages WHERE content LIKE 'message 3 %'",
                       "UPDATE messages SET content = 'a heron again' WHERE content LIKE 'message 4 %'")
        assert_exact(db)
    finally:
        db.close()


def test_rows_changed_while_every_trigger_of_ours_was_missing_are_counted_after_the_catch_up(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    _seeded_home(path)
    _other_program(path, *(f"DROP TRIGGER {name}" for name in hmindex.TRIGGER_NAMES),
                   "DELETE FROM messages WHERE content LIKE 'message 1%'",  # 1, 10..19
                   "INSERT INTO messages(session_id, role, content, timestamp) VALUES ('s1', 'user', 'walrus otters', 3)")
    db = SessionDB(path)
    try:
        assert db.migration["index"]["action"] == "caught_up"
        assert_exact(db)
        assert cached(db)["otters"] == 20 - 11 + 1 + 1  # + the heron reply, indexed with the turn before it
    finally:
        db.close()


def test_a_home_indexed_before_the_counting_triggers_gets_them_on_open(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    _seeded_home(path)
    _other_program(path, *(f"DROP TRIGGER {name}" for name in hmindex.CHANGE_TRIGGER_SQL),
                   f"DELETE FROM hm_meta WHERE key = '{hmindex.CHANGES_KEY}'")
    db = SessionDB(path)
    try:
        assert db.migration["index"]["action"] == "none"  # no catch-up or verification needed
        names = {n for (n,) in db.conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'hm%'")}
        assert names == set(hmindex.TRIGGER_NAMES)
        assert hmindex.meta_get(db.conn, hmindex.CHANGES_KEY) is not None
        assert_exact(db)
        db._execute_write(lambda c: c.execute("DELETE FROM messages WHERE content LIKE 'message 2%'"))
        assert_exact(db)
    finally:
        db.close()


def test_without_the_change_counter_every_frequency_is_read_from_the_index(tmp_path: Path) -> None:
    db = SessionDB(tmp_path / "state.db")
    try:
        _seed(db)
        db._execute_write(lambda c: c.execute(f"DELETE FROM hm_meta WHERE key = '{hmindex.CHANGES_KEY}'"))
        _other_program(tmp_path / "state.db", "DROP TRIGGER hm_messages_changes_ad")  # nothing counts a delete
        assert_exact(db)
        assert db._term_stats.dfs == {}
        db._execute_write(lambda c: c.execute("DELETE FROM messages WHERE content LIKE 'message 5%'"))
        assert_exact(db)
    finally:
        db.close()


@pytest.mark.parametrize("cache", [True, False])
def test_search_results_are_the_same_with_and_without_the_cache(tmp_path: Path, monkeypatch, cache: bool) -> None:
    monkeypatch.setattr(term_stats, "DF_CACHE", cache)
    monkeypatch.setattr(term_stats.ranking, "POSTINGS_BUDGET", 5)  # force the budget path on a small home
    db = SessionDB(tmp_path / "state.db")
    try:
        _seed(db)
        for _ in range(2):  # cold, then warm
            rows = db.search_messages("Where was the heron running with otters?", limit=5)
            assert rows and rows[0]["snippet"].count(">>>") >= 2
        assert db.search_messages('"unbalanced AND (', limit=5) == []
        db.append_message("s1", "user", "记忆断裂的问题 otters")
        assert len(db.search_messages("记忆断裂", limit=5)) == 1
    finally:
        db.close()


def _index_reads(db: SessionDB) -> list[str]:
    seen: list[str] = []
    db.conn.set_trace_callback(seen.append)
    return seen


def test_a_new_connection_takes_the_stored_frequencies_instead_of_reading_the_index(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    first = SessionDB(path)
    try:
        _seed(first)
        assert_exact(first)  # counted from the index, then stored for everyone
        stored = dict(first.conn.execute(f"SELECT stem, docs FROM {term_stats.DF_TABLE}").fetchall())
        assert stored and stored["otter"] == 21
    finally:
        first.close()
    fresh = SessionDB(path)  # a new process: nothing cached on its connection
    try:
        seen = _index_reads(fresh)
        assert_exact(fresh)
        fresh.conn.set_trace_callback(None)
        assert not [s for s in seen if "hm_fts_v WHERE term" in s]
    finally:
        fresh.close()


def test_stored_frequencies_stay_exact_after_other_programs_change_rows(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    _seeded_home(path)
    db = SessionDB(path)
    try:
        assert_exact(db)
    finally:
        db.close()
    _other_program(path, "INSERT INTO messages(session_id, role, content, timestamp) VALUES ('s1', 'user', 'otters!', 2)")
    db = SessionDB(path)  # appended only: the stored count plus the rows after it
    try:
        assert_exact(db)
    finally:
        db.close()
    _other_program(path, "DELETE FROM messages WHERE content LIKE 'message 3 %'",
                   "UPDATE messages SET content = 'a walrus' WHERE content LIKE 'message 4 %'")
    db = SessionDB(path)  # deleted and changed: every stored row is stale and ignored
    try:
        assert_exact(db)
        changes = hmindex.meta_get(db.conn, hmindex.CHANGES_KEY)
        assert {c for (c,) in db.conn.execute(f"SELECT DISTINCT changes FROM {term_stats.DF_TABLE}")} == {changes}
    finally:
        db.close()


def test_a_locked_database_stores_nothing_and_the_counts_stay_exact(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    _seeded_home(path)
    db = SessionDB(path, timeout=5.0)
    other = sqlite3.connect(path, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # another writer holds the lock
        assert_exact(db)
        assert db.conn.execute("PRAGMA busy_timeout").fetchone()[0] == 5000  # put back
        other.execute("ROLLBACK")
        assert not db.conn.execute(f"SELECT name FROM sqlite_master WHERE name = '{term_stats.DF_TABLE}'").fetchall()
        assert_exact(db)  # not tried again until DF_STORE_LAG rows later
        db.append_messages("s1", [{"role": "user", "content": "otters"}] * 3)
        assert_exact(db)
    finally:
        other.close()
        db.close()
