"""Our full-text objects in ``state.db``: everything named ``hm_*``, beside the reference's own.

Objects (all created and maintained by hermes-memory only; the reference never reads them)::

    hm_meta                key/value: layout version, who created the file, high-water mark,
                           counters of catch-ups and full builds
    hm_messages_fts        FTS5 (content, tool_name, tool_calls, before), porter + unicode61
                           remove_diacritics 2, BM25 weights 1.0/0.8/0.4/0.2, one row per message
                           (rowid = messages.id); tool rows indexed on their first 8,192 chars;
                           ``before``: the previous turn's text (:mod:`hmcontext`, layout 3);
                           JSON text indexed with its escapes decoded (:mod:`jsontext`, layout 4)
    hm_messages_cjk        FTS5 trigram (content, tool_name), only rows that contain CJK;
                           ``content``: the message's text, then its tool calls' decoded text
    hm_messages_index_ai   \\
    hm_messages_index_ad    > triggers on messages keeping both tables in step
    hm_messages_index_au   /  (update: only when content/tool_name/tool_calls/role change)
    hm_messages_changes_ad \
    hm_messages_changes_au  > triggers counting, in hm_meta.index_changes, every change of our index
    hm_messages_changes_ai /  other than a row appended at the end (see :data:`CHANGES_KEY`)
    hm_term_df             document frequencies stored by searches for every connection
                           (:data:`hermes_memory.sessions.term_stats.DF_TABLE`)

Both tables keep their OWN copy of the indexed text (not external content over a view of
``messages``). That is what makes them safe to share: FTS5 can always remove a row by rowid from
its stored copy, so rows deleted or changed while our triggers were absent (the reference rebuilt
``messages``, dropping every trigger on it, or another tool dropped ours) can be repaired one by
one. An external-content index needs the OLD values to delete a row and is corrupted silently when
they are gone; SQLite's ``contentless_delete=1`` needs 3.43, newer than the 3.40 many Pythons ship.

:func:`sync` runs on an open that needs it (inside the open's write transaction). Every open first
asks :func:`in_step`, with reads only, whether there is anything to do; when there is not (the
usual case: our triggers fire in every writer's transaction) the open writes nothing and takes no
write lock, so it reads at once while another program holds a long write transaction. What
:func:`sync` then does:

* objects missing -> created and filled from ``messages`` (the first open of a reference home);
* triggers present and our newest indexed row equals the newest message -> nothing to do (O(1):
  our triggers fire in every writer's transaction, the reference's included);
* otherwise -> **catch-up**: the rows above the high-water mark (our newest indexed row id, also
  recorded in ``hm_meta.high_water_mark``) are indexed; rows deleted meanwhile are detected by
  comparing counts (SQLite's b-tree count, no row read) and, only when they differ, the two id sets; when our
  triggers were missing, rows CHANGED meanwhile are found by comparing our stored copy with
  ``messages`` in batches of :data:`VERIFY_BATCH` rows per open (``hm_meta.verify_next_id`` keeps
  the place), and only those rows are re-indexed. Tokenising work scales with the rows added or
  changed, not with the database. (The reference itself never rewrites a message's text, role or
  tool fields; it only flips ``active``/``compacted``/``api_content``, which we do not index.)
* a read-only probe (a ``MATCH`` on both tables, reading their structure records) on every open,
  and a rolled-back probe write into our tables (one row) on every open that writes; an FTS5 error saying our index
  is corrupt (there, or during a catch-up) -> FTS5 ``integrity-check`` of our tables, and only when
  it fails a full rebuild of OUR tables (never the reference's).

Every writer of the file must have SQLite with FTS5, the trigram tokenizer (SQLite >= 3.34) and
the JSON functions (built in since 3.38), because our triggers run in its transactions; the
reference needs the first two for its own tables too.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable
from typing import Any

from hermes_memory.sessions import hmcontext, hmrelayout, jsontext
from hermes_memory.sessions.fts import CJK_GLOB

logger = logging.getLogger(__name__)

LAYOUT_VERSION = 4
"""``hm_meta.layout``: 4 = JSON text indexed with its escapes decoded (tool-call JSON, JSON message
content; :mod:`hermes_memory.sessions.jsontext`) and the CJK side table also holding the tool
calls' text; 3 = each turn indexed with the previous turn's text (column ``before``,
:mod:`hermes_memory.sessions.hmcontext`); 2 = ``hm_*`` objects beside the
reference's without context; 1 was the old layout that took over ``messages_fts``. A home at
layout 2 or 3 is moved to 4 by :mod:`hermes_memory.sessions.hmrelayout` while searches keep
using its old index."""

TOOL_ROW_FTS_CHARS = 8192
"""Tool-result rows are indexed on their first 8,192 characters only (reference NEWEST)."""

MAIN = "hm_messages_fts"
CJK = "hm_messages_cjk"
META = "hm_meta"
INDEX_TRIGGER_NAMES = ("hm_messages_index_ai", "hm_messages_index_ad", "hm_messages_index_au")
TRIGGER_NAMES = (*INDEX_TRIGGER_NAMES, "hm_messages_changes_ad", "hm_messages_changes_au", "hm_messages_changes_ai")
"""Every trigger of ours on ``messages``."""

_BODY = ("CASE WHEN {p}.role = 'tool' THEN substr({content}, 1, " + str(TOOL_ROW_FTS_CHARS) + ") "
         "ELSE {content} END")
_CJK_TEXT = "coalesce({body}, '') || CASE WHEN {p}.tool_calls IS NULL THEN '' ELSE ' ' || coalesce({calls}, '') END"
"""What the CJK side table's ``content`` column holds (layout 4): the message's indexed text and,
after it, its tool calls' decoded text (so CJK written in tool-call arguments is found too)."""


