"""FIXTURE: the previous hermes-memory schema code ("layout 1"), kept verbatim to produce the databases
that version left behind (our old-shape ``messages_fts`` over ``messages_fts_src``, ``messages_cjk``,
triggers ``hm_messages_fts_*``), so the one-time conversion is tested on the real thing. Not used by
the product.

Original docstring: schema of ``state.db`` and its versioned migrations.

Core tables and column names follow the reference agent's ``hermes_state.py`` (docs/reference.md §6),
so a reference ``state.db`` opens here and ours opens there. On every open
:func:`migrate` (1) creates missing tables, (2) adds any missing core column whatever the recorded
version (a v2 database gains ``title`` and ``api_call_count``), (3) makes sure the full-text
objects are ours -- an external-content FTS5 table ``messages_fts(content, tool_name, tool_calls)``
over the view ``messages_fts_src`` plus the CJK trigram side table ``messages_cjk`` -- replacing
legacy FTS tables/triggers and backfilling the index from ``messages`` when they were missing or
different, and (4) records :data:`SCHEMA_VERSION` in ``schema_version``.
"""

from __future__ import annotations

import sqlite3

from hermes_memory.sessions.fts import CJK_GLOB

SCHEMA_VERSION = 11
"""Version written to ``schema_version``. 11 = the reference's first version with tool-aware FTS."""

TOOL_ROW_FTS_CHARS = 8192
"""Tool-result rows are indexed on their first 8,192 characters only (reference NEWEST)."""

SESSION_COLUMNS: list[tuple[str, str]] = [
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


def _table_sql(name: str, columns: list[tuple[str, str]], extra: str = "") -> str:
    cols = ",\n    ".join(f"{c} {t}" for c, t in columns)
    return f"CREATE TABLE IF NOT EXISTS {name} (\n    {cols}{extra}\n)"


BASE_SQL = [
    "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)",
    _table_sql("sessions", SESSION_COLUMNS, ",\n    FOREIGN KEY (parent_session_id) REFERENCES sessions(id)"),
    _table_sql("messages", MESSAGE_COLUMNS),
    "CREATE TABLE IF NOT EXISTS state_meta (key TEXT PRIMARY KEY, value TEXT)",
]

INDEX_SQL = [
    "CREATE INDEX IF NOT EXISTS idx_sessions_source ON sessions(source)",
    "CREATE INDEX IF NOT EXISTS idx_sessions_parent ON sessions(parent_session_id)",
    "CREATE INDEX IF NOT EXISTS idx_sessions_started ON sessions(started_at DESC)",
    "CREATE INDEX IF NOT EXISTS idx_messages_session ON messages(session_id, timestamp)",
    "CREATE UNIQUE INDEX IF NOT EXISTS idx_sessions_title_unique ON sessions(title) WHERE title IS NOT NULL",
]

# What the main index sees of a message. Insert, update and delete triggers all use exactly
# this expression, so the delete removes exactly what was indexed (failure case B24).
_FTS_CONTENT_EXPR = (
    "CASE WHEN {p}.role = 'tool' THEN substr({p}.content, 1, " + str(TOOL_ROW_FTS_CHARS) + ") ELSE {p}.content END"
)


def _fts_content(prefix: str) -> str:
    return _FTS_CONTENT_EXPR.format(p=prefix)


FTS_VIEW_SQL = (
    "CREATE VIEW messages_fts_src AS SELECT id, "
    + _fts_content("messages")
    + " AS content, tool_name, tool_calls FROM messages"
)
# porter(unicode61 remove_diacritics 2): English stemming (adopt ~ adoption ~ adopting) over
# Unicode-aware, accent-folding tokens. External content: the index stores no copy of the text.
FTS_TABLE_SQL = (
    "CREATE VIRTUAL TABLE messages_fts USING fts5(content, tool_name, tool_calls, "
    "content='messages_fts_src', content_rowid='id', "
    "tokenize='porter unicode61 remove_diacritics 2')"
)
# BM25 column weights: body 1.0, tool name 0.8, tool-call JSON 0.4 (arguments are noisy).
FTS_RANK_SQL = "INSERT INTO messages_fts(messages_fts, rank) VALUES('rank', 'bm25(1.0, 0.8, 0.4)')"
# CJK side table: trigram tokens, own copy of the text, only for rows that contain CJK.
CJK_TABLE_SQL = "CREATE VIRTUAL TABLE messages_cjk USING fts5(content, tool_name, tokenize='trigram')"

_HAS_CJK = "(coalesce({p}.content, '') || ' ' || coalesce({p}.tool_name, '')) GLOB '" + CJK_GLOB + "'"

TRIGGER_SQL = {
    "hm_messages_fts_ai": f"""
CREATE TRIGGER hm_messages_fts_ai AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content, tool_name, tool_calls)
        VALUES (new.id, {_fts_content('new')}, new.tool_name, new.tool_calls);
    INSERT INTO messages_cjk(rowid, content, tool_name)
        SELECT new.id, {_fts_content('new')}, new.tool_name WHERE {_HAS_CJK.format(p='new')};
END""",
    "hm_messages_fts_ad": f"""
CREATE TRIGGER hm_messages_fts_ad AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content, tool_name, tool_calls)
        VALUES ('delete', old.id, {_fts_content('old')}, old.tool_name, old.tool_calls);
    DELETE FROM messages_cjk WHERE rowid = old.id;
END""",
    "hm_messages_fts_au": f"""
CREATE TRIGGER hm_messages_fts_au AFTER UPDATE OF content, tool_name, tool_calls, role ON messages
WHEN old.content IS NOT new.content OR old.tool_name IS NOT new.tool_name
  OR old.tool_calls IS NOT new.tool_calls OR old.role IS NOT new.role
BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content, tool_name, tool_calls)
        VALUES ('delete', old.id, {_fts_content('old')}, old.tool_name, old.tool_calls);
    INSERT INTO messages_fts(rowid, content, tool_name, tool_calls)
        VALUES (new.id, {_fts_content('new')}, new.tool_name, new.tool_calls);
    DELETE FROM messages_cjk WHERE rowid = old.id;
    INSERT INTO messages_cjk(rowid, content, tool_name)
        SELECT new.id, {_fts_content('new')}, new.tool_name WHERE {_HAS_CJK.format(p='new')};
END""",
}


def _norm(sql: str | None) -> str:
    return " ".join((sql or "").split())


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def _reconcile_columns(conn: sqlite3.Connection, table: str, columns: list[tuple[str, str]]) -> list[str]:
    have = _columns(conn, table)
    added = []
    for name, decl in columns:
        if name in have:
            continue
        # ALTER TABLE cannot add PRIMARY KEY / REFERENCES-with-default; core keys always exist.
        decl = decl.replace(" NOT NULL", "").replace("PRIMARY KEY", "").replace("AUTOINCREMENT", "")
        if "REFERENCES" in decl:
            decl = "TEXT"
        conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {decl}")
        added.append(f"{table}.{name}")
    return added


def _fts_objects_current(conn: sqlite3.Connection) -> bool:
    rows = {
        name: sql
        for name, sql in conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE name IN "
            "('messages_fts', 'messages_fts_src', 'messages_cjk') OR (type='trigger' AND tbl_name='messages')"
        )
    }
    if _norm(rows.get("messages_fts")) != _norm(FTS_TABLE_SQL):
        return False
    if _norm(rows.get("messages_fts_src")) != _norm(FTS_VIEW_SQL):
        return False
    if _norm(rows.get("messages_cjk")) != _norm(CJK_TABLE_SQL):
        return False
    triggers = {n for n in rows if n not in ("messages_fts", "messages_fts_src", "messages_cjk")}
    if triggers != set(TRIGGER_SQL):
        return False
    return all(_norm(rows[n]) == _norm(sql) for n, sql in TRIGGER_SQL.items())


