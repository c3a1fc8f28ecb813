"""The SQLite side of :mod:`hermes_memory.sessions.speaker_focus`: which rows a named speaker said
(their texts' first characters, read only for rows the search has not read) and the speaker's
pass (one more full-text statement). A SQLite error is logged and leaves the order as it was:
these rules must never fail a search."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_memory.sessions import hmcontext, speaker_focus, speakers

logger = logging.getLogger("hermes_memory.sessions.db")


def said_by(conn: sqlite3.Connection, names: frozenset[str], ids: Sequence[int],
            texts: Mapping[int, Any]) -> set[int]:
    """Ids of ``ids`` whose text starts with a speaker tag naming one of ``names``
    (:func:`hermes_memory.sessions.speakers.spoken`). ``texts``: id -> content as stored (a tuple's
    first item), for rows already read; the first :data:`hermes_memory.sessions.speakers.TAG_CHARS`
    + 1 characters of the others are read in one statement. Raises ``sqlite3.Error``."""
    known: list[tuple[int, Any]] = []
    unread: list[int] = []
    for i in ids:
        t = texts.get(i)
        if t is None:
            unread.append(i)
        else:
            known.append((i, t[0] if isinstance(t, tuple) else t))
    if unread:
        known += conn.execute(f"SELECT id, substr(content, 1, {int(speakers.TAG_CHARS) + 1}) FROM messages"
                              f" WHERE id IN ({','.join('?' * len(unread))})", unread).fetchall()
    return speakers.spoken(names, known)


def tail(conn: sqlite3.Connection, names: frozenset[str], order: list[int], texts: Mapping[int, Any]) -> list[int]:
    """``order`` after :func:`hermes_memory.sessions.speaker_focus.spoken_tail` (``names``: the
    query's words that could name a speaker; ``texts``: id -> stored content of rows read)."""
    window = speaker_focus.tail_window(order)
    if not names or not window:
        return order
    try:
        return speaker_focus.spoken_tail(order, said_by(conn, names, window, texts))
    except sqlite3.Error as exc:
        logger.warning("speaker tail unavailable, order kept: %s", exc)
        return order


def run_pass(conn: sqlite3.Connection, plan: Any, filters: Any, sort: str | None, order: list[int],
             names: frozenset[str], texts: Mapping[int, Any], *, fts_expr: str, rank_sql: str | None,
             known: Mapping[int, float]) -> list[int]:
    """``order`` fused with the speaker's order (:func:`hermes_memory.sessions.speaker_focus.fuse_spoken`):
    ``fts_expr`` (the search's full-text expression, after its posting budget) matched in rows' own
    text under ``filters``, the best :data:`~hermes_memory.sessions.speaker_focus.SPOKEN_POOL` by
    BM25 (``rank_sql``, as the first statement), those said by a speaker ``names`` names, the first
    :data:`~hermes_memory.sessions.speaker_focus.SPOKEN_ROWS` of them. ``known``: rows the first
    statement returned (they passed the filters; the filtered head does not check them again)."""
    from hermes_memory.sessions.message_search import (  # the caller's module
        build_search_sql,
        filtered_head,
        head_applies,
    )

    expr = hmcontext.own_text(fts_expr)
    limit = speaker_focus.SPOKEN_POOL
    try:
        rows: list[tuple[int, float]] | None = None
        if rank_sql and head_applies(plan, filters, rank_sql):
            rows = filtered_head(conn, plan, filters, limit=limit, fts_expr=expr, min_rowid=None,
                                 rank_sql=rank_sql, known=known)
        if rows is None:
            sql, params = build_search_sql("fts", plan, filters, sort, limit=limit, fts_expr=expr, rank_sql=rank_sql)
            rows = [(int(r["id"]), float(r["rank"])) for r in conn.execute(sql, params).fetchall()]
        ids = [i for i, _ in rows]
        said = said_by(conn, names, ids, texts)
        spoken_order = [i for i in ids if i in said][: max(0, speaker_focus.SPOKEN_ROWS)]
        return speaker_focus.fuse_spoken(order, spoken_order)
    except sqlite3.Error as exc:
        logger.warning("speaker pass unavailable, order kept: %s", exc)
        return order
