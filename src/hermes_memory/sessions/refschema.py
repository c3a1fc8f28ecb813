"""The reference agent's ``state.db`` schema (Hermes Agent 0.19.0, schema version 22), as data.

A Hermes home is shared with the reference agent, which treats every object below as its own:
the tables, their columns and indexes, the two full-text tables ``messages_fts`` (unicode61) and
``messages_fts_trigram`` (trigram) and the six triggers that keep them in step with ``messages``.
hermes-memory never alters, drops, renames or reuses the name of any of them on a database the
reference created (see :mod:`hermes_memory.sessions.migrations`); everything of ours is named
``hm_*`` (:mod:`hermes_memory.sessions.hmindex`).

This module builds that schema for a NEW database, so the reference opens our file as one of its
own at its current version and finds nothing to migrate, repair or re-index. The DDL is generated
here from the column/index lists (it yields the same objects the reference creates: same tables,
column order, types, NOT NULL flags, defaults, keys, indexes, full-text tables and trigger
semantics; ``tests/compat`` compares them with a database the real reference built).

Both reference full-text tables store their own copy of
``coalesce(content,'') || ' ' || coalesce(tool_name,'') || ' ' || coalesce(tool_calls,'')`` under
``rowid = messages.id``; their triggers fire on every insert, delete and update of ``messages``.
"""

from __future__ import annotations

import sqlite3

REFERENCE_SCHEMA_VERSION = 22
"""``schema_version`` of Hermes Agent 0.19.0 (0.18.0 wrote 17)."""

REFERENCE_FTS_TABLES = ("messages_fts", "messages_fts_trigram")
"""The reference's full-text tables (with their FTS5 shadow tables ``<name>_data`` etc.)."""

REFERENCE_TRIGGERS = {
    "messages_fts": ("messages_fts_insert", "messages_fts_delete", "messages_fts_update"),
    "messages_fts_trigram": ("messages_fts_trigram_insert", "messages_fts_trigram_delete",
                             "messages_fts_trigram_update"),
}
"""The reference's six triggers on ``messages``, by the full-text table each maintains."""

# (name, declared type, constraint text). Order is the reference's column order.
_SESSIONS = [
    ("id", "TEXT", "PRIMARY KEY"), ("source", "TEXT", "NOT NULL"), ("user_id", "TEXT", ""),
    ("session_key", "TEXT", ""), ("chat_id", "TEXT", ""), ("chat_type", "TEXT", ""),
    ("thread_id", "TEXT", ""), ("display_name", "TEXT", ""), ("origin_json", "TEXT", ""),
    ("expiry_finalized", "INTEGER", "DEFAULT 0"), ("model", "TEXT", ""), ("model_config", "TEXT", ""),
    ("system_prompt", "TEXT", ""), ("parent_session_id", "TEXT", ""), ("started_at", "REAL", "NOT NULL"),
    ("ended_at", "REAL", ""), ("end_reason", "TEXT", ""), ("message_count", "INTEGER", "DEFAULT 0"),
    ("tool_call_count", "INTEGER", "DEFAULT 0"), ("input_tokens", "INTEGER", "DEFAULT 0"),
    ("output_tokens", "INTEGER", "DEFAULT 0"), ("cache_read_tokens", "INTEGER", "DEFAULT 0"),
    ("cache_write_tokens", "INTEGER", "DEFAULT 0"), ("reasoning_tokens", "INTEGER", "DEFAULT 0"),
    ("cwd", "TEXT", ""), ("git_branch", "TEXT", ""), ("git_repo_root", "TEXT", ""),
    ("billing_provider", "TEXT", ""), ("billing_base_url", "TEXT", ""), ("billing_mode", "TEXT", ""),
    ("estimated_cost_usd", "REAL", ""), ("actual_cost_usd", "REAL", ""), ("cost_status", "TEXT", ""),
    ("cost_source", "TEXT", ""), ("pricing_version", "TEXT", ""), ("title", "TEXT", ""),
    ("api_call_count", "INTEGER", "DEFAULT 0"), ("handoff_state", "TEXT", ""),
    ("handoff_platform", "TEXT", ""), ("handoff_error", "TEXT", ""),
    ("compression_failure_cooldown_until", "REAL", ""), ("compression_failure_error", "TEXT", ""),
    ("compression_fallback_streak", "INTEGER", "NOT NULL DEFAULT 0"), ("profile_name", "TEXT", ""),
    ("rewind_count", "INTEGER", "NOT NULL DEFAULT 0"), ("archived", "INTEGER", "NOT NULL DEFAULT 0"),
]
_MESSAGES = [
    ("id", "INTEGER", "PRIMARY KEY AUTOINCREMENT"), ("session_id", "TEXT", "NOT NULL REFERENCES sessions(id)"),
    ("role", "TEXT", "NOT NULL"), ("content", "TEXT", ""), ("tool_call_id", "TEXT", ""),
    ("tool_calls", "TEXT", ""), ("tool_name", "TEXT", ""), ("effect_disposition", "TEXT", ""),
    ("timestamp", "REAL", "NOT NULL"), ("token_count", "INTEGER", ""), ("finish_reason", "TEXT", ""),
    ("reasoning", "TEXT", ""), ("reasoning_content", "TEXT", ""), ("reasoning_details", "TEXT", ""),
    ("codex_reasoning_items", "TEXT", ""), ("codex_message_items", "TEXT", ""),
    ("platform_message_id", "TEXT", ""), ("observed", "INTEGER", "DEFAULT 0"),
    ("active", "INTEGER", "NOT NULL DEFAULT 1"), ("compacted", "INTEGER", "NOT NULL DEFAULT 0"),
    ("api_content", "TEXT", ""),
]
_MODEL_USAGE = [
    ("session_id", "TEXT", "NOT NULL REFERENCES sessions(id) ON DELETE CASCADE"), ("model", "TEXT", "NOT NULL"),
    ("billing_provider", "TEXT", "NOT NULL DEFAULT ''"), ("billing_base_url", "TEXT", "NOT NULL DEFAULT ''"),
    ("billing_mode", "TEXT", "NOT NULL DEFAULT ''"), ("task", "TEXT", "NOT NULL DEFAULT ''"),
    *[(c, "INTEGER", "NOT NULL DEFAULT 0") for c in ("api_call_count", "input_tokens", "output_tokens",
                                                      "cache_read_tokens", "cache_write_tokens", "reasoning_tokens")],
    ("estimated_cost_usd", "REAL", "NOT NULL DEFAULT 0"), ("actual_cost_usd", "REAL", "NOT NULL DEFAULT 0"),
    ("cost_status", "TEXT", ""), ("cost_source", "TEXT", ""), ("first_seen", "REAL", ""), ("last_seen", "REAL", ""),
]
_ASYNC_DELEGATIONS = [
    ("delegation_id", "TEXT", "PRIMARY KEY"), ("origin_session", "TEXT", "NOT NULL"),
    ("origin_ui_session_id", "TEXT", "NOT NULL DEFAULT ''"), ("parent_session_id", "TEXT", ""),
    ("state", "TEXT", "NOT NULL"), ("dispatched_at", "REAL", "NOT NULL"), ("completed_at", "REAL", ""),
    ("updated_at", "REAL", "NOT NULL"), ("event_json", "TEXT", ""), ("result_json", "TEXT", ""),
    ("delivery_state", "TEXT", "NOT NULL DEFAULT 'pending'"), ("delivery_attempts", "INTEGER", "NOT NULL DEFAULT 0"),
    ("delivered_at", "REAL", ""), ("owner_pid", "INTEGER", ""), ("owner_started_at", "INTEGER", ""),
    ("task_json", "TEXT", ""), ("delivery_claim", "TEXT", ""), ("delivery_claimed_at", "REAL", ""),
]