CHANGES_KEY = "index_changes"
"""``hm_meta`` key counting the changes to our index other than appending a row with a new largest
id at the end of its session: deletes, updates of indexed columns, inserts below the largest id or
before a later turn of the session (which rewrite that turn's ``before``), catch-ups and builds. While
it stays the same, a term's document frequency among rows ``<= id`` cannot change, so
:mod:`hermes_memory.sessions.term_stats` caches document frequencies against it."""
_BUMP = (f"INSERT INTO {META}(key, value) VALUES ('{CHANGES_KEY}', 1) "
         f"ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1;")
CHANGE_TRIGGER_SQL = {
    "hm_messages_changes_ad": f"CREATE TRIGGER hm_messages_changes_ad AFTER DELETE ON messages BEGIN {_BUMP} END",
    "hm_messages_changes_au": (
        "CREATE TRIGGER hm_messages_changes_au AFTER UPDATE OF content, tool_name, tool_calls, role ON messages "
        "WHEN old.content IS NOT new.content OR old.tool_name IS NOT new.tool_name "
        "OR old.tool_calls IS NOT new.tool_calls OR old.role IS NOT new.role OR old.id IS NOT new.id "
        f"BEGIN {_BUMP} END"
    ),
    "hm_messages_changes_ai": (
        "CREATE TRIGGER hm_messages_changes_ai AFTER INSERT ON messages "
        f"WHEN new.id < (SELECT max(id) FROM messages) OR {hmcontext.neighbour_id('new', 'after')} IS NOT NULL "
        f"BEGIN {_BUMP} END"
    ),
}
"""Triggers keeping ``hm_meta.index_changes`` (:data:`CHANGES_KEY`); like our index triggers they
fire in every writer's transaction, the reference's included."""


def _body(p: str) -> str:
    """SQL: the indexed text of message ``p`` (content decoded, tool rows cut)."""
    return _BODY.format(p=p, content=jsontext.decoded(f"{p}.content", prefixed=True))


def _calls(p: str) -> str:
    """SQL: the indexed text of message ``p``'s tool-call JSON (escapes decoded)."""
    return jsontext.decoded(f"{p}.tool_calls")


