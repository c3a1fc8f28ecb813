"""The PostgreSQL side of :mod:`hermes_memory.sessions.speaker_focus` (the counterpart of
:mod:`hermes_memory.sessions.speaker_focus_sql`): the speakers of the rows it looks at (their
texts' first characters, one statement) and the speaker's pass (one more full-text statement
over rows' own text, scored as the search's first statement). A ``psycopg.Error`` is logged and
leaves the order as it was, except inside a caller's transaction it has aborted, where it is
raised (the next statement would fail anyway)."""

from __future__ import annotations

import logging
from typing import Any

import psycopg

from hermes_memory.sessions import speaker_focus, speakers
from hermes_memory.sessions.message_search import SearchFilters
from hermes_memory.sessions.pg.search_sql import Scoring, build_pg_search_sql
from hermes_memory.sessions.pg.tsquery import TsPlan

logger = logging.getLogger("hermes_memory.sessions.pg")


def starts(conn: Any) -> speaker_focus.Starts:
    """:data:`hermes_memory.sessions.speaker_focus.Starts` over one psycopg connection."""
    def read(ids: list[int]) -> list[tuple[Any, Any]]:
        if not ids:
            return []
        return list(conn.execute(f"SELECT id, substr(content, 1, {int(speakers.TAG_CHARS) + 1}) FROM messages"
                                 " WHERE id = ANY(%s)", [ids]).fetchall())
    return read


def _failed(conn: Any, what: str, exc: psycopg.Error) -> None:
    if conn.info.transaction_status == psycopg.pq.TransactionStatus.INERROR:
        raise exc
    logger.warning("%s unavailable, order kept: %s", what, exc)


def tail(conn: Any, names: frozenset[str], order: list[int]) -> list[int]:
    """``order`` after :func:`hermes_memory.sessions.speaker_focus.apply_tail` (``names``: the
    query's words that could name a speaker)."""
    try:
        return speaker_focus.apply_tail(order, names, starts(conn))
    except psycopg.Error as exc:
        _failed(conn, "speaker tail", exc)
        return order


def run_pass(conn: Any, ts: TsPlan, filters: SearchFilters, sort: str | None, order: list[int],
             names: frozenset[str], *, query: str, scoring: Scoring, min_id: int | None) -> list[int]:
    """``order`` after :func:`hermes_memory.sessions.speaker_focus.apply_pass` for one PostgreSQL
    relevance search: ``query``/``scoring``/``min_id`` those of its first statement (the capped
    tsquery, its terms' BM25 IDFs, the recency window), matched on rows' own text only
    (``context=False``) under ``filters`` and ``ts``'s negated words."""
    def search() -> list[int]:
        sql, params = build_pg_search_sql("fts", ts, filters, sort, limit=speaker_focus.SPOKEN_POOL, query=query,
                                          scoring=scoring, min_id=min_id, context=False)
        return [int(r[0]) for r in conn.execute(sql, params, prepare=False).fetchall()]

    try:
        return speaker_focus.apply_pass(order, names, search, starts(conn))
    except psycopg.Error as exc:
        _failed(conn, "speaker pass", exc)
        return order
