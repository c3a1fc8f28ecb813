"""The statements a PostgreSQL search runs (issue 15): a query holding no CJK scans no trigram
index yet still finds its words written against CJK text (migration 4, ``hm_messages_cjk_words``),
a query holding CJK keeps the substring lookups, and the row count, term counts, candidates and
glued-word lookup of a question travel in two statements. Real server, real statements."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg
import pytest

from hermes_memory.sessions.fts import build_query
from hermes_memory.sessions.message_search import SearchFilters
from hermes_memory.sessions.pg.search_sql import build_pg_search_sql
from hermes_memory.sessions.pg.tsquery import ts_plan
from tests.sessions.backend_sql import sql

BACKENDS = ("postgres",)  # PostgreSQL's own statements


@pytest.fixture
def statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every SQL text the store's connections run from now on, in order."""
    seen: list[str] = []
    original: Callable[..., Any] = psycopg.Connection.execute

    def recording(self: Any, query: Any, params: Any = None, **kw: Any) -> Any:
        seen.append(str(query))
        return original(self, query, params, **kw)

    monkeypatch.setattr(psycopg.Connection, "execute", recording)
    return seen


def _mixed_store(db: Any) -> dict[str, int]:
    db.create_session("s")
    return {
        "glued": db.append_message("s", "user", "用Python写一个部署脚本"),
        "glued_stem": db.append_message("s", "assistant", "这些Pythons脚本已经修复"),
        "english": db.append_message("s", "user", "the python deploy script is ready"),
        "cjk": db.append_message("s", "assistant", "记忆断裂的问题已经修复"),
        "other": db.append_message("s", "user", "nothing relevant here at all"),
    }


def test_an_english_question_scans_no_trigram_index_yet_finds_words_glued_to_cjk(db: Any, statements: list[str]) -> None:
    ids = _mixed_store(db)
    statements.clear()
    got = {r["id"] for r in db.search_messages("what did we say about python?", raise_errors=True)}
    # 用Python写 and Pythons (stemmed) against CJK text, found as words, beside the English row
    # (and the turn after it, matched through its previous turn's text)
    assert {ids["glued"], ids["glued_stem"], ids["english"]} <= got and ids["other"] not in got
    assert statements and not [s for s in statements if "ILIKE" in s or "gin_trgm" in s], statements
    got = {r["id"] for r in db.search_messages("python", sort="newest", raise_errors=True)}
    assert got == {ids["glued"], ids["glued_stem"], ids["english"]}


def test_a_query_holding_cjk_keeps_the_substring_lookups_and_finds_mixed_text(db: Any, statements: list[str]) -> None:
    ids = _mixed_store(db)
    statements.clear()

    def found(q: str) -> set[int]:
        return {r["id"] for r in db.search_messages(q, raise_errors=True)}

    assert found("用Python写") == {ids["glued"]}
    assert any("ILIKE" in s for s in statements)  # CJK in the query: substrings, as SQLite's trigram table
    assert found("Python写") == {ids["glued"]}
    assert found("写一") == {ids["glued"]} and found("修复") == {ids["glued_stem"], ids["cjk"]}
    assert ids["glued"] in found("python 部署")


def test_the_row_count_term_counts_candidates_and_glued_lookup_take_two_statements(db: Any, statements: list[str]) -> None:
    _mixed_store(db)
    question = "did the python deploy script work?"
    db.search_messages(question, raise_errors=True)  # warm: stems are cached after the first search
    statements.clear()
    db.search_messages(question, raise_errors=True)
    steps = [s for s in statements
             if "max(id)" in s or "count(*) FROM (SELECT 1" in s or "ts_rank_cd" in s or "regexp_replace" in s or "ILIKE" in s]
    assert len(steps) == 2, steps  # schema 3's code ran four: max(id), the counts, the candidates, the CJK scan


def test_the_glued_step_reads_the_partial_index_of_cjk_rows(db: Any) -> None:
    ids = _mixed_store(db)
    ts = ts_plan(build_query("python"))
    statement, params = build_pg_search_sql("glued", ts, SearchFilters(), None, limit=50, literals=ts.trigram)
    assert [int(r[0]) for r in sql(db, statement, tuple(params))] == [ids["glued_stem"], ids["glued"]]  # newest first
    with db._connection() as conn:
        conn.execute("SET enable_seqscan = off")
        plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + statement, params).fetchall())
        conn.execute("RESET enable_seqscan")
    assert "hm_messages_cjk_words" in plan


def test_term_counts_are_read_once_while_the_messages_do_not_change(db: Any, statements: list[str]) -> None:
    _mixed_store(db)
    question = "did the python deploy script work?"
    first = [r["id"] for r in db.search_messages(question, raise_errors=True)]
    statements.clear()
    assert [r["id"] for r in db.search_messages(question, raise_errors=True)] == first
    assert not [s for s in statements if "count(*) FROM (SELECT 1" in s]  # nothing changed: no count
    new = db.append_message("s", "user", "python deploy script done")
    statements.clear()
    assert new in [r["id"] for r in db.search_messages(question, raise_errors=True)]
    assert [s for s in statements if "count(*) FROM (SELECT 1" in s]  # an append: counted again
    with db._connection() as conn:
        assert db._pg_terms.document_frequencies(conn, ["'deploy'"], ["deploy"]) == [2]  # not the cached 1


def test_a_bulk_load_leaves_the_planner_statistics_search_needs(db: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_memory.sessions.pg import connection

    monkeypatch.setattr(connection, "ANALYZE_AFTER_ROWS", 200, raising=False)
    db.create_session("s")
    with db.batch():  # what `sessions import` and bench/storage.py load with
        for i in range(5):
            db.append_messages("s", [{"role": "user", "content": f"walrus number {i} {j}"} for j in range(50)])
    # without statistics the planner scanned every row for a tsquery and nested-looped sessions
    assert sql(db, "SELECT count(*) FROM pg_stats WHERE tablename = 'messages' AND attname = 'search_vector'") == [(1,)]
    assert sql(db, "SELECT reltuples FROM pg_class WHERE relname = 'messages'") == [(250,)]
    with db.batch():  # a small batch (a tenth or less of the table) leaves them to autovacuum
        db.append_messages("s", [{"role": "user", "content": "one more walrus"}])
    assert sql(db, "SELECT reltuples FROM pg_class WHERE relname = 'messages'") == [(250,)]