# table -> (columns, trailing table constraints)
TABLES: dict[str, tuple[list[tuple[str, str, str]], list[str]]] = {
    "schema_version": ([("version", "INTEGER", "NOT NULL")], []),
    "sessions": (_SESSIONS, ["FOREIGN KEY (parent_session_id) REFERENCES sessions(id)"]),
    "messages": (_MESSAGES, []),
    "session_model_usage": (
        _MODEL_USAGE,
        ["PRIMARY KEY (session_id, model, billing_provider, billing_base_url, billing_mode, task)"],
    ),
    "state_meta": ([("key", "TEXT", "PRIMARY KEY"), ("value", "TEXT", "")], []),
    "gateway_routing": (
        [("scope", "TEXT", "NOT NULL DEFAULT ''"), ("session_key", "TEXT", "NOT NULL"),
         ("entry_json", "TEXT", "NOT NULL"), ("updated_at", "REAL", "NOT NULL")],
        ["PRIMARY KEY (scope, session_key)"],
    ),
    "compression_locks": (
        [("session_id", "TEXT", "PRIMARY KEY"), ("holder", "TEXT", "NOT NULL"),
         ("acquired_at", "REAL", "NOT NULL"), ("expires_at", "REAL", "NOT NULL")],
        [],
    ),
    "async_delegations": (_ASYNC_DELEGATIONS, []),
}
"""Every reference table, in the reference's creation order."""

