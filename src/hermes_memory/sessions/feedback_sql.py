"""The SQLite side of :func:`hermes_memory.sessions.feedback.expand`: the reads it needs, as
callables over one connection (three or four small statements per search; a document frequency
is cached per connection by :class:`hermes_memory.sessions.term_stats.TermStats`)."""

from __future__ import annotations

import logging
import sqlite3
from typing import Any

from hermes_memory.sessions import feedback, hmcontext, term_stats
from hermes_memory.sessions import fts as fts_mod
from hermes_memory.sessions.codec import decode_content
from hermes_memory.sessions.signals import RankSignals

logger = logging.getLogger("hermes_memory.sessions.db")


def run(conn: sqlite3.Connection, stats: term_stats.TermStats, plan: fts_mod.QueryPlan, filters: Any,
        sort: str | None, order: list[int], hits: dict[int, float], sessions: dict[int, str],
        rank_signals: RankSignals | None, *, pool: int, rank_sql: str | None,
        kept_rows: dict[int, sqlite3.Row] | None = None) -> list[int]:
    """``order`` after the feedback pass (:func:`hermes_memory.sessions.feedback.expand`) for one
    SQLite relevance search (``filters``: its ``SearchFilters``; ``pool``: the rerank pool;
    ``rank_sql``: the index's rank expression). ``kept_rows`` receives id -> row of the rows its
    filter check read (:func:`hermes_memory.sessions.message_search.filtered_head`'s
    ``kept_rows``, without texts). A SQLite error is logged and leaves ``order`` as it was:
    feedback must never fail a search."""
    from hermes_memory.sessions.message_search import (  # the caller's module
        build_search_sql,
        filtered_head,
        head_applies,
    )

    # the filtered head (rank first, then the filter check) when the first statement could use it
    by_head = head_applies(plan, filters, rank_sql)

    def texts(ids: list[int]) -> dict[int, str]:
        if not ids:
            return {}
        rows = conn.execute(f"SELECT id, content FROM messages WHERE id IN ({','.join('?' * len(ids))})", ids)
        return {int(r[0]): t for r in rows if isinstance(t := decode_content(r[1]), str)}

    def doc_freqs(words: list[str]) -> tuple[dict[str, int], int]:
        st = stats.stems(conn, words)
        dfs = stats.doc_freqs(conn, [[(w, st.get(w))] for w in words])
        n_rows = conn.execute("SELECT max(id) FROM messages").fetchone()[0] or 0
        return dict(zip(words, dfs, strict=True)), int(n_rows)

    def search(words: list[str]) -> dict[int, float]:
        expr = fts_mod.build_query(" ".join(words)).fts
        if not expr:
            return {}
        expr = hmcontext.own_text(expr)  # rows that name the words themselves, not the turn after them
        limit = min(pool, feedback.FEEDBACK_POOL)
        if by_head and rank_sql:
            # the first pass's hits passed these filters: only the other rows are checked
            head = filtered_head(conn, plan, filters, limit=limit, fts_expr=expr, min_rowid=None, rank_sql=rank_sql,
                                 known=hits, kept_rows=kept_rows)
            if head is not None:
                return dict(head)
        sql, params = build_search_sql("fts", plan, filters, sort, limit=limit, fts_expr=expr, rank_sql=rank_sql)
        return {int(r["id"]): float(r["rank"]) for r in conn.execute(sql, params).fetchall()}

    def sessions_of(ids: list[int]) -> dict[int, str]:
        out: dict[int, str] = {}
        term_stats.read_candidates(conn, ids, out, None)
        return out

    try:
        out, _terms = feedback.expand(order, hits, sessions, rank_signals, feedback.query_words(plan), texts=texts,
                                      stems=lambda ws: stats.stems(conn, ws), doc_freqs=doc_freqs,
                                      search=search, sessions_of=sessions_of)
        return out
    except sqlite3.Error as exc:
        logger.warning("relevance feedback unavailable, first order kept: %s", exc)
        return order
