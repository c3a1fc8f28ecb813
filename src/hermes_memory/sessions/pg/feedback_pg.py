"""The PostgreSQL side of :func:`hermes_memory.sessions.feedback.expand`: the reads it needs, as
callables over one psycopg connection (the counterpart of :mod:`hermes_memory.sessions.feedback_sql`).

Statements per search: one for the best rows' texts, one for the stems of their capitalised words
(none when :class:`~hermes_memory.sessions.pg.terms.PgTermStats` holds them all), one for the
document frequencies and ``max(id)`` together (:meth:`~hermes_memory.sessions.pg.terms.PgTermStats.counts`,
which caches the counts while the messages are unchanged) and one expansion full-text statement,
which also returns the session ids of the rows it finds: three or four in all, none when the best
rows name nothing.
"""

from __future__ import annotations

import logging
from typing import Any

import psycopg

from hermes_memory.sessions import feedback
from hermes_memory.sessions import fts as fts_mod
from hermes_memory.sessions.codec import decode_content
from hermes_memory.sessions.message_search import SearchFilters
from hermes_memory.sessions.pg.search_sql import Scoring, build_pg_search_sql
from hermes_memory.sessions.pg.terms import PgTermStats
from hermes_memory.sessions.pg.tsquery import TsPlan, quote_lexeme, term_tsquery, ts_plan
from hermes_memory.sessions.ranking import bm25_idf
from hermes_memory.sessions.signals import RankSignals

logger = logging.getLogger("hermes_memory.sessions.pg")


def run(conn: Any, stats: PgTermStats, plan: fts_mod.QueryPlan, ts: TsPlan, filters: SearchFilters,
        sort: str | None, order: list[int], hits: dict[int, float], sessions: dict[int, str],
        rank_signals: RankSignals | None, *, pool: int) -> list[int]:
    """``order`` after the feedback pass (:func:`hermes_memory.sessions.feedback.expand`) for one
    PostgreSQL relevance search: ``plan``/``ts`` its query plan and tsquery translation (the
    negated words of ``ts`` also leave the expansion's rows out), ``filters`` its filters,
    ``order`` the first order (ids, best first), ``hits`` id -> rank (minus the score, lower is
    better), ``sessions`` id -> session id, ``pool`` the rerank pool. The expansion matches rows'
    own text (not the previous turn's, as on SQLite) and scores each word by its BM25 IDF as the
    first statement does. A ``psycopg.Error`` is logged and leaves ``order`` as it was (feedback
    must never fail a search), except inside a caller's transaction it has aborted, where it is
    raised (the next statement would fail anyway)."""
    found_sessions: dict[int, str] = {}
    dfs_seen: dict[str, int] = {}
    n_seen = [1]

    def texts(ids: list[int]) -> dict[int, str]:
        if not ids:
            return {}
        rows = conn.execute("SELECT id, content FROM messages WHERE id = ANY(%s)", [ids]).fetchall()
        return {int(r[0]): t for r in rows if isinstance(t := decode_content(r[1]), str)}

    def doc_freqs(words: list[str]) -> tuple[dict[str, int], int]:
        st = stats.stems(conn, words)
        dfs, n_rows = stats.counts(conn, [quote_lexeme(w) for w in words], [st.get(w) for w in words])
        dfs_seen.update(zip(words, dfs, strict=True))
        n_seen[0] = n_rows
        return dict(zip(words, dfs, strict=True)), n_rows

    def search(words: list[str]) -> dict[int, float]:
        wplan = fts_mod.build_query(" ".join(words))
        query = ts_plan(wplan).query
        if not query:
            return {}
        single = [t.pieces[0].lower() if len(t.pieces) == 1 and not t.prefix else "" for t in wplan.or_terms]
        scoring = (Scoring(tuple(term_tsquery(t) for t in wplan.or_terms),
                           tuple(bm25_idf(n_seen[0], dfs_seen[w]) for w in single))
                   if single and all(w in dfs_seen for w in single) else Scoring())
        # context=False: rows that name the words themselves match, not the turn after them
        sql, params = build_pg_search_sql("fts", ts, filters, sort, limit=min(pool, feedback.FEEDBACK_POOL),
                                          query=query, scoring=scoring, context=False)
        out: dict[int, float] = {}
        for r in conn.execute(sql, params, prepare=False).fetchall():  # planned for its words
            out[int(r[0])] = -float(r[2])
            found_sessions[int(r[0])] = r[1]
        return out

    def sessions_of(ids: list[int]) -> dict[int, str]:
        known = {i: found_sessions[i] for i in ids if i in found_sessions}
        rest = [i for i in ids if i not in known]
        if rest:  # never for rows of search(): it returned their sessions
            known.update((int(r[0]), r[1]) for r in conn.execute(
                "SELECT id, session_id FROM messages WHERE id = ANY(%s)", [rest]).fetchall())
        return known

    try:
        out, _terms = feedback.expand(order, hits, sessions, rank_signals, feedback.query_words(plan), texts=texts,
                                      stems=lambda ws: stats.stems(conn, ws), doc_freqs=doc_freqs,
                                      search=search, sessions_of=sessions_of)
        return out
    except psycopg.Error as exc:
        if conn.info.transaction_status == psycopg.pq.TransactionStatus.INERROR:
            raise
        logger.warning("relevance feedback unavailable, first order kept: %s", exc)
        return order
