"""An empty query and a query over 2,048 characters behave the same in the CLI, the
``session_search`` tool and over MCP: empty browses the most recent sessions (the reference's
browse mode), too long is searched by its first 2,048 characters and the result says so."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from typer.testing import CliRunner

from hermes_memory.cli.main import app
from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.fts import MAX_QUERY_CHARS
from hermes_memory.sessions.search import session_search
from tests.mcp.helpers import call, stdio_session

runner = CliRunner()
LONG = "nginx " + "padding " * 400  # ~3,200 chars: the word that matters is in the first 2,048


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    db = SessionDB(h / "state.db")
    db.create_session("old", source="cli", started_at=1000.0, title="Old one")
    db.append_message("old", "user", "how do I rotate the nginx logs?")
    db.create_session("new", source="telegram", started_at=2000.0)
    db.append_message("new", "user", "thanks, logrotate works")
    db.create_session("sub", source="subagent", started_at=3000.0)  # hidden from browse, as in the tool
    db.append_message("sub", "user", "subagent chatter")
    db.close()
    return h


@pytest.mark.parametrize("query", ["", "   "])
def test_cli_empty_query_lists_recent_sessions_like_the_tool(home: Path, query: str) -> None:
    r = runner.invoke(app, ["--home", str(home), "sessions", "search", query, "--json"])
    assert r.exit_code == 0, r.output
    cli = json.loads(r.stdout)
    db = SessionDB(home / "state.db")
    try:
        tool = json.loads(session_search({"query": query}, db))
    finally:
        db.close()
    assert cli["mode"] == tool["mode"] == "browse"
    assert [s["id"] for s in cli["sessions"]] == [s["session_id"] for s in tool["sessions"]] == ["new", "old"]
    r = runner.invoke(app, ["--home", str(home), "sessions", "search", query])
    assert r.exit_code == 0 and "no matches" not in r.output and "most recent" in r.output
    assert "new" in r.output and "old" in r.output


def test_cli_empty_query_refuses_filters_that_need_words(home: Path) -> None:
    r = runner.invoke(app, ["--home", str(home), "sessions", "search", "", "--role", "user"])
    assert r.exit_code == 2 and "need words to search" in r.output


def test_search_help_documents_the_empty_and_the_long_query() -> None:
    r = runner.invoke(app, ["sessions", "search", "--help"], env={"COLUMNS": "200"})
    assert r.exit_code == 0
    text = " ".join(r.output.split())
    assert "most recent sessions" in text and "2,048" in text


def test_a_long_query_is_searched_by_its_head_and_every_surface_says_so(home: Path) -> None:
    assert len(LONG) > MAX_QUERY_CHARS
    r = runner.invoke(app, ["--home", str(home), "sessions", "search", LONG, "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["count"] >= 1 and f"only its first {MAX_QUERY_CHARS:,}" in data["note"]
    r = runner.invoke(app, ["--home", str(home), "sessions", "search", LONG])
    assert r.exit_code == 0 and "note:" in r.output and f"{len(LONG):,} characters" in " ".join(r.output.split())
    short = runner.invoke(app, ["--home", str(home), "sessions", "search", "nginx", "--json"])
    assert "note" not in json.loads(short.stdout)

    db = SessionDB(home / "state.db")
    try:
        tool = json.loads(session_search({"query": LONG}, db))
        plain = json.loads(session_search({"query": "nginx"}, db))
    finally:
        db.close()
    assert tool["success"] and tool["count"] >= 1 and f"{MAX_QUERY_CHARS:,}" in tool["note"]
    assert "note" not in plain

    async def main() -> None:
        async with stdio_session(home) as s:
            found = await call(s, "session_search", {"query": LONG})
            assert found["success"] and f"only its first {MAX_QUERY_CHARS:,}" in found["note"]
            browse = await call(s, "session_search", {"query": ""})
            assert browse["mode"] == "browse"

    anyio.run(main)


def test_a_stopword_only_query_is_searched_as_typed_and_every_surface_says_so(home: Path) -> None:
    stop = "the and of"
    r = runner.invoke(app, ["--home", str(home), "sessions", "search", stop, "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["count"] >= 1 and "only common words" in data["note"]
    r = runner.invoke(app, ["--home", str(home), "sessions", "search", stop])
    assert r.exit_code == 0 and "note:" in r.output and "only common words" in " ".join(r.output.split())
    for informative in ("the nginx", '"the and"'):  # an informative word or a quoted phrase: no note
        r = runner.invoke(app, ["--home", str(home), "sessions", "search", informative, "--json"])
        assert "note" not in json.loads(r.stdout), informative

    db = SessionDB(home / "state.db")
    try:
        tool = json.loads(session_search({"query": stop}, db))
        plain = json.loads(session_search({"query": "rotate the logs"}, db))
    finally:
        db.close()
    assert tool["success"] and tool["count"] >= 1 and "only common words" in tool["note"]
    assert "note" not in plain

    async def main() -> None:
        async with stdio_session(home) as s:
            found = await call(s, "session_search", {"query": stop})
            assert found["success"] and "only common words" in found["note"]

    anyio.run(main)
