"""Decoded JSON text on PostgreSQL as SQLite's :func:`hermes_memory.sessions.jsontext.decoded` reads it
(schema version 12), and the bounded recomputation of the rows whose search values a new
``hm_json_text`` changes (schema versions 11 and 12).

**Recomputation.** ``search_vector`` and the CJK indexes read ``hm_json_text(content)`` and
``hm_json_text(tool_calls)``; a migration that replaces the function leaves every stored row with
the values of the old one until the row is written again. Migration 11 rewrote those rows in the
migration transaction itself (``UPDATE messages SET content = content`` on every row holding a
backslash): measured with bench/pg_json_text_migration.py (docs/benchmarks.md, "PostgreSQL
schema 11 on a big database"), 424 s at 200,000 messages (90,001 rewritten), during which every
other process opening the database waited on the migration lock and edits of old rows waited
out their lock timeout (30 s) and failed. Now a migration that replaces the function only
marks the rows to do (:data:`MARK_SQL`: ``hm_meta.json_text_next`` = ``"<next id> <last id>"``,
the ids that existed then) and :func:`recompute` rewrites them after the migration, in
:data:`RECOMPUTE_CHUNK`-id steps of one transaction each, moving the mark forward in the same
transaction (a process killed mid-way leaves the mark where its last committed step put it; the
next open resumes there). A step rewrites only rows holding a backslash (no other value of
``hm_json_text`` changes), as ``SET tool_calls = tool_calls``: the generated ``search_vector`` is
recomputed and, its value changing, the update is not HOT, so every index on ``hm_json_text(...)``
gets the row's new entry; no trigger of migration 3 fires (they watch content, role, session and
time), so no stored value changes, ``hm_context`` included. Rows written after the migration are
computed by the new function when written. Until a row's step has run, search finds it by the
text the previous function gave it (as before the upgrade). Only one process works at a time (the
mark is taken ``FOR UPDATE SKIP LOCKED``; another opener finds it taken and goes on at once), and
a write to a row of the current step waits for that step only.

**Parity** (migration 12, :data:`JSON_TEXT_FUNCTION`). Schema 11's function returned content
behind the ``\\x1ejson:`` prefix as stored unless its JSON was a list or object, and decoded a JSON
string nested in a string only one level with ``jsonb::text`` (which writes newlines, quotes and
backslashes escaped again, so ``first\\nwalrus`` two levels down gave no word ``walrus``). Schema 12's
function reads JSON as SQLite's ``json_tree`` does: object keys and leaf values in document order
(duplicate keys kept), separated by spaces, a string leaf that is itself JSON holding a backslash and
starting with ``{``/``[`` read the same way once more, ``true``/``false``/``null`` as SQLite writes
them (``1``, ``0``, nothing), a text holding ``\\u0000`` or a lone surrogate indexed as stored.
Where it still differs from SQLite (docs/architecture.md, "The same sessions on PostgreSQL"):

* tool calls stored as a bare JSON string (``"caf\\u00e9"``, not a list): SQLite decodes them,
  PostgreSQL indexes them as stored. The one function serves content and tool calls, and content
  that is not JSON behind the prefix or starting with ``{``/``[`` must stay as stored on both
  engines; telling the two columns apart means a second function in ``search_vector``'s expression,
  which PostgreSQL can only change by re-creating the column (a rewrite of ``messages`` under an
  exclusive lock, as migration 8 was). The reference and this store write tool calls as lists.
* numbers in exponent form or with more than 15 significant digits (``1e20``, ``0.1000000000000001``):
  SQLite writes its own rounding (``1.0e+20``), PostgreSQL the shortest exact form (``1e+20``), so
  those words differ; plain integers and decimals agree (``1.50`` is ``1.5`` on both).
* JSON nested deeper than :data:`JSON_MAX_DEPTH` levels: indexed as stored (SQLite decodes it).
* the reference agent's ``\\x00json:`` prefix: PostgreSQL text cannot hold NUL.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import psycopg

from hermes_memory.sessions.pg.search_schema import JSON_TEXT_MAX_CHARS, PREFIXED_JSON_TEXT_FUNCTION

logger = logging.getLogger(__name__)

RECOMPUTE_CHUNK = 2_000
"""Ids per recomputation step (one transaction), as migration 3's context fill
(:data:`hermes_memory.sessions.pg.context_schema.BACKFILL_CHUNK`)."""
STEP_LOCK_TIMEOUT_MS = 5_000
"""The longest a step waits for a row another transaction holds (``SET LOCAL lock_timeout``); then
:func:`recompute` stops and leaves the rest to the next open, so an open never hangs behind a
writer's long transaction (a ``batch()``) nor fails because of one."""
MARK_KEY = "json_text_next"
"""``hm_meta`` key of the pending recomputation: ``"<next id> <last id>"``; absent when none is pending."""
MARK_SQL = (
    f"INSERT INTO hm_meta (key, value) VALUES ('{MARK_KEY}', '0 ' || (SELECT coalesce(max(id), 0) FROM messages)) "
    "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value;\n"
)
"""Marks every existing row for recomputation (ids 0 through the largest now); a mark already
pending is replaced, as the new range covers it."""
PREFIXED_MIGRATION_SQL = PREFIXED_JSON_TEXT_FUNCTION + MARK_SQL
"""Migration 11: ``hm_json_text`` replaced by
:data:`~hermes_memory.sessions.pg.search_schema.PREFIXED_JSON_TEXT_FUNCTION`, the rows marked for
:func:`recompute`. Until this version it rewrote those rows (and ran ``ANALYZE``) in the
migration transaction; a database it already upgraded that way has nothing pending, and one
upgraded now ends with the same stored rows and search values once :func:`recompute` is done."""
JSON_MAX_DEPTH = 32
"""JSON nested deeper than this (containers below this many levels) is indexed as stored. The walk
(``json_each`` per container) reads each container's text again at every level, so its cost is the
value's length times its depth: measured on a 574 kB value of 300 arrays nested 900 deep, 25 s
unbounded, 0.53 s bounded at 32 levels (schema 11's ``jsonb`` walk: 7.5-8.8 s); a 678 kB list of
20,000 small objects takes 0.38 s (schema 11: 0.27 s). Tool calls and tools' JSON output nest a few levels (a call's arguments:
5); SQLite decodes up to its own limit of 1,000 levels."""
_NEEDS = "(strpos(content, chr(92)) > 0 OR strpos(tool_calls, chr(92)) > 0)"

