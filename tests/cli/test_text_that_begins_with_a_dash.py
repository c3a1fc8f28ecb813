"""A query or entry that begins with ``-`` is read by click as an option ("No such option: -d"): the
usage error says to put it after ``--`` and shows the command to type, which then works."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hermes_memory.sessions.db import SessionDB


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hermes_memory", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    db = SessionDB(h / "state.db")
    db.create_session("s-1", source="cli", started_at=1000.0)
    db.append_message("s-1", "user", "why did the -deploy flag fail?")
    db.close()
    return h


def test_a_search_for_a_dash_word_says_to_put_it_after_double_dash_and_that_works(home: Path) -> None:
    r = _cli("--home", str(home), "sessions", "search", "-deploy", "--limit", "3")
    assert r.returncode == 2
    err = " ".join(r.stderr.split())
    assert "No such option: -d" in err
    suggested = f"hermes-memory --home {home} sessions search --limit 3 -- -deploy"
    assert f"If -deploy is text (a query or an entry), not an option, put it after --: {suggested}" in err
    ok = _cli(*suggested.split()[1:])
    assert ok.returncode == 0 and "s-1" in ok.stdout


def test_an_entry_that_begins_with_a_dash_gets_the_same_hint_and_a_real_unknown_option_does_not(tmp_path: Path) -> None:
    r = _cli("--home", str(tmp_path), "memory", "add", "-x marks the spot")
    assert r.returncode == 2 and "memory add -- '-x marks the spot'" in " ".join(r.stderr.split())
    r = _cli("--home", str(tmp_path), "sessions", "list", "-x")  # takes no text: no hint
    assert r.returncode == 2 and "No such option" in r.stderr and "put it after --" not in r.stderr
