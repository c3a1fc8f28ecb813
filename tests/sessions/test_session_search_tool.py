"""The session_search tool: discovery, scroll, read, browse; lineage grouping; current-session
exclusion; clamped limits; optional summariser; documented JSON shape."""

from __future__ import annotations

import json

from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.search import SESSION_SEARCH_SCHEMA, session_search


def _call(db: SessionDB, args: dict | None, **kw) -> dict:
    out = session_search(args, db, **kw)
    assert isinstance(out, str)
    return json.loads(out)


def _seed(db: SessionDB) -> None:
    db.create_session("root", source="cli", started_at=1000.0, title="Kafka work")
    for i in range(12):
        db.append_message("root", "user" if i % 2 == 0 else "assistant", f"filler line {i}", timestamp=1000.0 + i)
    db.append_message("root", "user", "the kafka consumer lag is huge", timestamp=1100.0)
    db.append_message("root", "assistant", "raise max.poll.records for the kafka consumer", timestamp=1101.0)
    db.end_session("root", "compression")
    db.create_session("child", source="cli", parent_session_id="root", started_at=1200.0)
    db.append_message("child", "user", "kafka lag fixed after the change", timestamp=1201.0)
    db.create_session("other", source="telegram", started_at=1300.0)
    db.append_message("other", "user", "kafka topic retention question", timestamp=1301.0)
    db.create_session("hidden", source="subagent", started_at=1400.0)
    db.append_message("hidden", "user", "kafka internal subagent chatter", timestamp=1401.0)


def test_schema_shape() -> None:
    assert SESSION_SEARCH_SCHEMA["name"] == "session_search"
    props = SESSION_SEARCH_SCHEMA["parameters"]["properties"]
    assert {"query", "session_id", "around_message_id", "window", "limit", "role_filter"} <= set(props)


def test_discovery_groups_by_lineage_and_hides_internal_sources(db: SessionDB) -> None:
    _seed(db)
    out = _call(db, {"query": "kafka consumer lag", "limit": 10})
    assert out["success"] and out["mode"] == "discovery"
    roots = [r["lineage_root"] for r in out["results"]]
    assert sorted(roots) == ["other", "root"]  # root+child are one conversation; subagent hidden
    top = out["results"][0]
    assert top["lineage_root"] == "root" and top["match_count"] >= 2
    assert top["title"] in ("Kafka work", None) and top["when"].startswith("1970-01-01T00:")
    assert {"message_id", "session_id", "role", "snippet", "timestamp"} <= set(top["hits"][0])
    assert top["link"] == f"@session:{top['session_id']}"
    assert any("kafka" in m["content"] for m in top["window"])
    assert len(top["bookends"]["first"]) == 3 and len(top["bookends"]["last"]) == 3


def test_discovery_excludes_current_session_live_rows_but_keeps_ancestors(db: SessionDB) -> None:
    _seed(db)
    out = _call(db, {"query": "kafka", "limit": 10}, current_session_id="child")
    sessions = {h["session_id"] for r in out["results"] for h in r["hits"]}
    assert "child" not in sessions and "root" in sessions


def test_limits_are_clamped(db: SessionDB) -> None:
    _seed(db)
    assert _call(db, {"query": "kafka", "limit": 0})["count"] == 1
    assert _call(db, {"query": "kafka", "limit": 999})["count"] == 2
    assert _call(db, {"query": "kafka", "limit": "nonsense"})["count"] == 2
    msgs = _call(db, {"session_id": "root", "around_message_id": 7, "window": 500})["messages"]
    assert len(msgs) <= 41


def test_role_filter_and_source(db: SessionDB) -> None:
    _seed(db)
    out = _call(db, {"query": "kafka", "role_filter": "assistant", "limit": 10})
    assert all(h["role"] == "assistant" for r in out["results"] for h in r["hits"])
    out = _call(db, {"query": "kafka", "source": "subagent"})
    assert [r["session_id"] for r in out["results"]] == ["hidden"]


def test_scroll_window(db: SessionDB) -> None:
    _seed(db)
    ids = [m["id"] for m in db.get_messages("root")]
    out = _call(db, {"session_id": "root", "around_message_id": ids[6], "window": 2})
    assert out["mode"] == "scroll"
    assert [m["message_id"] for m in out["messages"]] == ids[4:9]
    assert out["more_before"] is True and out["more_after"] is True
    bad = _call(db, {"session_id": "other", "around_message_id": ids[6]})
    assert bad["success"] is False and "not in session" in bad["error"]


def test_read_trims_long_sessions_to_head_and_tail(db: SessionDB) -> None:
    db.create_session("long")
    for i in range(45):
        db.append_message("long", "user", f"line {i}")
    out = _call(db, {"session_id": "lon"})  # unique prefix
    assert out["mode"] == "read" and out["truncated"] is True and out["omitted_messages"] == 15
    contents = [m["content"] for m in out["messages"]]
    assert contents[:2] == ["line 0", "line 1"] and contents[-1] == "line 44" and len(contents) == 30
    short = _call(db, {"session_id": "long", "around_message_id": None})
    assert short["mode"] == "read"


def test_browse_lists_recent_sessions_without_current(db: SessionDB) -> None:
    _seed(db)
    out = _call(db, {}, current_session_id="other")
    assert out["mode"] == "browse"
    ids = [s["session_id"] for s in out["sessions"]]
    assert ids == ["child", "root"]
    assert out["sessions"][1]["preview"] == "filler line 0"
    assert _call(db, None)["mode"] == "browse"


def test_unknown_session_and_bad_args_are_refusals(db: SessionDB) -> None:
    out = _call(db, {"session_id": "nope"})
    assert out["success"] is False and "No session matches" in out["error"]
    assert json.loads(session_search("not a dict", db))["success"] is False  # type: ignore[arg-type]


def test_summarizer_is_optional_and_failures_are_reported(db: SessionDB) -> None:
    _seed(db)
    seen = []

    def summarize(transcript: str, query: str) -> str:
        seen.append(query)
        return f"summary of {len(transcript)} chars"

    out = _call(db, {"query": "kafka"}, summarizer=summarize)
    assert out["results"][0]["summary"].startswith("summary of") and seen == ["kafka"] * out["count"]

    def broken(transcript: str, query: str) -> str:
        raise RuntimeError("aux model down")

    out = _call(db, {"query": "kafka"}, summarizer=broken)
    assert out["success"] is True and "aux model down" in out["results"][0]["summary_error"]
    assert "summary" not in _call(db, {"query": "kafka"})["results"][0]


def test_a_query_longer_than_a_title_can_be_still_searches_messages(db: SessionDB) -> None:
    _seed(db)
    query = ("why is the kafka consumer lag so huge after we deployed the new build on friday, "
             "and which setting did we raise to fix it in the end?")
    assert len(query) > 100  # longer than any session title may be
    out = _call(db, {"query": query})
    assert out["success"] is True, out
    assert "root" in {r["session_id"] for r in out["results"]}
