"""``hermes-memory storage migrate``: a SQLite home copied into a real PostgreSQL, losslessly,
idempotently, resumably after a SIGKILL, never touching the SQLite home."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from hermes_memory.config import load_config
from hermes_memory.memory import MemoryStore, open_memory_store
from hermes_memory.migrate import SqliteHomeSource
from hermes_memory.sessions.factory import open_session_db
from hermes_memory.storage import DATABASE_URL_ENV, Storage
from tests.deploy.helpers import (
    cli_env,
    fingerprint,
    hermes,
    hermes_json,
    home_of,
    populate_home,
    sqlite_exports,
)
from tests.helpers.values import present


def _pg(url: str) -> Storage:
    return Storage("postgres", url)


def _pg_exports(home: Path, url: str, ids: list[str]) -> dict[str, dict]:
    with open_session_db(home_of(home), load_config(None), storage=_pg(url)) as db:
        return {sid: present(db.export_session(sid), f"session {sid}") for sid in ids}


def _pg_memory(home: Path, url: str, user_id: str | None = None) -> dict[str, list[str]]:
    store = open_memory_store(home_of(home), load_config(None), user_id=user_id, storage=_pg(url))
    try:
        return {t: store.entries(t) for t in ("memory", "user")}
    finally:
        close = getattr(store, "close", None)
        if callable(close):
            close()


def test_migrate_copies_everything_verifies_and_a_second_run_adds_nothing(tmp_path: Path, pg_url: str) -> None:
    home = tmp_path / "home"
    populate_home(home, sessions=9, messages=8)
    (home / "config.yaml").write_text("# my home\nmemory:\n  memory_char_limit: 2200  # default\n", encoding="utf-8")
    before = fingerprint(home)
    source = sqlite_exports(home)

    report = hermes_json(home, "storage", "migrate", "--to", pg_url)
    assert report["ok"] is True and report["problems"] == []
    assert (report["sessions_source"], report["sessions_added"], report["sessions_target"]) == (9, 9, 9)
    assert (report["messages_source"], report["messages_added"], report["messages_target"]) == (72, 72, 72)
    files = {m["file"]: m for m in report["memory"]}
    assert set(files) == {"MEMORY.md", "USER.md", "users/alice/USER.md", "users/bob/USER.md"}
    assert files["MEMORY.md"]["entries_source"] == files["MEMORY.md"]["entries_target"] == 4

    # Contents equal: every session row and message (ids, timestamps, order, parents, titles, JSON).
    copied = _pg_exports(home, pg_url, list(source))
    for sid, export in source.items():
        assert copied[sid] == export, sid
    children = [e for e in source.values() if e["parent_session_id"]]
    assert children and all(copied[c["id"]]["parent_session_id"] == c["parent_session_id"] for c in children)
    # Memory equal, in file order, with the over-limit and the blocked entry kept as they are.
    shared = MemoryStore(home / "memories")
    assert _pg_memory(home, pg_url) == {"memory": shared.entries("memory"), "user": shared.entries("user")}
    for uid in ("alice", "bob"):
        assert _pg_memory(home, pg_url, uid)["user"] == MemoryStore(home / "memories", user_id=uid).entries("user")

    again = hermes_json(home, "storage", "migrate", "--to", pg_url)
    assert again["ok"] is True
    assert (again["sessions_added"], again["messages_added"]) == (0, 0)
    assert all(m["added"] == 0 for m in again["memory"])
    assert (again["sessions_target"], again["messages_target"]) == (9, 72)
    with psycopg.connect(pg_url) as conn:
        assert present(conn.execute("SELECT count(*) FROM messages").fetchone())[0] == 72
        assert present(conn.execute("SELECT count(*) FROM sessions").fetchone())[0] == 9
    assert fingerprint(home) == before  # the SQLite home was only read
    assert "storage:" not in (home / "config.yaml").read_text()  # no --write-config: untouched


def test_migrate_prints_counts_and_a_progress_bar_without_the_password(tmp_path: Path, pg_url: str) -> None:
    home = tmp_path / "home"
    populate_home(home, sessions=3, messages=4)
    url = pg_url.replace("postgres@", "postgres:s3cret@")  # the test cluster trusts, the password is ignored
    r = hermes(home, "storage", "migrate", "--to", url)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "Sessions: 3 in state.db, 3 in the database (3 added now)" in out
    assert "Messages: 12 in state.db, 12 in the database (12 added now)" in out
    assert "sessions and messages" in out and "memory files" in out and "Verified" in out
    assert "s3cret" not in out and "postgres:***@" in out


def test_write_config_switches_the_home_keeping_comments_and_the_password_goes_to_env(
        tmp_path: Path, pg_url: str) -> None:
    home = tmp_path / "home"
    populate_home(home, sessions=2, messages=2, users=())
    (home / "config.yaml").write_text("# my home\nmemory:\n  nudge_interval: 5  # often\n", encoding="utf-8")
    url = pg_url.replace("postgres@", "postgres:s3cret@")
    r = hermes(home, "storage", "migrate", "--to", url, "--write-config")
    assert r.returncode == 0, r.stdout + r.stderr
    text = (home / "config.yaml").read_text()
    assert "# my home" in text and "# often" in text and "s3cret" not in text
    cfg = load_config(home / "config.yaml")
    assert cfg.storage.backend == "postgres" and cfg.storage.url == pg_url
    env_text = (home / ".env").read_text()
    assert f"{DATABASE_URL_ENV}={url}" in env_text and (home / ".env").stat().st_mode & 0o777 == 0o600
    st = hermes_json(home, "status")
    assert st["storage"]["backend"] == "postgres" and st["storage"]["database"] == url.replace("s3cret", "***")
    assert (st["storage"]["sessions"], st["storage"]["messages"]) == (2, 4)
    assert st["storage"]["memory"]["memory"]["entry_count"] == 4
    # The home now works on PostgreSQL: a session added through the CLI lands there, not in state.db.
    before = fingerprint(home)
    r = hermes(home, "memory", "add", "--target", "user", "Added after the switch")  # MEMORY.md is over its limit
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Added after the switch" in _pg_memory(home, pg_url)["user"]
    assert fingerprint(home) == before


def test_bad_targets_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    home = tmp_path / "home"
    populate_home(home, sessions=1, messages=1, users=())
    before = fingerprint(home)
    r = hermes(home, "storage", "migrate", "--to", "mysql://u:pw@db/x")
    assert r.returncode == 2 and "postgresql://" in r.stderr and "pw@" not in r.stderr
    r = hermes(home, "storage", "migrate")
    assert r.returncode == 2 and "--to" in r.stderr
    r = hermes(home, "storage", "migrate", "--to", "postgresql://u:s3cret@127.0.0.1:9/x?connect_timeout=2")
    assert r.returncode == 1 and "s3cret" not in r.stdout + r.stderr and "run the command again" in r.stderr.lower()
    assert fingerprint(home) == before


def test_migrate_killed_midway_resumes_and_duplicates_nothing(tmp_path: Path, pg_url: str) -> None:
    home = tmp_path / "home"
    populate_home(home, sessions=600, messages=10, users=("alice",))
    before = fingerprint(home)
    with SqliteHomeSource(home_of(home)) as src:
        n_sessions, n_messages = src.counts()
    argv = [sys.executable, "-m", "hermes_memory", "--home", str(home), "storage", "migrate", "--to", pg_url]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=cli_env(),
                            start_new_session=True)
    copied = 0
    deadline = time.monotonic() + 120
    with psycopg.connect(pg_url, autocommit=True) as conn:
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                copied = present(conn.execute("SELECT count(*) FROM sessions").fetchone())[0]
            except psycopg.errors.UndefinedTable:
                copied = 0
            if copied >= 20:
                break
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        partial_sessions = present(conn.execute("SELECT count(*) FROM sessions").fetchone())[0]
        partial_messages = present(conn.execute("SELECT count(*) FROM messages").fetchone())[0]
    assert 20 <= partial_sessions < n_sessions, "the kill did not land in the middle of the copy"
    assert partial_messages < n_messages

    report = hermes_json(home, "storage", "migrate", "--to", pg_url)
    assert report["ok"] is True
    assert report["sessions_added"] == n_sessions - partial_sessions
    assert report["messages_added"] == n_messages - partial_messages
    assert (report["sessions_target"], report["messages_target"]) == (n_sessions, n_messages)
    with psycopg.connect(pg_url) as conn:
        assert present(conn.execute("SELECT count(*) FROM messages").fetchone())[0] == n_messages
        dup = present(conn.execute("SELECT count(*) FROM (SELECT session_id, timestamp, role, content FROM messages "
                                   "GROUP BY 1, 2, 3, 4 HAVING count(*) > 1) d").fetchone())[0]
        assert dup == 0
    source = sqlite_exports(home)
    sample = sorted(source)[:: max(1, n_sessions // 25)]
    copied_exports = _pg_exports(home, pg_url, sample)
    assert all(copied_exports[sid] == source[sid] for sid in sample)
    assert _pg_memory(home, pg_url, "alice")["user"] == MemoryStore(home / "memories", user_id="alice").entries("user")
    assert fingerprint(home) == before


def test_a_nul_character_is_reported_and_stored_as_the_replacement_character(tmp_path: Path, pg_url: str) -> None:
    from hermes_memory.sessions.db import SessionDB

    home = tmp_path / "home"
    populate_home(home, sessions=1, messages=1, users=())
    with SessionDB(home / "state.db") as db:
        db.append_message("sess-00000", "user", "binary junk \x00 from a pasted log")
    report = hermes_json(home, "storage", "migrate", "--to", pg_url)
    assert report["ok"] is True and report["values_replaced"] == 1
    with psycopg.connect(pg_url) as conn:
        stored = [r[0] for r in conn.execute("SELECT content FROM messages WHERE content LIKE 'binary junk%'")]
    assert stored == ["binary junk \ufffd from a pasted log"]
    again = hermes(home, "storage", "migrate", "--to", pg_url)
    assert again.returncode == 0 and "Messages: 2 in state.db, 2 in the database (0 added now)" in again.stdout


@pytest.mark.parametrize("broken", ["memories/MEMORY.md"])
def test_an_unreadable_memory_file_stops_the_migration_and_says_which(tmp_path: Path, pg_url: str, broken: str) -> None:
    home = tmp_path / "home"
    populate_home(home, sessions=1, messages=1, users=())
    (home / broken).write_bytes(b"\xff\xfe not utf-8 \xff")
    r = hermes(home, "storage", "migrate", "--to", pg_url)
    assert r.returncode == 1 and "MEMORY.md" in r.stderr and "UTF-8" in r.stderr
