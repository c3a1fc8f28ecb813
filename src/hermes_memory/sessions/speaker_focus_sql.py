"""The SQLite side of :mod:`hermes_memory.sessions.speaker_focus`: which rows a named speaker said
(their texts' first characters, read only for rows the search has not read) and the speaker's
pass (one more full-text statement). A SQLite error is logged and leaves the order as it was:
these rules must never fail a search."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Mapping
from typing import Any

from hermes_memory.sessions import hmcontext, speaker_focus, speakers

logger = logging.getLogger("hermes_memory.sessions.db")


def starts(conn: sqlite3.Connection, texts: Mapping[int, Any]) -> speaker_focus.Starts:
    """:data:`hermes_memory.sessions.speaker_focus.Starts` over one connection: ``texts`` (id ->
    the row's stored content, or a tuple starting with it) for rows already read, the first
    :data:`hermes_memory.sessions.speakers.TAG_CHARS` + 1 characters of the others read in one
    statement."""
    def read(ids: list[int]) -> list[tuple[Any, Any]]:
        known: list[tuple[Any, Any]] = []
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
        return known
    return read


def tail(conn: sqlite3.Connection, names: frozenset[str], order: list[int], texts: Mapping[int, Any]) -> list[int]:
    """``order`` after :func:`hermes_memory.sessions.speaker_focus.apply_tail` (``names``: the
    query's words that could name a speaker; ``texts``: id -> stored content of rows read)."""
    try:
        return speaker_focus.apply_tail(order, names, starts(conn, texts))
    except sqlite3.Error as exc:
        logger.warning("speaker tail unavailable, order kept: %s", exc)
        return order


def run_pass(conn: sqlite3.Connection, plan: Any, filters: Any, sort: str | None, order: list[int],
             names: frozenset[str], texts: Mapping[int, Any], *, fts_expr: str, min_rowid: int | None,
             rank_sql: str | None, known: Mapping[int, float]) -> list[int]:
    """``order`` after :func:`hermes_memory.sessions.speaker_focus.apply_pass` for one SQLite
    relevance search: ``fts_expr`` (the search's full-text expression, after its posting budget)
    matched in rows' own text under ``filters`` (``plan``, ``sort``: the search's) and within its
    recency window (``min_rowid``), ordered by ``rank_sql`` as the first statement. ``known``: rows the first statement returned (they passed
    the filters; the filtered head does not check them again)."""
    from hermes_memory.sessions.message_search import (  # the caller's module
        build_search_sql,
        filtered_head,
        head_applies,
    )

    expr = hmcontext.own_text(fts_expr)
    limit = speaker_focus.SPOKEN_POOL

    def search() -> list[int]:
        if rank_sql and head_applies(plan, filters, rank_sql):
            rows = filtered_head(conn, plan, filters, limit=limit, fts_expr=expr, min_rowid=min_rowid,
                                 rank_sql=rank_sql, known=known)
            if rows is not None:
                return [i for i, _ in rows]
        sql, params = build_search_sql("fts", plan, filters, sort, limit=limit, fts_expr=expr, min_rowid=min_rowid,
                                       rank_sql=rank_sql)
        return [int(r["id"]) for r in conn.execute(sql, params).fetchall()]

    try:
        return speaker_focus.apply_pass(order, names, search, starts(conn, texts))
    except sqlite3.Error as exc:
        logger.warning("speaker pass unavailable, order kept: %s", exc)
        return order
