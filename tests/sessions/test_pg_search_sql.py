"""PostgreSQL search statements (sessions/pg/search_sql.py) and the search schema they read
(sessions/pg/search_schema.py, migration 2), run on a real server."""

from __future__ import annotations

from typing import Any

import pytest

from hermes_memory.sessions.fts import build_query
from hermes_memory.sessions.message_search import SearchFilters
from hermes_memory.sessions.pg.search_sql import SEARCH_STEPS, Scoring, build_pg_search_sql
from hermes_memory.sessions.pg.tsquery import ts_plan
from tests.sessions.backend_sql import sql

BACKENDS = ("postgres",)  # PostgreSQL's own statements; SQLite's are in test_message_search_sql.py


def _run(db: Any, statement: str, params: list[Any]) -> list[int]:
    assert statement.count("%s") == len(params)
    return [int(r[0]) for r in sql(db, statement, tuple(params))]


def _plan(db: Any, statement: str, params: list[Any]) -> str:
    with db._connection() as conn:
        conn.execute("SET enable_seqscan = off")
        try:
            return "\n".join(r[0] for r in conn.execute("EXPLAIN " + statement, params).fetchall())
        finally:
            conn.execute("RESET enable_seqscan")


def test_the_vector_holds_word_pieces_every_word_and_no_accents(db: Any) -> None:
    db.create_session("s")
    mid = db.append_message("s", "user", "it's in gateway/run.py, the café at user@host 20.04")
    lexemes = set(sql(db, "SELECT tsvector_to_array(search_vector) FROM messages WHERE id = %s", (mid,))[0][0])
    assert {"gateway", "run", "py", "it", "s", "the", "cafe", "user", "host", "20", "04"} <= lexemes
    assert sql(db, "SELECT max(version) FROM hm_schema_migrations")[0][0] >= 2


def test_filters_keep_parameter_order_and_join_sessions(db: Any) -> None:
    a = db.create_session("a", source="cli", user_id="u1")
    b = db.create_session("b", source="cron", user_id="u1")
    ids = {s: db.append_message(s, "user", "the walrus sings", timestamp=100.0 + i) for i, s in enumerate((a, b))}
    db.append_message(a, "assistant", "a walrus answer", timestamp=103.0)
    ts = ts_plan(build_query("walrus"))
    f = SearchFilters(sources=["cli"], roles=["user"], user_id="u1", since=50.0, until=150.0)
    statement, params = build_pg_search_sql("fts", ts, f, "newest", limit=10)
    assert "JOIN sessions s ON s.id = m.session_id" in statement
    assert "ORDER BY c.timestamp DESC, c.id DESC" in statement
    assert params[-6:] == ["cli", "u1", "user", 50.0, 150.0, 10]
    assert _run(db, statement, params) == [ids["a"]]


def test_relevance_scores_each_term_with_its_idf_and_the_window_cuts_old_rows(db: Any) -> None:
    db.create_session("s")
    ids = [db.append_message("s", "user", text) for text in ["walrus tusk", "walrus", "tusk tusk tusk", "walrus"]]
    ts = ts_plan(build_query("walrus tusk"))
    statement, params = build_pg_search_sql("fts", ts, SearchFilters(), None, limit=10,
                                            scoring=Scoring(tuple(ts.or_terms), (1.0, 5.0)))
    assert _run(db, statement, params)[0] in (ids[0], ids[2])  # rows with the heavily weighted word first
    assert _run(db, statement, params)[-1] == ids[1]  # equal scores: the newer row first
    statement, params = build_pg_search_sql("fts", ts, SearchFilters(), None, limit=10, min_id=ids[2])
    assert set(_run(db, statement, params)) == {ids[2], ids[3]}


