"""``c++``, ``C#``, ``f#``, ``.net``, ``node.js``: the tokenizer drops their symbols (``c++`` and ``C#``
both became ``c``), so a hit must hold the literal, case-insensitive, not inside a longer word.
On SQLite and PostgreSQL (the ``db`` fixture runs both), through ``search_messages``, the titles
and the ``session_search`` tool."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hermes_memory.sessions.literal_terms import contains_literal, literal_terms
from hermes_memory.sessions.search import session_search

TEXTS = {
    "cpp": "I rewrote the parser in C++ with templates",
    "csharp": "The Windows service is written in C# on .NET 8",
    "fsharp": "We prototyped the pricing model in F# first",
    "plain_c": "The firmware is plain C, compiled with gcc",
    "letter": "Grade c was the lowest mark on the test",
    "node": "The API server runs on Node.js behind nginx",
    "nodes": "Three nodes joined the cluster; js bundles are served by nginx",
    "network": "The .network file configures systemd-networkd",
    "net": "Gross and net income were both up this quarter",
}


@pytest.fixture
def filled(db: Any) -> tuple[Any, dict[str, int]]:
    ids: dict[str, int] = {}
    for key, text in TEXTS.items():
        sid = db.create_session(f"s-{key}")
        ids[key] = db.append_message(sid, "user", text)
    return db, ids


def _found(db: Any, ids: dict[str, int], query: str) -> set[str]:
    by_id = {v: k for k, v in ids.items()}
    return {by_id[r["id"]] for r in db.search_messages(query, limit=50, raise_errors=True)}


@pytest.mark.parametrize(("query", "expected"), [
    ("c++", {"cpp"}),
    ("C#", {"csharp"}),
    ("c#", {"csharp"}),
    ("f#", {"fsharp"}),
    (".NET", {"csharp"}),
    ("node.js", {"node"}),
    ("NODE.JS", {"node"}),
    ("what did we write in c++?", {"cpp"}),
])
def test_a_term_with_dropped_symbols_finds_only_text_holding_it(filled: tuple[Any, dict[str, int]], query: str,
                                                              expected: set[str]) -> None:
    db, ids = filled
    assert _found(db, ids, query) == expected


def test_plain_words_are_searched_as_before(filled: tuple[Any, dict[str, int]]) -> None:
    db, ids = filled
    assert {"node", "nodes"} <= _found(db, ids, "nginx")
    assert "net" in _found(db, ids, "net income")


def test_limit_and_offset_page_the_filtered_hits(db: Any) -> None:
    sid = db.create_session("many")
    for i in range(30):
        db.append_message(sid, "user", f"note {i}: the letter c alone")
    for i in range(5):
        db.append_message(sid, "user", f"C++ item {i}")
    first = db.search_messages("c++", limit=3, raise_errors=True)
    rest = db.search_messages("c++", limit=10, offset=3, raise_errors=True)
    assert len(first) == 3 and len(rest) == 2
    assert all(db.get_message(r["id"])["content"].startswith("C++") for r in first + rest)
    assert not {r["id"] for r in first} & {r["id"] for r in rest}


def test_titles_and_the_session_search_tool_follow_the_same_rule(db: Any) -> None:
    a, b = db.create_session("a"), db.create_session("b")
    db.set_session_title(a, "C# port")
    db.set_session_title(b, "C basics")
    db.append_message(a, "user", "start the C# port of the scheduler")
    db.append_message(b, "user", "pointers in C are hard")
    assert [t["id"] for t in db.search_titles("c#")] == [a]
    out = json.loads(session_search({"query": "C#"}, db))
    assert out["success"] and [r["session_id"] for r in out["results"]] == [a]


def test_literal_terms_and_the_literal_check() -> None:
    assert literal_terms("C# vs c++ on .NET, node.js, AT&T or plain c.") == ["C#", "c++", ".NET", "node.js", "AT&T"]
    assert literal_terms("a well-known e-mail about version 3.5 and don't") == []
    assert literal_terms("") == [] and literal_terms(None) == []
    assert contains_literal("we use C++20", ["c++"])
    assert not contains_literal("abc# is not it", ["c#"])
    assert not contains_literal("see the .network file", [".net"])
    assert contains_literal("(C#)", ["c#"])


def test_amounts_numbers_and_initials_are_not_literal_terms() -> None:
    # "$50" and "#42" name a number the index holds ("50 dollars", "issue 42" must still match), and
    # initials are written without their dots as often as with them ("US", "eg", "am")
    from hermes_memory.sessions.literal_terms import literal_terms

    assert literal_terms("did the U.S. trip cost $50, e.g. at 9 a.m. (see #42)?") == []
    assert literal_terms("U.S. pricing for node.js and C#") == ["node.js", "C#"]
