"""Databases the previous hermes-memory left behind ("layout 1": our old-shape ``messages_fts`` over
the view ``messages_fts_src``, ``messages_cjk``, triggers ``hm_messages_fts_*``) are converted once:
the reference-shaped ``messages_fts`` / ``messages_fts_trigram`` and their triggers come back, filled
from ``messages``, no message is lost, and the real reference then works on the file without a
rebuild. The fixture code is that previous version itself (tests/compat/layout1_migrations.py)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hermes_memory.sessions.db import SessionDB
from tests.compat.helpers import (
    assert_no_malformed,
    assert_reference_healthy,
    our_meta,
    ref,
    reference_fts_consistent,
)
from tests.compat.layout1_migrations import migrate as layout1_migrate

LAYOUT1_OBJECTS = {"messages_fts_src", "messages_cjk", "hm_messages_fts_ai", "hm_messages_fts_ad", "hm_messages_fts_au"}


def _layout1_open(path: Path) -> None:
    """What any command of the previous version did to state.db on open."""
    conn = sqlite3.connect(path)
    layout1_migrate(conn)
    conn.commit()
    conn.close()


def _rows(path: Path) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT id, session_id, role, content, tool_name, tool_calls FROM messages ORDER BY id").fetchall()
    finally:
        conn.close()


def _names(path: Path) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        return {n for (n,) in conn.execute("SELECT name FROM sqlite_master")}
    finally:
        conn.close()


def test_database_created_by_the_previous_version_is_converted_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    path = home / "state.db"
    _layout1_open(path)
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO sessions(id, source, started_at, title) VALUES ('old', 'cli', 1, 'Old one')")
    conn.executemany("INSERT INTO messages(session_id, role, content, tool_name, timestamp) VALUES ('old', ?, ?, ?, 1)",
                     [("user", "the quokka migration plan", None), ("tool", "ran fine", "terminal"),
                      ("assistant", "记忆断裂的问题已经修复", None)])
    conn.commit()
    conn.close()
    assert LAYOUT1_OBJECTS <= _names(path)
    rows = _rows(path)

    db = SessionDB(path)
    try:
        assert db.migration["layout"] == "converted"
        assert sorted(db.migration["restored_reference_fts"]) == ["messages_fts", "messages_fts_trigram"]
        assert len(db.search_messages("quokka")) == 1 and len(db.search_messages("记忆断裂")) == 1
        assert len(db.search_messages("terminal", role_filter=["tool"])) == 1
    finally:
        db.close()
    assert _rows(path) == rows  # no message lost or changed
    assert not (LAYOUT1_OBJECTS & _names(path))
    assert reference_fts_consistent(home) == {"messages_fts": 0, "messages_fts_trigram": 0}
    assert our_meta(home)["converted_from"] == "1"
    again = SessionDB(path)
    assert again.migration["layout"] == "current" and again.migration["index"]["action"] == "none"
    again.close()

    ops = ref("0.19.0", "ops", home, {"delete": "old", "deleted_word": "quokka", "old_word": "quokka"})
    assert ops["rebuilds"] == [] and ops["search_old"] == [rows[0][0]] and ops["after_delete"] == []
    assert_no_malformed(home, ops)
    assert_reference_healthy("0.19.0", home)


def test_reference_home_damaged_by_the_previous_version_is_restored(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = home / "state.db"
    ref("0.19.0", "build", home, {"config": False})
    rows = _rows(path)
    _layout1_open(path)  # the fault of issue 12: e.g. `hermes-memory sessions list` of the old version
    damaged = ref("0.19.0", "check", home)
    assert damaged["rebuilds"], damaged  # the reference had to rebuild its indexes: the old fault, reproduced

    db = SessionDB(path)
    try:
        assert db.migration["layout"] == "converted"
        assert db.migration["restored_reference_fts"] == ["messages_fts"]  # its trigram table was intact
        assert db.conn.execute("SELECT version FROM schema_version").fetchone()[0] == 22
    finally:
        db.close()
    assert _rows(path) == rows
    ops = ref("0.19.0", "ops", home)
    assert ops["rebuilds"] == [] and ops["delete"] is True and ops["after_delete"] == []
    assert len(ops["search_old"]) == 3
    assert_no_malformed(home, ops)
    assert_reference_healthy("0.19.0", home)
