"""Opening ``state.db``: one file, two programs (hermes-memory and the reference Hermes Agent).

The rule: hermes-memory never alters, drops, renames or reuses the name of an object the reference
schema owns (its tables, indexes, ``messages_fts``, ``messages_fts_trigram``, its six triggers, its
``schema_version``). Everything of ours is named ``hm_*`` (:mod:`hermes_memory.sessions.hmindex`).

:func:`current_report` runs first on every open, with reads only: when the file is already in our
current layout with nothing to catch up, the open writes nothing (no write lock, so it answers while
another program writes). Otherwise :func:`migrate` runs inside the open's write transaction, and
handles four cases:

* **empty file** -> the reference's current schema (:mod:`hermes_memory.sessions.refschema`,
  version 22) plus our ``hm_*`` objects; ``hm_meta.created_by = hermes-memory``. The reference
  opens it as its own, with nothing to migrate or re-index.
* **a reference database** (any version it shipped; 22 and 17 are tested) -> our ``hm_*`` objects
  are added beside its own and caught up (:func:`hmindex.sync`); none of its objects changes, its
  ``schema_version`` included. The one exception is a database older than every version we test
  that lacks a column our queries need: that column is added with the reference's own declaration
  (what the reference's reconciler does on its next open); nothing is ever dropped or rewritten.
* **a database an earlier hermes-memory changed** (layout 1: our old-shape ``messages_fts`` over
  the view ``messages_fts_src``, ``messages_cjk``, triggers ``hm_messages_fts_ai/ad/au``) -> those
  objects are removed once, the reference-shaped ``messages_fts`` / ``messages_fts_trigram`` and
  their triggers are restored and filled from ``messages`` (no message is touched), then ours are
  built. ``hm_meta.converted_from = 1`` records it.
* **our current layout** -> only :func:`hmindex.sync` (O(1) when nothing happened while we were away).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from hermes_memory.sessions import hmindex, hmstep, refschema

SCHEMA_VERSION = refschema.REFERENCE_SCHEMA_VERSION
"""``schema_version`` written to a NEW database (the reference's current version). An existing
database keeps its own."""

TOOL_ROW_FTS_CHARS = hmindex.TOOL_ROW_FTS_CHARS
"""Tool-result rows are indexed on their first 8,192 characters only (reference NEWEST)."""

SESSION_COLUMNS: list[tuple[str, str]] = [  # the session columns our code reads and writes
    ("id", "TEXT PRIMARY KEY"),
    ("source", "TEXT NOT NULL"),
    ("user_id", "TEXT"),
    ("model", "TEXT"),
    ("model_config", "TEXT"),
    ("system_prompt", "TEXT"),
    ("parent_session_id", "TEXT"),
    ("started_at", "REAL NOT NULL"),
    ("ended_at", "REAL"),
    ("end_reason", "TEXT"),
    ("message_count", "INTEGER DEFAULT 0"),
    ("tool_call_count", "INTEGER DEFAULT 0"),
    ("input_tokens", "INTEGER DEFAULT 0"),
    ("output_tokens", "INTEGER DEFAULT 0"),
    ("cache_read_tokens", "INTEGER DEFAULT 0"),
    ("cache_write_tokens", "INTEGER DEFAULT 0"),
    ("reasoning_tokens", "INTEGER DEFAULT 0"),
    ("cwd", "TEXT"),  # working directory and git branch of a coding-agent session (reference schema 22)
    ("git_branch", "TEXT"),
    ("billing_provider", "TEXT"),
    ("billing_base_url", "TEXT"),
    ("billing_mode", "TEXT"),
    ("estimated_cost_usd", "REAL"),
    ("actual_cost_usd", "REAL"),
    ("cost_status", "TEXT"),
    ("cost_source", "TEXT"),
    ("pricing_version", "TEXT"),
    ("title", "TEXT"),
    ("api_call_count", "INTEGER DEFAULT 0"),
]

MESSAGE_COLUMNS: list[tuple[str, str]] = [
    ("id", "INTEGER PRIMARY KEY AUTOINCREMENT"),
    ("session_id", "TEXT NOT NULL REFERENCES sessions(id)"),
    ("role", "TEXT NOT NULL"),
    ("content", "TEXT"),
    ("tool_call_id", "TEXT"),
    ("tool_calls", "TEXT"),
    ("tool_name", "TEXT"),
    ("timestamp", "REAL NOT NULL"),
    ("token_count", "INTEGER"),
    ("finish_reason", "TEXT"),
    ("reasoning", "TEXT"),
    ("reasoning_content", "TEXT"),
    ("reasoning_details", "TEXT"),
    ("codex_reasoning_items", "TEXT"),
    ("codex_message_items", "TEXT"),
]


OLD_LAYOUT_TRIGGERS = ("hm_messages_fts_ai", "hm_messages_fts_ad", "hm_messages_fts_au")
"""Triggers of hermes-memory's layout 1 (before ``hm_*`` objects lived beside the reference's)."""


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def _reconcile_columns(conn: sqlite3.Connection, table: str, columns: list[tuple[str, str]]) -> list[str]:
    """Add columns our queries need that the table lacks (only very old databases; 17 and 22 have all)."""
    have = _columns(conn, table)
    ref = {c: " ".join(p for p in (t, k) if p) for c, t, k in refschema.TABLES[table][0]}
    added = []
    for name, decl in columns:
        if name in have:
            continue
        decl = ref.get(name, decl)
        # ALTER TABLE cannot add PRIMARY KEY / NOT NULL without default / REFERENCES with default.
        if "PRIMARY KEY" in decl or "REFERENCES" in decl:
            decl = decl.split()[0]
        elif "NOT NULL" in decl and "DEFAULT" not in decl:
            decl = decl.replace(" NOT NULL", "")
        conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {decl}")
        added.append(f"{table}.{name}")
    return added


def _old_layout(objects: dict[str, tuple[str, str | None]]) -> bool:
    fts = objects.get("messages_fts")
    return (
        "messages_fts_src" in objects
        or "messages_cjk" in objects
        or any(t in objects for t in OLD_LAYOUT_TRIGGERS)
        or (fts is not None and "messages_fts_src" in (fts[1] or ""))
    )


def _convert_old_layout(conn: sqlite3.Connection, objects: dict[str, tuple[str, str | None]]) -> list[str]:
    """Remove layout-1 objects (ours) and restore the reference's full-text objects. Returns the
    reference tables refilled."""
    for name in OLD_LAYOUT_TRIGGERS:
        conn.execute(f'DROP TRIGGER IF EXISTS "{name}"')
    conn.execute("DROP TABLE IF EXISTS messages_cjk")
    fts = objects.get("messages_fts")
    if fts is not None and "messages_fts_src" in (fts[1] or ""):
        conn.execute("DROP TABLE messages_fts")  # our old-shape table under the reference's name
    conn.execute("DROP VIEW IF EXISTS messages_fts_src")
    filled = refschema.restore_reference_fts(conn)
    conn.execute(hmindex.META_SQL)
    hmindex.meta_set(conn, "converted_from", 1)
    return filled


def current_report(conn: sqlite3.Connection) -> dict[str, Any] | None:
    """What :func:`migrate` (and the open's index steps after it) would report when there is nothing
    to change, found with READS only; ``None`` when anything must be written (a new file, a
    reference or layout-1 database, a missing column, an index to build, catch up, verify, move or
    repair: :func:`hmstep.in_step`). The caller runs it in one read transaction; it takes no write
    lock, so it answers while another process holds a write transaction (``BEGIN IMMEDIATE`` or,
    under WAL, ``BEGIN EXCLUSIVE``). Raises ``sqlite3.Error`` as a read of the file would."""
    objects = {n: (t, s) for t, n, s in conn.execute("SELECT type, name, sql FROM sqlite_master")}
    if any(t not in objects for t in ("schema_version", "sessions", "messages", hmindex.META)) or _old_layout(objects):
        return None
    for table, columns in (("sessions", SESSION_COLUMNS), ("messages", MESSAGE_COLUMNS)):
        have = _columns(conn, table)
        if any(name not in have for name, _decl in columns):
            return None
    if not hmstep.in_step(conn):
        return None
    row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
    return {
        "layout": "current",
        "from_version": row[0] if row else None,
        "added_columns": [],
        "restored_reference_fts": [],
        "index": dict(hmstep.NOTHING_DONE),
        "fts_rebuilt": False,
    }


def migrate(conn: sqlite3.Connection) -> dict[str, Any]:
    """Prepare the open database for hermes-memory (see the module doc). Runs inside the caller's
    transaction; idempotent.

    Returns ``{"layout": "new" | "reference" | "converted" | "current", "from_version": int | None,
    "added_columns": [...], "restored_reference_fts": [...], "index": hmindex.sync() report,
    "fts_rebuilt": bool}`` -- ``fts_rebuilt`` is True only when our own index was found damaged and
    rebuilt (never for a first build or a catch-up).
    """
    objects = {n: (t, s) for t, n, s in conn.execute("SELECT type, name, sql FROM sqlite_master")}
    restored: list[str] = []
    if "sessions" not in objects and "messages" not in objects:
        layout = "new"
        from_version = None
        refschema.create_reference_schema(conn)
        conn.execute(hmindex.META_SQL)
        hmindex.meta_set(conn, "created_by", "hermes-memory")
    else:
        for table in ("schema_version", "sessions", "messages"):
            if table not in objects:
                conn.execute(refschema.table_sql(table))
        row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
        from_version = row[0] if row else None
        if _old_layout(objects):
            layout = "converted"
            restored = _convert_old_layout(conn, objects)
        else:
            layout = "current" if hmindex.META in objects else "reference"
    added = _reconcile_columns(conn, "sessions", SESSION_COLUMNS)
    added += _reconcile_columns(conn, "messages", MESSAGE_COLUMNS)
    index = hmindex.sync(conn)
    return {
        "layout": layout,
        "from_version": from_version,
        "added_columns": added,
        "restored_reference_fts": restored,
        "index": index,
        "fts_rebuilt": index["action"] == "rebuilt",
    }
