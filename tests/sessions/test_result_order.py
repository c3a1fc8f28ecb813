"""The order of session_search results: sort newest/oldest orders sessions by time (also for CJK queries beyond
50 matches, ties broken by id: failure case B23 of docs/failure-cases.md), no sort ranks by relevance, an
unknown sort is refused, and the user's own sessions outrank cron sessions, as the reference agent's own
tests expect.
"""

from __future__ import annotations

import json
import time

import pytest

from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.search import SESSION_SEARCH_SCHEMA, session_search


# ----------------------------------------------------------------- CJK results under newest/oldest sort
@pytest.mark.parametrize("query", ["记忆断裂", "悬空", "테스트", "테"])
def test_B23_cjk_sort_newest_oldest_is_by_time_even_beyond_50_matches(db: SessionDB, query: str) -> None:
    """Imported history arrives in any order: row ids do not follow timestamps. More CJK matches
    than the side-table read size must still give the truly newest / oldest rows."""
    db.create_session("s1")
    for i in range(70):  # later rows are OLDER (an import of old history after new)
        db.append_message("s1", "user", f"记忆断裂 第{i}条 悬空 테스트입니다", timestamp=1000.0 - i)
    newest = [r["timestamp"] for r in db.search_messages(query, sort="newest", limit=3)]
    oldest = [r["timestamp"] for r in db.search_messages(query, sort="oldest", limit=3)]
    assert newest == [1000.0, 999.0, 998.0]
    assert oldest == [931.0, 932.0, 933.0]


def test_B23_cjk_sort_ties_are_broken_by_id(db: SessionDB) -> None:
    db.create_session("s1")
    ids = [db.append_message("s1", "user", f"悬空 {i}", timestamp=5.0) for i in range(60)]
    assert [r["id"] for r in db.search_messages("悬空", sort="newest", limit=3)] == ids[::-1][:3]
    assert [r["id"] for r in db.search_messages("悬空", sort="oldest", limit=3)] == ids[:3]


def _tool(db: SessionDB, current: str | None = None, **args: object) -> dict:
    return json.loads(session_search(args, db, current_session_id=current))


def _seed_three_eras(db: SessionDB) -> None:
    now = time.time()
    for sid, age, title in (("s_oldest", 30000, "Building the bot"), ("s_middle", 15000, None),
                            ("s_newest", 1000, None)):
        db.create_session(sid, title=title, started_at=now - age)
        db.append_message(sid, "user", f"work on the modpack ({sid})", timestamp=now - age + 1)
        db.append_message(sid, "assistant", "modpack modpack modpack updated" if sid == "s_middle"
                          else "modpack updated", timestamp=now - age + 2)


# ----------------------------------------------------------------- sort
def test_session_search_schema_offers_sort_newest_and_oldest() -> None:
    assert SESSION_SEARCH_SCHEMA["parameters"]["properties"]["sort"]["enum"] == ["newest", "oldest"]


@pytest.mark.parametrize(("sort", "first"), [("newest", "s_newest"), ("oldest", "s_oldest"), ("NEWEST", "s_newest")])
def test_session_search_sort_orders_sessions_by_time(db: SessionDB, sort: str, first: str) -> None:
    _seed_three_eras(db)
    result = _tool(db, query="modpack", limit=3, sort=sort)
    assert result["success"] is True
    order = [r["session_id"] for r in result["results"]]
    assert order[0] == first
    assert order == (["s_newest", "s_middle", "s_oldest"] if first == "s_newest" else ["s_oldest", "s_middle", "s_newest"])


def test_session_search_without_sort_ranks_by_relevance(db: SessionDB) -> None:
    _seed_three_eras(db)
    assert _tool(db, query="modpack", limit=3)["results"][0]["session_id"] == "s_middle"


def test_session_search_rejects_an_unknown_sort_instead_of_ignoring_it(db: SessionDB) -> None:
    _seed_three_eras(db)
    result = _tool(db, query="modpack", sort="latest")
    assert result["success"] is False and "newest" in result["error"] and "oldest" in result["error"]


# ----------------------------------------------------------------- cron demotion
def _seed_cron_wall(db: SessionDB) -> None:
    now = time.time()
    db.create_session("s_user", source="telegram", started_at=now - 90000)
    db.append_message("s_user", "user", "how is the venom project going", timestamp=now - 90000)
    db.append_message("s_user", "assistant", "The venom project shipped its first milestone.", timestamp=now - 89999)
    for i in range(8):
        db.create_session(f"cron_{i}", source="cron", started_at=now - 1000 - i)
        db.append_message(f"cron_{i}", "user", "venom project daily status", timestamp=now - 1000 - i)
        db.append_message(f"cron_{i}", "assistant", "venom project venom project venom summary", timestamp=now - 999 - i)


@pytest.mark.parametrize("sort", [None, "newest"])
def test_the_users_own_session_outranks_cron_sessions(db: SessionDB, sort: str | None) -> None:
    _seed_cron_wall(db)
    result = _tool(db, query="venom project", limit=1, **({"sort": sort} if sort else {}))
    assert result["count"] == 1
    assert (result["results"][0]["session_id"], result["results"][0]["source"]) == ("s_user", "telegram")
    everything = _tool(db, query="venom project", limit=10)
    assert [r["source"] for r in everything["results"]] == ["telegram"] + ["cron"] * 8


def test_cron_sessions_are_still_found_when_they_are_the_only_match(db: SessionDB) -> None:
    db.create_session("cron_only", source="cron")
    db.append_message("cron_only", "user", "quarterly archive sweep")
    result = _tool(db, query="archive sweep")
    assert result["count"] == 1 and result["results"][0]["source"] == "cron"