def _rebuild_fts(conn: sqlite3.Connection) -> None:
    """Drop any legacy or outdated FTS objects, create ours and backfill them from ``messages``."""
    for (name,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type='trigger' AND tbl_name='messages'"
    ).fetchall():
        conn.execute(f'DROP TRIGGER IF EXISTS "{name}"')
    for (name,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND sql LIKE 'CREATE VIRTUAL TABLE%' "
        "AND (name LIKE 'messages\\_fts%' ESCAPE '\\' OR name = 'messages_cjk')"
    ).fetchall():
        conn.execute(f'DROP TABLE IF EXISTS "{name}"')
    conn.execute("DROP VIEW IF EXISTS messages_fts_src")
    conn.execute(FTS_VIEW_SQL)
    conn.execute(FTS_TABLE_SQL)
    conn.execute(FTS_RANK_SQL)
    conn.execute(CJK_TABLE_SQL)
    for sql in TRIGGER_SQL.values():
        conn.execute(sql)
    conn.execute("INSERT INTO messages_fts(messages_fts) VALUES('rebuild')")
    conn.execute(
        "INSERT INTO messages_cjk(rowid, content, tool_name) SELECT m.id, "
        + _fts_content("m")
        + ", m.tool_name FROM messages m WHERE "
        + _HAS_CJK.format(p="m")
    )


def migrate(conn: sqlite3.Connection) -> dict[str, object]:
    """Bring the open database to :data:`SCHEMA_VERSION`. Runs inside the caller's transaction.

    Returns ``{"from_version": int | None, "added_columns": [...], "fts_rebuilt": bool}``.
    Idempotent: a second call changes nothing.
    """
    for sql in BASE_SQL:
        conn.execute(sql)
    row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
    from_version = row[0] if row else None
    added = _reconcile_columns(conn, "sessions", SESSION_COLUMNS)
    added += _reconcile_columns(conn, "messages", MESSAGE_COLUMNS)
    for sql in INDEX_SQL:
        try:
            conn.execute(sql)
        except sqlite3.IntegrityError:
            # an imported reference DB with duplicate titles: keep it usable without the unique index
            pass
    rebuilt = False
    if not _fts_objects_current(conn):
        _rebuild_fts(conn)
        rebuilt = True
    if from_version is None:
        conn.execute("INSERT INTO schema_version(version) VALUES (?)", (SCHEMA_VERSION,))
    elif from_version < SCHEMA_VERSION:
        conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION,))
    return {"from_version": from_version, "added_columns": added, "fts_rebuilt": rebuilt}
