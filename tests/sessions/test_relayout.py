"""Moving an existing home from our index layout 2 to layout 3 (each turn indexed with the previous
turn's text, sessions/hmrelayout.py): done in bounded steps while other programs write, old index
serving searches until the swap, resumable after SIGKILL. Real SQLite files, real processes, the
real reference agent writing meanwhile."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hermes_memory.sessions import hmindex, hmrelayout
from hermes_memory.sessions.db import SessionDB
from tests import backends
from tests.sessions.layout2 import index_matches_messages, to_layout2
from tests.sessions.test_hm_index import _reference_rows as _reference_objects

BACKENDS = ("sqlite",)  # SQLite only: our hm_* FTS5 index inside state.db

SLOW_OPEN = """
import sys, time
from hermes_memory.sessions import hmrelayout
from hermes_memory.sessions.db import SessionDB
hmrelayout.CHUNK = 100
hmrelayout.BUDGET_S = 3600.0  # this open runs the whole move (opens are bounded: test_relayout_bounded.py)
original = hmrelayout.step
def slow(conn):
    out = original(conn)
    time.sleep(float(sys.argv[2]))  # a big home: each step takes a while, other programs write in between
    return out
hmrelayout.step = slow
SessionDB(sys.argv[1]).close()
print("done")
"""


def _home(path: Path, sessions: int, turns: int) -> None:
    db = SessionDB(path)
    for s in range(sessions):
        db.create_session(f"s{s}")
        db.append_messages(f"s{s}", [
            {"role": "user" if t % 2 == 0 else "assistant", "content": f"turn {t} of session {s} about otters"}
            for t in range(turns)])
    db.create_session("quiz")
    db.append_message("quiz", "user", "What did Caroline research last spring?")
    db.append_message("quiz", "assistant", "Adoption agencies, mostly in Ohio.")
    db.close()
    to_layout2(path)


def _meta(path: Path, key: str) -> str | None:
    conn = sqlite3.connect(path)
    try:
        return hmindex.meta_get(conn, key)
    finally:
        conn.close()


def _objects(path: Path) -> dict[str, str]:
    conn = sqlite3.connect(path)
    try:
        return dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE name LIKE 'hm\\_%' ESCAPE '\\'"))
    finally:
        conn.close()


def _assert_layout3(db: SessionDB) -> None:
    have = dict(db.conn.execute("SELECT name, sql FROM sqlite_master WHERE name LIKE 'hm\\_%' ESCAPE '\\'"))
    assert hmrelayout.NEXT not in have and not any(n in have for n in hmrelayout.NEXT_TRIGGERS)
    assert not any(n.startswith(hmrelayout.OLD) for n in have)  # the old table, emptied and dropped
    assert hmindex.meta_get(db.conn, hmrelayout.DROP_KEY) is None
    assert all(" ".join(have[n].split()) == " ".join(sql.split()) for n, sql in hmindex.TRIGGER_SQL.items())
    assert hmindex.meta_get(db.conn, "layout") == str(hmindex.LAYOUT_VERSION)
    assert hmindex.meta_get(db.conn, hmrelayout.NEXT_KEY) is None
    assert index_matches_messages(db.conn)
    assert db.fts_integrity_check()


def test_a_layout2_home_is_moved_to_layout3_on_open_and_then_finds_the_answer_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hmrelayout, "CHUNK", 5)  # several build steps, several steps emptying the old table
    monkeypatch.setattr(hmrelayout, "BUDGET_S", 3600.0)  # an open whose budget covers the whole move
    path = tmp_path / "state.db"
    _home(path, sessions=3, turns=10)
    reference = _reference_objects(path)
    conn = sqlite3.connect(path)  # layout 2: the answer turn does not hold the question's words
    answer = conn.execute("SELECT id FROM messages WHERE content LIKE 'Adoption%'").fetchone()[0]
    assert conn.execute("SELECT rowid FROM hm_messages_fts WHERE hm_messages_fts MATCH 'caroline AND research'"
                        ).fetchall() == [(answer - 1,)]
    conn.close()
    db = SessionDB(path)
    try:
        report = db.migration["index"]
        assert report["action"] == "relayout" and report["relaid"] == 32, report
        _assert_layout3(db)
        got = [r["id"] for r in db.search_messages("What did Caroline research?", limit=5)]
        assert got[:2] == [answer - 1, answer] or got[:2] == [answer, answer - 1], got
    finally:
        db.close()
    assert _reference_objects(path) == reference  # nothing of the reference's changed
    db = SessionDB(path)  # and the next open has nothing left to do
    try:
        assert db.migration["index"]["action"] == "none"
    finally:
        db.close()


def _start_slow_open(path: Path, pause: float = 0.05) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen([sys.executable, "-c", SLOW_OPEN, str(path), str(pause)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for_progress(path: Path, proc: subprocess.Popen, at_least: int) -> int:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        try:
            mark = _meta(path, hmrelayout.NEXT_KEY)
        except sqlite3.OperationalError:  # locked for a moment by a step
            mark = None
        if mark is not None and int(mark) >= at_least:
            return int(mark)
        time.sleep(0.02)
    raise AssertionError("the relayout made no progress in 120 s")


def test_a_relayout_killed_mid_way_leaves_the_old_index_serving_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hmrelayout, "BUDGET_S", 3600.0)  # the resuming open runs the rest at once
    path = tmp_path / "state.db"
    _home(path, sessions=10, turns=150)
    proc = _start_slow_open(path)
    _wait_for_progress(path, proc, 400)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    # another program meanwhile: the old index is complete and searched, both tables get its writes
    other = sqlite3.connect(path)
    assert hmrelayout.is_old_layout(other, _objects(path)["hm_messages_fts"])
    n = other.execute("SELECT count(*) FROM messages").fetchone()[0]
    assert other.execute("SELECT count(*) FROM hm_messages_fts WHERE hm_messages_fts MATCH 'otters'").fetchone()[0] \
        == n - 2
    other.execute("INSERT INTO messages(session_id, role, content, timestamp) VALUES ('s3', 'user', 'a quokka', ?)",
                  (time.time(),))
    other.commit()
    assert other.execute("SELECT count(*) FROM hm_messages_fts WHERE hm_messages_fts MATCH 'quokka'").fetchone()[0] == 1
    other.close()
    mark = int(_meta(path, hmrelayout.NEXT_KEY) or 0)
    assert 400 <= mark < n
    db = SessionDB(path)  # resumes where the killed process stopped
    try:
        report = db.migration["index"]
        assert report["action"] == "relayout" and report["relaid"] < n + 1 - 300, report
        _assert_layout3(db)
        assert len(db.search_messages("quokka")) == 1
    finally:
        db.close()


REFERENCE_WRITER = """
import os, sys, time
from pathlib import Path
os.environ["HERMES_HOME"] = sys.argv[1]
import hermes_state
db = hermes_state.SessionDB(Path(sys.argv[1]) / "state.db")
db.create_session("ref-live", "cli")
i = 0
while not (Path(sys.argv[1]) / "stop").exists():
    db.append_message("ref-live", "user" if i % 2 == 0 else "assistant", f"reference turn {i} about walruses")
    i += 1
    time.sleep(0.01)
