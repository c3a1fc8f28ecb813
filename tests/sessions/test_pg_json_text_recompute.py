"""The rows whose search values a new ``hm_json_text`` changes (migrations 11 and 12) are recomputed
after the migration in bounded steps (:mod:`hermes_memory.sessions.pg.decoded_schema`), not in the
migration transaction: a process killed mid-way leaves the mark where its last step committed and the
next open resumes there; other processes open, append, edit and search while a step is running;
no stored value changes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest

from hermes_memory.sessions.codec import JSON_CONTENT_PREFIX
from hermes_memory.sessions.pg import decoded_schema
from tests.sessions.pg_old_schema import stored_rows, write_at_schema

BACKENDS = ("postgres",)
ROOT = Path(__file__).resolve().parents[2]
ROWS = 30
CHUNK = 10


def _write(db: Any) -> list[int]:
    """``ROWS`` list messages behind our prefix (``first\\nwalrus``: schema 10 indexes them as stored, so
    ``walrus`` is not found and ``Paris`` is), then one plain message."""
    db.create_session("s", started_at=1_700_000_000.0)
    ids = [db.append_message("s", "user", JSON_CONTENT_PREFIX + json.dumps([{"type": "text", "text": f"Paris {i} first\nwalrus"}]),
                             timestamp=1_700_000_001.0 + i) for i in range(ROWS)]
    return [*ids, db.append_message("s", "user", "the weather in Paris", timestamp=1_700_001_000.0)]


def _mark(conn: Any) -> str | None:
    row = conn.execute("SELECT value FROM hm_meta WHERE key = %s", (decoded_schema.MARK_KEY,)).fetchone()
    return None if row is None else str(row[0])


def _found(db: Any, query: str) -> set[int]:
    return {r["id"] for r in db.search_messages(query, limit=100, raise_errors=True)}


_KILLED = f"""
import sys, time, psycopg
sys.path[:0] = [{str(ROOT)!r}, {str(ROOT / "src")!r}]
from hermes_memory.sessions.pg import decoded_schema, schema
decoded_schema.RECOMPUTE_CHUNK = {CHUNK}
with psycopg.connect(sys.argv[1], autocommit=True) as conn:
    print(schema.migrate(conn)["applied"], decoded_schema.recompute_step(conn), flush=True)
    with conn.transaction():  # the next step, never committed: the process is killed inside it
        decoded_schema.recompute_step(conn)
        print("stepping", flush=True)
        time.sleep(600)
