"""A Chinese or Japanese question typed the natural way (no spaces) finds the message holding its key term.

The whole CJK run used to be searched as one literal, so "记忆断裂是什么意思" ("what does 记忆断裂
mean") matched only a message holding the whole question: nothing. Real SQLite file and real
PostgreSQL database (the ``db`` fixture), through ``search_messages`` and the ``session_search`` tool.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from hermes_memory.sessions.search import session_search


def _texts(rows: list[dict[str, Any]]) -> list[str]:
    return [r["snippet"].replace(">>>", "").replace("<<<", "") for r in rows]


STORED = ["上次我们讨论了记忆断裂的问题", "東京タワーの近くで会いましょう", "今天的天气很好", "会議は明日の午後です"]


@pytest.fixture
def cjk_db(db: Any) -> Any:
    sid = db.create_session(source="cli")
    for i, text in enumerate(STORED):
        db.append_message(sid, "user" if i % 2 == 0 else "assistant", text)
    return db


@pytest.mark.parametrize(("question", "expected"), [
    ("记忆断裂是什么意思", STORED[0]),
    ("什么是记忆断裂？", STORED[0]),
    ("请问记忆断裂怎么办", STORED[0]),
    ("東京タワーはどこですか", STORED[1]),
    ("東京タワーについて教えてください", STORED[1]),
])
def test_a_question_without_spaces_finds_its_key_term(cjk_db: Any, question: str, expected: str) -> None:
    rows = cjk_db.search_messages(question, limit=10)
    assert _texts(rows) == [expected]
    tool = json.loads(session_search({"query": question, "sort": "newest"}, cjk_db))
    assert tool["success"] and tool["count"] >= 1, tool


@pytest.mark.parametrize("query", ["记忆断裂", "東京タワー", '"记忆断裂是什么意思"'])
def test_a_word_or_a_quoted_question_is_still_searched_as_typed(cjk_db: Any, query: str) -> None:
    rows = cjk_db.search_messages(query, limit=10)
    expected = [] if query.startswith('"') else [next(s for s in STORED if query in s)]
    assert _texts(rows) == expected