JSON_TEXT_FUNCTION = f"""
CREATE OR REPLACE FUNCTION hm_json_nodes(j json) RETURNS TABLE (key text, kind text, val json, depth int)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $hm$
WITH RECURSIVE n(path, key, val) AS (
    SELECT ARRAY[]::int[], NULL::text, j
    UNION ALL
    SELECT n.path || c.ord::int, c.key, c.val FROM n, LATERAL (
        SELECT e.key, e.value AS val, e.ord FROM json_each(CASE WHEN json_typeof(n.val) = 'object' THEN n.val ELSE '{{}}' END)
            WITH ORDINALITY AS e(key, value, ord)
        UNION ALL
        SELECT NULL, e.value, e.ord FROM json_array_elements(CASE WHEN json_typeof(n.val) = 'array' THEN n.val ELSE '[]' END)
            WITH ORDINALITY AS e(value, ord)
    ) AS c
    WHERE cardinality(n.path) < {JSON_MAX_DEPTH}
)
SELECT key, json_typeof(val), val, cardinality(path) FROM n ORDER BY path
$hm$;

CREATE OR REPLACE FUNCTION hm_json_atom(kind text, val json) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $hm$
SELECT CASE kind
    WHEN 'string' THEN val #>> '{{}}'
    WHEN 'number' THEN CASE
        WHEN val::text ~ '^-?[0-9]+$' THEN val::text
        WHEN abs(val::text::float8) < 1e15 AND val::text::float8 = trunc(val::text::float8)
            THEN trunc(val::text::float8)::bigint::text || '.0'
        ELSE val::text::float8::text END
    WHEN 'boolean' THEN CASE WHEN val::text = 'true' THEN '1' ELSE '0' END
    ELSE '' END
$hm$;

CREATE OR REPLACE FUNCTION hm_json_text(t text) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $hm$
DECLARE
    body text := t;
    nested json;
    r record;
    s text;
    parts text[] := ARRAY[]::text[];
BEGIN
    IF t IS NULL OR strpos(t, chr(92)) = 0 OR octet_length(t) > {JSON_TEXT_MAX_CHARS} THEN
        RETURN t;
    END IF;
    IF left(t, 6) = chr(30) || 'json:' THEN
        body := substr(t, 7);  -- list/dict content behind our prefix
    ELSIF left(ltrim(t), 1) NOT IN ('{{', '[') THEN
        RETURN t;
    END IF;
    IF strpos(t, chr(92) || 'u0000') > 0 THEN
        RETURN t;  -- as SQLite: its text would end at the NUL
    END IF;
    BEGIN
        FOR r IN SELECT * FROM hm_json_nodes(body::json) LOOP
            IF r.depth = {JSON_MAX_DEPTH} AND r.kind IN ('object', 'array') THEN
                RETURN t;  -- nested deeper than the walk goes: indexed as stored
            END IF;
            s := hm_json_atom(r.kind, r.val);
            IF r.kind = 'string' AND strpos(s, chr(92)) > 0 AND left(ltrim(s), 1) IN ('{{', '[') THEN
                nested := NULL;
                BEGIN
                    nested := s::json;
                EXCEPTION WHEN invalid_text_representation THEN
                    NULL;  -- not JSON: the string as it is
                END;
                IF nested IS NOT NULL THEN
                    IF EXISTS (SELECT 1 FROM hm_json_nodes(nested) AS x
                               WHERE x.depth = {JSON_MAX_DEPTH} AND x.kind IN ('object', 'array')) THEN
                        RETURN t;
                    END IF;
                    s := (SELECT string_agg(coalesce(x.key || ' ', '') || hm_json_atom(x.kind, x.val), ' ')
                          FROM hm_json_nodes(nested) AS x);
                END IF;
            END IF;
            parts := parts || (coalesce(r.key || ' ', '') || coalesce(s, ''));
        END LOOP;
    EXCEPTION WHEN others THEN
        RETURN t;  -- not JSON, or a lone surrogate (as SQLite): indexed as stored
    END;
    RETURN array_to_string(parts, ' ');
END
$hm$;
"""
"""``hm_json_text(text)`` from schema 12 (see the module doc), with its helpers ``hm_json_nodes(json)``
(every node of a JSON value in document order: key or NULL, ``json_typeof``, value) and
``hm_json_atom(kind, value)`` (a node's text as SQLite's ``json_tree`` atom casts it: strings
decoded, ``true`` ``1``, ``false`` ``0``, ``null`` and containers empty, a real that is a whole
number with ``.0``). Values holding no backslash, longer than :data:`JSON_TEXT_MAX_CHARS` bytes
(SQLite's :data:`hermes_memory.sessions.jsontext.DECODE_MAX_BYTES`), neither behind the prefix
nor starting with ``{``/``[``, holding ``\\u0000``, not JSON, or decoding to a lone surrogate are
returned as stored. Never raises; IMMUTABLE (a generated column and indexes call it)."""

