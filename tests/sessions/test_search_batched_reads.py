"""Fewer statements per search, same answers: the filter check reads only the rows it needs and
hands their columns on (no second read for session ids, texts or discovery's result rows), a batch
of lineages walks only the sessions that have a parent, and the dropped-word check searches ASCII
texts without the matcher loop. Real SQLite files and, for lineages, a
real PostgreSQL too (``db`` fixture)."""

from __future__ import annotations

import json
import random
import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from hermes_memory.sessions import fts, message_search, ranking, word_match
from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.search import discovery_rows, session_search
from tests.sessions.backend_sql import raw_write


@contextmanager
def statements(db: SessionDB) -> Iterator[list[str]]:
    """The SQL statements ``db``'s SQLite connection runs inside the block."""
    seen: list[str] = []
    db.conn.set_trace_callback(seen.append)
    try:
        yield seen
    finally:
        db.conn.set_trace_callback(None)


def _home(db: SessionDB, tool_share: int = 0) -> None:
    """Twelve sessions of 40 turns sharing the words "walrus"/"reef"; every ``tool_share``-th turn
    a tool turn (0: none), one hidden ``tool`` session."""
    for n in range(12):
        sid = db.create_session(f"s{n}", source="tool" if n == 5 else "cli", title=f"chat {n}")
        rows = []
        for i in range(40):
            role = "tool" if tool_share and i % tool_share == 0 else ("user" if i % 2 == 0 else "assistant")
            rows.append({"role": role, "content": f"walrus {'reef ' * (i % 4)}tusk {i % 9} note {n}"})
        db.append_messages(sid, rows)


BACKENDS = ("sqlite",)


def _in_list(statement: str) -> list[str]:
    """The values of a statement's first ``IN (...)`` list."""
    return statement.split(" IN (", 1)[1].split(")", 1)[0].split(",")


def _keep_sizes(seen: list[str]) -> list[int]:
    return [s.split(" WHERE m.id IN (", 1)[1].split(")", 1)[0].count(",") + 1
            for s in seen if s.startswith("SELECT m.id AS id") and " WHERE m.id IN (" in s]


def test_the_filter_check_reads_only_the_rows_a_page_needs_when_all_pass(db: SessionDB) -> None:
    _home(db)
    with statements(db) as seen:
        rows = db.search_messages("walrus reef", role_filter=["user", "assistant"], exclude_sources=["subagent"],
                                  limit=20, with_context=False)
    pool = max(20, ranking.RERANK_POOL)
    # every row passes: one check of the pool, not of HEAD_FACTOR x the pool
    assert _keep_sizes(seen) == [min(pool, 12 * 40)] and len(rows) == 20


def test_the_filter_check_reads_more_while_the_page_is_short(db: SessionDB, monkeypatch: pytest.MonkeyPatch) -> None:
    _home(db, tool_share=3)
    monkeypatch.setattr(ranking, "RERANK_POOL", 60)
    kw: dict[str, Any] = dict(role_filter=["user", "assistant"], exclude_sources=["tool"], limit=20)
    with statements(db) as seen:
        fast = db.search_messages("walrus", **kw)
    sizes = _keep_sizes(seen)
    assert len(sizes) >= 2 and sizes[0] == 60 and sum(sizes) <= message_search.HEAD_FACTOR * 60
    monkeypatch.setattr(message_search, "broad_filters", lambda f: False)  # the joined statement alone
    assert db.search_messages("walrus", **kw) == fast
    assert all(r["role"] != "tool" and r["source"] != "tool" for r in fast)


def test_discovery_reads_its_rows_once(db: SessionDB, monkeypatch: pytest.MonkeyPatch) -> None:
    _home(db, tool_share=5)
    queries = ("walrus reef", "tusk 4 note", "reef", "note 3 walrus")
    with statements(db) as seen:
        fast = [discovery_rows(db, q) for q in queries]
        tool = [session_search({"query": q}, db) for q in queries]
    # the result rows and their session ids come from the filter check: no second join of the page
    assert not [s for s in seen if s.startswith("SELECT m.id, m.session_id, m.role, m.timestamp")]
    assert not [s for s in seen if s.startswith("SELECT id, session_id FROM messages WHERE id IN")]
    monkeypatch.setattr(message_search, "broad_filters", lambda f: False)
    assert [discovery_rows(db, q) for q in queries] == fast
    assert [session_search({"query": q}, db) for q in queries] == tool
    assert all(fast) and all(json.loads(t)["count"] for t in tool)


