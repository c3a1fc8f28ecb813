"""The PostgreSQL schema of :class:`~hermes_memory.sessions.pg.PgSessionDB`: versioned migrations,
applied on open under an advisory lock.

* :data:`MIGRATIONS` is an append-only list of :class:`Migration` (version, name, SQL). A released
  migration is never edited: a change of schema is a new entry with the next version.
* :func:`migrate` runs on every open, in ONE transaction that first takes the transaction-level
  advisory lock :data:`MIGRATION_LOCK_KEY` (``pg_advisory_xact_lock``): processes that open the same
  database at once queue there, the first applies what is missing, the others then find nothing to
  do. Each applied version is a row of ``hm_schema_migrations`` (version, name, applied_at in Unix
  epoch seconds). A database whose newest version is above :data:`SCHEMA_VERSION` (written by a
  newer hermes-memory) is refused with :class:`~hermes_memory.errors.SessionStoreError`; nothing is
  changed.

The tables mirror the SQLite ``sessions`` and ``messages`` of the reference schema
(:mod:`hermes_memory.sessions.refschema`, Hermes Agent 0.19.0): the same columns in the same order,
``TEXT`` as ``text COLLATE "C"`` (byte order, as SQLite compares text, so ordering, ties and title
ranges agree), ``REAL`` as ``double precision`` (epoch-seconds floats come back as the same
floats), ``INTEGER`` as ``bigint``; ``messages.id`` is an identity column (ids come from the
database, safe with many writers; an explicit id may still be given, as
:meth:`~hermes_memory.sessions.pg.copy.CopyMethods.copy_session` does).

Search columns for the full-text slice (docs/reference.md §7 is the tool they serve):

* ``messages.search_vector``: a generated ``tsvector``: content with weight A (``english``
  configuration, stemmed; tool-result rows on their first :data:`TOOL_ROW_FTS_CHARS` characters,
  as on SQLite; other rows on their first :data:`CONTENT_FTS_CHARS` characters, which keeps every
  vector under PostgreSQL's 1 MB tsvector limit), the tool name with weight B (``simple``, not
  stemmed) and the tool calls' JSON with weight C; a GIN index ``hm_messages_search``.
* ``hm_messages_content_trgm``: a ``pg_trgm`` GIN index on the whole ``content`` (substrings, CJK,
  short tokens), and ``hm_sessions_title_trgm`` on ``sessions.title``.

Later versions: 2 and 4 reshape the search columns and indexes (:mod:`~hermes_memory.sessions.pg.search_schema`),
3 adds the previous turn's text (:mod:`~hermes_memory.sessions.pg.context_schema`), 5 bounds the
GIN indexes' pending lists (:data:`~hermes_memory.sessions.pg.search_schema.PENDING_LIST_KB`), 6 counts
the transactions that change messages (:data:`~hermes_memory.sessions.pg.search_schema.CHANGES_MIGRATION_SQL`),
7 indexes the recency window (:data:`~hermes_memory.sessions.pg.search_schema.WINDOW_MIGRATION_SQL`),
8 indexes JSON text with its escapes decoded (:data:`~hermes_memory.sessions.pg.search_schema.DECODED_MIGRATION_SQL`),
9 extends the CJK indexes to the decoded tool-call text (:data:`~hermes_memory.sessions.pg.search_schema.CALLS_CJK_MIGRATION_SQL`),
10 makes them read the decoded content too (:data:`~hermes_memory.sessions.pg.search_schema.CONTENT_CJK_MIGRATION_SQL`),
11 decodes content behind the ``\\x1ejson:`` prefix and 12 decodes JSON as SQLite does
(:mod:`~hermes_memory.sessions.pg.decoded_schema`: both replace ``hm_json_text``; the rows it changes
are recomputed after the migration, in bounded steps, by :func:`~hermes_memory.sessions.pg.decoded_schema.recompute`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from hermes_memory.errors import SessionStoreError
from hermes_memory.sessions.pg import context_schema, decoded_schema, search_schema

MIGRATION_LOCK_KEY = 0x68_6D_73_65_73_73  # "hmsess": the advisory lock around migrations
"""``pg_advisory_xact_lock`` key held while migrating (advisory locks are per database)."""

TOOL_ROW_FTS_CHARS = 8192
"""Tool-result rows are indexed on their first 8,192 characters (as the SQLite index, reference NEWEST)."""
CONTENT_FTS_CHARS = 100_000
"""Other rows are indexed on their first 100,000 characters in ``search_vector`` (the trigram
index covers all of ``content``): the bound keeps a vector under PostgreSQL's 1 MB tsvector limit."""