def _cjk_text(p: str) -> str:
    """SQL: the ``content`` value of message ``p`` in the CJK side table (see :data:`_CJK_TEXT`)."""
    return _CJK_TEXT.format(p=p, body=_body(p), calls=_calls(p))


def _has_cjk(p: str) -> str:
    return f"(({_cjk_text(p)}) || ' ' || coalesce({p}.tool_name, '')) GLOB '{CJK_GLOB}'"


META_SQL = f"CREATE TABLE IF NOT EXISTS {META} (key TEXT PRIMARY KEY, value TEXT)"
MAIN_COLUMNS = ", ".join(hmcontext.COLUMNS)


def main_sql(table: str = MAIN) -> str:
    """``CREATE VIRTUAL TABLE`` of our main index (layout 3) under ``table``."""
    return (f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING fts5({MAIN_COLUMNS}, "
            "tokenize='porter unicode61 remove_diacritics 2')")


def rank_value() -> str:
    """The ``rank`` function of our main index: BM25 with the column weights (read at call time)."""
    return f"bm25(1.0, 0.8, 0.4, {hmcontext.BEFORE_WEIGHT})"


def set_rank(conn: sqlite3.Connection, table: str = MAIN) -> None:
    """Store :func:`rank_value` as ``table``'s default rank (FTS5 keeps it in ``<table>_config``)."""
    conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('rank', ?)", (rank_value(),))


MAIN_SQL = main_sql()
def cjk_sql(table: str = CJK) -> str:
    """``CREATE VIRTUAL TABLE`` of our CJK trigram side table under ``table``."""
    return f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING fts5(content, tool_name, tokenize='trigram')"


CJK_SQL = cjk_sql()


def _row_values(p: str) -> str:
    return f"{p}.id, {_body(p)}, {p}.tool_name, {_calls(p)}, {hmcontext.context(p)}"


def _add(p: str, table: str = MAIN, cjk_table: str | None = CJK) -> str:
    sql = (f"INSERT INTO {table}(rowid, {MAIN_COLUMNS}) VALUES ({_row_values(p)}); "
           f"{hmcontext.after_insert(table, p)}")
    if cjk_table:
        sql += (f" INSERT INTO {cjk_table}(rowid, content, tool_name) SELECT {p}.id, {_cjk_text(p)}, {p}.tool_name "
                f"WHERE {_has_cjk(p)};")
    return sql


def _drop(p: str, table: str = MAIN, cjk_table: str | None = CJK) -> str:
    sql = f"DELETE FROM {table} WHERE rowid = {p}.id; {hmcontext.after_remove(table, p)}"
    return sql + (f" DELETE FROM {cjk_table} WHERE rowid = {p}.id;" if cjk_table else "")


def index_trigger_sql(names: tuple[str, str, str], table: str = MAIN,
                      cjk_table: str | None = CJK) -> dict[str, str]:
    """``CREATE TRIGGER`` statements (insert, delete, update) keeping ``table`` (and the CJK side
    table ``cjk_table``, unless ``None``) in step with ``messages``, neighbours' context included."""
    ai, ad, au = names
    return {
        ai: f"CREATE TRIGGER {ai} AFTER INSERT ON messages BEGIN {_add('new', table, cjk_table)} END",
        ad: f"CREATE TRIGGER {ad} AFTER DELETE ON messages BEGIN {_drop('old', table, cjk_table)} END",
        au: (
            f"CREATE TRIGGER {au} AFTER UPDATE OF content, tool_name, tool_calls, role ON messages "
            "WHEN old.content IS NOT new.content OR old.tool_name IS NOT new.tool_name "
            "OR old.tool_calls IS NOT new.tool_calls OR old.role IS NOT new.role OR old.id IS NOT new.id "
            f"BEGIN {_drop('old', table, cjk_table)} {_add('new', table, cjk_table)} END"
        ),
    }


TRIGGER_SQL = index_trigger_sql(INDEX_TRIGGER_NAMES)

_SELECT_ROWS = f"SELECT {_row_values('m')} FROM messages m"
_SELECT_CJK = f"SELECT m.id, {_cjk_text('m')}, m.tool_name FROM messages m WHERE {_has_cjk('m')}"


def normalised_sql(sql: str | None) -> str:
    """``sql`` with runs of whitespace made one space (``""`` for ``None``): how stored DDL is compared."""
    return " ".join((sql or "").split())


def objects(conn: sqlite3.Connection) -> dict[str, str | None]:
    """``{name: CREATE statement}`` of every ``hm_*`` object in ``sqlite_master`` (a read)."""
    return {n: s for n, s in conn.execute("SELECT name, sql FROM sqlite_master WHERE name LIKE 'hm\\_%' ESCAPE '\\'")}


_norm, _objects = normalised_sql, objects


def meta_get(conn: sqlite3.Connection, key: str) -> str | None:
    """One ``hm_meta`` value (None when the table or key is missing)."""
    try:
        row = conn.execute(f"SELECT value FROM {META} WHERE key = ?", (key,)).fetchone()
    except sqlite3.OperationalError:
        return None
    return None if row is None else row[0]


def meta_set(conn: sqlite3.Connection, key: str, value: object) -> None:
    """Write one ``hm_meta`` value (the table must exist)."""
    conn.execute(f"INSERT OR REPLACE INTO {META}(key, value) VALUES (?, ?)", (key, str(value)))


def _bump(conn: sqlite3.Connection, key: str) -> None:
    meta_set(conn, key, int(meta_get(conn, key) or 0) + 1)


def _content_table(conn: sqlite3.Connection) -> str | None:
    """Name of our main table's stored-content shadow table (``id, c0, c1, c2``), when it has that shape."""
    cols = [r[1] for r in conn.execute(f"PRAGMA table_info({MAIN}_content)")]
    return f"{MAIN}_content" if cols[:4] == ["id", "c0", "c1", "c2"] else None


def max_indexed(conn: sqlite3.Connection) -> int:
    """Largest message id in our main index (0 when empty)."""
    row = conn.execute(f"SELECT rowid FROM {MAIN} ORDER BY rowid DESC LIMIT 1").fetchone()
    return int(row[0]) if row else 0


def note_change(conn: sqlite3.Connection) -> None:
    """Count one change of our index in ``hm_meta.index_changes`` (:data:`CHANGES_KEY`)."""
    conn.execute(_BUMP)


def index_ids(conn: sqlite3.Connection, ids: list[int], table: str = MAIN, cjk_table: str | None = CJK) -> None:
    """(Re-)index the messages ``ids`` in ``table`` with their previous turns' text, and re-index the
    turns right after them (their context is these rows' text). The CJK side table ``cjk_table``
    (none when ``None``) gets only ``ids``, re-indexed from their current text."""
    if ids:
        note_change(conn)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        near = {r[0] for r in conn.execute(hmcontext.next_turns_of(marks), chunk) if r[0] is not None}
        every = chunk + sorted(near - set(chunk))
        every_marks = ",".join("?" * len(every))
        conn.execute(f"DELETE FROM {table} WHERE rowid IN ({every_marks})", every)  # absent rows: no-op
        conn.execute(f"INSERT INTO {table}(rowid, {MAIN_COLUMNS}) {_SELECT_ROWS} WHERE m.id IN ({every_marks})", every)
        if cjk_table:
            conn.execute(f"DELETE FROM {cjk_table} WHERE rowid IN ({marks})", chunk)  # absent rows: no-op
            conn.execute(f"INSERT INTO {cjk_table}(rowid, content, tool_name) {_SELECT_CJK} "
                         f"AND m.id IN ({marks})", chunk)


_index_ids = index_ids


def _unindex_ids(conn: sqlite3.Connection, ids: list[int]) -> None:
    if ids:
        note_change(conn)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        conn.execute(f"DELETE FROM {MAIN} WHERE rowid IN ({marks})", chunk)
        conn.execute(f"DELETE FROM {CJK} WHERE rowid IN ({marks})", chunk)


def _create(conn: sqlite3.Connection) -> None:
    conn.execute(META_SQL)
    conn.execute(MAIN_SQL)
    set_rank(conn)
    conn.execute(CJK_SQL)


def install_triggers(conn: sqlite3.Connection) -> None:
    """(Re)create our index and change triggers on ``messages`` (counts a change)."""
    for name, sql in TRIGGER_SQL.items():
        conn.execute(f'DROP TRIGGER IF EXISTS "{name}"')
        conn.execute(sql)
    _install_change_triggers(conn)


def _install_change_triggers(conn: sqlite3.Connection) -> None:
    """(Re)create the :data:`CHANGE_TRIGGER_SQL` triggers and count a change: whatever happened
    while they were missing is unknown."""
    for name, sql in CHANGE_TRIGGER_SQL.items():
        conn.execute(f'DROP TRIGGER IF EXISTS "{name}"')
        conn.execute(sql)
    note_change(conn)


_DAMAGE_WORDS = ("malformed", "corrupt", "vtable constructor failed")

#: What a statement on a damaged FTS5 index can raise: SQLite's corruption errors, and MemoryError,
#: which is how Python's sqlite3 raises SQLITE_NOMEM: a damaged structure record can read as a wild
#: segment count that FTS5 then fails to allocate (2 % of random structure blocks here).
FTS_ERRORS: tuple[type[BaseException], ...] = (sqlite3.DatabaseError, MemoryError)


def is_damage(exc: BaseException) -> bool:
    """True for the SQLite/FTS5 errors a damaged full-text index raises (a MemoryError included:
    callers confirm with :func:`integrity_ok` before rebuilding, so a real shortage is not mistaken)."""
    if isinstance(exc, MemoryError):
        return True
    text = str(exc).lower()
    return any(w in text for w in _DAMAGE_WORDS)


def drop_fts(conn: sqlite3.Connection, table: str) -> None:
    """Drop one of OUR FTS5 tables, even one too damaged to open: its shadow tables (ours too) are
    first reset to the state of a blank FTS5 table made by this same SQLite, so it can be dropped."""
    try:
        conn.execute(f"DROP TABLE IF EXISTS {table}")
        return
    except FTS_ERRORS as exc:
        if not is_damage(exc):
            raise
    conn.execute("CREATE VIRTUAL TABLE temp.hm_blank USING fts5(x)")
    try:
        for suffix in ("data", "idx", "content", "docsize"):
            if conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (f"{table}_{suffix}",)).fetchone():
                conn.execute(f"DELETE FROM {table}_{suffix}")
        conn.execute(f"INSERT INTO {table}_data SELECT * FROM temp.hm_blank_data")
    finally:
        conn.execute("DROP TABLE temp.hm_blank")
    conn.execute(f"DROP TABLE {table}")


