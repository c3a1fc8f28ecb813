"""``sessions export -o FILE`` never destroys data: an existing file needs ``--force``; the home's
state.db (and -wal/-shm), config.yaml, MEMORY.md/USER.md and any SQLite database are refused even
with ``--force`` and stay byte-identical; the file is written atomically (temp file, rename)."""

from __future__ import annotations

import json
import os
import sqlite3
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
    for i in range(3):
        db.create_session(f"s-{i}", source="cli", started_at=1000.0 + i, title=f"T{i}")
        db.append_message(f"s-{i}", "user", f"how do I deploy service {i}?")
    db.close()
    (h / "config.yaml").write_text("memory:\n  memory_char_limit: 3000\n")
    (h / "memories").mkdir(exist_ok=True)
    (h / "memories" / "MEMORY.md").write_text("the deploy key lives in the vault")
    return h


def export(home: Path, *args: str):
    return runner.invoke(app, ["--home", str(home), "sessions", "export", *args])


def _sessions_in(db_path: Path) -> int:
    with sqlite3.connect(db_path) as con:
        return int(con.execute("SELECT count(*) FROM sessions").fetchone()[0])


@pytest.mark.parametrize("force", [[], ["--force"]], ids=["plain", "force"])
def test_export_onto_the_live_state_db_is_refused_and_the_db_still_opens(home: Path, force: list[str]) -> None:
    db_path = home / "state.db"
    before = db_path.read_bytes()
    r = export(home, "-o", str(db_path), *force)
    assert r.exit_code == 1, r.output
    assert "refusing to write" in r.output and "session database" in r.output and "wrote" not in r.output
    assert "-o sessions.json" in r.output.replace("\n", "")  # says how to go on
    assert db_path.read_bytes() == before
    assert _sessions_in(db_path) == 3


@pytest.mark.parametrize("name", ["config.yaml", "memories/MEMORY.md", "state.db-wal"])
def test_export_onto_a_file_of_the_home_is_refused_even_with_force(home: Path, name: str) -> None:
    target = home / name
    existed = target.exists()
    before = target.read_bytes() if existed else None
    r = export(home, "-o", str(target), "--force")
    assert r.exit_code == 1 and "refusing to write" in r.output, r.output
    assert (target.read_bytes() if existed else None) == before
    assert target.exists() == existed


def test_export_onto_any_sqlite_database_is_refused_even_through_a_symlink(home: Path, tmp_path: Path) -> None:
    other = tmp_path / "agent.sqlite"
    with sqlite3.connect(other) as con:
        con.execute("CREATE TABLE t(x)")
        con.execute("INSERT INTO t VALUES (1)")
    before = other.read_bytes()
    link = tmp_path / "export.json"
    link.symlink_to(other)
    for target in (other, link):
        r = export(home, "-o", str(target), "--force")
        assert r.exit_code == 1 and "SQLite database" in r.output, r.output
    assert other.read_bytes() == before and link.is_symlink()


def test_export_onto_an_existing_file_needs_force(home: Path, tmp_path: Path) -> None:
    out = tmp_path / "notes.json"
    out.write_text("my notes")
    r = export(home, "-o", str(out))
    assert r.exit_code == 1 and "already exists; left as it is (use --force to overwrite)" in r.output.replace("\n", "")
    assert out.read_text() == "my notes"
    r = export(home, "-o", str(out), "--force")
    assert r.exit_code == 0, r.output
    assert len(json.loads(out.read_text())) == 3


def test_export_to_a_new_file_leaves_no_temp_file_and_is_private(home: Path, tmp_path: Path) -> None:
    out = tmp_path / "out" / "all.jsonl"
    out.parent.mkdir()
    r = export(home, "-o", str(out), "--format", "jsonl")
    assert r.exit_code == 0, r.output
    assert len(out.read_text().splitlines()) == 3
    assert os.listdir(out.parent) == ["all.jsonl"]
    assert out.stat().st_mode & 0o777 == 0o600


def test_export_to_a_folder_or_a_missing_folder_says_what_to_give(home: Path, tmp_path: Path) -> None:
    r = export(home, "-o", str(tmp_path))
    assert r.exit_code == 1 and "is a folder; give a file name" in r.output.replace("\n", "")
    r = export(home, "-o", str(tmp_path / "nope" / "x.json"))
    assert r.exit_code == 1 and "cannot write" in r.output
    assert not (tmp_path / "nope").exists()