PARITY_MIGRATION_NAME = "hm_json_text reads JSON as SQLite's json_tree (prefixed JSON strings, strings nested twice), rows recomputed in bounded steps"
PARITY_MIGRATION_SQL = JSON_TEXT_FUNCTION + MARK_SQL
"""Migration 12: :data:`JSON_TEXT_FUNCTION`, the rows marked for :func:`recompute` (:data:`MARK_SQL`).
No row is rewritten and nothing is analysed in the migration transaction (it holds the migration
lock, which every opener waits for): the ``ANALYZE`` follows the last step (:func:`recompute`)."""


def pending(conn: Any) -> bool:
    """True while rows are marked for :func:`recompute` (by this or any process)."""
    if conn.execute("SELECT to_regclass('hm_meta')").fetchone()[0] is None:
        return False
    return conn.execute("SELECT count(*) FROM hm_meta WHERE key = %s", (MARK_KEY,)).fetchone()[0] > 0


def recompute_step(conn: Any) -> dict[str, Any]:
    """Recompute the search values of the rows of the next :data:`RECOMPUTE_CHUNK` ids of the
    pending mark (module doc), in one transaction on ``conn`` (a psycopg connection in autocommit
    mode). Returns ``{"recomputed": rows rewritten, "pending": bool, "busy": bool}``, with
    ``"finished": True`` when this step did the last marked ids (and removed the mark); ``busy``: the
    mark is held by another process's step (nothing done; that process carries on)."""
    with conn.transaction():
        if conn.execute("SELECT to_regclass('hm_meta')").fetchone()[0] is None:  # before migration 3
            return {"recomputed": 0, "pending": False, "busy": False}
        row = conn.execute("SELECT value FROM hm_meta WHERE key = %s FOR UPDATE SKIP LOCKED", (MARK_KEY,)).fetchone()
        if row is None:
            busy = conn.execute("SELECT count(*) FROM hm_meta WHERE key = %s", (MARK_KEY,)).fetchone()[0] > 0
            return {"recomputed": 0, "pending": busy, "busy": busy}
        conn.execute(f"SET LOCAL lock_timeout = {int(STEP_LOCK_TIMEOUT_MS)}")
        start, last = (int(x) for x in str(row[0]).split())
        ids = [r[0] for r in conn.execute("SELECT id FROM messages WHERE id >= %s AND id <= %s ORDER BY id LIMIT %s",
                                          (start, last, RECOMPUTE_CHUNK)).fetchall()]
        done = 0
        if ids:
            done = conn.execute(f"UPDATE messages SET tool_calls = tool_calls WHERE id >= %s AND id <= %s AND {_NEEDS}",
                                (ids[0], ids[-1])).rowcount
        if len(ids) < RECOMPUTE_CHUNK:
            conn.execute("DELETE FROM hm_meta WHERE key = %s", (MARK_KEY,))
            return {"recomputed": done, "pending": False, "busy": False, "finished": True}
        conn.execute("UPDATE hm_meta SET value = %s WHERE key = %s", (f"{ids[-1] + 1} {last}", MARK_KEY))
        return {"recomputed": done, "pending": True, "busy": False}


