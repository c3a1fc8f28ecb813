"""The layout-2 -> 3 move of our index is bounded per open (hmrelayout.BUDGET_S): an open returns
with the move pending and the old index serving search, later opens carry it on, a long-lived
``SessionDB`` finishes it in a background thread while appends go on, ``sessions reindex``
finishes it and ``status`` reports it. Real SQLite files; the budget and step size are made small
instead of building a huge home."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hermes_memory.cli.main import app
from hermes_memory.sessions import hmindex, hmrelayout
from hermes_memory.sessions.db import SessionDB
from tests.sessions.test_relayout import _assert_layout3, _home

BACKENDS = ("sqlite",)  # SQLite only: our hm_* FTS5 index inside state.db

runner = CliRunner()


@pytest.fixture
def small_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """Five messages per step and a zero budget: every open runs exactly one step."""
    monkeypatch.setattr(hmrelayout, "CHUNK", 5)
    monkeypatch.setattr(hmrelayout, "BUDGET_S", 0.0)


def _answer_id(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT id FROM messages WHERE content LIKE 'Adoption%'").fetchone()[0])
    finally:
        conn.close()


def test_an_open_returns_with_the_move_pending_and_the_old_index_answering(tmp_path: Path, small_steps: None) -> None:
    path = tmp_path / "state.db"
    _home(path, sessions=3, turns=10)  # 32 messages: 7 steps of 5
    answer = _answer_id(path)
    db = SessionDB(path)
    try:
        report = db.migration["index"]
        assert report["action"] == "relayout" and report["relayout_pending"] is True, report
        assert report["relaid"] == 5, report
        assert db.relayout_progress() == {"phase": "indexing", "done": 5, "total": 32}
        assert hmindex.meta_get(db.conn, "layout") == "2"  # not swapped: the old index serves
        assert len(db.search_messages("otters", limit=100)) == 30
        got = [r["id"] for r in db.search_messages("What did Caroline research?", limit=5)]
        assert got[0] == answer - 1, got  # layout 2: the question turn, not yet the answer beside it
        db.create_session("live")
        db.append_message("live", "user", "a quokka on the ferry")  # appends go on during the move
        assert len(db.search_messages("quokka")) == 1
    finally:
        db.close()


def test_repeated_opens_finish_the_move(tmp_path: Path, small_steps: None) -> None:
    path = tmp_path / "state.db"
    _home(path, sessions=3, turns=10)
    opens = 0
    while True:
        db = SessionDB(path)
        opens += 1
        if db.relayout_progress() is None:
            break
        db.close()
        assert opens < 40, "the move made no progress across opens"
    try:
        assert opens > 7  # 7 indexing steps, then the old table emptied in steps: many opens, each bounded
        _assert_layout3(db)
        answer = _answer_id(path)
        got = [r["id"] for r in db.search_messages("What did Caroline research?", limit=5)]
        assert answer in got[:2], got
    finally:
        db.close()


def test_the_background_thread_finishes_the_move_while_appends_succeed(tmp_path: Path, small_steps: None) -> None:
    path = tmp_path / "state.db"
    _home(path, sessions=10, turns=40)  # 402 messages: 81 steps of 5, then the drop steps
    db = SessionDB(path)
    try:
        assert db.relayout_progress() is not None
        assert db.continue_relayout_in_background(pause_s=0.005) is True
        assert db.continue_relayout_in_background() is False  # one thread at most
        db.create_session("live")
        during = 0
        deadline = time.monotonic() + 120
        i = 0
        while db.relayout_progress() is not None:
            assert time.monotonic() < deadline, "the background relayout did not finish in 120 s"
            db.append_message("live", "user", f"walrus number {i}")
            i += 1
            during += 1
        assert during > 0, "no append ran while the move was under way: the test proves nothing"
        last = db.append_message("live", "assistant", "walrus after the move")
        thread = db._relayout_thread
        assert thread is not None
        thread.join(timeout=30)
        assert not thread.is_alive()
        _assert_layout3(db)
        assert db.conn.execute("SELECT count(*) FROM hm_messages_fts WHERE hm_messages_fts MATCH 'walrus'"
                               ).fetchone()[0] == i + 1  # every append indexed (search returns 1,000 at most)
        assert db.search_messages("walrus after the move")[0]["id"] == last
    finally:
        db.close()


def test_close_stops_the_background_move_and_the_next_open_resumes(tmp_path: Path, small_steps: None) -> None:
    path = tmp_path / "state.db"
    _home(path, sessions=10, turns=40)
    db = SessionDB(path)
    steps = threading.Event()
    original = hmrelayout.step

    def slow(conn: sqlite3.Connection) -> dict:
        steps.set()
        time.sleep(0.02)
        return original(conn)

    hmrelayout.step = slow
    try:
        db.continue_relayout_in_background(pause_s=0.01)
        assert steps.wait(30)
        db.close()
    finally:
        hmrelayout.step = original
    thread = db._relayout_thread
    assert thread is not None and not thread.is_alive()
    db = SessionDB(path)
    try:
        left = db.relayout_progress()
        assert left is not None and 0 < left["done"] < left["total"]  # stopped at a committed step
        assert db.continue_relayout(None)["pending"] is False
        _assert_layout3(db)
    finally:
        db.close()


def test_sessions_reindex_finishes_the_move_and_status_reports_it(tmp_path: Path, small_steps: None) -> None:
    home = tmp_path / "home"
    home.mkdir()
    path = home / "state.db"
    _home(path, sessions=3, turns=10)
    SessionDB(path).close()  # one bounded open: the move is under way
    r = runner.invoke(app, ["--home", str(home), "status", "--json"])
    assert r.exit_code == 0, r.output
    relayout = json.loads(r.stdout)["storage"]["relayout"]
    assert relayout["phase"] == "indexing" and 0 < relayout["done"] < relayout["total"] == 32, relayout
    r = runner.invoke(app, ["--home", str(home), "status"])
    assert r.exit_code == 0 and f"moving to layout {hmindex.LAYOUT_VERSION}" in r.stdout and "/32 messages re-indexed" in r.stdout, r.output
    r = runner.invoke(app, ["--home", str(home), "sessions", "reindex", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["relaid"] > 0
    db = SessionDB(path)
    try:
        assert db.relayout_progress() is None
        _assert_layout3(db)
    finally:
        db.close()
    r = runner.invoke(app, ["--home", str(home), "status", "--json"])
    assert json.loads(r.stdout)["storage"]["relayout"] is None


def test_the_mcp_server_carries_the_move_on_between_requests_and_stops_on_close(
    tmp_path: Path, small_steps: None
) -> None:
    from hermes_memory.config import load_config
    from hermes_memory.home import HermesHome
    from hermes_memory.mcp.server import MemoryServer

    home = tmp_path / "home"
    home.mkdir()
    _home(home / "state.db", sessions=10, turns=40)
    server = MemoryServer(HermesHome(home), load_config(home / "config.yaml"))  # what serve and ui build
    try:
        assert server.db.relayout_progress() is not None  # its open ran one bounded step
        deadline = time.monotonic() + 120
        while server.db.relayout_progress() is not None:
            assert time.monotonic() < deadline, "serve's background relayout did not finish in 120 s"
            time.sleep(0.05)
        _assert_layout3(server.db)
        thread = server.db._relayout_thread
    finally:
        server.close()
    assert thread is not None and not thread.is_alive()


BOUNDED_OPEN = """
import sys, time
from hermes_memory.sessions import hmrelayout
from hermes_memory.sessions.db import SessionDB
hmrelayout.CHUNK = 100  # the default budget (BUDGET_S) is kept
original = hmrelayout.step
def slow(conn):
    out = original(conn)
    time.sleep(0.5)  # a big home: each step takes a while
    return out
hmrelayout.step = slow
db = SessionDB(sys.argv[1])
print(db.relayout_progress()["done"], len(db.search_messages("otters", limit=1000)))
db.close()
"""


def test_a_hook_process_open_returns_within_the_default_budget_with_the_move_pending(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    _home(path, sessions=10, turns=150)  # 1,502 messages: 16 steps of 0.5 s or more, 8 s if the open ran all
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    r = subprocess.run([sys.executable, "-c", BOUNDED_OPEN, str(path)], env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    done, found = (int(x) for x in r.stdout.split())
    assert 0 < done < 1502 and found == 1000  # part of the move done; the old index answered in full
    conn = sqlite3.connect(path)
    try:
        assert hmrelayout.pending(conn)
    finally:
        conn.close()
