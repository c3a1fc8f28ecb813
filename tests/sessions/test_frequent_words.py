"""The posting budget of a search (a very frequent word is dropped from the index lookup) never loses matches:
the page still fills, filtered searches and tool discovery with a source still find the rows of the frequent
word.
"""

from __future__ import annotations

import json

import pytest

from hermes_memory.sessions import session_search
from hermes_memory.sessions.db import SessionDB
from tests.helpers.values import present


# ----------------------------------------------------------------- the posting budget must not lose matches
@pytest.fixture
def frequent_and_rare(db: SessionDB) -> SessionDB:
    """'deploy' in 3,000 rows (over the posting budget), 'kafka' in one; session B is small."""
    db.create_session("A", user_id="ua")
    db.append_messages("A", [{"role": "user", "content": f"deploy step {i}"} for i in range(3000)])
    db.append_message("A", "user", "kafka broke")
    db.create_session("B", user_id="ub", source="telegram")
    for i in range(5):
        db.append_message("B", "user", f"deploy on telegram {i}")
    return db


def test_dropped_frequent_word_still_fills_the_page(frequent_and_rare: SessionDB) -> None:
    rows = frequent_and_rare.search_messages("deploy kafka", limit=20)
    assert len(rows) == 20
    assert present(frequent_and_rare.get_message(rows[0]["id"]))["content"] == "kafka broke"  # rarest word ranks first


@pytest.mark.parametrize(
    "filters", [{"session_id": "B"}, {"user_id": "ub"}, {"source_filter": "telegram"}]
)
def test_filtered_search_finds_rows_of_a_frequent_word(frequent_and_rare: SessionDB, filters: dict) -> None:
    rows = frequent_and_rare.search_messages("deploy kafka", limit=20, **filters)
    assert len(rows) == 5 and {r["session_id"] for r in rows} == {"B"}


def test_tool_discovery_with_source_finds_the_frequent_word(frequent_and_rare: SessionDB) -> None:
    out = json.loads(session_search({"query": "deploy kafka", "source": "telegram"}, frequent_and_rare))
    assert out["success"] is True and out["count"] == 1 and out["results"][0]["session_id"] == "B"
