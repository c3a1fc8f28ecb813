"""search_messages and the FTS query planner (docs/reference.md §6): search, sanitiser and CJK
scenarios, failure cases B19, B20, B22, B23, B24."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.fts import build_query, sanitize_fts5_query
from hermes_memory.sessions.search import session_search
from tests.sessions.backend_sql import (
    cjk_rows,
    drop_message_table_under_the_store,
    index_is_consistent,
    search_index_exists,
)


def _contents(rows: list[dict]) -> set[str]:
    return {r["context"][[c["id"] for c in r["context"]].index(r["id"])]["content"] for r in rows}


# ----------------------------------------------------------------- sanitiser (docs/reference.md §6)
@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("hello world", "hello world"),
        ("hello AND", "hello"),
        ("OR world", "world"),
        ("***", ""),
        ("deploy*", "deploy*"),
        ("chat-send", '"chat-send"'),
        ("docker-compose-up", '"docker-compose-up"'),
        ("P2.2", '"P2.2"'),
        ('"already quoted"', '"already quoted"'),
        ('"my-phrase here"', '"my-phrase here"'),
        ("my-app.config.ts", '"my-app.config.ts"'),
    ],
)
def test_sanitize_fts5_query_reference_cases(raw: str, expected: str) -> None:
    assert sanitize_fts5_query(raw) == expected


def test_sanitize_drops_plus_and_unbalanced_quote() -> None:
    assert "+" not in sanitize_fts5_query("C++")
    assert '"' not in sanitize_fts5_query('"unterminated')


def test_build_query_drops_stopwords_and_keeps_explicit_operators() -> None:
    plan = build_query("What did Caroline say about the adoption agencies?")
    assert plan.fts == '"Caroline" OR "say" OR "adoption" OR "agencies"'
    assert build_query("alpha NOT beta", syntax=True).fts == '"alpha" NOT "beta"'
    assert build_query("alpha AND beta", syntax=True).fts == '"alpha" AND "beta"'
    assert build_query("it's").fts == '"it"'
    assert build_query('"the who" concert').fts == '"the who" OR "concert"'  # quoted: kept as typed
    assert build_query("***").empty and build_query("").empty and build_query('""').empty


# ----------------------------------------------------------------- search behaviour (docs/reference.md §6)
@pytest.fixture
def seeded(db: SessionDB) -> SessionDB:
    db.create_session("cli1", source="cli")
    db.create_session("tg1", source="telegram")
    db.create_session("dc1", source="discord")
    db.append_message("cli1", "user", "How do I configure the docker network bridge?")
    db.append_message("tg1", "user", "docker compose keeps failing on startup")
    db.append_message("cli1", "assistant", "Use docker network create with the bridge driver.")
    db.append_message("dc1", "assistant", "The chat-send endpoint and P2.2 plan are ready")
    db.append_message("tg1", "assistant", "Check simulate.p2.test.ts for the failing case")
    db.append_message("cli1", "user", "thanks, that fixed it")
    return db


def test_all_sources_found_and_source_filters(seeded: SessionDB) -> None:
    rows = seeded.search_messages("docker")
    assert {r["source"] for r in rows} == {"cli", "telegram"}
    assert {r["source"] for r in seeded.search_messages("docker", source_filter=["telegram"])} == {"telegram"}
    assert {r["source"] for r in seeded.search_messages("docker", exclude_sources=["telegram"])} == {"cli"}


def test_role_filter(seeded: SessionDB) -> None:
    rows = seeded.search_messages("docker", role_filter=["assistant"])
    assert rows and all(r["role"] == "assistant" for r in rows)


def test_context_holds_own_session_neighbours_despite_interleaving(seeded: SessionDB) -> None:
    rows = seeded.search_messages("bridge driver")
    top = rows[0]
    assert top["session_id"] == "cli1" and top["role"] == "assistant"
    assert [c["content"] for c in top["context"]] == [
        "How do I configure the docker network bridge?",
        "Use docker network create with the bridge driver.",
        "thanks, that fixed it",
    ]
    assert ">>>" in top["snippet"] and "<<<" in top["snippet"]
    assert {"id", "session_id", "role", "snippet", "timestamp", "tool_name", "source", "model",
            "session_started"} <= set(top)


@pytest.mark.parametrize("query", ["C++", '"unterminated', "(problem", "hello AND", "***", "{test}",
                                   "OR hello", "a AND OR b", "NOT", "AND OR NOT", "^x", "col:val", "a)b(c"])
def test_degenerate_queries_return_lists(seeded: SessionDB, query: str) -> None:
    assert isinstance(seeded.search_messages(query, raise_errors=True), list)


@pytest.mark.parametrize("query", ["chat-send", "P2.2", "simulate.p2.test.ts"])
def test_punctuated_identifiers_found(seeded: SessionDB, query: str) -> None:
    assert len(seeded.search_messages(query)) == 1


def test_quoted_phrase(seeded: SessionDB) -> None:
    rows = seeded.search_messages('"docker network"')
    assert {r["session_id"] for r in rows} == {"cli1"} and len(rows) == 2
    assert seeded.search_messages('"network docker"') == []


def test_tool_name_and_tool_call_arguments_are_searchable(db: SessionDB) -> None:
    db.create_session("s")
    db.append_message("s", "assistant", "", tool_calls=[
        {"id": "c1", "type": "function", "function": {"name": "fetch_weather", "arguments": "{\"city\": \"Reykjavik\"}"}}])
    db.append_message("s", "tool", "sunny", tool_name="fetch_weather", tool_call_id="c1")
    assert len(db.search_messages("Reykjavik")) == 1
    assert {r["role"] for r in db.search_messages("fetch_weather")} == {"assistant", "tool"}
    assert [r["role"] for r in db.search_messages("fetch_weather", role_filter=["tool"])] == ["tool"]


def test_sort_newest_oldest_and_stable_ties(db: SessionDB) -> None:
    db.create_session("s")
    ids = [db.append_message("s", "user", f"kiwi {i}", timestamp=100.0) for i in range(4)]
    later = db.append_message("s", "user", "kiwi later", timestamp=200.0)
    newest = [r["id"] for r in db.search_messages("kiwi", sort="newest")]
    assert newest == [later, *reversed(ids)]
    oldest = [r["id"] for r in db.search_messages("kiwi", sort="oldest")]
    assert oldest == [*ids, later]
    assert [r["id"] for r in db.search_messages("kiwi", sort="oldest", limit=2, offset=1)] == ids[1:3]


def test_filters_session_user_and_time_range(db: SessionDB) -> None:
    db.create_session("a", user_id="u1")
    db.create_session("b", user_id="u2")
    db.append_message("a", "user", "mango one", timestamp=10.0)
    db.append_message("a", "user", "mango two", timestamp=20.0)
    db.append_message("b", "user", "mango three", timestamp=30.0)
    assert {r["session_id"] for r in db.search_messages("mango", user_id="u2")} == {"b"}
    assert {r["session_id"] for r in db.search_messages("mango", session_id="a")} == {"a"}
    assert [r["timestamp"] for r in db.search_messages("mango", since=15, until=30)] == [20.0]


def test_paging_is_disjoint(db: SessionDB) -> None:
    db.create_session("s")
    for i in range(30):
        db.append_message("s", "user", f"papaya note {i}")
    first = [r["id"] for r in db.search_messages("papaya", limit=10)]
    second = [r["id"] for r in db.search_messages("papaya", limit=10, offset=10)]
    assert len(set(first) | set(second)) == 20


# ----------------------------------------------------------------- B19
B19_SEED = ["it's done", "edit gateway/run.py now", "mail user@host ok", "50% done", "fixed #123",
            "what is [x]?", "ubuntu 20.04 works"]


@pytest.mark.parametrize(("query", "expected"), list(zip(
    ["it's", "gateway/run.py", "user@host", "50%", "#123", "[x]", "ubuntu 20.04"], B19_SEED, strict=True)))
def test_B19_fts5_punctuation_in_raw_queries_finds_the_message(db: SessionDB, query: str, expected: str) -> None:
    db.create_session("s1")
    for text in B19_SEED:
        db.append_message("s1", "user", text)
    rows = db.search_messages(query, raise_errors=True)
    assert expected in _contents(rows)
    payload = json.loads(session_search({"query": query}, db))
    assert payload["success"] is True and payload["count"] == 1


@pytest.mark.parametrize("query", ["why?", "a,b"])
def test_B19_fts5_punctuation_without_matches_is_an_empty_success(db: SessionDB, query: str) -> None:
    db.create_session("s1")
    for text in B19_SEED:
        db.append_message("s1", "user", text)
    assert db.search_messages(query, raise_errors=True) == []
    payload = json.loads(session_search({"query": query}, db))
    assert payload == {"success": True, "mode": "discovery", "query": query, "count": 0, "results": []}


def test_B19_database_failure_is_an_error_payload_not_empty_success(db: SessionDB) -> None:
    db.create_session("s1")
    db.append_message("s1", "user", "tea time")
    # the history table is gone under the open connection: nothing can heal that
    drop_message_table_under_the_store(db)
    payload = json.loads(session_search({"query": "tea"}, db))
    assert payload["success"] is False and "unavailable" in payload["error"]
    assert db.search_messages("tea") == []  # the library call itself still never raises


# ----------------------------------------------------------------- B20
B20_SEED = ["TODO: fix the bug", "chat-send works", "wrong-book and mistakes", "path C:\\Users\\demo\\project",
            "the book was wrong"]


@pytest.mark.parametrize(("query", "expected"), [
    ("TODO: fix", "TODO: fix the bug"),
    ("chat-send", "chat-send works"),
    ("wrong-book OR mistakes", "wrong-book and mistakes"),
    ("C:\\Users\\demo", "path C:\\Users\\demo\\project"),
])
def test_B20_colon_and_hyphen_never_become_column_filters(db: SessionDB, query: str, expected: str) -> None:
    db.create_session("s1")
    for text in B20_SEED:
        db.append_message("s1", "user", text)
    rows = db.search_messages(query, raise_errors=True)
    assert rows and _contents(rows[:1]) == {expected}


def test_B20_hyphenated_term_needs_adjacency_and_error_colon_is_empty(db: SessionDB) -> None:
    db.create_session("s1")
    for text in B20_SEED:
        db.append_message("s1", "user", text)
    assert _contents(db.search_messages("wrong-book")) == {"wrong-book and mistakes"}
    assert db.search_messages("error:timeout", raise_errors=True) == []


# ----------------------------------------------------------------- B22
def test_B22_fresh_store_searches_empty_and_fts_exists(db: SessionDB) -> None:
    assert search_index_exists(db)
    assert db.search_messages("tea", raise_errors=True) == []
    payload = json.loads(session_search({"query": "tea"}, db))
    assert payload["success"] is True and payload["count"] == 0


@pytest.mark.parametrize("query", ["", "   ", "***", '"', "*", '""'])
def test_B22_degenerate_queries_never_dump_rows(db: SessionDB, query: str) -> None:
    db.create_session("s1")
    db.append_message("s1", "user", "tea and biscuits")
    assert db.search_messages(query, raise_errors=True) == []


# ----------------------------------------------------------------- B23
@pytest.fixture
def cjk(db: SessionDB) -> dict[str, int]:
    db.create_session("s1", source="cli")
    db.create_session("s2", source="telegram")
    ids = {
        "m1": db.append_message("s1", "user", "记忆断裂的问题已经修复"),
        "m2": db.append_message("s1", "assistant", "步2 重跑gen-itgc后50条悬空引用清零"),
        "m3": db.append_message("s2", "user", "会议讨论记忆断裂和排期"),
        "m4": db.append_message("s2", "assistant", "记忆断裂 ok"),
    }
    for i, text in enumerate(["plain english one", "memory fracture report", "deploy the gateway",
                              "meeting schedule", "ok thanks"]):
        ids[f"e{i}"] = db.append_message("s1", "user", text)
    return ids


@pytest.mark.parametrize(("query", "expected"), [
    ("记忆断裂", {"m1", "m3", "m4"}),
    ("悬空", {"m2"}),
    ("itgc", {"m2"}),
    ("排期", {"m3"}),
    ("50%断", set()),
    ("断", {"m1", "m3", "m4"}),
    ("gen-itgc后50条", {"m2"}),
])
def test_B23_cjk_result_sets_are_complete(db: SessionDB, cjk: dict[str, int], query: str, expected: set[str]) -> None:
    rows = db.search_messages(query, raise_errors=True)
    by_id = {v: k for k, v in cjk.items()}
    got = [by_id[r["id"]] for r in rows]
    assert set(got) == expected and len(got) == len(set(got))
    for r in rows:
        assert query in r["snippet"].replace(">>>", "").replace("<<<", "") or ">>>" in r["snippet"]


def test_B23_cjk_filters_or_and_english_unaffected(db: SessionDB, cjk: dict[str, int]) -> None:
    assert {r["id"] for r in db.search_messages("记忆断裂", source_filter=["telegram"])} == {cjk["m3"], cjk["m4"]}
    assert {r["id"] for r in db.search_messages("记忆断裂", exclude_sources=["telegram"])} == {cjk["m1"]}
    assert {r["id"] for r in db.search_messages("记忆断裂", role_filter=["assistant"])} == {cjk["m4"]}
    assert {r["id"] for r in db.search_messages("悬空 OR 排期")} == {cjk["m2"], cjk["m3"]}
    assert {r["id"] for r in db.search_messages("gateway")} == {cjk["e2"]}


def test_B23_japanese_korean_and_two_char_queries(db: SessionDB) -> None:
    db.create_session("s")
    ja = db.append_message("s", "user", "東京で会議があります")
    ko = db.append_message("s", "user", "서울에서 회의가 있습니다")
    assert [r["id"] for r in db.search_messages("会議")] == [ja]
    assert [r["id"] for r in db.search_messages("회의")] == [ko]
    assert [r["id"] for r in db.search_messages("東京で会議")] == [ja]


def test_B23_percent_and_underscore_are_literal_in_like(db: SessionDB) -> None:
    db.create_session("s")
    db.append_message("s", "user", "进度 50%完成")
    keep = db.append_message("s", "user", "变量 a_b值")
    assert db.search_messages("%完", raise_errors=True) != []
    assert [r["id"] for r in db.search_messages("_b值")] == [keep]
    assert db.search_messages("x%完") == []


def test_B23_one_char_cjk_tool_name_has_a_snippet(db: SessionDB) -> None:
    db.create_session("s")
    db.append_message("s", "tool", "result ok", tool_name="查")
    rows = db.search_messages("查", role_filter=["tool"])
    assert len(rows) == 1 and rows[0]["snippet"]


# ----------------------------------------------------------------- B24
def test_B24_update_and_delete_keep_the_index_in_step(db: SessionDB) -> None:
    db.create_session("s1")
    mid = db.append_message("s1", role="user", content="alpha plan")
    assert db.update_message_content(mid, "beta plan") is True
    assert db.search_messages("alpha") == []
    assert len(db.search_messages("beta")) == 1
    db.delete_session("s1")
    assert db.search_messages("beta") == []
    assert index_is_consistent(db)


def test_B24_cjk_side_table_follows_updates_and_deletes(db: SessionDB) -> None:
    db.create_session("s1")
    mid = db.append_message("s1", "user", "旧的计划内容")
    db.update_message_content(mid, "new english only")
    assert db.search_messages("计划") == []
    db.update_message_content(mid, "新的安排")
    assert [r["id"] for r in db.search_messages("安排")] == [mid]
    db.delete_session("s1")
    assert db.search_messages("安排") == []
    assert cjk_rows(db) == 0


def test_B24_tool_rows_indexed_with_the_same_cut_on_insert_update_delete(db: SessionDB) -> None:
    db.create_session("s1")
    big = "start " + "x " * 5000 + "needleword"
    mid = db.append_message("s1", "tool", big, tool_name="reader")
    assert db.search_messages("needleword", role_filter=["tool"]) == []  # beyond the 8,192-char cut
    assert len(db.search_messages("start", role_filter=["tool"])) == 1
    db.update_message_content(mid, "short replacement")
    assert db.search_messages("start") == [] and len(db.search_messages("replacement")) == 1
    db.delete_session("s1")
    assert index_is_consistent(db)


# ----------------------------------------------------------------- property
@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_search_messages_never_raises_on_arbitrary_text(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    db = _shared_db(tmp_path_factory)
    rows = db.search_messages(text, raise_errors=True)
    assert isinstance(rows, list)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(['"', "'", ":", "-", ".", "/", "@", "%", "*", "(", ")", "AND", "OR", "NOT",
                                 "^", "+", "{", "}", "[", "]", "~", "NEAR", "alpha", "记忆", " ", "\\", "_"]),
                max_size=12))
def test_search_messages_never_raises_on_fts_syntax_soup(tmp_path_factory: pytest.TempPathFactory, parts: list[str]) -> None:
    db = _shared_db(tmp_path_factory)
    for joined in ("".join(parts), " ".join(parts)):
        assert isinstance(db.search_messages(joined, raise_errors=True), list)
        assert isinstance(db.search_messages(sanitize_fts5_query(joined), raise_errors=True), list)


_DB: dict[str, SessionDB] = {}


def _shared_db(factory: pytest.TempPathFactory) -> SessionDB:
    if "db" not in _DB:
        db = SessionDB(factory.mktemp("prop") / "state.db")
        db.create_session("s")
        for text in ["alpha beta", "记忆断裂 ok", "C:\\Users\\x", "it's 50% done", "NEAR the AND gate"]:
            db.append_message("s", "user", text)
        _DB["db"] = db
    return _DB["db"]


def test_posting_budget_drops_frequent_terms_but_keeps_their_weight(
    db: SessionDB, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_memory.sessions import ranking

    db.create_session("s")
    for i in range(10):
        db.append_message("s", "user", f"weather report number {i}")
    for i in range(30):
        db.append_message("s", "user", f"unrelated filler line {i}")
    # each in a session of its own: neither is indexed with a previous turn (which would add its
    # words and its length to the row, :mod:`hermes_memory.sessions.hmcontext`)
    db.create_session("s2")
    db.create_session("s3")
    both = db.append_message("s2", "user", "weather for the zeppelin launch")
    rare = db.append_message("s3", "user", "zeppelin hangar opened")
    full = [r["id"] for r in db.search_messages("zeppelin weather", limit=20)]
    # 12 rows say a word; the filler line right after the last weather report also matches,
    # through the previous turn indexed with it
    assert len(full) == 13 and full[:2] == [both, rare]
    monkeypatch.setattr(ranking, "POSTINGS_BUDGET", 3)
    capped = [r["id"] for r in db.search_messages("zeppelin weather", limit=20)]
    assert capped[:2] == [both, rare]  # rows with the rare word first; the one also saying "weather" first
    assert set(capped) == set(full)  # the page is still filled with the frequent word's rows


def test_single_very_common_word_is_scored_in_a_recency_window(
    db: SessionDB, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_memory.sessions import ranking

    db.create_session("s")
    # a first turn as long as the others: every lantern row is then indexed with a previous turn of
    # the same length, so BM25's length normalisation ranks them alike (ties go to the newest)
    db.append_message("s", "user", "log entry begins")
    ids = [db.append_message("s", "user", f"lantern entry {i}") for i in range(40)]
    monkeypatch.setattr(ranking, "POSTINGS_BUDGET", 5)
    monkeypatch.setattr(ranking, "SINGLE_TERM_WINDOW", 10)
    got = [r["id"] for r in db.search_messages("lantern", limit=40)]
    assert set(got[:10]) <= set(ids[-12:]) and ids[-1] in got  # the best rows come from the newest window
    assert len(got) == 40  # a page larger than the window is filled, never cut short
    newest = [r["id"] for r in db.search_messages("lantern", limit=40, sort="newest")]
    assert len(newest) == 40  # explicit time order is never windowed


def test_a_quoted_phrase_is_highlighted_as_one_span_in_snippets(db: SessionDB) -> None:
    db.create_session("s1")
    db.append_message("s1", "user", "Team rule: we never deploy on Fridays.")
    db.append_message("s1", "assistant", "Understood, I will not deploy on fridays; Monday is fine.")
    rows = db.search_messages('"deploy on Fridays"', raise_errors=True)
    assert len(rows) == 2
    for r in rows:
        assert ">>>deploy on Fridays<<<".lower() in r["snippet"].lower(), r["snippet"]
    payload = json.loads(session_search({"query": '"deploy on Fridays"'}, db))
    snippets = [h["snippet"] for res in payload["results"] for h in res["hits"]]
    assert snippets and all(">>>deploy on fridays<<<" in s.lower() for s in snippets), snippets
