"""``sessions search`` filters (--session, --since, --until, --user-id, --role, --source) and
ambiguous session id prefixes, end to end on a real state.db."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hermes_memory.cli.main import app
from hermes_memory.sessions.db import SessionDB

runner = CliRunner()


def _ts(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    db = SessionDB(h / "state.db")
    db.create_session("abc111", source="cli", user_id="ann", started_at=_ts("2026-10-01T09:00"), title="Nginx logs")
    db.append_message("abc111", "user", "kafka lag in october", timestamp=_ts("2026-10-01T09:00"))
    db.append_message("abc111", "assistant", "kafka consumer tuned", timestamp=_ts("2026-10-01T09:01"))
    db.create_session("abc222", source="telegram", user_id="bob", started_at=_ts("2026-11-01T08:00"), title="Deploy")
    db.append_message("abc222", "user", "kafka lag on the first of november", timestamp=_ts("2026-11-01T08:00"))
    db.append_message("abc222", "user", "kafka lag at eleven", timestamp=_ts("2026-11-01T11:00"))
    db.create_session("xyz333", source="cli", user_id="ann", started_at=time.time() - 3600)
    db.append_message("xyz333", "user", "kafka lag just now", timestamp=time.time() - 3600)
    db.close()
    return h


def search(home: Path, *args: str):
    r = runner.invoke(app, ["--home", str(home), "sessions", "search", "kafka", "--json", *args])
    return r, (json.loads(r.stdout) if r.exit_code == 0 else None)


def contents(data: dict) -> set[str]:
    return {r["snippet"].replace(">>>", "").replace("<<<", "") for r in data["results"]}


def test_search_session_filter_takes_a_unique_prefix(home: Path) -> None:
    r, data = search(home, "--session", "xyz")
    assert r.exit_code == 0, r.output
    assert {x["session_id"] for x in data["results"]} == {"xyz333"}


def test_search_session_filter_ambiguous_prefix_lists_candidates(home: Path) -> None:
    r, _ = search(home, "--session", "abc")
    assert r.exit_code == 1
    assert "ambiguous" in r.stderr and "abc111" in r.stderr and "abc222" in r.stderr
    assert "Nginx logs" in r.stderr and "2026-10-01 09:00" in r.stderr


def test_search_session_filter_unknown_is_not_found(home: Path) -> None:
    r, _ = search(home, "--session", "nope")
    assert r.exit_code == 1 and "no session matches" in r.stderr


def test_search_since_until_iso_dates_and_datetimes(home: Path) -> None:
    r, data = search(home, "--since", "2026-11-01", "--until", "2026-11-01")
    assert r.exit_code == 0, r.output
    assert contents(data) == {"kafka lag on the first of november", "kafka lag at eleven"}
    r, data = search(home, "--since", "2026-11-01T10:00", "--until", "2026-11-02")
    assert r.exit_code == 0, r.output
    assert contents(data) == {"kafka lag at eleven"}
    r, data = search(home, "--until", "2026-10-31")
    assert {x["session_id"] for x in data["results"]} == {"abc111"}


def test_search_since_relative_duration(home: Path) -> None:
    r, data = search(home, "--since", "7d")
    assert r.exit_code == 0, r.output
    assert {x["session_id"] for x in data["results"]} == {"xyz333"}
    r, data = search(home, "--since", "12h")
    assert {x["session_id"] for x in data["results"]} == {"xyz333"}
    r, data = search(home, "--until", "30m")
    assert {x["session_id"] for x in data["results"]} == {"abc111", "abc222", "xyz333"}
    r, data = search(home, "--until", "2h")
    assert {x["session_id"] for x in data["results"]} == {"abc111", "abc222"}


@pytest.mark.parametrize("opt", ["--since", "--until"])
@pytest.mark.parametrize("bad", ["yesterday", "7x", "2026-13-01", "-3d", ""])
def test_search_bad_time_is_usage_error_with_example(home: Path, opt: str, bad: str) -> None:
    r, _ = search(home, opt, bad)
    assert r.exit_code == 2, r.output
    assert opt in r.stderr and "2026-11-01" in r.stderr and "7d" in r.stderr


def test_search_since_after_until_is_usage_error(home: Path) -> None:
    r, _ = search(home, "--since", "2026-11-02", "--until", "2026-11-01")
    assert r.exit_code == 2 and "--since" in r.stderr


def test_search_user_id_role_and_source_filters(home: Path) -> None:
    r, data = search(home, "--user-id", "bob")
    assert r.exit_code == 0, r.output
    assert {x["session_id"] for x in data["results"]} == {"abc222"}
    r, data = search(home, "--user-id", "ann", "--role", "assistant")
    assert contents(data) == {"kafka consumer tuned"}
    r, data = search(home, "--source", "telegram")
    assert {x["session_id"] for x in data["results"]} == {"abc222"}
    r, data = search(home, "--source", "cli,telegram", "--role", "user")
    assert {x["session_id"] for x in data["results"]} == {"abc111", "abc222", "xyz333"}
    assert all(x["role"] == "user" for x in data["results"])


def test_search_help_lists_the_filters(home: Path) -> None:
    r = runner.invoke(app, ["sessions", "search", "--help"], env={"COLUMNS": "200", "TERM": "dumb"})
    for opt in ("--session", "--since", "--until", "--user-id", "--role", "--source", "7d"):
        assert opt in r.output


# -- ambiguous prefixes: one message everywhere -------------------------------------------------

def _assert_ambiguous(r) -> None:
    assert r.exit_code == 1, r.output
    err = r.stderr
    assert "ambiguous" in err and "no session matches" not in err
    assert "abc111" in err and "abc222" in err and "xyz333" not in err
    assert "Nginx logs" in err and "Deploy" in err and "2026-11-01 08:00" in err


@pytest.mark.parametrize("cmd", [["show", "abc"], ["export", "abc"], ["delete", "abc", "--yes"]])
def test_ambiguous_prefix_in_show_export_delete_lists_candidates(home: Path, cmd: list[str]) -> None:
    before = (home / "state.db").read_bytes()
    r = runner.invoke(app, ["--home", str(home), "sessions", *cmd])
    _assert_ambiguous(r)
    assert (home / "state.db").read_bytes() == before  # delete refused: nothing touched


def test_ambiguous_prefix_lists_at_most_five_and_counts_the_rest(tmp_path: Path) -> None:
    h = tmp_path / "many"
    db = SessionDB(h / "state.db")
    for i in range(8):
        db.create_session(f"dup{i}", started_at=1000.0 + i, title=f"T{i}")
    db.close()
    r = runner.invoke(app, ["--home", str(h), "sessions", "show", "dup"])
    assert r.exit_code == 1 and "matches 8 sessions" in r.stderr
    assert sum(f"dup{i}" in r.stderr for i in range(8)) == 5 and "3 more" in r.stderr


def test_unknown_id_still_says_no_session_matches(home: Path) -> None:
    r = runner.invoke(app, ["--home", str(home), "sessions", "show", "qqq"])
    assert r.exit_code == 1 and "no session matches" in r.stderr and "ambiguous" not in r.stderr


def test_chat_resume_ambiguous_prefix_lists_candidates(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import yaml

    monkeypatch.setenv("FAKE_LLM_KEY", "k")
    # the agent resolves --resume before it ever calls the model: nothing listens on this port
    (home / "config.yaml").write_text(yaml.safe_dump({"model": {
        "provider": "openai", "name": "fake-model", "base_url": "http://127.0.0.1:9/v1",
        "api_key_env": "FAKE_LLM_KEY", "max_retries": 0, "context_length": 32000}}))
    r = runner.invoke(app, ["--home", str(home), "chat", "--resume", "abc"], input="")
    _assert_ambiguous(r)