_T = 'text COLLATE "C"'


@dataclass(frozen=True)
class Migration:
    """One schema version: ``sql`` (one or more statements) moves the database from
    ``version - 1`` to ``version``."""

    version: int
    name: str
    sql: str


_V1 = f"""
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE sessions (
    id {_T} PRIMARY KEY,
    source {_T} NOT NULL,
    user_id {_T},
    session_key {_T},
    chat_id {_T},
    chat_type {_T},
    thread_id {_T},
    display_name {_T},
    origin_json {_T},
    expiry_finalized bigint DEFAULT 0,
    model {_T},
    model_config {_T},
    system_prompt {_T},
    parent_session_id {_T} REFERENCES sessions(id),
    started_at double precision NOT NULL,
    ended_at double precision,
    end_reason {_T},
    message_count bigint DEFAULT 0,
    tool_call_count bigint DEFAULT 0,
    input_tokens bigint DEFAULT 0,
    output_tokens bigint DEFAULT 0,
    cache_read_tokens bigint DEFAULT 0,
    cache_write_tokens bigint DEFAULT 0,
    reasoning_tokens bigint DEFAULT 0,
    cwd {_T},
    git_branch {_T},
    git_repo_root {_T},
    billing_provider {_T},
    billing_base_url {_T},
    billing_mode {_T},
    estimated_cost_usd double precision,
    actual_cost_usd double precision,
    cost_status {_T},
    cost_source {_T},
    pricing_version {_T},
    title {_T},
    api_call_count bigint DEFAULT 0,
    handoff_state {_T},
    handoff_platform {_T},
    handoff_error {_T},
    compression_failure_cooldown_until double precision,
    compression_failure_error {_T},
    compression_fallback_streak bigint NOT NULL DEFAULT 0,
    profile_name {_T},
    rewind_count bigint NOT NULL DEFAULT 0,
    archived bigint NOT NULL DEFAULT 0
);
CREATE INDEX idx_sessions_source ON sessions(source);
CREATE INDEX idx_sessions_source_id ON sessions(source, id);
CREATE INDEX idx_sessions_parent ON sessions(parent_session_id);
CREATE INDEX idx_sessions_started ON sessions(started_at DESC);
CREATE INDEX idx_sessions_session_key ON sessions(session_key, started_at DESC);
CREATE UNIQUE INDEX idx_sessions_title_unique ON sessions(title) WHERE title IS NOT NULL;
CREATE INDEX hm_sessions_title_trgm ON sessions USING gin (title gin_trgm_ops);

CREATE TABLE messages (
    id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    session_id {_T} NOT NULL REFERENCES sessions(id),
    role {_T} NOT NULL,
    content {_T},
    tool_call_id {_T},
    tool_calls {_T},
    tool_name {_T},
    effect_disposition {_T},
    timestamp double precision NOT NULL,
    token_count bigint,
    finish_reason {_T},
    reasoning {_T},
    reasoning_content {_T},
    reasoning_details {_T},
    codex_reasoning_items {_T},
    codex_message_items {_T},
    platform_message_id {_T},
    observed bigint DEFAULT 0,
    active bigint NOT NULL DEFAULT 1,
    compacted bigint NOT NULL DEFAULT 0,
    api_content {_T},
    search_vector tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english'::regconfig, left(coalesce(content, ''),
            CASE WHEN role = 'tool' THEN {TOOL_ROW_FTS_CHARS} ELSE {CONTENT_FTS_CHARS} END)), 'A')
        || setweight(to_tsvector('simple'::regconfig, coalesce(tool_name, '')), 'B')
        || setweight(to_tsvector('english'::regconfig, left(coalesce(tool_calls, ''), {CONTENT_FTS_CHARS})), 'C')
    ) STORED
);
CREATE INDEX idx_messages_session ON messages(session_id, timestamp);
CREATE INDEX hm_messages_session_id ON messages(session_id, id);
CREATE INDEX hm_messages_search ON messages USING gin (search_vector);
CREATE INDEX hm_messages_content_trgm ON messages USING gin (content gin_trgm_ops);

-- children whose parent was not copied yet (copy_session): the link is made when the parent arrives
CREATE TABLE hm_pending_parents (
    child_id {_T} PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    parent_id {_T} NOT NULL
);
CREATE INDEX hm_pending_parents_parent ON hm_pending_parents(parent_id);
"""