OPEN_BUDGET_S = 2.0
"""Seconds of recomputation an open does itself (:func:`recompute` with ``budget_s``); the rest goes on
in the background of that process (:class:`~hermes_memory.sessions.pg.connection.PgConnection`), so the
first open after an upgrade no longer takes minutes on a big table (200,000 messages: 104 s in 100 steps)."""


def recompute(conn: Any, *, budget_s: float | None = None, stop: Callable[[], bool] | None = None) -> int:
    """Run :func:`recompute_step` until no marked row is left or another process holds the mark, or,
    between steps, ``budget_s`` seconds have passed (``0``: no step at all) or ``stop()`` is true;
    returns the rows rewritten by this call. Other connections write between steps. A step that
    waits out :data:`STEP_LOCK_TIMEOUT_MS` or is chosen as a deadlock's victim is rolled back and
    ends the call (logged; the mark stays, the next open goes on from it). After the last
    step, ``ANALYZE messages``: the planner's statistics of the CJK indexes' expressions, which call
    ``hm_json_text`` (a sample of 30,000 rows, seconds on a big table, under a
    lock that blocks only VACUUM and schema changes; a process killed before it leaves them to
    autovacuum)."""
    done = 0
    deadline = None if budget_s is None else time.monotonic() + budget_s
    while True:
        if (deadline is not None and time.monotonic() >= deadline) or (stop is not None and stop()):
            break
        try:
            step = recompute_step(conn)
        except (psycopg.errors.LockNotAvailable, psycopg.errors.DeadlockDetected, psycopg.errors.TransactionRollback) as exc:
            logger.warning("hermes-memory: recomputing search values paused (%s); the next open resumes",
                           str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
            break
        done += step["recomputed"]
        if step.get("finished"):
            conn.execute("ANALYZE messages")
        if not step["pending"] or step["busy"]:
            break
    if done:
        logger.info("hermes-memory: search values of %d existing messages recomputed (decoded JSON text)", done)
    return done
