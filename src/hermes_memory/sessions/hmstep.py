"""Whether our ``hm_*`` full-text index of ``state.db`` is in step, found by reads only.

An open of a store whose schema and index are current writes nothing (so it answers while another
process holds a write transaction on the file, docs/architecture.md): :func:`in_step` tells, with
reads alone, that :func:`hermes_memory.sessions.hmindex.sync`, its backfill and a relayout step would
find nothing to do, and :data:`NOTHING_DONE` is the report such an open gives.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from hermes_memory.sessions import hmrelayout
from hermes_memory.sessions.hmindex import (
    CHANGE_TRIGGER_SQL,
    CJK,
    FTS_ERRORS,
    MAIN,
    META,
    TRIGGER_SQL,
    is_damage,
    max_indexed,
    meta_get,
    normalised_sql,
    objects,
    rank_value,
)


def in_step(conn: sqlite3.Connection) -> bool:
    """True when :func:`~hermes_memory.sessions.hmindex.sync`, its backfill and a relayout step would all find nothing to
    do: our objects and triggers are the current ones, our rank is the current one, no build,
    verification or relayout is pending, our newest indexed row is the newest message, and a
    read-only probe of both tables (which reads their structure records) raises nothing. Only
    reads: an open that finds the index in step takes no write lock (another program may hold one).
    False whenever anything is missing or in doubt (the open then takes the write path)."""
    have = objects(conn)
    if MAIN not in have or CJK not in have or META not in have:
        return False
    if any(normalised_sql(have.get(n)) != normalised_sql(sql) for n, sql in (*TRIGGER_SQL.items(), *CHANGE_TRIGGER_SQL.items())):
        return False
    keys = ("backfill_next_id", "verify_next_id", hmrelayout.NEXT_KEY, hmrelayout.DROP_KEY)
    if any(meta_get(conn, k) is not None for k in keys) or hmrelayout.is_old_layout(conn, have.get(MAIN)):
        return False
    try:
        row = conn.execute(f"SELECT v FROM {MAIN}_config WHERE k = 'rank'").fetchone()
        if row is None or row[0] != rank_value():
            return False
        top = conn.execute("SELECT max(id) FROM messages").fetchone()[0] or 0
        if max_indexed(conn) != top:
            return False
        for table in (MAIN, CJK):
            conn.execute(f"SELECT rowid FROM {table} WHERE {table} MATCH 'probe' LIMIT 1").fetchall()
    except FTS_ERRORS as exc:
        if isinstance(exc, sqlite3.OperationalError) and not is_damage(exc):
            raise  # locked, busy, I/O: not a sign that anything needs writing
        return False  # damaged (or unreadable) index: the write path probes, checks and rebuilds
    return True


NOTHING_DONE: dict[str, Any] = {"action": "none", "triggers_missing": False, "added": 0, "deleted": 0,
                                "changed": 0, "verified": 0, "verify_pending": False, "seconds": 0.0,
                                "backfilled": 0}
"""The ``hmindex.sync`` + ``finish_backfill`` report of an open that found the index in step."""