def test_the_dropped_word_check_reads_no_text_twice(db: SessionDB, monkeypatch: pytest.MonkeyPatch) -> None:
    _home(db, tool_share=4)
    monkeypatch.setattr(ranking, "POSTINGS_BUDGET", 150)  # "walrus" (in every row) is dropped, scored from the texts
    queries = ("walrus reef note", "walrus tusk 4", "walrus note 3 reef")
    fast = []
    for q in queries:
        with statements(db) as seen:
            fast.append(discovery_rows(db, q))
        # the texts the filter check read are not read again (rows the top-up added are read once,
        # for the dropped words and the question turns together)
        checked = {i for s in seen if "m.content AS content" in s for i in _in_list(s)}
        again = {i for s in seen if s.startswith("SELECT id, session_id, content") for i in _in_list(s)}
        assert checked and not checked & again
        assert not [s for s in seen if "content LIKE '%?%'" in s]
    monkeypatch.setattr(message_search, "broad_filters", lambda f: False)
    slow = [discovery_rows(db, q) for q in queries]
    assert slow == fast and all(fast)


@pytest.mark.backends("sqlite", "postgres")
def test_batched_lineages_are_the_per_session_ones(db: SessionDB) -> None:
    db.create_session("root")
    db.create_session("mid", parent_session_id="root")
    db.create_session("leaf", parent_session_id="mid")
    db.create_session("solo")
    db.create_session("self", parent_session_id="self")
    ids = ["leaf", "solo", "mid", "root", "self", "unknown", "leaf"]
    got = db.get_lineages(ids)
    assert list(got) == ["leaf", "solo", "mid", "root", "self", "unknown"]
    assert got == {i: db.get_lineage(i) for i in got if i != "unknown"} | {"unknown": ["unknown"]}
    assert got["leaf"] == ["root", "mid", "leaf"] and got["self"] == ["self"]
    raw_write(db, "UPDATE sessions SET parent_session_id = 'leaf' WHERE id = 'root'")  # a corrupt cycle
    cyc = db.get_lineages(["leaf", "solo"])
    assert cyc["leaf"][-1] == "leaf" and len(set(cyc["leaf"])) == len(cyc["leaf"]) and cyc["solo"] == ["solo"]


def test_batched_lineages_walk_only_sessions_with_a_parent(db: SessionDB) -> None:
    db.create_session("a")
    db.create_session("b", parent_session_id="a")
    for n in range(30):
        db.create_session(f"p{n}")
    with statements(db) as seen:
        got = db.get_lineages(["b", *(f"p{n}" for n in range(30))])
    walks = [s for s in seen if s.startswith("WITH RECURSIVE")]
    assert got["b"] == ["a", "b"] and got["p7"] == ["p7"]
    assert len(walks) == 1 and "'b'" in walks[0] and "'p7'" not in walks[0]


def test_trace_helper_sees_statements(db: SessionDB) -> None:
    with statements(db) as seen:
        db.conn.execute("SELECT 1").fetchall()
    assert seen == ["SELECT 1"] and isinstance(db.conn, sqlite3.Connection)


def test_dropped_word_check_on_ascii_texts_is_the_patterns_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(5)
    pieces = ["walk", "Walked", "WALKING", "sidewalk", "walk_er", "9walk", "walk9", "x-walk", "(walk)", "run",
              "Rerun", "runs", "caf\u00e9", "\u00e9walk", "\u212aelvin", "kelvin", "  ", ".", "_run", "r", "ru"]
    texts = ["", "walk"] + [" ".join(rng.choice(pieces) for _ in range(rng.randint(1, 8))) for _ in range(400)]
    terms = [["walk"], ["run", "runs"], ["kelvin"], ["r"]]
    calls: list[str] = []
    spans = word_match.WordMatcher.spans

    def recording_spans(self: word_match.WordMatcher, text: str) -> Iterator[tuple[int, int]]:
        calls.append(text)
        return spans(self, text)

    monkeypatch.setattr(word_match.WordMatcher, "spans", recording_spans)
    got = word_match.found_per_term(terms, texts)
    want = [[re.compile(word_match.word_pattern(t), re.IGNORECASE).search(x) is not None for t in terms] for x in texts]
    assert got == want and any(any(r) for r in got) and not all(all(r) for r in got)
    assert calls and all(not x.isascii() for x in calls)  # ASCII texts skip the matcher loop


