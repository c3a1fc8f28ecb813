"""Behaviours the reference agent's own tests expect of session_search and SessionDB (issue 12):
sort, title search, cron demotion, title transfer to compression continuations only, and
replay fields of get_messages_as_conversation."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hermes_memory.cli.main import app
from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.search import SESSION_SEARCH_SCHEMA, session_search


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


# ----------------------------------------------------------------- titles
def test_a_session_matching_only_by_its_exact_title_is_found_first(db: SessionDB) -> None:
    db.create_session("s_night", title="Night ibuprofen plan")
    db.append_message("s_night", "user", "remember the dose at 21:00")
    db.create_session("s_other")
    db.append_message("s_other", "user", "the plan for the night shift")
    for query in ("Night ibuprofen plan", '"night ibuprofen plan"', "`Night ibuprofen plan`"):
        result = _tool(db, query=query)
        assert result["success"] is True
        top = result["results"][0]
        assert top["session_id"] == "s_night" and top["title_match"] == "exact"
        assert top["match_count"] == 0 and top["hits"] == []
        assert [m["content"] for m in top["window"]] == ["remember the dose at 21:00"]


def test_a_session_whose_title_holds_every_query_word_is_found(db: SessionDB) -> None:
    db.create_session("s_quest", title="Modpack Quest Coverage")
    db.append_message("s_quest", "user", "survey the questbook")
    db.create_session("s_noise")
    db.append_message("s_noise", "user", "nothing relevant here")
    result = _tool(db, query="what about the quests in the modpack?")
    assert [(r["session_id"], r["title_match"]) for r in result["results"]] == [("s_quest", "terms")]
    assert all(r["title_match"] is None for r in _tool(db, query="the")["results"])  # a stopword alone: no title match


def test_title_search_keeps_the_source_user_and_live_session_rules(db: SessionDB) -> None:
    db.create_session("s_live", title="Release checklist")
    db.create_session("s_sub", source="subagent", title="Release checklist #2")
    db.create_session("s_tg", source="telegram", title="Release notes draft", user_id="u1")
    assert _tool(db, current="s_live", query="Release checklist")["count"] == 0
    assert [r["session_id"] for r in _tool(db, query="release", source="telegram")["results"]] == ["s_tg"]
    assert _tool(db, query="release notes", user_id="u2")["count"] == 0
    assert _tool(db, query="release checklist", source="subagent")["results"][0]["session_id"] == "s_sub"


def test_cli_sessions_search_lists_title_matches(tmp_path: Path) -> None:
    home = tmp_path / "home"
    d = SessionDB(home / "state.db")
    d.create_session("s_night", title="Night ibuprofen plan")
    d.close()
    res = CliRunner().invoke(app, ["--home", str(home), "sessions", "search", "ibuprofen plan", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["count"] == 0 and [t["id"] for t in out["title_matches"]] == ["s_night"]
    text = CliRunner().invoke(app, ["--home", str(home), "sessions", "search", "ibuprofen plan"])
    assert "title match: s_night" in text.output and "no message matches" in text.output


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


# ----------------------------------------------------------------- set_session_title
def test_a_compression_continuation_takes_over_its_predecessors_title(db: SessionDB) -> None:
    db.create_session("root", title="Plan")
    db.end_session("root", "compression")
    db.create_session("mid", parent_session_id="root")
    db.end_session("mid", "compression")
    db.create_session("tip", parent_session_id="mid")
    assert db.set_session_title("tip", "Plan") is True
    assert db.get_session_title("root") is None and db.get_session_title("tip") == "Plan"


@pytest.mark.parametrize("parent_end", [None, "branched", "user_exit", "session_reset"])
def test_a_child_that_is_not_a_compression_continuation_cannot_take_the_parents_title(
    db: SessionDB, parent_end: str | None
) -> None:
    db.create_session("parent", title="Plan")
    if parent_end:
        db.end_session("parent", parent_end)
    db.create_session("child", parent_session_id="parent")
    with pytest.raises(ValueError, match="already in use by session parent"):
        db.set_session_title("child", "Plan")
    assert db.get_session_title("parent") == "Plan" and db.get_session_title("child") is None


def test_title_transfer_stops_at_a_non_compression_link(db: SessionDB) -> None:
    db.create_session("root", title="Plan")  # root -> mid is a plain child link (root never ended)
    db.create_session("mid", parent_session_id="root")
    db.end_session("mid", "compression")
    db.create_session("tip", parent_session_id="mid")
    with pytest.raises(ValueError):
        db.set_session_title("tip", "Plan")
    assert db.get_session_title("root") == "Plan"


# ----------------------------------------------------------------- get_messages_as_conversation
def test_conversation_keeps_timestamp_and_finish_reason(db: SessionDB) -> None:
    db.create_session("s1")
    db.append_message("s1", "user", "q", timestamp=100.0)
    db.append_message("s1", "assistant", "a", finish_reason="stop", timestamp=101.5)
    db.append_message("s1", "tool", "out", tool_name="terminal", tool_call_id="c1", finish_reason="ignored", timestamp=102.0)
    conv = db.get_messages_as_conversation("s1")
    assert conv[0] == {"role": "user", "content": "q", "timestamp": 100.0}
    assert conv[1] == {"role": "assistant", "content": "a", "timestamp": 101.5, "finish_reason": "stop"}
    assert conv[2]["timestamp"] == 102.0 and "finish_reason" not in conv[2]


def test_conversation_with_ancestors_drops_a_replayed_resume_prompt(db: SessionDB) -> None:
    db.create_session("root")
    db.append_message("root", "user", "same prompt")
    db.append_message("root", "user", "same prompt")
    db.append_message("root", "assistant", "answer")
    db.create_session("child", parent_session_id="root")
    db.append_message("child", "user", "next prompt")
    db.append_message("child", "user", "next prompt")  # unanswered replay of the tip's prompt
    conv = db.get_messages_as_conversation("child", include_ancestors=True)
    assert [m["content"] for m in conv if m["role"] == "user"] == ["same prompt", "next prompt"]
    # without ancestors the stored rows are returned as they are
    assert [m["content"] for m in db.get_messages_as_conversation("root")] == ["same prompt", "same prompt", "answer"]


def test_conversation_keeps_a_prompt_repeated_after_an_answer(db: SessionDB) -> None:
    db.create_session("root")
    db.append_message("root", "user", "status?")
    db.append_message("root", "assistant", "green")
    db.create_session("child", parent_session_id="root")
    db.append_message("child", "user", "status?")
    conv = db.get_messages_as_conversation("child", include_ancestors=True)
    assert [m["content"] for m in conv] == ["status?", "green", "status?"]


# ----------------------------------------------------------------- reference method names
def test_reference_session_helpers_exist_and_behave(db: SessionDB) -> None:
    assert SessionDB.sanitize_title("  a \t b ") == "a b"
    db.create_session("s1", source="cli", model="original")
    db.set_session_title("s1", "refactoring auth")
    assert db.get_session_by_title("refactoring auth")["id"] == "s1"
    assert db.get_session_by_title("nonexistent") is None
    assert db.update_system_prompt("s1", "You are helpful.") is True
    assert db.get_session("s1")["system_prompt"] == "You are helpful."
    assert db.update_system_prompt("nope", "x") is False
    db.ensure_session("s1", source="gateway", model="other")  # existing row untouched
    assert (db.get_session("s1")["source"], db.get_session("s1")["model"]) == ("cli", "original")
    db.ensure_session("late", source="gateway", model="m")
    db.append_message("late", "user", "hello after lock")
    assert db.get_session("late")["source"] == "gateway" and db.message_count("late") == 1