print(i)
"""


def _reference_rows(path: Path) -> int:
    conn = sqlite3.connect(path, timeout=30)
    try:
        return conn.execute("SELECT count(*) FROM messages WHERE session_id = 'ref-live'").fetchone()[0]
    finally:
        conn.close()


def test_the_reference_agent_writes_while_the_index_is_moved_and_every_turn_ends_up_indexed(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    _home(path, sessions=10, turns=150)
    ref = subprocess.Popen([str(backends.ensure("hermes-agent")), "-c", REFERENCE_WRITER, str(tmp_path)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while _reference_rows(path) < 5:
            assert ref.poll() is None and time.monotonic() < deadline, ref.communicate()
            time.sleep(0.05)
        before = _reference_rows(path)
        ours = _start_slow_open(path, pause=0.1)
        out, err = ours.communicate(timeout=300)
        assert ours.returncode == 0 and "done" in out, err[-3000:]
        during = _reference_rows(path) - before
        assert during > 0, "the reference wrote nothing while the index was moved: the test proves nothing"
    finally:
        (tmp_path / "stop").touch()
        out, err = ref.communicate(timeout=120)
    assert ref.returncode == 0, err[-3000:]
    db = SessionDB(path)
    try:
        _assert_layout3(db)
        total = int(out.strip())
        assert db.message_count() == 10 * 150 + 2 + total
        assert len(db.search_messages("walruses", limit=1000)) == total
    finally:
        db.close()
