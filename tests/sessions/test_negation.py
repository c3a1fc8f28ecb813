"""NOT in an opted-in query excludes its word also next to CJK text (failure case B23 of docs/failure-
cases.md), and a negated word is never highlighted in a result.
"""

from __future__ import annotations

import pytest

from hermes_memory.sessions.db import SessionDB
from tests.helpers.values import present


# ----------------------------------------------------------------- NOT next to CJK text
def _not_rows(db: SessionDB) -> None:
    db.create_session("s1")
    db.append_message("s1", "user", "deploy kafka today")
    db.append_message("s1", "user", "deploy 记忆断裂 issue")
    db.append_message("s1", "user", "记忆断裂 only")


def _texts(db: SessionDB, query: str) -> set[str]:
    return {present(db.get_message(r["id"]))["content"] for r in db.search_messages(query, query_syntax=True)}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("kafka NOT deploy", set()),  # the NOT-ed word must not turn into a match via the CJK side
        ("记忆断裂 NOT deploy", {"记忆断裂 only"}),
        ("deploy NOT 记忆断裂", {"deploy kafka today"}),
        ("deploy NOT 断裂", {"deploy kafka today"}),
        ("deploy NOT 记忆断裂 kafka", {"deploy kafka today"}),  # NOT applies to the CJK word only
    ],
)
def test_B23_not_is_honoured_next_to_cjk_with_query_syntax(db: SessionDB, query: str, expected: set[str]) -> None:
    _not_rows(db)
    assert _texts(db, query) == expected


def test_negated_words_are_not_highlighted(db: SessionDB) -> None:
    _not_rows(db)
    rows = db.search_messages("记忆断裂 NOT kafka", query_syntax=True)
    assert rows and all(">>>kafka<<<" not in r["snippet"] for r in rows)
