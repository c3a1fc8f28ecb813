"""``hermes-memory sessions ...`` end to end on a real state.db (in-process and as a subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hermes_memory.cli.main import app
from hermes_memory.sessions.db import SessionDB

runner = CliRunner()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    db = SessionDB(h / "state.db")
    db.create_session("alpha-1", source="cli", started_at=1000.0, title="Alpha")
    db.append_message("alpha-1", "user", "how do I rotate the nginx logs?")
    db.append_message("alpha-1", "assistant", "use logrotate with a daily nginx stanza")
    db.end_session("alpha-1", "user_exit")
    db.create_session("beta-2", source="telegram", started_at=2000.0, parent_session_id="alpha-1")
    db.append_message("beta-2", "user", "thanks, logrotate works")
    db.close()
    return h


def run(home: Path, *args: str, **kw):
    return runner.invoke(app, ["--home", str(home), "sessions", *args], **kw)


def test_list_json_and_table(home: Path) -> None:
    r = run(home, "list", "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["total"] == 2 and [s["id"] for s in data["sessions"]] == ["beta-2", "alpha-1"]
    r = run(home, "list", "--source", "telegram")
    assert r.exit_code == 0 and "beta-2" in r.stdout and "alpha-1" not in r.stdout


def test_list_title_says_when_it_shows_only_part(home: Path) -> None:
    # "2 session(s)" above a table of one row read as a miscount.
    r = run(home, "list", "--limit", "1")
    assert r.exit_code == 0 and "1 of 2 sessions" in r.stdout and "beta-2" in r.stdout
    r = run(home, "list")
    assert "2 sessions" in r.stdout and " of 2" not in r.stdout


def test_show_by_prefix_and_title_and_unknown(home: Path) -> None:
    r = run(home, "show", "alph", "--json")
    assert r.exit_code == 0
    data = json.loads(r.stdout)
    assert data["id"] == "alpha-1" and len(data["messages"]) == 2 and data["title"] == "Alpha"
    assert run(home, "show", "Alpha", "--json").exit_code == 0
    r = run(home, "show", "zzz")
    assert r.exit_code == 1 and "no session matches" in r.output


def test_search_json_filters_and_bad_sort(home: Path) -> None:
    r = run(home, "search", "logrotate nginx", "--json")
    assert r.exit_code == 0
    data = json.loads(r.stdout)
    assert data["count"] == 3  # OR of the words; the row with both ranks first
    assert data["results"][0]["snippet"].count(">>>") == 2 and data["results"][0]["session_id"] == "alpha-1"
    r = run(home, "search", "logrotate", "--source", "telegram", "--json")
    assert [x["session_id"] for x in json.loads(r.stdout)["results"]] == ["beta-2"]
    r = run(home, "search", "it's C:\\ (weird", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["count"] == 0
    assert run(home, "search", "x", "--sort", "sideways").exit_code == 2


def test_export_json_jsonl_and_file(home: Path, tmp_path: Path) -> None:
    r = run(home, "export", "alpha-1")
    assert r.exit_code == 0 and json.loads(r.stdout)["messages"][1]["role"] == "assistant"
    r = run(home, "export", "--format", "jsonl")
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert [x["id"] for x in lines] == ["alpha-1", "beta-2"]
    out = tmp_path / "all.json"
    r = run(home, "export", "-o", str(out), "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["sessions"] == 2
    assert len(json.loads(out.read_text())) == 2
    assert run(home, "export", "--format", "xml").exit_code == 2


def test_import_reports_and_is_idempotent(home: Path, tmp_path: Path) -> None:
    f = tmp_path / "chats.jsonl"
    f.write_text(json.dumps({"id": "x1", "messages": [{"role": "user", "content": "capybara facts"}]}) + "\nbroken\n")
    r = run(home, "import", str(f), "--format", "openai", "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["sessions_created"] == 1 and data["messages_imported"] == 1 and len(data["errors"]) == 1
    r = run(home, "import", str(f), "--format", "openai", "--json")
    assert json.loads(r.stdout)["messages_imported"] == 0
    assert run(home, "import", str(f), "--format", "word").exit_code == 2
    assert run(home, "import", str(tmp_path / "missing"), "--format", "openai").exit_code == 1


def test_delete_and_prune(home: Path) -> None:
    r = run(home, "delete", "alpha-1", "--yes", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout) == {"deleted": "alpha-1"}
    db = SessionDB(home / "state.db")
    row = db.get_session("beta-2")
    assert row is not None and row["parent_session_id"] is None
    db.close()
    assert run(home, "delete", "alpha-1", "--yes").exit_code == 1
    r = run(home, "delete", "beta-2", input="n\n")
    assert r.exit_code == 1
    r = run(home, "prune", "--older-than", "1", "--yes", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["pruned"] == 0  # beta-2 never ended


def test_subprocess_exit_codes(home: Path) -> None:
    env = {**os.environ}
    base = [sys.executable, "-m", "hermes_memory", "--home", str(home), "sessions"]
    ok = subprocess.run([*base, "list", "--json"], capture_output=True, text=True, env=env, timeout=120)
    assert ok.returncode == 0 and json.loads(ok.stdout)["total"] == 2
    missing = subprocess.run([*base, "show", "nope"], capture_output=True, text=True, env=env, timeout=120)
    assert missing.returncode == 1
    usage = subprocess.run([*base, "import", "x", "--format", "nope"], capture_output=True, text=True, env=env,
                           timeout=120)
    assert usage.returncode == 2
