"""The bounded recomputation of the rows whose search values a new ``hm_json_text`` changes (schema
version 11).

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
"""

from __future__ import annotations

import logging
from typing import Any

from hermes_memory.sessions.pg.search_schema import PREFIXED_JSON_TEXT_FUNCTION

logger = logging.getLogger(__name__)

RECOMPUTE_CHUNK = 2_000
"""Ids per recomputation step (one transaction), as migration 3's context fill
(:data:`hermes_memory.sessions.pg.context_schema.BACKFILL_CHUNK`)."""
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
_NEEDS = "(strpos(content, chr(92)) > 0 OR strpos(tool_calls, chr(92)) > 0)"

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


def recompute(conn: Any) -> int:
    """Run :func:`recompute_step` until no marked row is left or another process holds the mark;
    returns the rows rewritten by this call. Other connections write between steps. After the last
    step, ``ANALYZE messages``: the planner's statistics of the CJK indexes' expressions, which call
    ``hm_json_text`` (a sample of 30,000 rows, seconds on a big table, under a
    lock that blocks only VACUUM and schema changes; a process killed before it leaves them to
    autovacuum)."""
    done = 0
    while True:
        step = recompute_step(conn)
        done += step["recomputed"]
        if step.get("finished"):
            conn.execute("ANALYZE messages")
        if not step["pending"] or step["busy"]:
            break
    if done:
        logger.info("hermes-memory: search values of %d existing messages recomputed (decoded JSON text)", done)
    return done
