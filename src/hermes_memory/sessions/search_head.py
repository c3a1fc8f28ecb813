"""A filtered relevance search's best rows, read by rank first and checked against the filters in
chunks (SQLite); the rows it checks are kept for the rest of the search.

:func:`filtered_head` answers what the joined ``"fts"`` statement of
:func:`hermes_memory.sessions.message_search.build_search_sql` answers, without joining
``messages`` and ``sessions`` for every row the FTS query matches: it reads the matches best
first from the FTS5 table alone (``head``) and checks only as many of them as it needs
(``keep``), ``limit`` first, then more when some failed. The rows it checked are returned as
rows of :data:`KEEP_COLUMNS`, so the search does not read them again
for their session ids or, in discovery, for its result rows.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Container
from typing import Any

KEEP_COLUMNS = ("m.session_id AS session_id, m.role AS role, m.timestamp AS timestamp, m.tool_name AS tool_name, "
                "s.source AS source, s.model AS model, s.title AS title, s.user_id AS user_id, "
                "s.started_at AS session_started")
"""What the ``keep`` check selects beside ``m.id`` when it joins ``sessions``: the columns of a
search result row without its text (:func:`hermes_memory.sessions.search_rows.result_row`)."""
TEXT_COLUMNS = ", m.content AS content, m.tool_calls AS tool_calls"
"""What it adds when the search will read the rows' texts (the dropped-word check)."""


def filtered_head(conn: sqlite3.Connection, head_sql: tuple[str, list[Any]], keep_sql: Any, *, limit: int,
                  factor: int, kept_rows: dict[int, sqlite3.Row] | None = None,
                  known: Container[int] = ()) -> list[tuple[int, float]] | None:
    """The first ``limit`` rows of the ``head_sql`` statement (``(id, rank)`` best first, at most
    ``factor`` x ``limit`` rows) that pass ``keep_sql(ids) -> (sql, params)`` (a statement
    selecting ``id`` and, when it joins ``sessions``, :data:`KEEP_COLUMNS`); ``None`` when fewer
    than ``limit`` of the ``factor`` x ``limit`` rows pass (rows further down might: the caller
    runs the joined statement), all the passing rows when the head held fewer than that.

    Checks ``limit`` rows first and then, while the page is short, as many more as the pass rate so
    far says it needs (plus 8), so an unfiltered-looking home (every row passes) checks ``limit``
    rows instead of ``factor`` x ``limit``. ``kept_rows``, when given, receives id -> row
    (``sqlite3.Row`` of :data:`KEEP_COLUMNS`) of every passing row the check read with them.
    ``known``: ids the caller knows pass (a statement under the same filters returned them); they
    are not checked again (nor put in ``kept_rows``)."""
    cap = factor * limit
    cur = conn.execute(*head_sql)
    try:
        rows: list[tuple[int, float]] = []
        seen = 0
        while len(rows) < limit and seen < cap:
            need = limit - len(rows)
            size = need if not seen else min(cap - seen, math.ceil(need * seen / max(len(rows), 1)) + 8)
            chunk = [(int(r[0]), float(r[1])) for r in cur.fetchmany(size)]
            if not chunk:
                return rows  # the head held every match
            seen += len(chunk)
            ask = [i for i, _ in chunk if i not in known]
            checked = conn.execute(*keep_sql(ask)).fetchall() if ask else []
            passed = {int(r[0]) for r in checked}
            passed.update(i for i, _ in chunk if i in known)
            if kept_rows is not None and checked and "session_started" in checked[0].keys():
                kept_rows.update((int(r[0]), r) for r in checked)
            rows += [(i, rank) for i, rank in chunk if i in passed]
        if len(rows) < limit and seen == cap:
            return None
        return rows[:limit]
    finally:
        cur.close()


def rows_read(kept: dict[int, sqlite3.Row], ids: list[int], sessions: dict[int, str],
              texts: dict[int, tuple[Any, Any, Any]]) -> None:
    """Fill ``sessions`` (id -> session id) and, when the check read them (:data:`TEXT_COLUMNS`),
    ``texts`` (id -> ``(content, tool_name, tool_calls)``) for the ``ids`` whose row ``kept`` holds."""
    with_text: bool | None = None
    for i in ids:
        r = kept.get(i)
        if r is None:
            continue
        if with_text is None:
            with_text = "content" in r.keys()  # every row of one check has the same columns
        sessions[i] = r["session_id"]
        if with_text:
            texts[i] = (r["content"], r["tool_name"], r["tool_calls"])


def joined(text: tuple[Any, Any, Any]) -> str:
    """The searchable text of a message for the dropped-word check: content, tool name and tool
    calls joined by a space, empty ones left out (as :func:`hermes_memory.sessions.term_stats.read_candidates`
    reads it)."""
    return " ".join(x for x in text if x)
