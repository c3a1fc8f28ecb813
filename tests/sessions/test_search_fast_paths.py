"""The faster statements of SQLite relevance search give exactly what the slower ones gave: the
explicit ``bm25()`` order (SQLite's sorter instead of FTS5's ``ORDER BY rank``, ties included),
one regex pass per candidate for the dropped frequent words and highlighting without compiling
a pattern per query (the same matches as the compiled pattern, non-ASCII case folding included), and a page's ``context`` read in one statement
(as the per-row lookup reads it, across interleaved sessions, deleted rows and session ends).
Real SQLite files."""

from __future__ import annotations

import itertools
import re
import sqlite3
from typing import Any

import pytest

from hermes_memory.sessions import (
    feedback,
    hmindex,
    message_search,
    ranking,
    search_head,
    term_stats,
    word_match,
)
from hermes_memory.sessions import fts as fts_mod
from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.message_search import SearchFilters, build_search_sql
from tests.helpers.values import present

BACKENDS = ("sqlite",)  # SQLite's own FTS5 statements


def _rank_order(db: SessionDB, expr: str, limit: int, min_rowid: int = 0) -> list[tuple[int, float]]:
    """FTS5's own ``ORDER BY rank`` (what search ran before), as (rowid, rank)."""
    return [(int(r[0]), float(r[1])) for r in db.conn.execute(
        "SELECT rowid, rank FROM hm_messages_fts WHERE hm_messages_fts MATCH ? AND rowid >= ? ORDER BY rank LIMIT ?",
        (expr, min_rowid, limit))]


def test_rank_sql_spells_out_the_configured_weights(db: SessionDB) -> None:
    configured = db.conn.execute("SELECT v FROM hm_messages_fts_config WHERE k = 'rank'").fetchone()[0]
    weights = configured.strip()[len("bm25("):-1]
    assert configured.startswith("bm25(") and weights  # our index is created with column weights
    assert term_stats.rank_sql(db.conn) == f"bm25({hmindex.MAIN}, " + ", ".join(
        repr(float(w)) for w in weights.split(",")) + ")"


def test_explicit_bm25_keeps_fts5_rank_order_and_its_ties(db: SessionDB) -> None:
    # equal lengths and one occurrence each: many exact ties, cut by the limit
    s = db.create_session("s")
    db.append_messages(s, [{"role": "user", "content": f"walrus {w} sings"} for w in ("tusk", "reef", "ice") * 30]
                       + [{"role": "assistant", "content": "walrus walrus"}, {"role": "user", "content": "a walrus"}])
    plan = fts_mod.build_query("walrus")
    rank = term_stats.rank_sql(db.conn)
    for limit, min_rowid in ((7, None), (40, None), (25, 30)):
        sql, params = build_search_sql("fts", plan, SearchFilters(), None, limit=limit, min_rowid=min_rowid,
                                       rank_sql=rank)
        assert rank is not None and rank in sql and "ORDER BY rank, rowid LIMIT ?" in sql
        got = [(int(r["id"]), float(r["rank"])) for r in db.conn.execute(sql, params)]
        assert got == _rank_order(db, params[0], limit, min_rowid or 0)  # the expression the step runs
    ranks = [h["rank"] for h in db.search_messages("walrus", limit=50, with_context=False)]
    assert len(ranks) == 50 and len(set(ranks)) < 10  # ties were really there


def test_search_is_the_same_when_it_falls_back_to_fts5_rank(db: SessionDB, monkeypatch: pytest.MonkeyPatch) -> None:
    _frequent_and_rare(db)
    queries = ("walrus", "walrus tusks reefs", "swims caf\u00e9", "tusks")
    fast = {q: db.search_messages(q, limit=30) for q in queries}
    monkeypatch.setattr(term_stats, "rank_sql", lambda conn: None)
    assert {q: db.search_messages(q, limit=30) for q in queries} == fast
    assert all(fast.values())


@pytest.mark.parametrize(("config", "expected"), [
    ("bm25(1.0, 0.8, 0.4)", "bm25(hm_messages_fts, 1.0, 0.8, 0.4)"),
    (" bm25( 2 ,1.0,1e0) ", "bm25(hm_messages_fts, 2.0, 1.0, 1.0)"),
    ("bm25()", "bm25(hm_messages_fts)"),
    ("bm25(1.0, 0.8, x)", None),
    ("bm25(1..0)", None),
    ("highlight(1)", None),
    ("bm25(1.0); DROP TABLE messages", None),
])
def test_rank_sql_reads_only_plain_bm25_weights(db: SessionDB, config: str, expected: str | None) -> None:
    db.conn.execute("UPDATE hm_messages_fts_config SET v = ? WHERE k = 'rank'", (config,))
    assert term_stats.rank_sql(db.conn) == expected


