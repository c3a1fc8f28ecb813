"""Moving an existing ``state.db`` from an older layout of our index (2: no neighbours' context;
3: JSON indexed with its escapes, tool calls' CJK text not in the side table) to the current one
(:data:`hermes_memory.sessions.hmindex.LAYOUT_VERSION`, 4) without locking the file and without a
gap in search.

The new index is built beside the old one, in bounded steps, then swapped in:

1. **start** (one short transaction, in :func:`hermes_memory.sessions.hmindex.sync`): create
   ``hm_messages_fts_next`` and ``hm_messages_cjk_next`` (the current layout) and the triggers
   ``hm_messages_next_ai/ad/au`` that keep both in step with every write (the reference agent's
   included) from then on; record ``hm_meta.relayout_next_id = 0``, ``relayout_through =
   max(messages.id)`` and the layout being built (``relayout_layout``: a move an older version of
   ours started towards an older layout is started again).
2. **steps** (:func:`step`, one write transaction each, :data:`CHUNK` messages, about 0.2-0.4 s on
   the 2-core test machine): messages ``relayout_next_id ..`` are (re-)indexed into the new table
   from their current text and neighbours, and the mark moves on. Between two steps any other
   program may write; a process killed mid-way leaves the mark at the last committed step and the
   next open resumes there (rows the new triggers indexed meanwhile are simply indexed again).
3. **swap** (the last step's transaction): the old tables' triggers are dropped, the old tables are
   renamed ``hm_messages_fts_old`` / ``hm_messages_cjk_old`` and the new ones ``hm_messages_fts`` /
   ``hm_messages_cjk`` (schema changes only, no row is moved), the final triggers are installed;
   ``hm_meta.layout`` = the new layout.
4. **drop** (further steps): nothing reads the old tables any more; their rows are deleted
   :data:`CHUNK` per shadow table per transaction, then the emptied tables are dropped
   (``hm_meta.relayout_drop_old`` marks it; resumable like the rest). Dropping a large FTS5
   table at once holds the write lock for about a second per 50 MB (measured at 100,000
   messages), which at a million messages would approach the reference's retry budget.

Until the swap, **search reads the old index, complete and kept current by its own
triggers**: results are exactly those of the old layout. Every append meanwhile feeds the old and
the new tables.

**Bounded on open.** An open runs steps for at most :data:`BUDGET_S` seconds (at least one step)
and returns with the move still pending; the next open continues it within the same budget. A
long-lived process (``serve``, ``ui``, ``chat``) continues it in a background thread one step per
write transaction (:meth:`hermes_memory.sessions.connection.SQLiteStore.continue_relayout_in_background`),
and ``hermes-memory sessions reindex`` finishes it in the foreground. :func:`progress` says how far
it is (``hermes-memory status``).

When our triggers are found missing during a relayout (another program rebuilt ``messages``),
all our tables are dropped and the current layout is built from scratch (:func:`hermes_memory.sessions.hmindex.full_build`),
in the same bounded steps; search then sees the rows indexed so far.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable
from typing import Any

from hermes_memory.sessions import hmindex  # hmindex imports this module too; used at call time only

logger = logging.getLogger(__name__)

NEXT = "hm_messages_fts_next"
"""The new main table while it is being built."""
CJK_NEXT = "hm_messages_cjk_next"
"""The new CJK side table while it is being built."""
NEXT_TRIGGERS = ("hm_messages_next_ai", "hm_messages_next_ad", "hm_messages_next_au")
"""Triggers feeding :data:`NEXT` and :data:`CJK_NEXT` during a relayout (dropped at the swap)."""
TARGET_KEY = "relayout_layout"
"""``hm_meta`` key: the layout the pending move builds (absent in moves older versions started)."""
CHUNK = 2_000
"""Messages indexed into the new table per step (one write transaction), as
:data:`hermes_memory.sessions.hmindex.BUILD_CHUNK`."""
BUDGET_S = 2.0
"""Seconds of relayout steps one open runs before it returns with the move pending (at least
one step always runs). Chosen so an open stays well inside a Claude Code hook's time limit and an
MCP client's start-up wait: at one step of 0.2-0.4 s (2-core test machine) it is 5-10 steps,
10,000-20,000 messages per open; the whole move of a 1M-message home took 1.5-8 minutes
(490 s under load) when opens ran it all."""
NEXT_KEY, THROUGH_KEY = "relayout_next_id", "relayout_through"
OLD = "hm_messages_fts_old"
"""The old main table after the swap, emptied in steps and dropped."""
CJK_OLD = "hm_messages_cjk_old"
"""The old CJK side table after the swap, emptied in steps and dropped."""
DROP_KEY = "relayout_drop_old"
_OLD_SHADOWS = ("data", "content", "docsize")
"""Shadow tables of :data:`OLD` emptied in steps (rowid tables; ``_data`` keeps its rows 1-10,
the averages and structure records, so the emptied table still opens to be dropped)."""


def is_old_layout(conn: sqlite3.Connection, main_sql: str | None) -> bool:
    """True when our main table exists and is of an older layout: its ``CREATE`` statement is
    layout 2's (no context columns), or ``hm_meta.layout`` is below
    :data:`hermes_memory.sessions.hmindex.LAYOUT_VERSION` (or missing)."""
    if main_sql is None:
        return False
    if "before" not in main_sql.lower():
        return True
    layout = hmindex.meta_get(conn, "layout")
    return not (layout or "").isdigit() or int(layout or 0) < hmindex.LAYOUT_VERSION


def pending(conn: sqlite3.Connection) -> bool:
    """True while a relayout is under way (started, not yet swapped)."""
    return hmindex.meta_get(conn, NEXT_KEY) is not None


def pending_current(conn: sqlite3.Connection) -> bool:
    """True while a relayout towards the current layout is under way (not one an older version of
    ours started towards an older layout)."""
    return pending(conn) and hmindex.meta_get(conn, TARGET_KEY) == str(hmindex.LAYOUT_VERSION)


def _next_trigger_sql() -> dict[str, str]:
    return hmindex.index_trigger_sql(NEXT_TRIGGERS, NEXT, cjk_table=CJK_NEXT)


def start(conn: sqlite3.Connection) -> None:
    """Create the new table and its triggers and mark the relayout (runs in the caller's transaction)."""
    for name in NEXT_TRIGGERS:
        conn.execute(f'DROP TRIGGER IF EXISTS "{name}"')
    hmindex.drop_fts(conn, NEXT)
    hmindex.drop_fts(conn, CJK_NEXT)
    conn.execute(hmindex.main_sql(NEXT))
    hmindex.set_rank(conn, NEXT)
    conn.execute(hmindex.cjk_sql(CJK_NEXT))
    for sql in _next_trigger_sql().values():
        conn.execute(sql)
    hmindex.meta_set(conn, TARGET_KEY, hmindex.LAYOUT_VERSION)
    hmindex.meta_set(conn, NEXT_KEY, 0)
    hmindex.meta_set(conn, THROUGH_KEY, conn.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()[0])
    logger.info("hermes-memory index: moving to layout %d in steps of %d messages", hmindex.LAYOUT_VERSION, CHUNK)


def triggers_intact(have: dict[str, str | None]) -> bool:
    """True when the old index's triggers and the new tables' triggers are all present."""
    return all(n in have for n in (*hmindex.INDEX_TRIGGER_NAMES, *NEXT_TRIGGERS, NEXT, CJK_NEXT))


def abandon(conn: sqlite3.Connection) -> None:
    """Drop the half-built new table (or the old one being emptied), its triggers and the marks
    (a full build follows)."""
    for name in NEXT_TRIGGERS:
        conn.execute(f'DROP TRIGGER IF EXISTS "{name}"')
    for table in (NEXT, CJK_NEXT, OLD, CJK_OLD):
        hmindex.drop_fts(conn, table)
    conn.execute(f"DELETE FROM {hmindex.META} WHERE key IN ('{NEXT_KEY}', '{THROUGH_KEY}', '{DROP_KEY}', '{TARGET_KEY}')")


def _drop_step(conn: sqlite3.Connection) -> dict[str, Any]:
    """Delete up to :data:`CHUNK` rows of each of the old tables' shadow tables; drop them once empty."""
    more = False
    for old in (OLD, CJK_OLD):
        for suffix in _OLD_SHADOWS:
            table = f"{old}_{suffix}"
            if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone():
                continue
            keep = " AND id > 10" if suffix == "data" else ""
            cur = conn.execute(f"DELETE FROM {table} WHERE id IN (SELECT id FROM {table} WHERE 1{keep} LIMIT ?)",
                               (CHUNK,))
            more = more or cur.rowcount >= CHUNK
    if more:
        return {"indexed": 0, "pending": True, "swapped": False}
    hmindex.drop_fts(conn, OLD)
    hmindex.drop_fts(conn, CJK_OLD)
    conn.execute(f"DELETE FROM {hmindex.META} WHERE key = '{DROP_KEY}'")
    logger.info("hermes-memory index: the old layout's tables are gone")
    return {"indexed": 0, "pending": False, "swapped": False}


def step(conn: sqlite3.Connection) -> dict[str, Any]:
    """Index the next :data:`CHUNK` messages into the new table, or swap it in when none is left,
    or (after the swap) empty the old table by a chunk and drop it once empty. Runs in the
    caller's (write) transaction. Returns ``{"indexed": int, "pending": bool,
    "swapped": bool}``."""
    start_id, through = hmindex.meta_get(conn, NEXT_KEY), hmindex.meta_get(conn, THROUGH_KEY)
    if start_id is None or through is None:
        if hmindex.meta_get(conn, DROP_KEY) is not None:
            return _drop_step(conn)
        return {"indexed": 0, "pending": False, "swapped": False}
    ids = [r[0] for r in conn.execute("SELECT id FROM messages WHERE id >= ? AND id <= ? ORDER BY id LIMIT ?",
                                      (int(start_id), int(through), CHUNK))]
    hmindex.index_ids(conn, ids, NEXT, cjk_table=CJK_NEXT)
    if len(ids) == CHUNK:
        hmindex.meta_set(conn, NEXT_KEY, ids[-1] + 1)
        return {"indexed": len(ids), "pending": True, "swapped": False}
    _swap(conn)
    return {"indexed": len(ids), "pending": True, "swapped": True}  # the old table is dropped next


def _swap(conn: sqlite3.Connection) -> None:
    for name in (*NEXT_TRIGGERS, *hmindex.INDEX_TRIGGER_NAMES):
        conn.execute(f'DROP TRIGGER IF EXISTS "{name}"')
    hmindex.drop_fts(conn, OLD)  # left by an earlier relayout, if ever
    hmindex.drop_fts(conn, CJK_OLD)
    conn.execute(f"ALTER TABLE {hmindex.MAIN} RENAME TO {OLD}")
    conn.execute(f"ALTER TABLE {NEXT} RENAME TO {hmindex.MAIN}")
    conn.execute(f"ALTER TABLE {hmindex.CJK} RENAME TO {CJK_OLD}")
    conn.execute(f"ALTER TABLE {CJK_NEXT} RENAME TO {hmindex.CJK}")
    hmindex.install_triggers(conn)  # counts a change: cached term statistics are void
    conn.execute(f"DELETE FROM {hmindex.META} WHERE key IN ('{NEXT_KEY}', '{THROUGH_KEY}', '{TARGET_KEY}')")
    hmindex.meta_set(conn, DROP_KEY, 1)
    hmindex.meta_set(conn, "layout", hmindex.LAYOUT_VERSION)
    hmindex.meta_set(conn, "high_water_mark", hmindex.max_indexed(conn))
    logger.info("hermes-memory index: layout %d in place", hmindex.LAYOUT_VERSION)


def progress(conn: sqlite3.Connection) -> dict[str, Any] | None:
    """How far the move is: ``None`` when none is under way, else ``{"phase": "indexing" |
    "dropping", "done": int, "total": int}`` (messages re-indexed / to re-index; in the
    ``"dropping"`` phase, after the swap, both are the total and the old table is being emptied)."""
    start_id, through = hmindex.meta_get(conn, NEXT_KEY), hmindex.meta_get(conn, THROUGH_KEY)
    if start_id is None or through is None:
        if hmindex.meta_get(conn, DROP_KEY) is None:
            return None
        total = int(conn.execute("SELECT count(*) FROM messages").fetchone()[0])
        return {"phase": "dropping", "done": total, "total": total}
    total = int(conn.execute("SELECT count(*) FROM messages WHERE id <= ?", (int(through),)).fetchone()[0])
    done = int(conn.execute("SELECT count(*) FROM messages WHERE id < ? AND id <= ?",
                            (int(start_id), int(through))).fetchone()[0])
    return {"phase": "indexing", "done": done, "total": total}


def run_steps(do_step: Callable[[], dict[str, Any]], budget_s: float | None = None,
              after_step: Callable[[], None] | None = None) -> tuple[int, int, bool]:
    """Call ``do_step`` (one :func:`step` in its own write transaction) until the relayout is done,
    or, with ``budget_s`` (seconds), until that much time has passed (at least one step runs);
    ``after_step`` is called after each. Returns ``(messages indexed, steps run, still pending)``.
    The one loop behind :func:`finish` (on open) and ``SQLiteStore.continue_relayout``."""
    deadline = None if budget_s is None else time.monotonic() + budget_s
    done = steps = 0
    while True:
        got = do_step()
        steps += 1
        done += got["indexed"]
        if after_step is not None:
            after_step()
        if not got["pending"]:
            return done, steps, False
        if deadline is not None and time.monotonic() >= deadline:
            return done, steps, True


def finish(write: Any, report: dict[str, Any], budget_s: float | None = None) -> bool:
    """Run :func:`step` through ``write`` (one transaction per call) until the relayout is done,
    or, with ``budget_s`` (seconds), until that much time has passed (at least one step runs).
    Adds ``"relaid": int`` (messages indexed) to ``report`` when there was a relayout, and
    ``"relayout_pending": True`` when the budget ran out first. Returns True when nothing is
    left to do."""
    done, steps, left = run_steps(lambda: write(step), budget_s)
    if steps > 1 or done or left:
        report["relaid"] = done
    if left:
        report["relayout_pending"] = True
    return not left
