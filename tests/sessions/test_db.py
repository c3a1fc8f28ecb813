"""SessionDB scenarios of docs/reference.md §12 (sessions, messages, titles, export, prune)."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import time
from pathlib import Path

import pytest

from hermes_memory.errors import SessionStoreError
from hermes_memory.home import HermesHome
from hermes_memory.sessions import session_search
from hermes_memory.sessions.db import SessionDB, sanitize_title
from tests.helpers.values import present
from tests.sessions.backend_sql import raw_write


def test_default_path_is_state_db_in_home(hermes_home: Path) -> None:
    db = SessionDB()
    try:
        assert db.db_path == HermesHome.resolve().state_db
        assert db.db_path.exists()
    finally:
        db.close()


def test_sqlite_schema_wal_foreign_keys_tables_and_mode_0600(sqlite_db: SessionDB) -> None:
    """SQLite only: the file's journal mode, PRAGMAs, FTS5 objects and file mode."""
    db = sqlite_db
    assert db.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    names = {r[0] for r in db.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"sessions", "messages", "schema_version", "messages_fts", "messages_fts_trigram",
            "hm_messages_fts", "hm_messages_cjk", "hm_meta"} <= names
    assert [tuple(r) for r in db.conn.execute("SELECT version FROM schema_version")] == [(22,)]
    assert stat.S_IMODE(os.stat(db.db_path).st_mode) == 0o600


