"""The plans PostgreSQL runs for search (issue 15): a ``session_search`` call with a role filter
on a history where that role is common, repeated on one pooled connection, keeps reading the GIN
index (never a generic plan looping over sessions); the GIN indexes' pending lists stay a few
pages, so a table with fresh appends is still searched through its index; a statement holding a
CJK or glued step starts no parallel worker; the recency window trims the candidates through its
BRIN index before their rows are read, and schema 7 adds it to a version 6 database; schema 5 reaches an
existing database without changing a row; filtered searches return the same rows as SQLite.

Plans are read from the server itself (``auto_explain`` logs the plan of every statement the
store's connection runs) and from EXPLAIN; nothing here measures time."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from hermes_memory.sessions import feedback
from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.pg import schema, search_schema
from hermes_memory.sessions.search import session_search
from tests.sessions import search_corpus
from tests.sessions.backend_sql import sql
from tests.sessions.pg_old_schema import at_schema, stored_rows, write_at_schema

BACKENDS = ("postgres",)  # PostgreSQL's own plans

WORDS = [f"{a}{b}{c}" for a in ("kal", "mor", "tez", "vun", "pil", "dar", "sok", "rim") for b in ("ba", "do", "ki", "lu", "ne")
         for c in ("x", "q", "z", "v", "w", "j", "f", "y", "h", "g") for d in ("", "a", "o", "u", "e")]
"""2,000 made-up words: with twelve a message, each one in about 0.6 % of the messages."""
RARE = [f"walrus{c}{d}" for c in "abcdefgh" for d in "xyzuv"]
"""40 words a few messages each hold (what a user asks about)."""


def _history(db: Any, sessions: int = 100, per_session: int = 50, seed: int = 15) -> None:
    """``sessions`` sessions of source ``cli`` (a few ``tool`` ones, hidden from the tool), user
    and assistant turns alternating: every visible message passes the tool's role and source
    filters. One message in 25 also names one of :data:`RARE` (each in about 0.1 % of them)."""
    rnd = random.Random(seed)
    for s in range(sessions):
        sid = f"s{s:03d}"
        db.create_session(sid, source="tool" if s % 10 == 9 else "cli", started_at=1_700_000_000.0 + s * 3600)
        db.append_messages(sid, [{"role": "user" if i % 2 == 0 else "assistant",
                                  "content": " ".join(rnd.choice(WORDS) for _ in range(12))
                                  + (f" {rnd.choice(RARE)}" if rnd.random() < 0.04 else ""),
                                  "timestamp": 1_700_000_000.0 + s * 3600 + i} for i in range(per_session)])


def _plans(log: Path, start: int, pid: int) -> list[str]:
    """The plans ``auto_explain`` logged for backend ``pid`` after byte ``start`` of the server log."""
    text = log.read_bytes()[start:].decode(errors="replace")
    entries = re.split(r"\n(?=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)", text)
    return [e for e in entries if f"[{pid}]" in e.split("\n", 1)[0] and "duration:" in e and "plan:" in e]


def test_a_role_filtered_tool_call_repeated_on_one_connection_keeps_reading_the_gin_index(
    pg_server: Any, pg_url: str
) -> None:
    from hermes_memory.sessions.pg import PgSessionDB

    db: Any = PgSessionDB(pg_url, pool_size=1)  # one connection: every call runs on the same one
    try:
        _history(db)
        sql(db, "ANALYZE messages")
        sql(db, "ANALYZE sessions")
        # the pending lists merged: what is left to decide the plan is the values (or their absence)
        sql(db, "SELECT gin_clean_pending_list('hm_messages_search'), gin_clean_pending_list('hm_messages_context')")
        with db._connection() as conn:
            pid = conn.info.backend_pid
            conn.execute("LOAD 'auto_explain'")
            conn.execute("SET auto_explain.log_min_duration = 0")
        start = pg_server.log.stat().st_size
        rnd = random.Random(7)
        questions = [f"{rnd.choice(RARE)} {rnd.choice(RARE)}" for _ in range(16)]
        for q in questions:  # the same statement text each time: psycopg prepares it after five
            out = session_search({"query": q, "role_filter": "user,assistant"}, db)
            assert '"success": true' in out and '"count": 0' not in out, out
        ranked = [p for p in _plans(pg_server.log, start, pid) if "ts_rank_cd" in p]
        assert len(ranked) >= len(questions), len(ranked)  # one ranked statement per call at least
        for plan in ranked:
            # the candidates come from the GIN index of the vectors, never from looping over
            # sessions and testing the tsquery on every message of each
            assert "Bitmap Index Scan on hm_messages_search" in plan, plan
            assert "hm_messages_session_id" not in plan and "Seq Scan on messages" not in plan, plan
            # planned for this call's words, roles and sources: no parameter left in a condition
            assert not re.search(r"\$\d", plan.split("\n", 2)[2]), plan
        with db._connection() as conn:
            prepared = conn.execute("SELECT statement, generic_plans FROM pg_prepared_statements").fetchall()
        assert not [r for r in prepared if "@@" in r[0] and r[1]], prepared  # no generic plan of a tsquery
    finally:
        db.close()


def test_a_search_with_a_cjk_or_glued_step_starts_no_parallel_worker(pg_server: Any, pg_url: str) -> None:
    # a history without CJK text: no statistics for the CJK rows' partial indexes, so the planner
    # guesses; with parallel plans made free, every step it can run in parallel it would
    from hermes_memory.sessions.pg import PgSessionDB

    db: Any = PgSessionDB(pg_url, pool_size=1)
    try:
        _history(db, sessions=40)
        sql(db, "ANALYZE messages")
        with db._connection() as conn:
            pid = conn.info.backend_pid
            conn.execute("LOAD 'auto_explain'")
            conn.execute("SET auto_explain.log_min_duration = 0")
            conn.execute("SET auto_explain.log_analyze = on")
            for setting in ("parallel_setup_cost", "parallel_tuple_cost", "min_parallel_table_scan_size",
                            "min_parallel_index_scan_size"):
                conn.execute(f"SET {setting} = 0")
        start = pg_server.log.stat().st_size
        for q in (f"{RARE[0]} {RARE[1]}", "What did kalbax say about the morkiq?", "记忆断裂 kalbax"):
            out = session_search({"query": q}, db)
            assert '"success": true' in out, out
            db.search_messages(q, limit=20, raise_errors=True)
        plans = _plans(pg_server.log, start, pid)
        steps = [p for p in plans if "hm_messages_cjk_words" in p or "hm_messages_cjk_trgm" in p]
        assert len(steps) >= 6, len(steps)  # the glued step (English) and the trigram steps (CJK) ran
        for plan in steps:
            assert "Gather" not in plan and "Workers Launched" not in plan, plan
    finally:
        db.close()


COMMON = "otterly"
"""A word of every fifth message (:func:`_common_history`): more matches than the recency window holds."""


def _common_history(db: Any, sessions: int = 60, per_session: int = 50) -> None:
    rnd = random.Random(5)
    for s in range(sessions):
        sid = f"c{s:03d}"
        db.create_session(sid, source="cli", started_at=1_700_000_000.0 + s * 3600)
        db.append_messages(sid, [{"role": "user" if i % 2 == 0 else "assistant",
                                  "content": " ".join(rnd.choice(WORDS) for _ in range(12))
                                  + (f" {COMMON}" if rnd.random() < 0.2 else ""),
                                  "timestamp": 1_700_000_000.0 + s * 3600 + i} for i in range(per_session)])


def _window_statement(db: Any) -> tuple[str, list[Any]]:
    """The candidates statement of :data:`COMMON` with a recency window of its newest 100 matches."""
    from hermes_memory.sessions import ranking
    from hermes_memory.sessions.fts import build_query
    from hermes_memory.sessions.message_search import SearchFilters
    from hermes_memory.sessions.pg.search_sql import build_pg_search_sql
    from hermes_memory.sessions.pg.tsquery import ts_plan

    n_rows = int(sql(db, "SELECT max(id) FROM messages")[0][0])
    matches = int(sql(db, "SELECT count(*) FROM messages WHERE search_vector @@ to_tsquery('hm_search', %s)",
                      (COMMON,))[0][0])
    min_id = ranking.window_start(n_rows, matches, 100)
    assert min_id is not None and min_id > n_rows // 2
    return build_pg_search_sql("fts", ts_plan(build_query(COMMON)),
                               SearchFilters(roles=["user", "assistant"], excluded=["tool"]), None, limit=300,
                               min_id=min_id, context=True)


def _window_plan(db: Any) -> str:
    statement, params = _window_statement(db)
    return "\n".join(r[0] for r in sql(db, "EXPLAIN (ANALYZE, BUFFERS) " + statement, tuple(params)))


def test_the_recency_window_trims_the_candidates_through_its_index_before_their_rows_are_read(db: Any) -> None:
    _common_history(db)
    sql(db, "VACUUM ANALYZE messages")
    statement, params = _window_statement(db)
    plan = _window_plan(db)
    # the window's block ranges (ANDed with the GIN bitmap, or alone for a window this small) say
    # which pages are read: the window is an index condition, never a filter on rows already read
    assert "Bitmap Index Scan on " + search_schema.WINDOW_INDEX in plan, plan
    assert not [line for line in plan.splitlines() if "Filter:" in line and "(id + 0)" in line], plan
    got = sorted(r[:2] for r in sql(db, statement, tuple(params)))
    with db._connection() as conn:  # the same rows without the index
        with conn.transaction():
            conn.execute(f"DROP INDEX {search_schema.WINDOW_INDEX}")
            without = sorted(tuple(r[:2]) for r in conn.execute(statement, params).fetchall())
            raise psycopg.Rollback()
    assert got == without and len(got) > 50, (len(got), len(without))


@pytest.mark.backends("postgres")
def test_schema_7_reaches_a_version_6_database_and_changes_no_row(pg_server: Any, pg_url: str) -> None:
    from hermes_memory.sessions.pg import PgSessionDB

    write_at_schema(pg_url, 6, _common_history)  # a database at schema 6, as the previous release left it
    # what the migrated database must answer: the same history written at today's schema (today's
    # statements cannot run at schema 6, which lacks hm_json_text)
    fresh = PgSessionDB(pg_server.create_database())
    _common_history(fresh)
    found_before = [r["id"] for r in fresh.search_messages(COMMON, limit=50)]
    fresh.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE messages")  # statistics as the old release left them
    before, sessions_before = stored_rows(pg_url, "messages"), stored_rows(pg_url, "sessions")
    db: Any = PgSessionDB(pg_url)
    try:
        assert db.migration["from_version"] == 6 and 7 in db.migration["applied"]
        # planned through the new index at once, not after autovacuum's next ANALYZE
        assert "Bitmap Index Scan on " + search_schema.WINDOW_INDEX in _window_plan(db), _window_plan(db)
        assert stored_rows(pg_url, "messages") == before
        assert stored_rows(pg_url, "sessions") == sessions_before
        assert sql(db, "SELECT count(*) FROM pg_indexes WHERE indexname = %s", (search_schema.WINDOW_INDEX,)) == [(1,)]
        assert [r["id"] for r in db.search_messages(COMMON, limit=50)] == found_before
    finally:
        db.close()


def _pending_pages(db: Any, index: str) -> int:
    sql(db, "CREATE EXTENSION IF NOT EXISTS pgstattuple")
    return int(sql(db, "SELECT pending_pages FROM pgstatginindex(%s::regclass)", (index,))[0][0])


def test_fresh_appends_leave_a_few_pending_pages_and_the_filtered_search_reads_the_index(db: Any) -> None:
    _history(db)
    sql(db, "ANALYZE messages")
    sql(db, "ANALYZE sessions")
    rnd = random.Random(3)
    for i in range(400):  # appends after the statistics, one commit each, as a live history gets them
        db.append_message("s000", "user" if i % 2 == 0 else "assistant", " ".join(rnd.choice(WORDS) for _ in range(12)))
    from hermes_memory.sessions.fts import build_query
    from hermes_memory.sessions.message_search import SearchFilters
    from hermes_memory.sessions.pg.search_sql import build_pg_search_sql
    from hermes_memory.sessions.pg.tsquery import ts_plan

    ts = ts_plan(build_query(f"{RARE[0]} {RARE[1]}"))
    statement, params = build_pg_search_sql("fts", ts, SearchFilters(roles=["user", "assistant"], excluded=["tool"]),
                                            None, limit=300, context=True)
    plan = "\n".join(r[0] for r in sql(db, "EXPLAIN " + statement, tuple(params)))
    # the planner charges the pending pages to every GIN path
    assert "Bitmap Index Scan on hm_messages_search" in plan and "Seq Scan on messages" not in plan, plan
    # PostgreSQL's default 4 MB lists held these rows' entries in dozens of pages that every scan reads
    assert _pending_pages(db, "hm_messages_search") <= 8  # 64 kB
    assert _pending_pages(db, "hm_messages_context") <= 8
    assert {r[0]: r[1] for r in sql(
        db, "SELECT c.relname, c.reloptions FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE a.amname = 'gin'"
    )} == {ix: [f"gin_pending_list_limit={search_schema.PENDING_LIST_KB}"] for ix in search_schema.PENDING_INDEXES}


@pytest.mark.backends("postgres")
def test_schema_5_reaches_a_version_4_database_and_changes_no_row(pg_url: str) -> None:
    from hermes_memory.sessions.pg import PgSessionDB

    # a database at schema 4, as the previous release left it
    write_at_schema(pg_url, 4, lambda old: _history(old, sessions=8, per_session=40))
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pgstattuple")
        pending = conn.execute("SELECT pending_pages FROM pgstatginindex('hm_messages_search')").fetchone()
        assert pending is not None and pending[0] > 8
    before, sessions_before = stored_rows(pg_url, "messages"), stored_rows(pg_url, "sessions")
    with at_schema(5):  # schema 5 itself (6: test_pg_escaped_json.py)
        db = PgSessionDB(pg_url)
        try:
            assert db.migration["applied"] == list(range(5, schema.SCHEMA_VERSION + 1))
            assert db.migration["to_version"] == schema.SCHEMA_VERSION
            assert _pending_pages(db, "hm_messages_search") == 0 and _pending_pages(db, "hm_messages_context") == 0
            # read as before: every column the same
            assert stored_rows(pg_url, "messages") == before
            assert stored_rows(pg_url, "sessions") == sessions_before
        finally:
            db.close()
    # today's statements need today's schema (9 indexes hm_json_text(tool_calls))
    db = PgSessionDB(pg_url)
    try:
        assert db.search_messages(WORDS[5], limit=5)
    finally:
        db.close()


# ----------------------------------------------------------------- filters, the same rows as SQLite
@pytest.fixture(scope="module")
def pair(pg_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SessionDB, Any]]:
    """The seeded history of tests/sessions/search_corpus.py on a SQLite file and in PostgreSQL."""
    from hermes_memory.sessions.pg import PgSessionDB

    lite = SessionDB(tmp_path_factory.mktemp("filters") / "state.db")
    pg = PgSessionDB(pg_server.create_database())
    for d in (lite, pg):
        search_corpus.seed(d)
    yield lite, pg
    lite.close()
    pg.close()


FILTERS: list[dict[str, Any]] = [
    {"role_filter": ["user"]},
    {"role_filter": ["assistant"]},
    {"role_filter": ["user", "assistant"], "exclude_sources": ["tool", "subagent", "kanban"]},
    {"source_filter": ["telegram"]},
    {"source_filter": ["cli"], "role_filter": ["user", "tool"]},
    {"exclude_sources": ["cli"]},
    {"session_id": "sess010"},
    {"exclude_session_ids": ["sess000", "sess001"], "role_filter": ["assistant"]},
]


def _key(db: Any, row: dict[str, Any]) -> tuple[str, str]:
    return row["session_id"], str(db.get_message(row["id"])["content"])


def test_filtered_searches_match_the_same_rows_on_both_backends(
    pair: tuple[SessionDB, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    lite, pg = pair
    monkeypatch.setattr(feedback, "FEEDBACK", False)
    checked = 0
    for f in FILTERS:
        for q in search_corpus.QUERIES:
            a = {_key(lite, r) for r in lite.search_messages(q, limit=1000, with_context=False, raise_errors=True, **f)}
            b = {_key(pg, r) for r in pg.search_messages(q, limit=1000, with_context=False, raise_errors=True, **f)}
            assert a == b, (f, q, a ^ b)
            checked += bool(a)
    assert checked >= 100, checked  # most filter/query pairs find rows


def test_the_filtered_tool_call_finds_the_same_best_sessions_on_both_backends(pair: tuple[SessionDB, Any]) -> None:
    lite, pg = pair
    found = same_first = 0
    for args in ({"role_filter": "user"}, {"source": "telegram"}, {"role_filter": "assistant", "source": "cli"}):
        for q in ["kafka consumer lag", "what was the rollback plan for the deploy?", "hotel booking",
                  "marathon training", "index funds", "book club", "tomato seedlings", "jazz chords"]:
            a = [r["session_id"] for r in _results(session_search({"query": q, "limit": 5, **args}, lite))]
            b = [r["session_id"] for r in _results(session_search({"query": q, "limit": 5, **args}, pg))]
            assert bool(a) == bool(b), (args, q, a, b)
            if a:
                found += 1
                same_first += a[0] == b[0]
                assert a[0] in b[:2] and len(set(a) & set(b)) >= min(3, len(a)), (args, q, a, b)
    assert found >= 12 and same_first >= found - 2, (found, same_first)


def _results(out: str) -> list[dict[str, Any]]:
    import json

    got = json.loads(out)
    assert got["success"], got
    return list(got["results"])
