"""Arguments a model passes to session_search: bad ones never raise, they come back as a JSON error (failure
case B22 of docs/failure-cases.md), and a list of sources filters instead of returning an empty success.
"""

from __future__ import annotations

import json

import pytest

from hermes_memory.sessions import session_search
from hermes_memory.sessions.db import SessionDB


# ----------------------------------------------------------------- session_search bad arguments
@pytest.mark.parametrize(
    "args",
    [
        {"query": "kafka", "limit": float("inf")},
        {"query": "kafka", "limit": float("-inf")},
        {"query": "kafka", "window": float("inf")},
        {"limit": float("inf")},
        {"session_id": "s1", "around_message_id": 10**30},
        {"session_id": "s1", "around_message_id": float("inf")},
        {"session_id": "s1", "around_message_id": 1, "window": float("nan")},
        {"source": ["cli"]},
        {"source": {"a": 1}},
        {"query": "kafka", "source": {"a": 1}},
        {"query": "kafka", "user_id": {"a": 1}},
        {"query": "kafka", "role_filter": {"a": 1}},
    ],
)
def test_B22_tool_bad_arguments_never_raise(db: SessionDB, args: dict) -> None:
    db.create_session("s1", source="cli")
    db.append_message("s1", "user", "the kafka consumer lag")
    out = json.loads(session_search(args, db))
    assert isinstance(out["success"], bool)
    if not out["success"]:
        assert out["error"]


def test_tool_source_list_filters_instead_of_empty_success(db: SessionDB) -> None:
    db.create_session("s1", source="cli")
    db.append_message("s1", "user", "the kafka consumer lag")
    db.create_session("s2", source="telegram")
    db.append_message("s2", "user", "kafka on telegram")
    out = json.loads(session_search({"query": "kafka", "source": ["cli"]}, db))
    assert out["success"] is True and [r["session_id"] for r in out["results"]] == ["s1"]
    out = json.loads(session_search({"source": ["telegram"]}, db))
    assert out["success"] is True and [s["session_id"] for s in out["sessions"]] == ["s2"]
