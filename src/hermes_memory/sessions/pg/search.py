"""Message search on PostgreSQL: ``search_messages`` and ``snippets_for`` of
:class:`~hermes_memory.sessions.pg.PgSessionDB` (:class:`PgMessageSearchMethods`, a mixin over
its ``_connection()``), with the signatures, result shapes, filters, ordering and error
behaviour of SQLite's (:class:`hermes_memory.sessions.message_search.MessageSearchMethods`).

A query is planned by the same :func:`hermes_memory.sessions.fts.build_query` as on SQLite and
translated by :mod:`hermes_memory.sessions.pg.tsquery`. It then runs in the same steps: weighted
candidates from the GIN index of ``search_vector`` (``"fts"``: ``ts_rank_cd`` per term times the
term's BM25 IDF, under the same posting budget and recency window,
:mod:`hermes_memory.sessions.pg.terms`), under relevance a top-up with the newest rows of the
full query when the budget left the page short (``"top_up"``), and the rows the full-text index
cannot find (:func:`found_steps`): for a query holding CJK, CJK rows from the partial ``pg_trgm``
index (``"cjk"``, one statement for the 3+ character literals and one per shorter CJK literal);
for any other query, its words written against CJK text (``用Python写``) from the partial word
index of CJK rows (``"glued"``, no trigram scan). The candidates and these lookups go in one
statement (:func:`hermes_memory.sessions.pg.search_sql.one_statement`), after one statement for
the row count and term counts. Statements whose plan depends on the query's words or the filters
are sent unprepared (``prepare=False``): planned for their values each time, never with a generic
plan (:data:`hermes_memory.sessions.pg.connection.PLAN_CACHE_MODE` says why). Relevance order is then
:func:`hermes_memory.sessions.ranking.rerank`, as on SQLite; snippets are built by the same
:class:`hermes_memory.sessions.fts.Highlighter`.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

import psycopg

from hermes_memory.errors import SessionStoreError
from hermes_memory.sessions import feedback, ranking, speaker_focus, speakers
from hermes_memory.sessions import fts as fts_mod
from hermes_memory.sessions.literal_terms import literal_terms
from hermes_memory.sessions.message_search import (
    SearchFilters,
    context_row,
    merge_hits,
    message_snippet,
    page_bounds,
    rank_signals,
    result_row,
    sort_order,
    time_sort,
)
from hermes_memory.sessions.pg import feedback_pg, speaker_focus_pg
from hermes_memory.sessions.pg.search_sql import Scoring, build_pg_search_sql, one_statement
from hermes_memory.sessions.pg.terms import PgTermStats
from hermes_memory.sessions.pg.tsquery import TsPlan, ts_plan
from hermes_memory.sessions.search_filters import refused_search, role_problem
from hermes_memory.sessions.search_rows import Ranked, Texts, literal_page

logger = logging.getLogger("hermes_memory.sessions.pg")

CJK_ROWS = 50
"""Rows each CJK statement reads at least (SQLite reads 50 per CJK step too)."""
SERIAL_SQL = "SET LOCAL max_parallel_workers_per_gather = 0"
"""Sent before a statement holding a CJK or glued step (:func:`serial_rows`): planned without
parallel workers. The planner has no statistics for those steps' partial indexes (``ANALYZE``
samples an index expression only on rows the predicate keeps; a history without CJK text has
none), so it guesses thousands of rows (14,926 at 1M messages of bench/natural_corpus.py) and runs
the step as a Gather Merge over a Parallel Bitmap Heap Scan: two workers started for a step that
returns nothing, 175-185 ms of a 1.2 s statement measured with ``auto_explain`` at 1M messages on a
loaded 2-core machine (bench/pg_search_ab.py --corpus natural). The steps read a partial index of
the CJK rows and at most a few hundred rows; one process reads them faster than it starts two."""


class PgMessageSearchMethods:
    """Message search of :class:`~hermes_memory.sessions.pg.PgSessionDB` (see the module doc)."""

    _connection: Any  # the store's pooled-connection context manager
    _read: Any  # the store's reader, PgSessionDB._read

    @functools.cached_property
    def _pg_terms(self) -> PgTermStats:
        """Stem cache of this database object."""
        return PgTermStats()

    def search_messages(
        self,
        query: str,
        source_filter: list[str] | str | None = None,
        exclude_sources: list[str] | str | None = None,
        role_filter: list[str] | str | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
        since: float | None = None,
        until: float | None = None,
        limit: int = 20,
        offset: int = 0,
        sort: str | None = None,
        exclude_session_ids: list[str] | None = None,
        raise_errors: bool = False,
        with_context: bool = True,
        with_snippet: bool = True,
        query_syntax: bool = False,
        cwd_prefix: str | None = None,
    ) -> list[dict[str, Any]]:
        """Full-text search over all messages; any string is accepted and nothing is raised.

        The same contract as :meth:`hermes_memory.sessions.db.SessionDB.search_messages` (query
        planning, filters, ``sort``, paging, result dicts): ``id, session_id, role, snippet``
        (matches wrapped in ``>>>``/``<<<``), ``timestamp, tool_name, source, model, title,
        user_id, session_started``, ``context`` (previous, this and next message of the session,
        each ``{"id", "role", "content"}`` cut to 200 chars; ``[]`` without ``with_context``) and
        ``rank``: minus the weighted ``ts_rank_cd`` score (lower is better, like BM25's rank;
        ``None`` for rows found only by the CJK trigram index). An empty or unsearchable query
        returns ``[]``. A database failure returns ``[]`` and is logged, unless ``raise_errors``
        is set, when :class:`SessionStoreError` is raised.
        """
        try:
            filters = _clean_filters(SearchFilters.from_args(source_filter, exclude_sources, role_filter, session_id,
                                                             user_id, since, until, exclude_session_ids, cwd_prefix))
            if bad_role := role_problem(filters.roles, self._read):
                return refused_search(bad_role, raise_errors)
            return self._pg_search(query, filters, *page_bounds(limit, offset), sort, with_context, with_snippet,
                                   query_syntax)
        except (SessionStoreError, psycopg.Error) as exc:
            if raise_errors:
                if isinstance(exc, SessionStoreError):
                    raise
                raise SessionStoreError(f"search failed: {str(exc).splitlines()[0] if str(exc) else exc}") from exc
            logger.warning("session search for %r failed: %s", query, exc)
            return []

    def _pg_search(
        self,
        query: str,
        filters: SearchFilters,
        limit: int,
        offset: int,
        sort: str | None,
        with_context: bool,
        with_snippet: bool,
        query_syntax: bool,
    ) -> list[dict[str, Any]]:
        if limit <= 0:
            return []
        terms = literal_terms(query)
        if not terms:
            found = self._pg_ranked(query, filters, offset + limit, sort, query_syntax)
            page = [(i, found) for i in found.ids[offset:offset + limit]] if found is not None else []
        else:
            page = literal_page(lambda q, n: self._pg_ranked(q, filters, n, sort, query_syntax),
                                self._pg_texts, query, terms, offset, limit, sort)
        if not page:
            return []
        with self._connection() as conn:
            shaped: dict[int, dict[str, Any]] = {}
            for found in {id(r): r for _, r in page}.values():
                ids = [i for i, r in page if r is found]
                shaped.update((row["id"], row) for row in self._pg_materialise(
                    conn, ids, found.hits, found.plan, with_context, with_snippet))
            return [shaped[i] for i, _ in page if i in shaped]

    def _pg_texts(self, ids: list[int]) -> Texts:
        """The :data:`~hermes_memory.sessions.search_rows.Texts` of messages (unknown ids left out)."""
        with self._connection() as conn:
            return {int(r[0]): (r[1], r[2], r[3]) for r in conn.execute(
                "SELECT id, content, tool_name, tool_calls FROM messages WHERE id = ANY(%s)", [ids]).fetchall()}

    def _pg_ranked(self, query: str, filters: SearchFilters, want: int, sort: str | None,
                   query_syntax: bool) -> Ranked | None:
        """The ids of ``query``'s best ``want`` results and more, in result order (``None`` for a
        query with nothing to search): the steps of the module doc, then the rerank or time sort."""
        plan = fts_mod.build_query(query, syntax=query_syntax)
        if plan.empty or want <= 0:
            return None
        ts = ts_plan(plan)
        order_kind = sort_order(sort)
        relevance = order_kind == "relevance"
        with self._connection() as conn:
            hits: dict[int, float] = {}  # id -> rank (minus the score; lower is better)
            sessions: dict[int, str] = {}
            found: dict[int, float] = {}  # id -> timestamp, rows of the CJK/glued steps
            extra = found_steps(ts, filters, sort, want)
            first: tuple[str, Scoring, int | None] | None = None
            if ts.query:
                first = self._fts_hits(conn, plan, ts, filters, sort, want, hits, sessions, extra, found)
            elif extra:
                sql, params = one_statement(extra)
                for r in serial_rows(conn, sql, params):
                    found.setdefault(int(r[1]), float(r[3]))
            sig = rank_signals(conn, query, hits, sessions, filters, "%s") if hits and relevance and plan.context else None
            ids = merge_hits(hits, sessions, found, relevance, sig)
            if relevance and plan.context and hits and feedback.active(False):  # names of the best hits search again
                ids = feedback_pg.run(conn, self._pg_terms, plan, ts, filters, sort, ids, hits, sessions, sig,
                                      pool=max(want, ranking.RERANK_POOL))
            # a question naming someone who said some of the candidates: their own turns (speaker_focus)
            names = speakers.query_names(query) if sig is not None and sig.spoken else frozenset()
            if names and first is not None and first[0] and speaker_focus.pass_active(False):
                ids = speaker_focus_pg.run_pass(conn, ts, filters, sort, ids, names, query=first[0], scoring=first[1],
                                                min_id=first[2])
            if names:
                ids = speaker_focus_pg.tail(conn, names, ids)
            times: dict[int, float] = {}
            if ids and not relevance:
                times = {int(r[0]): float(r[1]) for r in conn.execute(
                    "SELECT id, timestamp FROM messages WHERE id = ANY(%s)", [ids]).fetchall()}
                time_sort(ids, times, order_kind)
            return Ranked(ids, hits, plan, times=times)

    def _fts_hits(
        self,
        conn: Any,
        plan: fts_mod.QueryPlan,
        ts: TsPlan,
        filters: SearchFilters,
        sort: str | None,
        want: int,
        hits: dict[int, float],
        sessions: dict[int, str],
        extra: list[tuple[str, list[Any]]],
        found: dict[int, float],
    ) -> tuple[str, Scoring, int | None] | None:
        """Fill ``hits`` (id -> rank) and ``sessions`` (id -> session id) from the tsvector index,
        and ``found`` (id -> timestamp) from the ``extra`` statements (:func:`found_steps`), which
        travel with the first full-text statement in one round trip. Returns the first statement's
        tsquery, scoring and recency window under relevance (``None`` under a time sort)."""
        relevance = sort_order(sort) == "relevance"
        if not relevance:
            first = build_pg_search_sql("fts", ts, filters, sort, limit=want)
        else:
            tp = self._pg_terms.plan_terms(conn, plan, ts)
            scoring = Scoring(tuple(tp.terms), tuple(tp.idfs()))
            pool = max(want, ranking.RERANK_POOL)
            first = build_pg_search_sql("fts", ts, filters, sort, limit=pool, query=tp.query, scoring=scoring,
                                        min_id=tp.min_id, context=plan.context)
        sql, params = one_statement([first, *extra])
        rows = serial_rows(conn, sql, params) if extra else conn.execute(sql, params, prepare=False).fetchall()
        for r in rows:
            if r[0] == 0:
                hits[int(r[1])] = -float(r[3])
                sessions[int(r[1])] = r[2]
            else:
                found.setdefault(int(r[1]), float(r[3]))
        if not relevance:
            return None
        if hits and tp.dropped:
            best = sorted(hits, key=hits.__getitem__)[:ranking.DROPPED_TERM_ROWS]
            self._pg_terms.score_dropped(conn, hits, best, tp)
        if (tp.dropped or tp.min_id) and len(hits) < want:
            # the posting budget or the recency window left the page short: fill it with the
            # newest rows of the full query, scored on every term, so no match is lost
            full = Scoring(tuple(tp.terms) + tuple(t for t, _ in tp.dropped),
                           tuple(tp.idfs()) + tuple(ranking.bm25_idf(tp.n_rows, df) for _, df in tp.dropped))
            sql, params = build_pg_search_sql("top_up", ts, filters, sort, limit=want + len(hits), scoring=full,
                                              context=plan.context)
            for r in conn.execute(sql, params, prepare=False).fetchall():
                if len(hits) >= want:
                    break
                if int(r[0]) not in hits:
                    hits[int(r[0])] = -float(r[2])
                    sessions[int(r[0])] = r[1]
        return tp.query or ts.query or "", scoring, tp.min_id

    def _pg_materialise(
        self,
        conn: Any,
        page: list[int],
        hits: dict[int, float],
        plan: fts_mod.QueryPlan,
        with_context: bool,
        with_snippet: bool,
    ) -> list[dict[str, Any]]:
        rows = conn.execute(
            "SELECT m.id, m.session_id, m.role, m.content, m.tool_calls, m.timestamp, m.tool_name, "
            "s.source, s.model, s.title, s.user_id, s.started_at "
            "FROM messages m JOIN sessions s ON s.id = m.session_id WHERE m.id = ANY(%s)",
            [page],
        ).fetchall()
        names = ("id", "session_id", "role", "content", "tool_calls", "timestamp", "tool_name",
                 "source", "model", "title", "user_id", "session_started")
        by_id = {int(r[0]): dict(zip(names, r, strict=True)) for r in rows}
        highlighter = (fts_mod.Highlighter(plan.terms, self._pg_terms.stems_for_terms(conn, plan.terms))
                       if with_snippet else None)
        contexts = self._pg_contexts(conn, [by_id[i] for i in page if i in by_id]) if with_context else {}
        return [result_row(i, by_id[i], message_snippet(highlighter, by_id[i]) if highlighter is not None else None,
                           hits.get(i), contexts.get(i, []))
                for i in page if i in by_id]

    def _pg_contexts(self, conn: Any, rows: list[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
        """id -> [previous, this, next] message of the same session (one statement for the page)."""
        if not rows:
            return {}
        ids = [int(r["id"]) for r in rows]
        got = conn.execute(
            "SELECT x.id, n.id, n.role, n.content FROM unnest(%s::bigint[]) AS x(id) "
            "JOIN messages t ON t.id = x.id "
            "CROSS JOIN LATERAL ("
            " (SELECT id, role, content FROM messages WHERE session_id = t.session_id AND id < t.id ORDER BY id DESC LIMIT 1)"
            " UNION ALL SELECT t.id, t.role, t.content"
            " UNION ALL (SELECT id, role, content FROM messages WHERE session_id = t.session_id AND id > t.id ORDER BY id LIMIT 1)"
            ") AS n(id, role, content)",
            [ids],
        ).fetchall()
        out: dict[int, list[dict[str, Any]]] = {i: [] for i in ids}
        for anchor, mid, role, content in got:
            out[int(anchor)].append(context_row(mid, role, content))
        for ctx in out.values():
            ctx.sort(key=lambda c: c["id"])
        return out

    def snippets_for(self, query: str, message_ids: list[int], query_syntax: bool = False) -> dict[int, str]:
        """``>>>match<<<`` snippets of ``query`` in the given messages (id -> snippet), built the
        same way as :meth:`search_messages` builds them. Unknown ids are left out. Raises
        :class:`SessionStoreError` on a database failure."""
        ids = [int(i) for i in message_ids if -(2**63) <= int(i) < 2**63]
        if not ids:
            return {}
        plan = fts_mod.build_query(query, syntax=query_syntax)
        try:
            with self._connection() as conn:
                hl = fts_mod.Highlighter(plan.terms, self._pg_terms.stems_for_terms(conn, plan.terms))
                rows = conn.execute(
                    "SELECT id, content, tool_name, tool_calls FROM messages WHERE id = ANY(%s)", [ids]
                ).fetchall()
        except psycopg.Error as exc:
            raise SessionStoreError(f"snippets failed: {exc}") from exc
        names = ("id", "content", "tool_name", "tool_calls")
        return {int(r[0]): message_snippet(hl, dict(zip(names, r, strict=True))) for r in rows}


def serial_rows(conn: Any, sql: str, params: list[Any]) -> list[Any]:
    """The rows of ``sql`` run unprepared under :data:`SERIAL_SQL`, in a transaction of its own (a
    savepoint inside a batch's transaction, where the setting then lasts until that transaction
    ends). Raises ``psycopg.Error``."""
    with conn.transaction():
        conn.execute(SERIAL_SQL)
        return list(conn.execute(sql, params, prepare=False).fetchall())


def query_holds_cjk(ts: TsPlan) -> bool:
    """True when the query wrote CJK text to look for (a CJK literal of any length); its words are
    then looked up by substring in the CJK rows, as SQLite does, else as words (:func:`found_steps`)."""
    return bool(ts.like) or any(fts_mod.contains_cjk(lit) for lit in ts.trigram)


def found_steps(ts: TsPlan, filters: SearchFilters, sort: str | None, want: int) -> list[tuple[str, list[Any]]]:
    """The statements finding rows the full-text index cannot: for a query holding CJK
    (:func:`query_holds_cjk`) the trigram ``"cjk"`` steps (one for the 3+ character literals, ASCII
    words included, and one per shorter CJK literal, as before); for any other query one
    ``"glued"`` step for its words written against CJK text (no trigram scan); ``[]`` when the plan
    has no such literal. Each reads at least :data:`CJK_ROWS` rows."""
    limit = max(want, CJK_ROWS)
    if query_holds_cjk(ts):
        steps = [ts.trigram] if ts.trigram else []
        steps += [[lit] for lit in ts.like]
        return [build_pg_search_sql("cjk", ts, filters, sort, limit=limit, literals=lits) for lits in steps]
    if ts.trigram:
        return [build_pg_search_sql("glued", ts, filters, sort, limit=limit, literals=ts.trigram)]
    return []


def _clean_filters(f: SearchFilters) -> SearchFilters:
    """``f`` with NUL characters replaced (PostgreSQL text cannot hold them; no stored value
    has one, so a filter holding one matches what it would match with U+FFFD)."""

    def c(v: Any) -> Any:
        if v is None:
            return None
        v = v if isinstance(v, str) else str(v)  # SQLite compares a number to TEXT as text
        return v.replace("\x00", "\ufffd")

    return SearchFilters([c(x) for x in f.sources], [c(x) for x in f.excluded], [c(x) for x in f.roles],
                         c(f.session_id), c(f.user_id), f.since, f.until, [c(x) for x in f.excluded_sessions],
                         c(f.cwd_prefix))