def test_a_new_state_db_and_its_wal_and_shm_are_0600_under_umask_022(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        db = SessionDB(tmp_path / "state.db")
        db.create_session("s1", "cli")
        modes = {s: stat.S_IMODE(os.stat(f"{db.db_path}{s}").st_mode) for s in ("", "-wal", "-shm")}
        db.close()
    finally:
        os.umask(old)
    assert modes == {"": 0o600, "-wal": 0o600, "-shm": 0o600}


def test_an_existing_state_db_and_its_wal_and_shm_keep_their_mode(tmp_path: Path) -> None:
    """Another program's 0644 ``state.db``, open in WAL mode (so ``-wal``/``-shm`` exist) when we open it."""
    path = tmp_path / "state.db"
    old = os.umask(0o022)
    try:
        other = sqlite3.connect(path)
        other.execute("PRAGMA journal_mode=WAL")
        other.execute("CREATE TABLE other_program (x)")
        other.execute("INSERT INTO other_program VALUES (1)")
        other.commit()
        os.chmod(path, 0o644)
        before = {s: stat.S_IMODE(os.stat(f"{path}{s}").st_mode) for s in ("", "-wal", "-shm")}
        db = SessionDB(path)
        db.create_session("s1", "cli")
        after = {s: stat.S_IMODE(os.stat(f"{path}{s}").st_mode) for s in ("", "-wal", "-shm")}
        db.close()
        other.close()
    finally:
        os.umask(old)
    assert before == {"": 0o644, "-wal": 0o644, "-shm": 0o644}
    assert after == before
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644


def test_create_get_and_unknown(db: SessionDB) -> None:
    sid = db.create_session("s1", source="telegram", model="m1")
    assert sid == "s1"
    row = present(db.get_session("s1"))
    assert row["source"] == "telegram" and row["model"] == "m1" and row["ended_at"] is None
    assert db.get_session("nope") is None
    auto = db.create_session()
    assert auto and present(db.get_session(auto))["source"] == "cli"


def test_end_session_first_end_wins_until_reopen(db: SessionDB) -> None:
    db.create_session("s1")
    assert db.end_session("s1", "user_exit") is True
    first = present(db.get_session("s1"))
    assert isinstance(first["ended_at"], float) and first["end_reason"] == "user_exit"
    assert db.end_session("s1", "compression") is False
    assert present(db.get_session("s1"))["end_reason"] == "user_exit"
    assert db.reopen_session("s1") is True
    assert present(db.get_session("s1"))["ended_at"] is None
    assert db.end_session("s1", "compression") is True
    assert present(db.get_session("s1"))["end_reason"] == "compression"


def test_token_counts_accumulate_absolute_and_model_backfill(db: SessionDB) -> None:
    db.create_session("s1")
    db.update_token_counts("s1", input_tokens=10, output_tokens=5, cache_read_tokens=3, cache_write_tokens=2,
                           reasoning_tokens=1, cost_usd=0.5, model="gpt-x", api_call_count=1)
    db.update_token_counts("s1", input_tokens=10, output_tokens=5, cache_read_tokens=3, cache_write_tokens=2,
                           cost_usd=0.25, model="other", api_call_count=1)
    row = present(db.get_session("s1"))
    assert (row["input_tokens"], row["output_tokens"], row["cache_read_tokens"], row["cache_write_tokens"]) == (20, 10, 6, 4)
    assert row["reasoning_tokens"] == 1 and row["estimated_cost_usd"] == pytest.approx(0.75)
    assert row["model"] == "gpt-x" and row["api_call_count"] == 2
    db.update_token_counts("s1", input_tokens=7, api_call_count=9, absolute=True)
    row = present(db.get_session("s1"))
    assert row["input_tokens"] == 7 and row["api_call_count"] == 9 and row["output_tokens"] == 0
    assert db.update_token_counts("missing", input_tokens=1) is False


def test_message_and_tool_call_counts_and_json_round_trip(db: SessionDB) -> None:
    db.create_session("s1")
    calls = [{"id": "c1", "type": "function", "function": {"name": "a", "arguments": "{}"}},
             {"id": "c2", "type": "function", "function": {"name": "b", "arguments": "{\"x\": 1}"}}]
    db.append_message("s1", "user", "hi")
    db.append_message("s1", "assistant", None, tool_calls=calls)
    db.append_message("s1", "tool", "result", tool_call_id="c1", tool_name="a")
    row = present(db.get_session("s1"))
    assert row["message_count"] == 3 and row["tool_call_count"] == 2
    msgs = db.get_messages("s1")
    assert msgs[1]["tool_calls"] == calls
    assert msgs[2]["tool_call_id"] == "c1"


def test_list_content_and_lone_surrogates(db: SessionDB) -> None:
    db.create_session("s1")
    db.append_message("s1", "user", [{"type": "text", "text": "hello"}])
    db.append_message("s1", "user", "bad \ud800 char")
    msgs = db.get_messages("s1")
    assert msgs[0]["content"] == [{"type": "text", "text": "hello"}]
    assert "\ud800" not in msgs[1]["content"] and msgs[1]["content"].startswith("bad ")


def test_unknown_parent_session_is_refused(db: SessionDB) -> None:
    with pytest.raises(SessionStoreError, match="write failed"):
        db.create_session("child", parent_session_id="ghost")
    assert db.get_session("child") is None


def test_append_to_unknown_session_raises(db: SessionDB) -> None:
    with pytest.raises(SessionStoreError, match="create_session"):
        db.append_message("ghost", "user", "x")
    assert db.message_count() == 0


def test_conversation_restores_reasoning_and_strips_memory_context(db: SessionDB) -> None:
    db.create_session("s1")
    db.append_message("s1", "system", "You are helpful")
    db.append_message("s1", "user", "q")
    db.append_message("s1", "assistant", "<memory-context>\nsecret recall\n</memory-context>\nVisible answer",
                      reasoning="", reasoning_content="thinking", reasoning_details=[{"type": "r"}])
    conv = db.get_messages_as_conversation("s1")
    assert conv[0] == {"role": "system", "content": "You are helpful", "timestamp": conv[0]["timestamp"]}
    assert conv[2]["content"] == "Visible answer"
    assert conv[2]["reasoning"] == "" and conv[2]["reasoning_content"] == "thinking"
    assert conv[2]["reasoning_details"] == [{"type": "r"}]


def test_conversation_include_ancestors_without_duplicate_prompt(db: SessionDB) -> None:
    db.create_session("a")
    db.append_message("a", "system", "SYS")
    db.append_message("a", "user", "first")
    db.create_session("b", parent_session_id="a")
    db.append_message("b", "system", "SYS")
    db.append_message("b", "user", "second")
    conv = db.get_messages_as_conversation("b", include_ancestors=True)
    assert [m["content"] for m in conv] == ["SYS", "first", "second"]
    assert [m["content"] for m in db.get_messages_as_conversation("b")] == ["SYS", "second"]


def test_titles_set_get_unknown_duplicate_and_none(db: SessionDB) -> None:
    db.create_session("s1")
    db.create_session("s2")
    db.create_session("s3")
    assert db.get_session_title("s1") is None
    assert db.set_session_title("s1", "My  title\t!") is True
    assert db.get_session_title("s1") == "My title !"
    assert db.set_session_title("nope", "x") is False
    with pytest.raises(ValueError):
        db.set_session_title("s2", "My title !")
    assert db.set_session_title("s2", "") is True and db.set_session_title("s3", None) is True
    assert db.get_session_title("s2") is None and db.get_session_title("s3") is None
    db.set_session_title("s1", "Déjà vu 🚀 记忆 <b>&")
    db.end_session("s1", "done")
    assert db.get_session_title("s1") == "Déjà vu 🚀 记忆 <b>&"
    assert present(db.export_session("s1"))["title"] == "Déjà vu 🚀 记忆 <b>&"


def test_title_moves_from_compression_ancestor(db: SessionDB) -> None:
    db.create_session("a", title="Plan")
    db.end_session("a", "compression")
    db.create_session("b", parent_session_id="a")
    assert db.set_session_title("b", "Plan") is True
    assert db.get_session_title("a") is None and db.get_session_title("b") == "Plan"


def test_sanitize_title() -> None:
    assert sanitize_title("  a \t b\n c  ") == "a b c"
    assert sanitize_title("x\x00y\x07z\x7f\u200b\u200d\u202e\ufeff") == "xyz"
    assert sanitize_title("\x00\x07") is None
    assert sanitize_title("a" * 100) == "a" * 100
    with pytest.raises(ValueError, match="too long"):
        sanitize_title("a" * 101)
    assert sanitize_title("café 🎉 日本") == "café 🎉 日本"


def test_title_lineage_numbering(db: SessionDB) -> None:
    assert db.get_next_title_in_lineage("x") == "x"
    db.create_session("s1", title="x")
    assert db.get_next_title_in_lineage("x") == "x #2"
    db.create_session("s2", title="x #2")
    assert db.get_next_title_in_lineage("x") == "x #3"
    assert db.get_next_title_in_lineage("x #2") == "x #3"
    assert db.resolve_session_by_title("x") == "s2"


def test_list_count_and_paginate(db: SessionDB) -> None:
    for i in range(5):
        db.create_session(f"s{i}", source="cli" if i % 2 else "telegram", started_at=1000.0 + i)
        db.append_message(f"s{i}", "user", f"hello {i}")
    assert [s["id"] for s in db.list_sessions(limit=2)] == ["s4", "s3"]
    assert [s["id"] for s in db.list_sessions(limit=2, offset=2)] == ["s2", "s1"]
    assert {s["id"] for s in db.search_sessions(source="cli")} == {"s1", "s3"}
    assert db.session_count() == 5 and db.session_count("cli") == 2
    assert db.message_count() == 5 and db.message_count("s1") == 1
    assert db.list_sessions(limit=1)[0]["preview"] == "hello 4"


def test_delete_session_orphans_children(db: SessionDB) -> None:
    db.create_session("p")
    db.append_message("p", "user", "parent words zebra")
    db.create_session("c", parent_session_id="p")
    assert db.delete_session("p") is True
    assert db.get_session("p") is None and db.get_messages("p") == []
    assert present(db.get_session("c"))["parent_session_id"] is None
    assert db.message_count() == 0
    assert db.delete_session("p") is False


def test_deleted_session_leaves_the_search_index(db: SessionDB) -> None:
    db.create_session("p")
    db.append_message("p", "user", "parent words zebra")
    assert len(db.search_messages("zebra")) == 1
    assert db.delete_session("p") is True
    assert db.search_messages("zebra") == []


def test_resolve_session_id(db: SessionDB) -> None:
    db.create_session("abc123")
    db.create_session("abd456")
    db.create_session("x_y")
    db.create_session("xzy")
    assert db.resolve_session_id("abc123") == "abc123"
    assert db.resolve_session_id("abc") == "abc123"
    assert db.resolve_session_id("ab") is None
    assert db.resolve_session_id("x_") == "x_y"
    assert db.resolve_session_id("zz") is None


def test_export_session_and_all(db: SessionDB) -> None:
    db.create_session("s1", source="cli")
    db.append_message("s1", "user", "hi")
    db.create_session("s2", source="telegram")
    e = present(db.export_session("s1"))
    assert e["source"] == "cli" and e["title"] is None and e["messages"][0]["content"] == "hi"
    assert db.export_session("nope") is None
    assert [x["id"] for x in db.export_all()] == ["s1", "s2"]
    assert [x["id"] for x in db.export_all(source="telegram")] == ["s2"]


def _age(db: SessionDB, sid: str, days: float) -> None:
    raw_write(db, "UPDATE sessions SET started_at = ? WHERE id = ?", (time.time() - days * 86400, sid))


def test_prune_ended_old_only_and_source_filter(db: SessionDB) -> None:
    for sid, src in (("old", "cli"), ("recent", "cli"), ("open", "cli"), ("tg", "telegram")):
        db.create_session(sid, source=src)
    for sid in ("old", "recent", "tg"):
        db.end_session(sid, "done")
    _age(db, "old", 100)
    _age(db, "open", 100)
    _age(db, "tg", 100)
    assert db.prune_sessions(older_than_days=90, source="cli") == 1
    assert db.get_session("old") is None and db.get_session("recent") and db.get_session("open")
    assert db.get_session("tg") is not None
    assert db.prune_sessions(older_than_days=90) == 1
    assert db.prune_sessions(older_than_days=90) == 0


def test_prune_chain_detaches_surviving_child(db: SessionDB) -> None:
    db.create_session("A")
    db.create_session("B", parent_session_id="A")
    db.create_session("C", parent_session_id="B")
    db.create_session("D", parent_session_id="C")
    for s in "ABCD":
        db.end_session(s, "compression")
    _age(db, "A", 200)
    _age(db, "B", 150)
    assert db.prune_sessions(90) == 2
    assert present(db.get_session("C"))["parent_session_id"] is None
    assert present(db.get_session("D"))["parent_session_id"] == "C"
    for s in "CD":
        _age(db, s, 120)
    assert db.prune_sessions(90) == 2 and db.session_count() == 0


def test_v2_database_migrates_and_backfills_fts(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE schema_version (version INTEGER NOT NULL);
        INSERT INTO schema_version VALUES (2);
        CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, model TEXT,
            model_config TEXT, system_prompt TEXT, parent_session_id TEXT, started_at REAL NOT NULL,
            ended_at REAL, end_reason TEXT, message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0,
            input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0);
        CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, role TEXT NOT NULL,
            content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL NOT NULL);
        CREATE VIRTUAL TABLE messages_fts USING fts5(content);
        CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
            INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content); END;
        INSERT INTO sessions (id, source, started_at) VALUES ('legacy', 'cli', 1.0);
        INSERT INTO messages (session_id, role, content, tool_name, timestamp)
            VALUES ('legacy', 'user', 'the penguin migration', NULL, 2.0);
        INSERT INTO messages (session_id, role, content, tool_name, timestamp)
            VALUES ('legacy', 'tool', 'ok', 'weather_lookup', 3.0);
        """
    )
    conn.commit()
    conn.close()
    db = SessionDB(path)
    try:
        cols = {r[1] for r in db.conn.execute("PRAGMA table_info(sessions)")}
        assert {"title", "api_call_count", "cache_read_tokens", "cache_write_tokens"} <= cols
        # a reference database keeps its own version (the reference migrates it when it opens it)
        assert db.conn.execute("SELECT version FROM schema_version").fetchone()[0] == 2
        assert [r["session_id"] for r in db.search_messages("penguin")] == ["legacy"]
        assert len(db.search_messages("weather_lookup", role_filter="tool")) == 1
        db.append_message("legacy", "user", "new walrus text")
        assert len(db.search_messages("walrus")) == 1
        assert db.fts_integrity_check()
    finally:
        db.close()
    again = SessionDB(path)
    assert again.migration["fts_rebuilt"] is False and again.migration["added_columns"] == []
    again.close()


def test_missing_columns_reconciled_whatever_the_version(tmp_path: Path) -> None:
    path = tmp_path / "odd.db"
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (99);"
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, started_at REAL NOT NULL);"
        "CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,"
        " role TEXT NOT NULL, content TEXT, timestamp REAL NOT NULL);"
    )
    conn.close()
    db = SessionDB(path)
    try:
        assert "reasoning_content" in {r[1] for r in db.conn.execute("PRAGMA table_info(messages)")}
        assert db.conn.execute("SELECT version FROM schema_version").fetchone()[0] == 99
        db.create_session("s", title="t")
        db.append_message("s", "user", "works", tool_name=None)
        assert len(db.search_messages("works")) == 1
    finally:
        db.close()


def test_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "state.db"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(SessionStoreError, match="not a usable session database"):
        SessionDB(bad)
    assert bad.read_bytes() == b"this is not sqlite" * 100


def test_get_lineages_in_one_call_with_cycle_guard(db: SessionDB) -> None:
    db.create_session("a")
    db.create_session("b", parent_session_id="a")
    db.create_session("c", parent_session_id="b")
    db.create_session("solo")
    assert db.get_lineages(["c", "b", "solo"]) == {"c": ["a", "b", "c"], "b": ["a", "b"], "solo": ["solo"]}
    raw_write(db, "UPDATE sessions SET parent_session_id = 'c' WHERE id = 'a'")  # a corrupt cycle
    assert db.get_lineages(["c"])["c"][-1] == "c"
    assert db.get_lineage("c")[-1] == "c"


# ----------------------------------------------------------------- corrupt database and odd ids
def _corrupt_copy(tmp_path: Path) -> Path:
    path = tmp_path / "state.db"
    db = SessionDB(path)
    db.create_session("s1")
    for i in range(400):
        db.append_message("s1", "user", f"message number {i} " + "padding " * 40)
    db.close()
    with open(path, "r+b") as fh:  # overwrite the middle pages, keep the header
        fh.seek(4096 * 3)
        fh.write(b"\xde\xad" * 8192)
    return path


def test_corrupt_database_reads_raise_session_store_error(tmp_path: Path) -> None:
    path = _corrupt_copy(tmp_path)
    try:
        db = SessionDB(path)
    except SessionStoreError:
        return  # refused at open: also a clear error
    for read in (db.list_sessions, lambda: db.get_messages("s1"), db.export_all):
        with pytest.raises(SessionStoreError, match="malformed"):
            read()
    db.close()


def test_corrupt_database_tool_returns_json_error(tmp_path: Path) -> None:
    path = _corrupt_copy(tmp_path)
    try:
        db = SessionDB(path)
    except SessionStoreError:
        return
    for args in ({}, {"session_id": "s1"}, {"query": "padding"}):
        out = json.loads(session_search(args, db))
        assert out["success"] is False and out["error"], args
    db.close()


# ----------------------------------------------------------------- set_session_title
def test_a_compression_continuation_takes_over_its_predecessors_title(db: SessionDB) -> None:
    db.create_session("root", title="Plan")
    db.end_session("root", "compression")
    db.create_session("mid", parent_session_id="root")
    db.end_session("mid", "compression")
    db.create_session("tip", parent_session_id="mid")
    assert db.set_session_title("tip", "Plan") is True
    assert db.get_session_title("root") is None and db.get_session_title("tip") == "Plan"


@pytest.mark.parametrize("parent_end", [None, "branched", "user_exit", "session_reset"])
def test_a_child_that_is_not_a_compression_continuation_cannot_take_the_parents_title(
    db: SessionDB, parent_end: str | None
) -> None:
    db.create_session("parent", title="Plan")
    if parent_end:
        db.end_session("parent", parent_end)
    db.create_session("child", parent_session_id="parent")
    with pytest.raises(ValueError, match="already in use by session parent"):
        db.set_session_title("child", "Plan")
    assert db.get_session_title("parent") == "Plan" and db.get_session_title("child") is None


def test_title_transfer_stops_at_a_non_compression_link(db: SessionDB) -> None:
    db.create_session("root", title="Plan")  # root -> mid is a plain child link (root never ended)
    db.create_session("mid", parent_session_id="root")
    db.end_session("mid", "compression")
    db.create_session("tip", parent_session_id="mid")
    with pytest.raises(ValueError):
        db.set_session_title("tip", "Plan")
    assert db.get_session_title("root") == "Plan"


# ----------------------------------------------------------------- get_messages_as_conversation
def test_conversation_keeps_timestamp_and_finish_reason(db: SessionDB) -> None:
    db.create_session("s1")
    db.append_message("s1", "user", "q", timestamp=100.0)
    db.append_message("s1", "assistant", "a", finish_reason="stop", timestamp=101.5)
    db.append_message("s1", "tool", "out", tool_name="terminal", tool_call_id="c1", finish_reason="ignored", timestamp=102.0)
    conv = db.get_messages_as_conversation("s1")
    assert conv[0] == {"role": "user", "content": "q", "timestamp": 100.0}
    assert conv[1] == {"role": "assistant", "content": "a", "timestamp": 101.5, "finish_reason": "stop"}
    assert conv[2]["timestamp"] == 102.0 and "finish_reason" not in conv[2]


def test_conversation_with_ancestors_drops_a_replayed_resume_prompt(db: SessionDB) -> None:
    db.create_session("root")
    db.append_message("root", "user", "same prompt")
    db.append_message("root", "user", "same prompt")
    db.append_message("root", "assistant", "answer")
    db.create_session("child", parent_session_id="root")
    db.append_message("child", "user", "next prompt")
    db.append_message("child", "user", "next prompt")  # unanswered replay of the tip's prompt
    conv = db.get_messages_as_conversation("child", include_ancestors=True)
    assert [m["content"] for m in conv if m["role"] == "user"] == ["same prompt", "next prompt"]
    # without ancestors the stored rows are returned as they are
    assert [m["content"] for m in db.get_messages_as_conversation("root")] == ["same prompt", "same prompt", "answer"]


def test_conversation_keeps_a_prompt_repeated_after_an_answer(db: SessionDB) -> None:
    db.create_session("root")
    db.append_message("root", "user", "status?")
    db.append_message("root", "assistant", "green")
    db.create_session("child", parent_session_id="root")
    db.append_message("child", "user", "status?")
    conv = db.get_messages_as_conversation("child", include_ancestors=True)
    assert [m["content"] for m in conv] == ["status?", "green", "status?"]


# ----------------------------------------------------------------- reference method names
def test_reference_session_helpers_exist_and_behave(db: SessionDB) -> None:
    assert SessionDB.sanitize_title("  a \t b ") == "a b"
    db.create_session("s1", source="cli", model="original")
    db.set_session_title("s1", "refactoring auth")
    assert present(db.get_session_by_title("refactoring auth"))["id"] == "s1"
    assert db.get_session_by_title("nonexistent") is None
    assert db.update_system_prompt("s1", "You are helpful.") is True
    assert present(db.get_session("s1"))["system_prompt"] == "You are helpful."
    assert db.update_system_prompt("nope", "x") is False
    db.ensure_session("s1", source="gateway", model="other")  # existing row untouched
    assert (present(db.get_session("s1"))["source"], present(db.get_session("s1"))["model"]) == ("cli", "original")
    db.ensure_session("late", source="gateway", model="m")
    db.append_message("late", "user", "hello after lock")
    assert present(db.get_session("late"))["source"] == "gateway" and db.message_count("late") == 1