MIGRATIONS: list[Migration] = [
    Migration(1, "sessions, messages, search columns (tsvector + GIN, pg_trgm), pending parent links", _V1),
    Migration(2, search_schema.MIGRATION_NAME, search_schema.MIGRATION_SQL),  # pg/search_schema.py says why
    Migration(3, context_schema.MIGRATION_NAME, context_schema.MIGRATION_SQL),  # pg/context_schema.py
    Migration(4, search_schema.GLUED_MIGRATION_NAME, search_schema.GLUED_MIGRATION_SQL),  # pg/search_schema.py
    Migration(5, search_schema.PENDING_MIGRATION_NAME, search_schema.PENDING_MIGRATION_SQL),  # pg/search_schema.py
    Migration(6, search_schema.CHANGES_MIGRATION_NAME, search_schema.CHANGES_MIGRATION_SQL),  # pg/search_schema.py
    Migration(7, search_schema.WINDOW_MIGRATION_NAME, search_schema.WINDOW_MIGRATION_SQL),  # pg/search_schema.py
    Migration(8, search_schema.DECODED_MIGRATION_NAME, search_schema.DECODED_MIGRATION_SQL),  # pg/search_schema.py
    Migration(9, search_schema.CALLS_CJK_MIGRATION_NAME, search_schema.CALLS_CJK_MIGRATION_SQL),  # pg/search_schema.py
    Migration(10, search_schema.CONTENT_CJK_MIGRATION_NAME, search_schema.CONTENT_CJK_MIGRATION_SQL),  # pg/search_schema.py
    Migration(11, search_schema.PREFIXED_MIGRATION_NAME, decoded_schema.PREFIXED_MIGRATION_SQL),  # pg/decoded_schema.py
    Migration(12, decoded_schema.PARITY_MIGRATION_NAME, decoded_schema.PARITY_MIGRATION_SQL),  # pg/decoded_schema.py
]
"""Every schema version, oldest first (append only)."""

SCHEMA_VERSION = MIGRATIONS[-1].version
"""The newest version this code knows."""

HIDDEN_COLUMNS = frozenset({"search_vector", context_schema.COLUMN})
"""Columns of ``messages`` that no message dict carries (SQLite has none of them)."""

_VERSIONS_SQL = (
    "CREATE TABLE IF NOT EXISTS hm_schema_migrations (version integer PRIMARY KEY, name text NOT NULL, "
    "applied_at double precision NOT NULL)"
)


def migrate(conn: Any) -> dict[str, Any]:
    """Bring the database to :data:`SCHEMA_VERSION` (see the module doc). ``conn``: a psycopg
    connection not in a transaction; commits. Returns ``{"from_version": int (0 for an empty
    database), "to_version": int, "applied": [versions applied by this call]}``. Raises
    :class:`SessionStoreError` for a database newer than this code; psycopg errors propagate (the
    caller wraps them) and leave the database unchanged (one transaction)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK_KEY,))
        conn.execute(_VERSIONS_SQL)
        have = {int(r[0]) for r in conn.execute("SELECT version FROM hm_schema_migrations").fetchall()}
        current = max(have, default=0)
        if current > SCHEMA_VERSION:
            raise SessionStoreError(
                f"the PostgreSQL session database is at schema version {current}, newer than this "
                f"hermes-memory understands ({SCHEMA_VERSION}); upgrade hermes-memory on this host."
            )
        applied = []
        for m in MIGRATIONS:
            if m.version in have:
                continue
            conn.execute(m.sql)
            conn.execute(
                "INSERT INTO hm_schema_migrations (version, name, applied_at) VALUES (%s, %s, %s)",
                (m.version, m.name, time.time()),
            )
            applied.append(m.version)
    return {"from_version": current, "to_version": max(current, SCHEMA_VERSION), "applied": applied}
