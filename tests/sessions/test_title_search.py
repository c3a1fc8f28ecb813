"""A session is found by its title, as the reference agent's own tests expect: an exact title match first, a
title holding every query word, with the source, user and live-session rules kept, also through the CLI's
sessions search.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from hermes_memory.cli.main import app
from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.search import session_search


def _tool(db: SessionDB, current: str | None = None, **args: object) -> dict:
    return json.loads(session_search(args, db, current_session_id=current))


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
