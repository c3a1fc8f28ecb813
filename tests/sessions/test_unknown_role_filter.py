"""A misspelled role filter is an error naming the known roles and the closest one, never a silent
"no matches": in the CLI (``sessions search --role``), the ``session_search`` tool and
``search_messages`` (which keeps its contract: ``[]`` logged, or raised with ``raise_errors``)."""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from hermes_memory.cli.main import app
from hermes_memory.sessions import session_search
from hermes_memory.sessions.db import SessionDB


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    db = SessionDB(home / "state.db")
    try:
        db.create_session("s1", source="cli")
        db.append_message("s1", "user", "how do we deploy the shop")
        db.append_message("s1", "assistant", "deploy with the blue-green script")
    finally:
        db.close()
    return home


def test_C27_cli_search_with_a_misspelled_role_exits_2_suggesting_assistant(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["--home", str(_home(tmp_path)), "sessions", "search", "deploy", "--role", "asistant"])
    text = " ".join(res.output.split())
    assert res.exit_code == 2, res.output
    assert "unknown role 'asistant'; did you mean 'assistant'?" in text
    assert "user, assistant, system, tool" in text


def test_cli_search_with_a_known_role_still_finds(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["--home", str(_home(tmp_path)), "sessions", "search", "deploy", "--role",
                                   "assistant", "--json"])
    assert res.exit_code == 0 and "blue-green" in res.output, res.output


def test_session_search_tool_with_a_misspelled_role_is_an_error_not_an_empty_success(tmp_path: Path) -> None:
    db = SessionDB(_home(tmp_path) / "state.db")
    try:
        out = json.loads(session_search({"query": "deploy", "role_filter": "user,asistant"}, db))
        assert out["success"] is False
        assert "did you mean 'assistant'" in out["error"] and "system, tool" in out["error"]
        ok = json.loads(session_search({"query": "deploy", "role_filter": "assistant"}, db))
        assert ok["success"] is True and ok["count"] >= 1, ok
    finally:
        db.close()


def test_search_messages_with_a_misspelled_role_logs_and_returns_empty_or_raises_when_asked(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    db = SessionDB(_home(tmp_path) / "state.db")
    try:
        with caplog.at_level(logging.WARNING, logger="hermes_memory.sessions.db"):
            assert db.search_messages("deploy", role_filter="asistant") == []
        assert "unknown role 'asistant'; did you mean 'assistant'?" in caplog.text
        with pytest.raises(ValueError, match="did you mean 'assistant'"):
            db.search_messages("deploy", role_filter=["asistant"], raise_errors=True)
        assert [r["role"] for r in db.search_messages("deploy", role_filter="assistant")] == ["assistant"]
    finally:
        db.close()


def test_a_role_another_program_stored_is_searchable(tmp_path: Path) -> None:
    home = _home(tmp_path)
    conn = sqlite3.connect(home / "state.db")
    conn.execute("INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s1', 'narrator', "
                 "'the deploy began at dawn', 1e9)")
    conn.commit()
    conn.close()
    db = SessionDB(home / "state.db")
    try:
        assert [r["role"] for r in db.search_messages("deploy", role_filter="narrator", raise_errors=True)] == [
            "narrator"]
    finally:
        db.close()


def test_postgresql_search_messages_checks_roles_as_sqlite_does(pg_url: str) -> None:
    from hermes_memory.sessions.pg import PgSessionDB

    db: Any = PgSessionDB(pg_url)  # the tool is typed for SessionDB; both have its methods
    try:
        db.create_session("s1", source="cli")
        db.append_message("s1", "assistant", "deploy with the blue-green script")
        assert db.search_messages("deploy", role_filter="asistant") == []
        with pytest.raises(ValueError, match="did you mean 'assistant'"):
            db.search_messages("deploy", role_filter="asistant", raise_errors=True)
        assert [r["role"] for r in db.search_messages("deploy", role_filter="assistant", raise_errors=True)] == [
            "assistant"]
        out = json.loads(session_search({"query": "deploy", "role_filter": "asistant"}, db))
        assert out["success"] is False and "did you mean 'assistant'" in out["error"]
    finally:
        db.close()