def test_rank_sql_without_a_rank_row_is_default_bm25(db: SessionDB) -> None:
    db.conn.execute("DELETE FROM hm_messages_fts_config WHERE k = 'rank'")
    assert term_stats.rank_sql(db.conn) == "bm25(hm_messages_fts)"


def test_rank_sql_is_none_when_the_index_is_missing() -> None:
    conn = sqlite3.connect(":memory:")
    try:
        assert term_stats.rank_sql(conn) is None
    finally:
        conn.close()


TEXTS = [
    "", "Caroline went to the pottery class", "carolines", "xcaroline", "the_caroline", "CAROLINE!",
    "Ca\u212aroline", "\u212alass", "cla\u017fs", "CLASSES and classic", "caf\u00e9 Caroline", "\u00e9caroline",
    "\u0438caroline", "caroline\u0438", "pott\u00e9ry", "potteryclass", "9class", "class9", "\u0130stanbul class",
    "pottery\u2019s", "POTTERY-class", "Mel\u00e1nie", "melanie", "mel", "m\u00e9lanie", "\u212aelvin",
]
TERMS = [["caroline"], ["class", "classic"], ["potteri", "pottery"], ["melani", "melanie"], ["kelvin"], ["istanbul"],
         ["m\u00e9lanie"], ["caf\u00e9", "cafe"], ["\u0441\u043b\u043e\u0432\u043e"]]


def _pattern(words: list[str]) -> re.Pattern[str]:
    """The regex a highlighter compiled per query before WordMatcher (the reference semantics)."""
    return re.compile(word_match.word_pattern(words), re.IGNORECASE)


@pytest.mark.parametrize("size", [1, 2, 3])
def test_one_pass_term_check_agrees_with_each_terms_own_pattern(size: int) -> None:
    for terms in itertools.combinations(TERMS, size):
        got = word_match.found_per_term([list(t) for t in terms], TEXTS)
        want = [[bool(t) and _pattern(list(alts)).search(t) is not None for alts in terms] for t in TEXTS]
        assert got == want, terms


@pytest.mark.parametrize("words", TERMS + [["caroline", "class", "cla"], ["s", "st"], ["9"], []])
def test_word_matcher_finds_what_the_compiled_pattern_finds(words: list[str]) -> None:
    m = word_match.WordMatcher(words)
    assert m.fast == (bool(words) and all(w.isascii() for w in words))
    for text in TEXTS + [" ".join(TEXTS), "class class-class classclass", "\u212a\u212alass caroline"]:
        if not words:
            assert list(m.spans(text)) == [] and m.mark(text, "<", ">") == text
            continue
        p = _pattern(words)
        assert list(m.spans(text)) == [x.span() for x in p.finditer(text)], text
        assert m.mark(text, ">>>", "<<<") == p.sub(lambda x: ">>>" + x.group(0) + "<<<", text)
        assert m.first(text) == (x.start() if (x := p.search(text)) else None)