BUILD_CHUNK = 2_000
"""Messages indexed per write transaction when building our index over an existing history. A
build of a large home never holds the write lock for long (about 0.2 s per chunk), so the
reference agent writing to the same file meanwhile is never locked out (its retries give up after
about 16 s)."""


def full_build(conn: sqlite3.Connection, reason: str) -> int:
    """Drop and re-create OUR tables and triggers and index every message. Touches no reference
    object. Returns the number of messages to index; counts the build in ``hm_meta.full_builds``.

    Up to :data:`BUILD_CHUNK` messages are indexed here; a larger history is left to
    :func:`backfill_step` (``hm_meta.backfill_next_id`` / ``backfill_through`` mark it), one chunk
    per transaction: our triggers are installed first, so rows written meanwhile are indexed by them."""
    conn.execute(META_SQL)
    hmrelayout.abandon(conn)  # a relayout under way, if any
    for name in TRIGGER_NAMES:
        conn.execute(f'DROP TRIGGER IF EXISTS "{name}"')
    drop_fts(conn, MAIN)
    drop_fts(conn, CJK)
    _create(conn)
    install_triggers(conn)  # counts a change: cached term statistics are void
    n = int(conn.execute("SELECT count(*) FROM messages").fetchone()[0])
    if n <= BUILD_CHUNK:
        conn.execute(f"INSERT INTO {MAIN}(rowid, {MAIN_COLUMNS}) {_SELECT_ROWS}")
        conn.execute(f"INSERT INTO {CJK}(rowid, content, tool_name) {_SELECT_CJK}")
    else:
        meta_set(conn, "backfill_next_id", 0)
        meta_set(conn, "backfill_through", conn.execute("SELECT max(id) FROM messages").fetchone()[0])
    _bump(conn, "full_builds")
    meta_set(conn, "layout", LAYOUT_VERSION)
    meta_set(conn, "last_full_build", f"{time.time():.3f} {reason}")
    meta_set(conn, "high_water_mark", max_indexed(conn))
    logger.info("hermes-memory full-text index built from %d messages (%s)", n, reason)
    return n