"""


def test_a_killed_recomputation_resumes_writes_proceed_meanwhile_and_no_stored_value_changes(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_memory.sessions.pg import PgSessionDB

    ids = write_at_schema(pg_url, 10, _write)  # a database at schema 10, as the previous release left it
    before = stored_rows(pg_url, "messages", ("search_vector",))
    proc = subprocess.Popen([sys.executable, "-c", _KILLED, pg_url], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith(f"[11, 12] {{'recomputed': {CHUNK}, 'pending': True, 'busy': False}}"), first
        assert proc.stdout.readline() == "stepping\n"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    monkeypatch.setattr(decoded_schema, "RECOMPUTE_CHUNK", CHUNK)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert _mark(conn) == f"{ids[CHUNK]} {ids[-1]}"  # the killed step's work was rolled back, its mark kept
        with conn.transaction():  # another process's step is running (its rows and the mark locked) ...
            assert decoded_schema.recompute_step(conn)["recomputed"] == CHUNK
            db = PgSessionDB(pg_url)  # ... and this one opens at once (the mark is taken: it leaves the work)
            try:
                assert db.migration["applied"] == [] and db.migration["json_text_recomputed"] == 0
                appended = db.append_message("s", "user", "a walrus appended meanwhile", timestamp=1_700_002_000.0)
                edited = ids[-2]  # a row not reached yet
                assert db.update_message_content(edited, db.get_message(edited)["content"])  # type: ignore[index]
                assert _found(db, "Paris") == set(ids)  # rows not recomputed yet: found by their text as before
                assert _found(db, "walrus") == {*ids[:CHUNK], edited, appended}  # recomputed, rewritten, new
            finally:
                db.close()
    db = PgSessionDB(pg_url)  # the next open finishes the work
    try:
        assert db.migration["json_text_recomputed"] == ROWS - 2 * CHUNK  # the rows after the two committed steps
        with psycopg.connect(pg_url, autocommit=True) as conn:
            assert _mark(conn) is None
        assert _found(db, "walrus") == {*ids[:ROWS], appended}
        assert _found(db, "Paris") == set(ids)
    finally:
        db.close()
    after = [r for r in stored_rows(pg_url, "messages", ("search_vector",)) if r["id"] != appended]
    assert after == before


def test_a_step_that_waits_out_its_lock_timeout_pauses_the_recomputation_and_the_open_succeeds(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_memory.sessions.pg import PgSessionDB

    ids = write_at_schema(pg_url, 10, _write)
    before = stored_rows(pg_url, "messages", ("search_vector",))
    monkeypatch.setattr(decoded_schema, "RECOMPUTE_CHUNK", CHUNK)
    monkeypatch.setattr(decoded_schema, "STEP_LOCK_TIMEOUT_MS", 200)
    with psycopg.connect(pg_url, autocommit=True) as writer:
        with writer.transaction():  # a writer's long transaction holds a row of the second step
            writer.execute("UPDATE messages SET observed = observed WHERE id = %s", (ids[CHUNK + 1],))
            db = PgSessionDB(pg_url)
            try:
                assert db.migration["applied"][:2] == [11, 12] and db.migration["json_text_recomputed"] == CHUNK
                assert _mark(writer) == f"{ids[CHUNK]} {ids[-1]}"  # paused where the step that waited began
                assert _found(db, "Paris") == set(ids)
            finally:
                db.close()
    db = PgSessionDB(pg_url)
    try:
        assert db.migration["json_text_recomputed"] == ROWS - CHUNK
        assert _found(db, "walrus") == set(ids[:ROWS])
    finally:
        db.close()
    assert stored_rows(pg_url, "messages", ("search_vector",)) == before


def test_an_open_recomputes_only_its_budget_and_the_rest_goes_on_in_the_background(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first open after an upgrade did the whole recomputation itself (104 s at 200,000 messages):
    now it stops after its budget (here 0 s: no step) and returns, and the same process finishes the
    work in the background while it appends and searches; close() waits for the step in progress."""
    import time

    from hermes_memory.sessions.pg import PgSessionDB

    ids = write_at_schema(pg_url, 10, _write)
    before = stored_rows(pg_url, "messages", ("search_vector",))
    monkeypatch.setattr(decoded_schema, "RECOMPUTE_CHUNK", CHUNK)
    monkeypatch.setattr(decoded_schema, "OPEN_BUDGET_S", 0.0)
    db = PgSessionDB(pg_url)
    try:
        assert db.migration["applied"][:2] == [11, 12]
        assert db.migration["json_text_recomputed"] == 0 and db.migration["json_text_pending"] is True
        appended = db.append_message("s", "user", "a walrus appended meanwhile", timestamp=1_700_002_000.0)
        deadline = time.monotonic() + 120  # a hang detector, not a speed requirement
        with psycopg.connect(pg_url, autocommit=True) as conn:
            while _mark(conn) is not None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert _mark(conn) is None
        assert _found(db, "walrus") == {*ids[:ROWS], appended}
    finally:
        db.close()
    after = [r for r in stored_rows(pg_url, "messages", ("search_vector",)) if r["id"] != appended]
    assert after == before
    again = PgSessionDB(pg_url)
    try:
        assert again.migration["json_text_pending"] is False and again._background is None
    finally:
        again.close()