def test_every_step_is_valid_sql_with_negated_words_and_every_filter(db: Any) -> None:
    db.create_session("s", source="cli")
    db.append_message("s", "user", "walrus 迁移")
    ts = ts_plan(build_query("walrus NOT 迁移 NOT tusk", syntax=True))
    f = SearchFilters(sources=["cli"], excluded=["cron"], roles=["user"], session_id="s", user_id="u",
                      since=0.0, until=1e12, excluded_sessions=["z"], cwd_prefix="/home/u/p")
    for step in SEARCH_STEPS:
        for sort in (None, "newest", "oldest"):
            statement, params = build_pg_search_sql(step, ts, f, sort, limit=5, literals=["迁移"],
                                                    scoring=Scoring(tuple(ts.or_terms), (1.0,) * len(ts.or_terms)))
            assert _run(db, statement, params) == []


def test_cjk_step_reads_the_partial_trigram_index_in_the_asked_order(db: Any) -> None:
    s = db.create_session("s")
    old = db.append_message(s, "user", "我们讨论了数据库迁移", timestamp=10.0)
    new = db.append_message(s, "user", "数据库迁移完成了", timestamp=20.0)
    db.append_message(s, "user", "english only about 数据 nothing", timestamp=30.0)
    ts = ts_plan(build_query("数据库迁移"))
    for sort, expected in ((None, [new, old]), ("oldest", [old, new]), ("newest", [new, old])):
        statement, params = build_pg_search_sql("cjk", ts, SearchFilters(), sort, limit=50, literals=ts.trigram)
        assert _run(db, statement, params) == expected
    statement, params = build_pg_search_sql("cjk", ts, SearchFilters(), None, limit=50, literals=ts.trigram)
    assert "hm_messages_cjk_trgm" in _plan(db, statement, params)  # the predicate is the index's


def test_the_fts_step_reads_the_gin_index(db: Any) -> None:
    db.create_session("s")
    db.append_message("s", "user", "walrus")
    statement, params = build_pg_search_sql("fts", ts_plan(build_query("walrus")), SearchFilters(), None, limit=5)
    assert "hm_messages_search" in _plan(db, statement, params)


def test_unknown_step_and_a_cjk_step_without_literals_are_refused() -> None:
    ts = ts_plan(build_query("x"))
    with pytest.raises(ValueError, match="unknown search step"):
        build_pg_search_sql("bogus", ts, SearchFilters(), None, limit=1)
    with pytest.raises(ValueError, match="literal"):
        build_pg_search_sql("cjk", ts, SearchFilters(), None, limit=1, literals=[])


def test_frequent_words_take_the_planner_estimate_instead_of_a_count(db: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_memory.sessions.pg import terms

    db.create_session("s")
    for i in range(60):
        db.append_message("s", "user", f"lantern entry {i}" + (" moth" if i < 3 else ""))
    stats = terms.PgTermStats()
    with db._connection() as conn:
        assert stats.frequent_lexemes(conn) == {}  # no statistics yet: every term is counted
        conn.execute("ANALYZE messages")
        monkeypatch.setattr(terms, "ESTIMATE_ABOVE", 20)
        stats = terms.PgTermStats()
        assert stats.frequent_lexemes(conn).get("lantern") == 60
    for i in range(10):  # after ANALYZE: a count would say 70, the estimate still says 60
        db.append_message("s", "user", f"lantern late {i}")
    with db._connection() as conn:
        assert stats.document_frequencies(conn, ["'lantern'", "'moth'"], ["lantern", "moth"]) == [60, 3]
    assert len(db.search_messages("lantern moth", limit=100)) == 70


def test_migration_2_leaves_the_trigram_indexes_search_reads_and_no_other(db: Any) -> None:
    names = {r[0] for r in sql(db, "SELECT indexname FROM pg_indexes WHERE tablename IN ('messages', 'sessions') "
                                   "AND indexdef LIKE '%%gin_trgm_ops%%'")}
    assert names == {"hm_messages_cjk_trgm", "hm_sessions_title_trgm"}