def backfill_step(conn: sqlite3.Connection) -> dict[str, Any]:
    """Index the next :data:`BUILD_CHUNK` messages of a pending build (see :func:`full_build`); runs in
    the caller's transaction. Rows a trigger already indexed (written or changed meanwhile) are
    re-indexed from their current text. Returns ``{"indexed": int, "pending": bool}``."""
    start = meta_get(conn, "backfill_next_id")
    through = meta_get(conn, "backfill_through")
    if start is None or through is None:
        return {"indexed": 0, "pending": False}
    ids = [r[0] for r in conn.execute("SELECT id FROM messages WHERE id >= ? AND id <= ? ORDER BY id LIMIT ?",
                                      (int(start), int(through), BUILD_CHUNK))]
    _unindex_ids(conn, ids)
    _index_ids(conn, ids)
    if len(ids) < BUILD_CHUNK:
        conn.execute(f"DELETE FROM {META} WHERE key IN ('backfill_next_id', 'backfill_through')")
        meta_set(conn, "high_water_mark", max_indexed(conn))
        return {"indexed": len(ids), "pending": False}
    meta_set(conn, "backfill_next_id", ids[-1] + 1)
    return {"indexed": len(ids), "pending": True}


def finish_backfill(write: Callable[[Callable[[sqlite3.Connection], Any]], Any], report: dict[str, Any],
                    relayout_budget_s: float | None = None) -> None:
    """Run :func:`backfill_step` through ``write`` (one transaction per call, e.g.
    ``SessionDB._execute_write``) until no build is pending; adds ``"backfilled": int`` to ``report``.
    Then a pending layout-2 -> 3 move runs for at most ``relayout_budget_s`` seconds (``None``: to
    the end; :func:`hermes_memory.sessions.hmrelayout.finish`)."""
    done = 0
    while True:
        step = write(backfill_step)
        done += step["indexed"]
        if not step["pending"]:
            break
    report["backfilled"] = done
    hmrelayout.finish(write, report, relayout_budget_s)