@pytest.mark.backends("sqlite", "postgres")
def test_discovery_results_show_the_sessions_own_columns(db: SessionDB) -> None:
    for n in range(4):
        sid = db.create_session(f"c{n}", source=("cli", "telegram")[n % 2], model=f"m-{n}", title=f"walrus chat {n}"
                                if n != 2 else None, started_at=1_700_000_000.0 + n * 3600)
        db.append_messages(sid, [{"role": "user", "content": f"walrus reef {n} {i}"} for i in range(3)])
    db.create_session("titled", title="narwhal plans")  # found by its title only: no hits
    for query in ("walrus reef", "narwhal plans", "walrus"):
        out = json.loads(session_search({"query": query, "limit": 10}, db))
        assert out["success"] and out["results"], query
        for res in out["results"]:
            sess = db.get_session(res["session_id"])
            assert sess is not None
            got = {k: res[k] for k in ("title", "source", "started_at", "model")}
            assert got == {k: sess[k] for k in ("title", "source", "started_at", "model")}, (query, res["session_id"])


def test_discovery_reads_no_session_row_a_hit_carries(db: SessionDB) -> None:
    _home(db)
    with statements(db) as seen:
        out = json.loads(session_search({"query": "walrus reef", "limit": 5}, db))
    assert out["count"] == 5 and all(r["hits"] for r in out["results"])
    assert not [s for s in seen if s.startswith("SELECT * FROM sessions WHERE id")]


def _chat_home(db: SessionDB) -> None:
    """Ten sessions of a group chat: speaker tags, questions and their answers, one word shared."""
    for n in range(10):
        sid = db.create_session(f"c{n}", source="cli")
        rows = []
        for i in range(30):
            who = ("Maria", "Jon")[i % 2]
            text = f"{who}: did you see the walrus at pier {i % 7}?" if i % 3 == 0 else f"{who}: the walrus ate {i} fish"
            rows.append({"role": "user" if i % 2 == 0 else "assistant", "content": text})
        db.append_messages(sid, rows)


def test_question_turns_are_judged_from_the_texts_the_search_read(db: SessionDB, monkeypatch: pytest.MonkeyPatch) -> None:
    _chat_home(db)
    queries = ("what did Maria say about the walrus pier", "where is the walrus fish", "Jon walrus")
    with statements(db) as seen:
        fast = [discovery_rows(db, q) for q in queries] + [db.search_messages(q, limit=10) for q in queries]
    # the filter check (discovery) and the session-id read (no filters) carry the texts: no second read
    assert not [s for s in seen if "content LIKE '%?%'" in s]
    assert [s for s in seen if s.startswith("SELECT q.id, q.session_id")]  # the questions' answers are still looked up
    real = message_search.rank_signals
    monkeypatch.setattr(message_search, "rank_signals",
                        lambda *a, **k: real(*a, **{**k, "texts": None}))  # the signals read the texts themselves
    with statements(db) as seen:
        slow = [discovery_rows(db, q) for q in queries] + [db.search_messages(q, limit=10) for q in queries]
    assert [s for s in seen if "content LIKE '%?%'" in s]
    assert slow == fast and all(fast)


def test_a_literal_term_search_shapes_only_its_page_and_reads_no_text_twice(db: SessionDB) -> None:
    sid = db.create_session("lit", source="cli")
    db.append_messages(sid, [{"role": "user" if i % 2 == 0 else "assistant",
                              "content": f"walrus notes in {'c++' if i % 3 == 0 else 'c'} number {i}"} for i in range(120)])
    with statements(db) as seen:
        rows = db.search_messages("walrus c++", limit=5)
    assert len(rows) == 5 and all("c++" in r["snippet"] or "c++" in str(r["context"]) for r in rows)
    shaped = [s for s in seen if s.startswith("SELECT m.id, m.session_id, m.role, m.content")]
    assert len(shaped) == 1 and shaped[0].split(" IN (", 1)[1].count(",") + 1 == 5  # the page only, not the over-fetch
    texts = [s.split(" IN (", 1)[1].split(")", 1)[0].split(",") for s in seen
             if s.startswith("SELECT id, content, tool_name, tool_calls FROM messages WHERE id IN")
             or s.startswith("SELECT id, session_id, content")]
    read = [i for chunk in texts for i in chunk]
    assert len(read) == len(set(read))


