"""PostgreSQL's cached document frequencies (sessions/pg/terms.py) follow every committed change at
once: a delete or an edit committed by another connection is counted by the very next query (schema
5 waited for that connection's cumulative statistics), the change counter of schema 6 moves once
per committed writing transaction and never for one rolled back, concurrent writers all count, and
schema 6 reaches a version 5 database without changing a row. Real PostgreSQL."""

from __future__ import annotations

import threading
from typing import Any

import psycopg

from hermes_memory.sessions.pg import PgSessionDB, search_schema
from tests.sessions.pg_old_schema import stored_rows, write_at_schema


def _seed(db: Any) -> None:
    db.create_session("s1", source="cli")
    db.append_messages("s1", [{"role": "user" if i % 2 == 0 else "assistant",
                               "content": f"message {i} " + ("about a walrus" if i < 20 else "about the weather")}
                              for i in range(30)])


def _df(db: Any, word: str) -> int:
    with db._connection() as conn:
        dfs, _ = db._pg_terms.counts(conn, [word])
    return int(dfs[0])


def _changes(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT value::bigint FROM hm_meta WHERE key = %s", [search_schema.CHANGES_KEY]).fetchone()
    assert row is not None
    return int(row[0])


def test_a_delete_and_an_edit_committed_by_another_connection_reach_the_cached_frequency_at_once(pg_url: str) -> None:
    db = PgSessionDB(pg_url)
    try:
        _seed(db)
        assert _df(db, "walrus") == 20  # counted, then cached
        assert _df(db, "walrus") == 20
        with psycopg.connect(pg_url, autocommit=True) as other:  # another program, another connection
            # its first transaction reports its statistics at once, the next ones at most once a second
            other.execute("UPDATE messages SET observed = 1 WHERE id = (SELECT min(id) FROM messages)")
            other.execute("DELETE FROM messages WHERE id IN (SELECT id FROM messages WHERE content LIKE '%%walrus%%' "
                          "ORDER BY id LIMIT 5)")
            assert _df(db, "walrus") == 15  # not the highest id: only the counter tells
            other.execute("UPDATE messages SET content = 'now about a walrus too' WHERE id = "
                          "(SELECT min(id) FROM messages WHERE content LIKE '%%weather%%')")
            assert _df(db, "walrus") == 16
    finally:
        db.close()


def test_the_change_counter_moves_once_per_committed_writing_transaction_and_not_for_a_rolled_back_one(
    pg_url: str,
) -> None:
    db = PgSessionDB(pg_url)
    try:
        _seed(db)
        start = _changes(pg_url)
        db.append_messages("s1", [{"role": "user", "content": f"more {i}"} for i in range(10)])  # one transaction
        assert _changes(pg_url) == start + 1
        with psycopg.connect(pg_url) as conn:  # not autocommit: one transaction, rolled back
            conn.execute("DELETE FROM messages")
            conn.rollback()
        assert _changes(pg_url) == start + 1
        db.create_session("s2", source="cli")  # no message written: not counted
        assert _changes(pg_url) == start + 1
    finally:
        db.close()


def test_concurrent_writers_each_count_and_none_waits_on_the_counter_for_its_whole_transaction(pg_url: str) -> None:
    db = PgSessionDB(pg_url, pool_size=6)
    try:
        for w in range(4):
            db.create_session(f"w{w}", source="cli")
        start = _changes(pg_url)
        errors: list[BaseException] = []

        def write(w: int) -> None:
            try:
                for i in range(15):
                    db.append_messages(f"w{w}", [{"role": "user", "content": f"writer {w} turn {i} walrus"}])
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=write, args=(w,)) for w in range(4)]
        # a transaction left open with a message written holds no lock on the counter until it commits
        with psycopg.connect(pg_url) as held:
            held.execute("INSERT INTO messages (session_id, role, content, timestamp) VALUES ('w0', 'user', 'held', 1)")
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=120)
            assert not errors, errors
            assert _changes(pg_url) == start + 60
            held.commit()
        assert _changes(pg_url) == start + 61
        assert _df(db, "walrus") == 60
    finally:
        db.close()


def test_schema_6_reaches_a_version_5_database_and_changes_no_row(pg_url: str) -> None:
    write_at_schema(pg_url, 5, _seed)  # a database at schema 5, as the previous release left it
    before, sessions_before = stored_rows(pg_url, "messages"), stored_rows(pg_url, "sessions")
    db = PgSessionDB(pg_url)
    try:
        assert 6 in db.migration["applied"] and db.migration["from_version"] == 5
        assert stored_rows(pg_url, "messages") == before
        assert stored_rows(pg_url, "sessions") == sessions_before
        assert _changes(pg_url) == 0
        assert _df(db, "walrus") == 20
        db.append_messages("s1", [{"role": "user", "content": "one more walrus"}])
        assert _changes(pg_url) == 1 and _df(db, "walrus") == 21
        assert db.search_messages("walrus", limit=5)
    finally:
        db.close()