def integrity_ok(conn: sqlite3.Connection) -> bool:
    """FTS5 ``integrity-check`` of our two tables (index against its stored copy). True if both pass."""
    try:
        for table in (MAIN, CJK):
            conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('integrity-check', 1)")
    except FTS_ERRORS as exc:
        logger.warning("hermes-memory full-text index failed its integrity check: %s", exc)
        return False
    return True


def _probe(conn: sqlite3.Connection) -> None:
    """Write and read one throw-away row in both tables, rolled back: raises the FTS5 corruption
    error when our index would reject the next message write (ours or the reference's, since our
    triggers run in its transactions too)."""
    conn.execute("SAVEPOINT hm_probe")
    try:
        conn.execute(f"INSERT INTO {MAIN}(rowid, content) VALUES (-1, 'hm probe')")
        conn.execute(f"INSERT INTO {CJK}(rowid, content) VALUES (-1, 'hm probe')")
        conn.execute(f"SELECT rowid FROM {MAIN} WHERE {MAIN} MATCH 'probe' LIMIT 1").fetchall()
    finally:
        conn.execute("ROLLBACK TO hm_probe")
        conn.execute("RELEASE hm_probe")


VERIFY_BATCH = 20_000
"""Rows whose stored copy is compared with ``messages`` per open while a verification is pending
(0.1-0.15 s per batch on the 2-core test machine, bench/reference_home.py); bounds the work of one
open whatever the database size."""