def test_highlighter_snippets_are_those_of_the_compiled_pattern() -> None:
    long = "word " * 80 + "Caroline met Melanie at the pottery class; classes ended " + "tail " * 80
    for terms, stems in ((["Caroline"], []), (["pottery class"], ["potteri"]), (["mel\u00e9nie"], ["melani"])):
        hl = fts_mod.Highlighter(terms, stems)
        p = _pattern(sorted({w.lower() for t in terms for w in t.split()} | set(stems)))
        for text in TEXTS + [long]:
            want_first = p.search(text)
            assert hl.matches(text) == (bool(text) and want_first is not None)
            snip = hl.snippet(text)
            if want_first is not None:
                start = max(0, want_first.start() - hl.width // 3)
                if start > 0:
                    space = text.rfind(" ", 0, start)
                    start = space + 1 if space >= 0 and start - space < 20 else start
                end = min(len(text), start + hl.width)
                body = p.sub(lambda x: ">>>" + x.group(0) + "<<<", text[start:end])
                body = re.sub(r"<<<([ \t'\u2019-]+)>>>", r"\1", body)  # neighbours share one highlight
                assert snip == ("..." if start > 0 else "") + body + ("..." if end < len(text) else "")
    assert fts_mod.Highlighter(["\u8bb0\u5fc6", "class"]).snippet("the class \u8bb0\u5fc6") == \
        "the >>>class \u8bb0\u5fc6<<<"


def _frequent_and_rare(db: SessionDB) -> list[int]:
    s = db.create_session("s")
    rows = []
    for i in range(120):
        words = ["walrus"] + (["tusks"] if i % 3 == 0 else []) + (["Caf\u00e9"] if i % 5 == 0 else []) \
            + (["reefs"] if i % 7 == 0 else []) + ["swims"] * (1 + i % 4)
        rows.append({"role": "user" if i % 2 == 0 else "assistant", "content": " ".join(words)})
    return db.append_messages(s, rows)


def test_dropped_words_score_as_before_on_a_real_search(db: SessionDB, monkeypatch: pytest.MonkeyPatch) -> None:
    _frequent_and_rare(db)
    monkeypatch.setattr(ranking, "POSTINGS_BUDGET", 30)  # keep "reefs" only; tusk, café, walrus dropped
    monkeypatch.setattr(ranking, "SINGLE_TERM_WINDOW", 10**9)
    stats = db._term_stats
    plan = fts_mod.build_query("walrus tusk caf\u00e9 reefs")
    fts_expr, dropped, _ = stats.cap_terms(db.conn, plan)
    assert fts_expr == '"reefs"' and len(dropped) == 3
    hits = {int(r[0]): float(r[1]) for r in db.conn.execute(
        "SELECT rowid, rank FROM hm_messages_fts WHERE hm_messages_fts MATCH ?", (fts_expr,))}
    sessions: dict[int, str] = {}
    texts: dict[int, tuple[Any, Any, Any]] = {}
    term_stats.read_candidates(db.conn, list(hits), sessions, texts)
    cand = {i: (sessions[i], search_head.joined(texts[i])) for i in texts}
    fast = dict(hits)
    stats.score_dropped(db.conn, fast, dropped, cand)
    slow = dict(hits)  # the per-term highlighter loop the one-pass check replaced
    n_rows = db.conn.execute("SELECT max(id) FROM messages").fetchone()[0]
    for term, df in dropped:
        words = [p.lower() for p in term.pieces]
        pattern = fts_mod.Highlighter([" ".join(words)], [present(stem, "a stem") for stem in stats.stems(db.conn, words).values()])
        for i in slow:
            if pattern.matches(cand[i][1]):
                slow[i] -= ranking.bm25_idf(n_rows, df)
    assert fast == slow and fast != hits


def test_page_context_in_one_statement_matches_the_per_row_lookup(db: SessionDB) -> None:
    a, b = db.create_session("a"), db.create_session("b")
    ids: dict[str, list[int]] = {a: [], b: []}
    for i in range(12):  # interleaved turns of two sessions, then runs of each
        sid = (a, b)[i % 2] if i < 6 else (a if i < 9 else b)
        ids[sid].append(db.append_message(sid, "user" if i % 2 else "assistant", f"heron note {i} " + "x" * 250))
    db.conn.execute("DELETE FROM messages WHERE id = ?", (ids[a][4],))
    db.conn.commit()
    every = [i for i in ids[a] + ids[b] if i != ids[a][4]]
    page = [(i, a if i in ids[a] else b) for i in sorted(every)]
    with db._lock:
        got = db._contexts(db.conn, page)
        want = {i: db._context(db.conn, sid, i) for i, sid in page}
    assert got == want
    assert any(len(c) == 3 for c in got.values()) and any(len(c) == 2 for c in got.values())
    hits = db.search_messages("heron", limit=20)
    assert {h["id"] for h in hits} == set(every)
    assert all(h["context"] == want[h["id"]] for h in hits)


def test_context_lookup_survives_a_missing_current_row(db: SessionDB) -> None:
    s = db.create_session("s")
    first = db.append_message(s, "user", "hello")
    with db._lock:
        got = db._contexts(db.conn, [(first + 50, s)])
    assert got == {first + 50: db._context(db.conn, s, first + 50)}


def _mixed_home(db: SessionDB) -> None:
    """Sessions of several sources, turns of every role, many exact rank ties."""
    for n, source in enumerate(("cli", "tool", "cron", "telegram", "subagent")):
        sid = db.create_session(f"{source}-{n}", source=source)
        rows = []
        for i in range(60):
            role = ("user", "assistant", "tool", "tool", "system")[i % 5]
            rows.append({"role": role, "content": f"walrus {'tusk ' * (i % 3)}reef {i % 7}"})
        db.append_messages(sid, rows)


FILTERS = [
    SearchFilters(roles=["user", "assistant"], excluded=["tool", "subagent", "kanban"]),
    SearchFilters(roles=["user"]),
    SearchFilters(excluded_sessions=["cli-0", "cron-2"]),
    SearchFilters(roles=["system"], excluded=["cron"]),
    SearchFilters(roles=["nobody"]),
]


@pytest.mark.parametrize("factor", [1, 2, 3])
def test_filtered_head_is_the_joined_statements_answer_or_none(db: SessionDB, factor: int,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    _mixed_home(db)
    monkeypatch.setattr(message_search, "HEAD_FACTOR", factor)
    rank = term_stats.rank_sql(db.conn)
    assert rank is not None
    answered = 0
    for f in FILTERS:
        for expr, limit, min_rowid in (('"walrus"', 30, None), ('"tusk" OR "reef"', 7, None), ('"walrus"', 20, 100)):
            plan = fts_mod.build_query("walrus")
            sql, params = build_search_sql("fts", plan, f, None, limit=limit, fts_expr=expr, min_rowid=min_rowid)
            joined = [(int(r["id"]), float(r["rank"])) for r in db.conn.execute(sql, params)]
            head = message_search.filtered_head(db.conn, plan, f, limit=limit, fts_expr=expr, min_rowid=min_rowid,
                                                rank_sql=rank)
            assert head is None or head == joined, (f, expr, limit)
            answered += head is not None
    assert answered > 0


def test_search_with_broad_filters_is_the_same_without_the_head(db: SessionDB, monkeypatch: pytest.MonkeyPatch) -> None:
    _mixed_home(db)
    kw: list[dict[str, Any]] = [dict(role_filter=["user", "assistant"], exclude_sources=["tool", "subagent"]), dict(role_filter="tool"),
          dict(exclude_session_ids=["cli-0"]), dict(role_filter="system", limit=3)]
    queries = ("walrus", "walrus tusk", "reef 3", "tusk")
    fast = [db.search_messages(q, **k) for q in queries for k in kw]
    monkeypatch.setattr(message_search, "broad_filters", lambda f: False)
    assert [db.search_messages(q, **k) for q in queries for k in kw] == fast
    assert all(fast)


def test_broad_filters_are_the_ones_most_rows_pass() -> None:
    assert message_search.broad_filters(SearchFilters(roles=["user"], excluded=["tool"], excluded_sessions=["x"]))
    for narrow in (SearchFilters(sources=["cli"]), SearchFilters(session_id="s"), SearchFilters(user_id="u"),
                   SearchFilters(since=1.0), SearchFilters(until=2.0), SearchFilters(cwd_prefix="/p")):
        assert not message_search.broad_filters(narrow)


def _keep_ids(statements: list[str]) -> set[int]:
    """The ids the filter checks (``"keep"`` statements) asked about, from traced SQL."""
    out: set[int] = set()
    for sql in statements:
        m = re.search(r"WHERE m\.id IN \(([0-9, ]+)\)", sql)
        if sql.startswith("SELECT m.id AS id") and m:
            out.update(int(x) for x in m.group(1).split(","))
    return out


def test_filtered_head_does_not_check_again_the_rows_known_to_pass(db: SessionDB) -> None:
    _mixed_home(db)
    rank = term_stats.rank_sql(db.conn)
    assert rank is not None
    plan = fts_mod.build_query("walrus")
    for f in (FILTERS[2], SearchFilters(excluded=["tool"]), SearchFilters(roles=["user", "assistant", "tool"])):
        plain = message_search.filtered_head(db.conn, plan, f, limit=30, fts_expr='"walrus"', min_rowid=None,
                                             rank_sql=rank)
        assert plain
        known = {i for i, _ in plain[::2]}
        traced: list[str] = []
        db.conn.set_trace_callback(traced.append)
        try:
            got = message_search.filtered_head(db.conn, plan, f, limit=30, fts_expr='"walrus"', min_rowid=None,
                                               rank_sql=rank, known=known)
        finally:
            db.conn.set_trace_callback(None)
        assert got == plain, f
        asked = _keep_ids(traced)
        assert asked and not asked & known, f  # the check ran, for the other rows only


def _named_home(db: SessionDB) -> None:
    """Turns naming people and places in sessions of several sources and roles: the feedback pass
    (capitalised words of the best hits) has names to search again."""
    names = ("Caroline", "Melanie", "Sweden", "Becoming Nicole", "Rome")
    for n, source in enumerate(("cli", "tool", "cron", "telegram", "subagent", "cli")):
        sid = db.create_session(f"{source}-{n}", source=source)
        rows = []
        for i in range(40):
            role = ("user", "assistant", "tool", "user", "assistant")[i % 5]
            a, b = names[i % 5], names[(i + n) % 5]
            rows.append({"role": role, "content": f"{a}: did you recommend the novel {b} on day {i % 6}?"
                         if i % 3 else f"{b} liked the trip to {a} and the novel"})
        db.append_messages(sid, rows)


def test_feedback_search_by_the_filtered_head_is_the_joined_statements_answer(
        db: SessionDB, monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_memory.sessions.search import discovery_rows, session_search

    _named_home(db)
    queries = ("What novel did Caroline recommend?", "trip novel Melanie", "did Rome recommend the day")
    def run() -> tuple[list[Any], list[str]]:
        traced: list[str] = []
        db.conn.set_trace_callback(traced.append)
        try:
            return [(discovery_rows(db, q), session_search({"query": q}, db),
                     session_search({"query": q, "role_filter": "user"}, db)) for q in queries], traced
        finally:
            db.conn.set_trace_callback(None)

    monkeypatch.setattr(feedback, "FEEDBACK", False)
    _, first_only = run()
    monkeypatch.setattr(feedback, "FEEDBACK", True)
    fast, traced = run()
    heads = sum("ORDER BY rank, rowid DESC LIMIT" in s for s in traced)
    assert heads > sum("ORDER BY rank, rowid DESC LIMIT" in s for s in first_only)  # the expansion read by rank first
    assert not any("hm_messages_fts.rank, m.id DESC" in s for s in traced)  # and never joined every match
    monkeypatch.setattr(message_search, "broad_filters", lambda f: False)  # the joined statement everywhere
    slow = [(discovery_rows(db, q), session_search({"query": q}, db),
             session_search({"query": q, "role_filter": "user"}, db)) for q in queries]
    assert slow == fast
    assert all(rows for rows, _, _ in fast)


def test_the_connection_reads_the_file_through_a_memory_map_with_the_same_answers(db: SessionDB) -> None:
    from hermes_memory.sessions import connection

    _named_home(db)
    assert connection.MMAP_BYTES > 0
    assert db.conn.execute("PRAGMA mmap_size").fetchone()[0] == connection.MMAP_BYTES
    queries = ("What novel did Caroline recommend?", "trip novel Melanie", "Rome")
    mapped = [db.search_messages(q, limit=30) for q in queries]
    db.conn.execute("PRAGMA mmap_size=0")  # read by copy, as before
    assert [db.search_messages(q, limit=30) for q in queries] == mapped
    assert all(mapped)


def test_the_answer_lookup_reads_the_rows_after_each_question_by_rowid(db: SessionDB) -> None:
    for n in range(3):
        sid = db.create_session(f"s{n}")
        rows: list[dict[str, Any]] = []
        for i in range(30):
            rows.append({"role": "user", "content": f"Which novel did Caroline read on day {i}?"})
            rows.append({"role": "tool", "content": "lookup"})
            rows.append({"role": "assistant", "content": f"Becoming Nicole, day {i}."})
        db.append_messages(sid, rows)
    traced: list[str] = []
    db.conn.set_trace_callback(traced.append)
    try:
        found = db.search_messages("Which novel did Caroline read?", limit=20, role_filter=["user", "assistant"])
    finally:
        db.conn.set_trace_callback(None)
    lookups = [s for s in traced if "CORRELATED" not in s and "(SELECT n.id FROM messages n" in s]
    assert lookups and found
    plan = " | ".join(str(r[3]) for r in db.conn.execute("EXPLAIN QUERY PLAN " + lookups[-1]))
    assert "rowid>? AND rowid<?" in plan and "idx_messages_session" not in plan and "TEMP B-TREE" not in plan, plan
    # the answers still join the page: the assistant turn after each question, past the tool row
    assert any(str(h["snippet"]).startswith("Becoming") or "Becoming" in str(h["snippet"]) for h in found)


def test_lineages_skip_the_parent_lookup_when_no_session_has_a_parent(db: SessionDB) -> None:
    for sid in ("a", "b", "solo"):
        db.create_session(sid)
    traced: list[str] = []
    db.conn.set_trace_callback(traced.append)
    try:
        flat = db.get_lineages(["b", "solo", "a", "unknown"])
    finally:
        db.conn.set_trace_callback(None)
    assert flat == {"b": ["b"], "solo": ["solo"], "a": ["a"], "unknown": ["unknown"]}
    assert traced and not any("WHERE id IN (" in s for s in traced), traced  # one index probe, no IN list
    db.create_session("c", parent_session_id="b")  # once one session has a parent, chains are walked
    assert db.get_lineages(["c", "solo"]) == {"c": ["b", "c"], "solo": ["solo"]}
