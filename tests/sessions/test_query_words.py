"""Upper-case words in plain text are words, not operators (issue 13 §1), and user text never
turns into query syntax (failure case C14): through SessionDB, the session_search tool and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from hermes_memory.cli.main import app
from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.fts import build_query
from hermes_memory.sessions.search import SESSION_SEARCH_SCHEMA, session_search
from tests.helpers.values import present

FRIDAY = "I said do NOT deploy on Fridays"


def _texts(rows: list[dict]) -> set[str]:
    return {r["snippet"].replace(">>>", "").replace("<<<", "") for r in rows}


def _tool(db: SessionDB, **args: object) -> dict:
    return json.loads(session_search(args, db))


@pytest.mark.parametrize(
    ("stored", "query"),
    [
        (FRIDAY, "do NOT deploy"),
        (FRIDAY, "Do NOT deploy"),
        (FRIDAY, "NOT deploy"),
        ("salt AND pepper grinder", "salt AND pepper"),
        ("tea OR coffee tonight", "tea OR coffee"),
        ("keep it NEAR the door", "NEAR the door"),
        ("the AND gate of the circuit", "the AND gate"),
    ],
)
def test_upper_case_operator_words_in_plain_text_find_the_message(db: SessionDB, stored: str, query: str) -> None:
    db.create_session("s1")
    db.create_session("s2")
    db.append_message("s1", "user", stored)
    db.append_message("s2", "user", "something else entirely")
    assert _texts(db.search_messages(query)) == {stored}
    result = _tool(db, query=query)
    assert result["success"] is True and result["count"] == 1
    assert result["results"][0]["session_id"] == "s1"


def test_operator_words_between_cjk_words_do_not_match_english_text(db: SessionDB) -> None:
    db.create_session("s1")
    a = db.append_message("s1", "user", "记忆系统很好用")
    b = db.append_message("s1", "user", "断裂连接需要修复")
    db.append_message("s1", "user", "tea or coffee, and not near the door")
    for syntax in (False, True):
        assert {r["id"] for r in db.search_messages("记忆系统 OR 断裂连接", query_syntax=syntax)} == {a, b}
        assert {r["id"] for r in db.search_messages("记忆系统 AND the", query_syntax=syntax)} == {a}


@pytest.mark.parametrize("query", ["NOT", "AND", "OR", "NEAR", "AND OR NOT", "NOT NEAR"])
def test_a_query_of_only_operator_words_searches_those_words(db: SessionDB, query: str) -> None:
    db.create_session("s1")
    db.append_message("s1", "user", "and or not near: all four words are here")
    for syntax in (False, True):
        rows = db.search_messages(query, query_syntax=syntax)
        assert len(rows) == 1, (query, syntax)


def test_query_syntax_opt_in_honours_not_and_near(db: SessionDB) -> None:
    db.create_session("s1")
    a = db.append_message("s1", "user", "deploy the kafka cluster")
    b = db.append_message("s1", "user", "deploy the web frontend")
    c = db.append_message("s1", "user", "kafka broker timeout seen at night, far later the word deploy")

    def ids(q: str, syntax: bool) -> set[int]:
        return {r["id"] for r in db.search_messages(q, query_syntax=syntax)}

    assert ids("deploy NOT kafka", True) == {b}
    assert ids("deploy NOT kafka", False) == {a, b, c}
    assert ids("kafka AND frontend", True) == set()  # a real AND: no message has both
    assert ids("kafka AND frontend", False) == {a, b, c}
    assert ids("kafka NEAR timeout", True) == {c}
    assert ids("cluster NEAR timeout", True) == set()


def test_query_syntax_left_without_a_positive_term_falls_back_to_words(db: SessionDB) -> None:
    db.create_session("s1")
    db.append_message("s1", "user", FRIDAY)
    plan = build_query("do NOT deploy", syntax=True)
    assert plan.fell_back and plan.fts == '"deploy"'
    assert len(db.search_messages("do NOT deploy", query_syntax=True)) == 1
    result = _tool(db, query="do NOT deploy", query_syntax=True)
    assert result["success"] is True and result["count"] == 1
    assert "plain terms" in result["note"]
    assert "note" not in _tool(db, query="do NOT deploy")


def test_tool_schema_documents_query_syntax_and_rejects_a_non_boolean(db: SessionDB) -> None:
    props = SESSION_SEARCH_SCHEMA["parameters"]["properties"]
    assert props["query_syntax"]["type"] == "boolean"
    assert "NOT" in props["query_syntax"]["description"]
    assert "ordinary words" in props["query"]["description"]
    bad = _tool(db, query="x", query_syntax="yes")
    assert bad["success"] is False and "query_syntax" in bad["error"]


def test_cli_sessions_search_query_syntax_flag(tmp_path: Path) -> None:
    home = tmp_path / "home"
    db = SessionDB(home / "state.db")
    db.create_session("s1")
    db.append_message("s1", "user", FRIDAY)
    db.append_message("s1", "user", "deploy the web frontend")
    db.close()
    runner = CliRunner()

    def count(*extra: str) -> int:
        res = runner.invoke(app, ["--home", str(home), "sessions", "search", *extra, "--json"])
        assert res.exit_code == 0, res.output
        return json.loads(res.output)["count"]

    assert count("do NOT deploy") == 2
    assert count("deploy NOT Fridays", "--query-syntax") == 1
    assert count("do NOT deploy", "--query-syntax") == 2  # nothing positive left: read as words


# ----------------------------------------------------------------- property: own words find it
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZàéîõüçñÀÉÎÕÜÇÑабвгдАБВГДαβγδΑΒΓΔ"
_WORD = st.text(alphabet=_LETTERS + "0123456789", min_size=1, max_size=8)
_PUNCT = st.sampled_from(["", "", "", ".", ",", "-", "/", ":", "'", "!", "?", "#", "@", "%", "&", "|", "(", ")", "*", "+"])
_TOKEN = st.one_of(
    st.builds(lambda a, p, b: a + p + b, _WORD, _PUNCT, st.one_of(st.just(""), _WORD)),
    st.sampled_from(["NOT", "AND", "OR", "NEAR", "not", "and", "the", "a", "I", "记忆", "错题本", "悬空"]),
)
_CASES = [str.upper, str.lower, str.title, str.swapcase, lambda w: w]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    tokens=st.lists(_TOKEN, min_size=1, max_size=10),
    picks=st.lists(st.integers(min_value=0, max_value=9), min_size=1, max_size=4),
    case=st.sampled_from(range(len(_CASES))),
)
def test_a_query_of_a_messages_own_words_finds_it_in_any_case(
    tmp_path_factory: pytest.TempPathFactory, tokens: list[str], picks: list[int], case: int
) -> None:
    db = SessionDB(tmp_path_factory.mktemp("own") / "state.db")
    try:
        db.create_session("s1")
        text = " ".join(tokens)
        mid = db.append_message("s1", "user", text)
        db.append_message("s1", "user", "unrelated filler message zzqx")
        chosen = [tokens[i % len(tokens)] for i in picks]
        query = " ".join(_CASES[case](w) for w in chosen)
        for syntax in (False, True):
            found = {r["id"] for r in db.search_messages(query, query_syntax=syntax, raise_errors=True)}
            if syntax and ({"NOT", "NEAR"} & set(query.split()[1:])):
                # With query syntax opted into, "00 NOT 0" rightly leaves out a message holding "0"
                # and "a NEAR b" one where they stand far apart: that is what the caller asked
                # for, so only "never raises" is checked.
                continue
            assert mid in found, (text, query, syntax)
    finally:
        db.close()


# ----------------------------------------------------------------- failure case C14
C14 = [
    ("it's", "it's a trap, she said"),
    ("gateway/run.py", "the bug is in gateway/run.py line 40"),
    ("user@host.example", "mail user@host.example for access"),
    ("50%", "the battery dropped to 50% overnight"),
    ("#123", "see ticket #123 for details"),
    ("c++", "rewrite the parser in c++ next week"),
    ("node.js", "upgrade node.js before the release"),
    ("alice::bob", "the symbol alice::bob is ambiguous"),
    ('"unbalanced', 'an "unbalanced quote in the notes'),
    ("a & | b", "the a & | b shell pipeline"),
    ("错题本 OR wrong-book OR mistakes", "整理错题本 today"),
]
C14_NO_MATCH = ["!", "(", ":*"]


@pytest.fixture()
def c14_db(db: SessionDB) -> SessionDB:
    for i, (_, text) in enumerate(C14):
        db.create_session(f"s{i}")
        db.append_message(f"s{i}", "user", text)
    db.create_session("sw")
    db.append_message("sw", "user", "a wrong-book of mistakes")
    return db


@pytest.mark.parametrize(("query", "text"), C14)
@pytest.mark.parametrize("syntax", [False, True])
def test_C14_user_text_is_never_query_syntax_and_each_seeded_term_is_found(
    c14_db: SessionDB, query: str, text: str, syntax: bool
) -> None:
    result = _tool(c14_db, query=query, query_syntax=syntax, limit=10)
    assert result["success"] is True, result
    sids = {r["session_id"] for r in result["results"]}
    seeded = f"s{[t for _, t in C14].index(text)}"
    assert seeded in sids, (query, result)
    rows = c14_db.search_messages(query, query_syntax=syntax, raise_errors=True)
    assert text in {present(c14_db.get_message(r["id"]))["content"] for r in rows}


def test_C14_cjk_or_query_finds_each_alternative(c14_db: SessionDB) -> None:
    result = _tool(c14_db, query="错题本 OR wrong-book OR mistakes", limit=10)
    contents = {present(c14_db.get_message(r["id"]))["content"]
                for r in c14_db.search_messages("错题本 OR wrong-book OR mistakes")}
    assert {"整理错题本 today", "a wrong-book of mistakes"} <= contents
    assert result["count"] >= 2


@pytest.mark.parametrize("query", C14_NO_MATCH)
@pytest.mark.parametrize("syntax", [False, True])
def test_C14_punctuation_only_queries_succeed_with_no_results(c14_db: SessionDB, query: str, syntax: bool) -> None:
    result = _tool(c14_db, query=query, query_syntax=syntax)
    assert result == {"success": True, "mode": "discovery", "query": query, "count": 0, "results": []}


@pytest.mark.parametrize("query", ["记忆 NOT 记忆", "deploy NOT deploy", "Deploy NOT deploy"])
def test_an_opted_in_query_that_excludes_its_own_terms_is_searched_as_words(db: SessionDB, query: str) -> None:
    # Found by the property test: with query syntax, "X NOT X" can match nothing, so it must not
    # answer "no results" silently; like a plan with no positive term it falls back to words.
    db.create_session("s1")
    mid = db.append_message("s1", "user", "NOT NOT deploy 记忆")
    db.append_message("s1", "user", "unrelated filler message zzqx")
    assert build_query(query, syntax=True).fell_back
    assert mid in {r["id"] for r in db.search_messages(query, query_syntax=True, raise_errors=True)}