def _ids_source(conn: sqlite3.Connection) -> tuple[str, str, tuple[str, ...]]:
    shadow = _content_table(conn)
    if shadow:
        return shadow, "id", ("c0", "c1", "c2", "c3")
    return MAIN, "rowid", hmcontext.COLUMNS


def _catch_up(conn: sqlite3.Connection) -> dict[str, Any]:
    """Index rows above the high-water mark; find rows deleted (or missing) below it by comparing
    counts first and the two id sets only when the counts differ."""
    t0 = time.perf_counter()
    hwm = max_indexed(conn)
    new_ids = [r[0] for r in conn.execute("SELECT id FROM messages WHERE id > ? ORDER BY id", (hwm,))]
    src, key, _cols = _ids_source(conn)
    deleted: list[int] = []
    missing: list[int] = []
    # whole-table count(*) is SQLite's b-tree count (no row is read): ~0.1 ms per 100k rows
    theirs = conn.execute("SELECT count(*) FROM messages").fetchone()[0] - len(new_ids)
    small = f"{MAIN}_docsize" if conn.execute(
        "SELECT 1 FROM sqlite_master WHERE name = ?", (f"{MAIN}_docsize",)).fetchone() else src
    ours = conn.execute(f"SELECT count(*) FROM {small}").fetchone()[0]
    if theirs != ours:
        deleted = [r[0] for r in conn.execute(f"SELECT {key} FROM {src} WHERE {key} NOT IN (SELECT id FROM messages)")]
        missing = [r[0] for r in conn.execute(
            f"SELECT id FROM messages WHERE id <= ? AND id NOT IN (SELECT {key} FROM {src})", (hwm,))]
    t1 = time.perf_counter()
    _unindex_ids(conn, deleted)
    _index_ids(conn, missing + new_ids)
    return {"added": len(new_ids) + len(missing), "deleted": len(deleted),
            "scan_seconds": round(t1 - t0, 4), "index_seconds": round(time.perf_counter() - t1, 4)}


def _verify_some(conn: sqlite3.Connection) -> dict[str, Any]:
    """Continue a pending verification (``hm_meta.verify_next_id``, set when our triggers were found
    missing): compare up to :data:`VERIFY_BATCH` rows' stored copy with ``messages`` and re-index the
    rows changed while we were away. Clears the mark when every row was checked."""
    start = meta_get(conn, "verify_next_id")
    if start is None:
        return {"changed": 0, "verified": 0, "verify_pending": False}
    src, key, (c0, c1, c2, c3) = _ids_source(conn)
    rows = conn.execute(
        f"SELECT m.id, f.{c0} IS NOT {_body('m')} OR f.{c1} IS NOT m.tool_name OR f.{c2} IS NOT {_calls('m')} "
        f"OR f.{c3} IS NOT ({hmcontext.context('m')}) "
        f"FROM messages m JOIN {src} f ON f.{key} = m.id WHERE m.id >= ? ORDER BY m.id LIMIT ?",
        (int(start), VERIFY_BATCH)).fetchall()
    changed = [r[0] for r in rows if r[1]]
    _unindex_ids(conn, changed)
    _index_ids(conn, changed)
    if len(rows) < VERIFY_BATCH:
        conn.execute(f"DELETE FROM {META} WHERE key = 'verify_next_id'")
    else:
        meta_set(conn, "verify_next_id", rows[-1][0] + 1)
    return {"changed": len(changed), "verified": len(rows), "verify_pending": len(rows) >= VERIFY_BATCH}