def test_rows_the_top_up_adds_are_read_once(db: SessionDB, monkeypatch: pytest.MonkeyPatch) -> None:
    _home(db, tool_share=5)
    # "walrus" and "reef" are dropped (budget 150), "4" matches about 90 rows: fewer than discovery's
    # 300, so the newest rows of the whole query top the page up
    monkeypatch.setattr(ranking, "POSTINGS_BUDGET", 150)
    queries = ("walrus reef 4", "reef walrus note 7", "walrus 3 reef")
    with statements(db) as seen:
        tool = [session_search({"query": q}, db) for q in queries]
    top_ups = [s for s in seen if " ORDER BY hm_messages_fts.rowid DESC LIMIT" in s]
    assert len(top_ups) == len(queries) and all("s.started_at AS session_started" in s for s in top_ups)
    # their session ids, texts and result columns came with them: no statement reads rows again
    assert not [s for s in seen if s.startswith(("SELECT id, session_id, content", "SELECT id, session_id FROM",
                                                 "SELECT m.id, m.session_id, m.role, m.timestamp"))]
    results = [json.loads(t) for t in tool]
    assert all(r["count"] and r["results"][0]["hits"] for r in results)
    assert max(sum(res["match_count"] for res in r["results"]) for r in results) > 0
    monkeypatch.setattr(message_search, "broad_filters", lambda f: False)  # the joined statement, then the top-up
    assert [session_search({"query": q}, db) for q in queries] == tool


@pytest.mark.backends("sqlite", "postgres")
def test_discovery_groups_the_rows_discovery_rows_returns(db: SessionDB) -> None:
    _home(db, tool_share=5)
    cron = db.create_session("cron-job", source="cron", title="nightly")  # demoted after the user's own
    db.append_messages(cron, [{"role": "user", "content": f"walrus reef cron run {i}"} for i in range(6)])
    for query in ("walrus reef", "cron walrus", "tusk 4 note", "reef"):
        rows = discovery_rows(db, query)
        out = json.loads(session_search({"query": query, "limit": 10}, db))
        shown = [(h["message_id"], h["session_id"], h["role"], h["timestamp"]) for r in out["results"] for h in r["hits"]]
        first: dict[str, list[tuple[int, str, str, float]]] = {}
        for r in rows:
            first.setdefault(r["session_id"], []).append((r["id"], r["session_id"], r["role"], r["timestamp"]))
        # no lineages here: each result is a session, in the order of its first row, with its first five rows
        assert [r["session_id"] for r in out["results"]] == list(first)[:10], query
        assert shown == [h for sid in list(first)[:10] for h in first[sid][:5]], query
        assert [r["match_count"] for r in out["results"]] == [len(first[sid]) for sid in list(first)[:10]]


def test_a_tool_call_plans_its_query_once(db: SessionDB, monkeypatch: pytest.MonkeyPatch) -> None:
    _home(db)
    planned: list[str] = []
    real = fts._plan

    def counting(q: str, syntax: bool) -> fts.QueryPlan:
        planned.append(q)
        return real(q, syntax)

    monkeypatch.setattr(fts, "_plan", counting)
    fts._kept_plan.cache_clear()  # plans other tests made are not this test's
    query = "what did the walrus say about reef tusk 7"
    out = json.loads(session_search({"query": query}, db))
    # the search, the title search, the snippets and the note share one plan
    assert out["count"] and planned.count(query) == 1
    long = "walrus " * 400  # over MAX_QUERY_CHARS: planned afresh each time, never kept as a key
    assert fts.build_query(long).fts == fts.build_query(long).fts and planned.count(long) == 2
    assert fts.build_query(query) is fts.build_query(query)
