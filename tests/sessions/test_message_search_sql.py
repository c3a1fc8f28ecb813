"""build_search_sql: each search step's SQL and parameters, checked as text and run on a real file."""

from __future__ import annotations

import sqlite3

import pytest

from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.fts import build_query
from hermes_memory.sessions.hmcontext import own_text
from hermes_memory.sessions.message_search import SEARCH_STEPS, SearchFilters, build_search_sql, sort_order
from tests.helpers.values import present

BACKENDS = ("sqlite",)  # SQLite's own FTS5 statements; PostgreSQL's are in test_pg_search_sql.py


def _run(db: SessionDB, sql: str, params: list) -> list[int]:
    assert sql.count("?") == len(params)
    return [int(r["id"]) for r in db.conn.execute(sql, params)]


def test_unfiltered_relevance_reads_the_fts_table_alone(db: SessionDB) -> None:
    sql, params = build_search_sql("fts", build_query("walrus"), SearchFilters(), None, limit=7)
    assert sql == ("SELECT rowid AS id, rank FROM hm_messages_fts WHERE hm_messages_fts MATCH ? "
                   "ORDER BY rank LIMIT ?")
    assert params == [own_text(present(build_query("walrus").fts)), 7]  # one word: the row's own text only


def test_recency_window_and_capped_expression_go_into_the_fts_step() -> None:
    plan = build_query("walrus tusk")
    sql, params = build_search_sql("fts", plan, SearchFilters(), "relevance", limit=5, fts_expr="tusk",
                                   min_rowid=40)
    assert "hm_messages_fts.rowid >= ?" in sql
    assert params == ["tusk", 40, 5]


def test_filters_join_sessions_and_keep_parameter_order(db: SessionDB) -> None:
    a = db.create_session("a", source="cli", user_id="u1")
    b = db.create_session("b", source="cron", user_id="u1")
    ids = {s: db.append_message(s, "user", "the walrus sings", timestamp=100.0 + i) for i, s in enumerate((a, b))}
    db.append_message(a, "assistant", "a walrus answer", timestamp=103.0)
    f = SearchFilters(sources=["cli"], roles=["user"], user_id="u1", since=50.0, until=150.0)
    sql, params = build_search_sql("fts", build_query("walrus"), f, "newest", limit=10)
    assert "JOIN sessions s ON s.id = m.session_id" in sql
    assert "ORDER BY m.timestamp DESC, m.id DESC" in sql
    assert params == [own_text(present(build_query("walrus").fts)), "cli", "u1", "user", 50.0, 150.0, 10]
    assert _run(db, sql, params) == [ids["a"]]


def test_session_filters_need_no_join(db: SessionDB) -> None:
    sql, _ = build_search_sql("fts", build_query("walrus"), SearchFilters(session_id="x"), None, limit=3)
    assert "JOIN sessions" not in sql
    assert "m.session_id = ?" in sql


def test_top_up_takes_the_newest_rows_of_the_full_query(db: SessionDB) -> None:
    s = db.create_session("s")
    ids = [db.append_message(s, "user", f"walrus number {i}") for i in range(3)]
    sql, params = build_search_sql("top_up", build_query("walrus"), SearchFilters(), None, limit=2)
    assert "ORDER BY hm_messages_fts.rowid DESC" in sql
    assert _run(db, sql, params) == ids[::-1][:2]


def test_top_up_leaves_out_the_rows_held_with_the_same_order_and_ranks(db: SessionDB) -> None:
    s = db.create_session("s")
    ids = [db.append_message(s, "user", f"walrus number {i}" + " walrus" * (i % 3)) for i in range(6)]
    plan = build_query("walrus")
    full_sql, full_params = build_search_sql("top_up", plan, SearchFilters(), None, limit=10)
    full = [(int(r["id"]), float(r["rank"])) for r in db.conn.execute(full_sql, full_params)]
    held = [ids[5], ids[2]]
    sql, params = build_search_sql("top_up", plan, SearchFilters(), None, limit=10, skip=held)
    got = [(int(r["id"]), float(r["rank"])) for r in db.conn.execute(sql, params)]
    assert got == [(i, rank) for i, rank in full if i not in held]
    again, _ = build_search_sql("top_up", plan, SearchFilters(), None, limit=10, skip=[ids[0]])
    assert again == sql  # one statement text whatever the ids: the statement cache keeps it


def test_cjk_steps_read_the_side_table_in_the_asked_order(db: SessionDB) -> None:
    s = db.create_session("s")
    old = db.append_message(s, "user", "我们讨论了数据库迁移", timestamp=10.0)
    new = db.append_message(s, "user", "数据库迁移完成了", timestamp=20.0)
    plan = build_query("数据库迁移")
    assert plan.cjk_trigram
    for sort, expected in ((None, [new, old]), ("oldest", [old, new]), ("newest", [new, old])):
        sql, params = build_search_sql("cjk_trigram", plan, SearchFilters(), sort, limit=50)
        assert _run(db, sql, params) == expected
    sql, params = build_search_sql("cjk_like", build_query("迁"), SearchFilters(), "oldest", limit=50,
                                   pattern="%迁%")
    assert params[:2] == ["%迁%", "%迁%"]
    assert _run(db, sql, params) == [old, new]


def test_every_step_is_valid_sql_with_negated_words(db: SessionDB) -> None:
    plan = build_query("walrus NOT 迁移 NOT tusk", syntax=True)
    f = SearchFilters(excluded=["cron"], excluded_sessions=["z"], cwd_prefix="/home/u/p")
    for step in SEARCH_STEPS:
        sql, params = build_search_sql(step, plan, f, "oldest", limit=5, pattern="%迁%")
        try:
            _run(db, sql, params)
        except sqlite3.Error as exc:  # pragma: no cover - the assertion message is the point
            pytest.fail(f"{step}: {exc}\n{sql}")


def test_unknown_step_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown search step"):
        build_search_sql("bogus", build_query("x"), SearchFilters(), None, limit=1)


@pytest.mark.parametrize(("sort", "kind"), [(None, "relevance"), ("NEWEST", "newest"), ("recent", "newest"),
                                            ("desc", "newest"), ("asc", "oldest"), ("oldest", "oldest"),
                                            ("bm25", "relevance")])
def test_sort_words(sort: str | None, kind: str) -> None:
    assert sort_order(sort) == kind


def test_search_arguments_become_the_same_filters_and_page_on_both_engines() -> None:
    """``search_messages`` of SQLite and PostgreSQL build their filters and clamp their page with
    the same two helpers."""
    from hermes_memory.sessions.message_search import MAX_SEARCH_LIMIT, SearchFilters, page_bounds

    f = SearchFilters.from_args("cli, telegram", ["cron"], "user", "s1", "u", 1.0, 2.0, None, "/p")
    assert f == SearchFilters(["cli", "telegram"], ["cron"], ["user"], "s1", "u", 1.0, 2.0, [], "/p")
    assert SearchFilters.from_args() == SearchFilters()
    assert page_bounds(5000, -3) == (MAX_SEARCH_LIMIT, 0) and page_bounds(-1, 7) == (0, 7)