# (name, table, indexed expression list, WHERE clause or "", unique)
INDEXES: list[tuple[str, str, str, str, bool]] = [
    ("idx_sessions_source", "sessions", "source", "", False),
    ("idx_sessions_source_id", "sessions", "source, id", "", False),
    ("idx_sessions_parent", "sessions", "parent_session_id", "", False),
    ("idx_sessions_started", "sessions", "started_at DESC", "", False),
    ("idx_messages_session", "messages", "session_id, timestamp", "", False),
    ("idx_compression_locks_expires", "compression_locks", "expires_at", "", False),
    ("idx_session_model_usage_session", "session_model_usage", "session_id", "", False),
    ("idx_session_model_usage_model", "session_model_usage", "model", "", False),
    ("idx_async_delegations_delivery", "async_delegations", "delivery_state, completed_at", "", False),
    ("idx_messages_platform_msg_id", "messages", "session_id, platform_message_id",
     "platform_message_id IS NOT NULL", False),
    ("idx_messages_session_active", "messages", "session_id, active, timestamp", "", False),
    ("idx_messages_active_null", "messages", "active", "active IS NULL", False),
    ("idx_sessions_session_key", "sessions", "session_key, started_at DESC", "", False),
    ("idx_sessions_gateway_peer", "sessions", "source, user_id, chat_id, chat_type, thread_id, started_at DESC",
     "", False),
    ("idx_sessions_handoff_state", "sessions", "handoff_state, started_at", "", False),
    ("idx_sessions_title_unique", "sessions", "title", "title IS NOT NULL", True),
]
"""Every reference index (SQLite's automatic primary-key indexes aside)."""


def table_sql(name: str) -> str:
    """``CREATE TABLE`` for one reference table (raises ``KeyError`` for an unknown name)."""
    columns, constraints = TABLES[name]
    parts = [" ".join(p for p in (c, t, k) if p) for c, t, k in columns] + constraints
    return f"CREATE TABLE IF NOT EXISTS {name} (" + ", ".join(parts) + ")"


def index_sql(name: str, table: str, cols: str, where: str, unique: bool) -> str:
    """``CREATE [UNIQUE] INDEX`` for one reference index."""
    kind = "UNIQUE INDEX" if unique else "INDEX"
    return f"CREATE {kind} IF NOT EXISTS {name} ON {table}({cols})" + (f" WHERE {where}" if where else "")


def indexed_text(row: str) -> str:
    """The text the reference indexes for a ``messages`` row aliased ``row`` (``new``/``old``/a table alias)."""
    return " || ' ' || ".join(f"coalesce({row}.{c}, '')" for c in ("content", "tool_name", "tool_calls"))


def fts_table_sql(table: str) -> str:
    """``CREATE VIRTUAL TABLE`` for one of :data:`REFERENCE_FTS_TABLES`: one ``content`` column, its own
    copy of the text (not external content); the trigram one with ``tokenize='trigram'``."""
    tok = ", tokenize='trigram'" if table == "messages_fts_trigram" else ""
    return f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING fts5(content{tok})"


def fts_trigger_sql(table: str) -> dict[str, str]:
    """The three triggers that keep ``table`` in step with ``messages``, by trigger name: insert adds
    :func:`indexed_text`, delete removes the row, any update removes and re-adds it."""
    ins, dele, upd = REFERENCE_TRIGGERS[table]
    add = f"INSERT INTO {table}(rowid, content) VALUES (new.id, {indexed_text('new')});"
    drop = f"DELETE FROM {table} WHERE rowid = old.id;"
    return {
        ins: f"CREATE TRIGGER IF NOT EXISTS {ins} AFTER INSERT ON messages BEGIN {add} END",
        dele: f"CREATE TRIGGER IF NOT EXISTS {dele} AFTER DELETE ON messages BEGIN {drop} END",
        upd: f"CREATE TRIGGER IF NOT EXISTS {upd} AFTER UPDATE ON messages BEGIN {drop} {add} END",
    }


def fill_fts_sql(table: str) -> str:
    """Statement that indexes every ``messages`` row into an EMPTY reference full-text table."""
    return f"INSERT INTO {table}(rowid, content) SELECT m.id, {indexed_text('m')} FROM messages m"


def create_reference_schema(conn: sqlite3.Connection) -> None:
    """Create the whole reference schema (tables, indexes, both full-text tables, six triggers) in an
    EMPTY database and record :data:`REFERENCE_SCHEMA_VERSION`. Runs in the caller's transaction."""
    for name in TABLES:
        conn.execute(table_sql(name))
    for spec in INDEXES:
        conn.execute(index_sql(*spec))
    for table in REFERENCE_FTS_TABLES:
        conn.execute(fts_table_sql(table))
        for sql in fts_trigger_sql(table).values():
            conn.execute(sql)
    conn.execute("INSERT INTO schema_version(version) SELECT ? WHERE NOT EXISTS (SELECT 1 FROM schema_version)",
                 (REFERENCE_SCHEMA_VERSION,))


def restore_reference_fts(conn: sqlite3.Connection) -> list[str]:
    """Re-create the reference's full-text tables and triggers where they are missing (a database an
    earlier hermes-memory changed) and index every message into each table that was created or had
    lost a trigger -- what the reference itself does on open when a trigger is missing. Tables that
    exist with all their triggers are left alone. Returns the tables (re)filled."""
    have = {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger')")}
    filled = []
    for table in REFERENCE_FTS_TABLES:
        triggers = fts_trigger_sql(table)
        complete = table in have and all(t in have for t in triggers)
        conn.execute(fts_table_sql(table))
        for sql in triggers.values():
            conn.execute(sql)
        if not complete:
            conn.execute(f"DELETE FROM {table}")
            conn.execute(fill_fts_sql(table))
            filled.append(table)
    return filled
