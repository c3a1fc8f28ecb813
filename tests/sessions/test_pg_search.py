"""Search on PostgreSQL against SQLite (issue 16): the same rows for the same data, malformed and
hostile queries inert, CJK and short words found, long and NUL-holding messages searchable
(failure cases C14, C16, C17)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_memory.sessions import feedback
from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.search import session_search
from tests.sessions import search_corpus
from tests.sessions.backend_sql import sql


def _pg(url: str) -> Any:
    from hermes_memory.sessions.pg import PgSessionDB

    return PgSessionDB(url)


@pytest.fixture(scope="module")
def pair(pg_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SessionDB, Any]]:
    """The same seeded history on a SQLite file and in a PostgreSQL database."""
    lite = SessionDB(tmp_path_factory.mktemp("parity") / "state.db")
    pg = _pg(pg_server.create_database())
    for d in (lite, pg):
        search_corpus.seed(d)
    yield lite, pg
    lite.close()
    pg.close()


def _key(db: Any, row: dict[str, Any]) -> tuple[str, str]:
    return row["session_id"], str(db.get_message(row["id"])["content"])


def _top(db: Any, query: str, k: int = 10) -> list[tuple[str, str]]:
    return [_key(db, r) for r in db.search_messages(query, limit=k, with_context=False, raise_errors=True)]


def test_both_backends_hold_the_same_seeded_rows(pair: tuple[SessionDB, Any]) -> None:
    lite, pg = pair
    assert len(search_corpus.QUERIES) >= 20
    for sid in ("sess000", "sess017", "sess039"):
        assert [(m["role"], m["content"]) for m in lite.get_messages(sid)] == \
               [(m["role"], m["content"]) for m in pg.get_messages(sid)]


def test_top_results_of_sqlite_and_postgres_overlap_strongly(pair: tuple[SessionDB, Any]) -> None:
    """Top-10 overlap |SQLite ∩ PostgreSQL| / max(|either|), per query, over the 38 queries of
    search_corpus.QUERIES on 40 sessions / 511 messages. Measured (one run, both backends seeded
    alike): before rows were indexed with the previous turn's text, mean top-10 overlap 0.976
    (lowest 0.80), the best hit the same row for 35 of 38 queries; with it (index layout 3,
    schema 3), mean top-10 overlap 0.945 (lowest 0.80), the same best hit for 33 of 38:
    ts_rank_cd's shape against FTS5's BM25, now also over the previous turn's text, and ties among
    equally scored rows account for the rest. With the rerank's question/answer rule on top
    (ranking.ANSWER_SHARE: a question turn's score moves to its answer, which amplifies near ties)
    the same best hit for 29 of 38 (previous turn at weight 0.3). As merged (weight 0.2 with the
    question/answer rule): mean 0.942, lowest 0.6 (one query of 38: 'any ideas about the slow
    cooker chili?', where a question and its answer in the same session swap places at a near tie),
    the same best hit for 32 of 38. The bounds below leave room for no more than that."""
    lite, pg = pair
    overlaps, same_first = [], 0
    for q in search_corpus.QUERIES:
        a, b = _top(lite, q), _top(pg, q)
        assert bool(a) == bool(b), (q, a, b)
        if not a:
            continue
        overlaps.append(len(set(a) & set(b)) / max(len(a), len(b)))
        same_first += a[0] == b[0]
        assert overlaps[-1] >= 0.6, (q, a, b)
    mean = sum(overlaps) / len(overlaps)
    assert mean >= 0.9, (mean, overlaps)
    assert same_first >= 0.75 * len(overlaps), same_first


def test_the_full_result_sets_are_the_same_rows(pair: tuple[SessionDB, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """Beyond the ranking: every query matches exactly the same messages on both backends, and
    with relevance feedback on they return nearly the same rows. Feedback adds the best
    ``feedback.FEEDBACK_NEW`` rows found only by the expansion words, chosen by each engine's
    score (BM25 against ts_rank_cd), so near ties among the corpus's templated turns pick
    different ones. Measured (one run): 35 of 38 queries the same set, the other three
    ('train to Lisbon', 'cast iron', 'jazz chords guitar', expanded with 'try' and 'start')
    differing by 6, 10 and 14 of 60-90 rows, lowest Jaccard 0.806, mean 0.989."""
    lite, pg = pair
    monkeypatch.setattr(feedback, "FEEDBACK", False)
    for q in search_corpus.QUERIES:
        a = {_key(lite, r) for r in lite.search_messages(q, limit=1000, with_context=False, raise_errors=True)}
        b = {_key(pg, r) for r in pg.search_messages(q, limit=1000, with_context=False, raise_errors=True)}
        assert a == b, (q, a ^ b)
    monkeypatch.setattr(feedback, "FEEDBACK", True)
    same = 0
    for q in search_corpus.QUERIES:
        a = {_key(lite, r) for r in lite.search_messages(q, limit=1000, with_context=False, raise_errors=True)}
        b = {_key(pg, r) for r in pg.search_messages(q, limit=1000, with_context=False, raise_errors=True)}
        assert bool(a) == bool(b), q
        same += a == b
        assert not a or len(a & b) / len(a | b) >= 0.8, (q, a ^ b)
    assert same >= 35, same


QUESTIONS = [
    "How did we fix the kafka consumer lag?", "what was the rollback plan for the deploy?",
    "Remind me about the hotel booking", "where are we with the marathon training?",
    "what did you say about aphids on the roses", "which index funds did we talk about",
    "did we discuss the docker compose file?", "anything about the book club?",
    "记忆断裂", "the db migration",
]


def test_session_search_finds_the_same_sessions_on_both_backends(pair: tuple[SessionDB, Any]) -> None:
    lite, pg = pair
    same_first = same_set = 0
    for q in QUESTIONS:
        a = json.loads(session_search({"query": q, "limit": 5}, lite))
        b = json.loads(session_search({"query": q, "limit": 5}, pg))
        assert a["success"] and b["success"], (a, b)
        assert a["count"] > 0, q
        got_a = [r["session_id"] for r in a["results"]]
        got_b = [r["session_id"] for r in b["results"]]
        same_first += got_a[0] == got_b[0]
        same_set += set(got_a) == set(got_b)
        assert got_a[0] in got_b[:2] and len(set(got_a) & set(got_b)) >= min(4, len(got_a)), (q, got_a, got_b)
    # measured since the rerank moves a question turn's score to its answer (ranking.ANSWER_SHARE),
    # with each turn indexed with its previous turn (layout 3): the same best session for all 10
    # questions, the same five sessions for 7 (one of five differs for the other three: near ties
    # of ts_rank_cd against BM25); on the layout-2 index 9 and 8. As merged (previous turn at
    # weight 0.2 with the question/answer rule): 8 and 9, every best session within the other
    # engine's top two (asserted per question above).
    assert same_first >= 8 and same_set >= 7, (same_first, same_set)


def test_title_search_is_the_same_on_both_backends(pair: tuple[SessionDB, Any]) -> None:
    lite, pg = pair
    for q in ["kafka notes 0", "garden notes", "notes", "KAFKA NOTES 10", "travel", "`cooking notes 5`", "the"]:
        a = [(t["id"], t["title_match"]) for t in lite.search_titles(q)]
        b = [(t["id"], t["title_match"]) for t in pg.search_titles(q)]
        assert a == b, q


# ----------------------------------------------------------------- C14 on both, the same hits
C14_SEED = ["it's a trap, she said", "the bug is in gateway/run.py line 40", "mail user@host.example for access",
            "the battery dropped to 50% overnight", "see ticket #123 for details", "rewrite the parser in c++ next week",
            "upgrade node.js before the release", "the symbol alice::bob is ambiguous", 'an "unbalanced quote in the notes',
            "the a & | b shell pipeline", "整理错题本 today", "a wrong-book of mistakes"]
C14_QUERIES = ["it's", "gateway/run.py", "user@host.example", "50%", "#123", "c++", "node.js", "alice::bob",
               '"unbalanced', "a & | b", "!", "(", ":*", "错题本 OR wrong-book OR mistakes"]


def test_C14_hit_sets_are_the_same_on_sqlite_and_postgres(pg_url: str, tmp_path: Path) -> None:
    lite, pg = SessionDB(tmp_path / "state.db"), _pg(pg_url)
    try:
        for d in (lite, pg):
            for i, text in enumerate(C14_SEED):
                d.create_session(f"s{i}")
                d.append_message(f"s{i}", "user", text)
        for q in C14_QUERIES:
            for syntax in (False, True):
                a = json.loads(session_search({"query": q, "query_syntax": syntax, "limit": 10}, lite))
                b = json.loads(session_search({"query": q, "query_syntax": syntax, "limit": 10}, pg))
                assert a["success"] is True and b["success"] is True, (q, a, b)
                assert {r["session_id"] for r in a["results"]} == {r["session_id"] for r in b["results"]}, (q, syntax)
    finally:
        lite.close()
        pg.close()


# ----------------------------------------------------------------- malformed and hostile queries
@pytest.fixture(scope="module")
def pg_small(pg_server: Any) -> Iterator[Any]:
    d = _pg(pg_server.create_database())
    d.create_session("s", title="the alpha plan")
    for text in ["alpha beta", "记忆断裂 ok", "C:\\Users\\x", "it's 50% done", "NEAR the AND gate", "O'Brien's 'quoted' text",
                 "back\\slash and $$dollar$$ quoting", "SELECT * FROM messages; -- not a query"]:
        d.append_message("s", "user", text)
    yield d
    d.close()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=80), syntax=st.booleans())
def test_postgres_search_never_raises_on_arbitrary_text(pg_small: Any, text: str, syntax: bool) -> None:
    # any unicode, NUL and lone surrogates included
    assert isinstance(pg_small.search_messages(text, query_syntax=syntax, raise_errors=True), list)
    assert isinstance(pg_small.search_titles(text, query_syntax=syntax), list)


_SOUP = st.lists(st.sampled_from(['"', "'", "''", ":", "::", "-", ".", "/", "@", "%", "_", "*", ":*", "(", ")", "&",
                                  "|", "!", "<->", "<2>", "\\", "$$", ";", "--", "/*", "AND", "OR", "NOT", "NEAR",
                                  "alpha", "记忆", " ", "\x00", "\u00e9", "the"]), max_size=14)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=_SOUP, syntax=st.booleans())
def test_postgres_session_search_never_fails_on_query_syntax_soup(pg_small: Any, parts: list[str], syntax: bool) -> None:
    for joined in ("".join(parts), " ".join(parts)):
        out = json.loads(session_search({"query": joined, "query_syntax": syntax}, pg_small))
        assert out["success"] is True, (joined, out)


INJECTIONS = ["'; DROP TABLE messages; --", "') OR 1=1 --", "alpha' OR '1'='1", "%' OR '1'='1' --",
              "\\'; DELETE FROM sessions; --", "$$; DROP TABLE sessions; $$", "alpha); TRUNCATE messages; --",
              "'alpha' | 'beta' & !'gamma'", "alpha:* & ''", "E'\\x41'", "alpha\\", "1; SELECT pg_sleep(5)"]


@pytest.mark.parametrize("attack", INJECTIONS)
def test_sql_and_tsquery_injection_in_queries_and_filters_is_inert(pg_small: Any, attack: str) -> None:
    before = sql(pg_small, "SELECT (SELECT count(*) FROM messages), (SELECT count(*) FROM sessions)")
    for syntax in (False, True):
        rows = pg_small.search_messages(attack, query_syntax=syntax, raise_errors=True)
        # whatever is found holds a word of the query: the text was searched, not executed
        assert all(pg_small.get_message(r["id"]) is not None for r in rows)
        assert json.loads(session_search({"query": attack, "query_syntax": syntax}, pg_small))["success"] is True
    assert pg_small.search_messages("alpha", source_filter=[attack], raise_errors=True) == []
    assert pg_small.search_messages("alpha", session_id=attack, raise_errors=True) == []
    assert pg_small.search_messages("alpha", user_id=attack, cwd_prefix=attack, raise_errors=True) == []
    assert pg_small.search_titles(attack) == [] or all(t["id"] == "s" for t in pg_small.search_titles(attack))
    assert sql(pg_small, "SELECT (SELECT count(*) FROM messages), (SELECT count(*) FROM sessions)") == before


def test_quotes_backslashes_and_dollars_in_stored_text_are_found(pg_small: Any) -> None:
    texts = {pg_small.get_message(r["id"])["content"] for r in pg_small.search_messages("O'Brien's quoted")}
    assert "O'Brien's 'quoted' text" in texts
    # the row itself first; the turn after it follows, matched through its previous turn's text
    assert [pg_small.get_message(r["id"])["content"] for r in pg_small.search_messages("back\\slash $$dollar$$")][0] \
        == "back\\slash and $$dollar$$ quoting"


# ----------------------------------------------------------------- CJK and short words (both backends)
def test_cjk_and_two_character_queries_find_their_messages(db: Any) -> None:
    db.create_session("s")
    zh = db.append_message("s", "user", "记忆断裂的问题已经修复")
    ja = db.append_message("s", "user", "東京で会議があります")
    ko = db.append_message("s", "user", "서울에서 회의가 있습니다")
    dbm = db.append_message("s", "user", "the db migration failed")
    ui = db.append_message("s", "assistant", "UI polish, then QA")
    db.append_message("s", "user", "nothing relevant here at all")

    def ids(q: str) -> list[int]:
        return [r["id"] for r in db.search_messages(q, raise_errors=True)]

    assert ids("记忆") == [zh] and ids("断") == [zh] and ids("记忆断裂") == [zh]
    assert ids("会議") == [ja] and ids("회의") == [ko]
    assert ids("db") == [dbm] and ids("UI") == [ui] and ids("qa") == [ui]
    assert ids("DB migration")[0] == dbm
    rows = db.search_messages("会議")
    assert ">>>会議<<<" in rows[0]["snippet"]


# ----------------------------------------------------------------- C16 and C17 (both backends)
def test_C16_huge_messages_are_stored_whole_and_their_start_is_searchable(db: Any) -> None:
    db.create_session("s")
    distinct = " ".join(f"w{i}" for i in range(200_000))  # ~1.3 MB of distinct tokens
    tool = db.append_message("s", "tool", "zebrafirst " + distinct, tool_name="dump")
    blob = "blobstart " + ("QUJDRA" * 900_000)  # a 5 MB base64 run
    user = db.append_message("s", "user", blob)
    assert db.get_message(tool)["content"] == "zebrafirst " + distinct
    assert db.get_message(user)["content"] == blob
    assert [r["id"] for r in db.search_messages("zebrafirst", role_filter=["tool"], raise_errors=True)] == [tool]
    assert [r["id"] for r in db.search_messages("w1234", role_filter=["tool"], raise_errors=True)] == [tool]  # first 10 KB
    assert [r["id"] for r in db.search_messages("blobstart", raise_errors=True)] == [user]


def test_C17_a_message_that_held_a_nul_is_searchable_by_its_words(db: Any) -> None:
    db.create_session("s")
    mid = db.append_message("s", "user", "abc\x00def ghost")
    assert [r["id"] for r in db.search_messages("ghost", raise_errors=True)] == [mid]
    assert [r["id"] for r in db.search_messages("def", raise_errors=True)] == [mid]
    assert db.search_messages("abc\x00def", raise_errors=True)[0]["id"] == mid


def test_near_keeps_at_most_ten_tokens_between_two_words_on_both_backends(db: Any) -> None:
    db.create_session("s")
    mid = db.append_message("s", "user", "alpha one two three four five six seven eight nine ten omega twelve zeta")
    for q, found in [("alpha NEAR omega", True), ("omega NEAR alpha", True), ("alpha NEAR twelve", False),
                     ("alpha NEAR zeta", False), ("five NEAR zeta", True)]:
        got = {r["id"] for r in db.search_messages(q, query_syntax=True, raise_errors=True)}
        assert (mid in got) is found, q