def sync(conn: sqlite3.Connection) -> dict[str, Any]:
    """Make our objects exist and match ``messages`` (see the module doc). Runs in the caller's
    transaction. Returns ``{"action": "none" | "built" | "caught_up" | "rebuilt", "triggers_missing":
    bool, "added": int, "deleted": int, "changed": int, "verified": int, "verify_pending": bool,
    "seconds": float}`` (plus ``scan_seconds`` / ``index_seconds`` after a catch-up); ``"rebuilt"``
    only when our index proved damaged."""
    t0 = time.perf_counter()
    have = _objects(conn)
    report: dict[str, Any] = {"action": "none", "triggers_missing": False, "added": 0, "deleted": 0, "changed": 0,
                              "verified": 0, "verify_pending": False}
    if MAIN not in have or CJK not in have or META not in have:
        report["action"] = "built"
        report["added"] = full_build(conn, "first open" if MAIN not in have else "table missing")
    elif meta_get(conn, "backfill_next_id") is not None:
        report["action"] = "built"  # a build another open started; finish_backfill completes it
    elif hmrelayout.pending(conn) or hmrelayout.is_old_layout(conn, have.get(MAIN)):
        _relayout(conn, have, report)
    else:
        _check_rank(conn)
        triggers_ok = all(_norm(have.get(n)) == _norm(sql) for n, sql in TRIGGER_SQL.items())
        report["triggers_missing"] = not triggers_ok
        if triggers_ok and not all(_norm(have.get(n)) == _norm(sql) for n, sql in CHANGE_TRIGGER_SQL.items()):
            _install_change_triggers(conn)  # a home indexed before they existed (or they were dropped)
        try:
            _probe(conn)
            top = conn.execute("SELECT max(id) FROM messages").fetchone()[0] or 0
            if not triggers_ok or max_indexed(conn) != top:
                if not triggers_ok:
                    install_triggers(conn)
                    meta_set(conn, "verify_next_id", 0)  # rows may have changed anywhere meanwhile
                report.update(_catch_up(conn))
                report["action"] = "caught_up"
                _bump(conn, "catch_ups")
                meta_set(conn, "high_water_mark", max_indexed(conn))
            report.update(_verify_some(conn))
            if report["changed"] and report["action"] == "none":
                report["action"] = "caught_up"
        except FTS_ERRORS as exc:
            if not is_damage(exc) or integrity_ok(conn):
                raise
            report["action"] = "rebuilt"
            report["added"] = full_build(conn, f"index damaged: {exc}")
    report["seconds"] = round(time.perf_counter() - t0, 4)
    return report


def _relayout(conn: sqlite3.Connection, have: dict[str, str | None], report: dict[str, Any]) -> None:
    """Start or continue the move to the current layout (:mod:`hermes_memory.sessions.hmrelayout`); rebuild
    from scratch when our triggers went missing meanwhile (the old index may then lack rows)."""
    current = hmrelayout.pending_current(conn)
    if current:
        intact = hmrelayout.triggers_intact(have)
    else:  # none under way, or one an older version started towards an older layout: start anew
        intact = all(n in have for n in INDEX_TRIGGER_NAMES)
    if not intact:
        hmrelayout.abandon(conn)
        report["action"] = "built"
        report["triggers_missing"] = True
        report["added"] = full_build(conn, f"our triggers missing before layout {LAYOUT_VERSION} was in place")
        return
    if not current:
        hmrelayout.start(conn)
    report["action"] = "relayout"


def _check_rank(conn: sqlite3.Connection) -> None:
    """Store the current column weights as our index's rank when they changed (an upgrade)."""
    try:
        row = conn.execute(f"SELECT v FROM {MAIN}_config WHERE k = 'rank'").fetchone()
    except sqlite3.OperationalError:
        return
    if row is None or row[0] != rank_value():
        set_rank(conn)
