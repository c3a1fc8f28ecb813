"""Full-text search over messages: build the SQL (:func:`build_search_sql`, pure), run it
(:meth:`MessageSearchMethods.search_messages`), and shape the results (snippets, context).

A search is planned by :func:`hermes_memory.sessions.fts.build_query`, then runs in steps, each
one SQL statement from :func:`build_search_sql`: BM25 candidates from our FTS5 index
``hm_messages_fts`` (``"fts"``), under relevance a top-up with the newest rows of the full
query when the posting budget left the page short (``"top_up"``), and CJK rows from the trigram
side table ``hm_messages_cjk`` (``"cjk_trigram"``, ``"cjk_like"``). Relevance order comes from
:mod:`hermes_memory.sessions.ranking`; term statistics from
:mod:`hermes_memory.sessions.term_stats`.
"""

from __future__ import annotations

import functools
import json
import logging
import sqlite3
from collections.abc import Container
from typing import Any

from hermes_memory.errors import SessionStoreError
from hermes_memory.sessions import (
    feedback,
    feedback_sql,
    fusion,
    hmcontext,
    ranking,
    search_head,
    signals,
    speaker_focus,
    speaker_focus_sql,
    speakers,
    term_stats,
)
from hermes_memory.sessions import fts as fts_mod
from hermes_memory.sessions import literal_terms as literal_mod
from hermes_memory.sessions.search_filters import (  # noqa: F401  (re-exported: importable here as before)
    MAX_SEARCH_LIMIT,
    SearchFilters,
    as_list,
    broad_filters,
    filter_sql,
    head_applies,
    page_bounds,
    refused_search,
    role_problem,
    sort_order,
)
from hermes_memory.sessions.search_rows import (
    CONTEXT_CHARS,  # noqa: F401  (re-exported)
    Ranked,
    Texts,
    context_row,
    literal_page,
    message_snippet,
    result_row,
    time_sort,
)
from hermes_memory.sessions.storebase import StoreBase

logger = logging.getLogger("hermes_memory.sessions.db")

SNIPPET_TOKENS = 40
"""FTS5 ``snippet()`` length in tokens (reference)."""
SEARCH_STEPS = ("fts", "keep", "top_up", "cjk_trigram", "cjk_like")
"""The statements :func:`build_search_sql` builds."""


def build_search_sql(
    step: str,
    plan: fts_mod.QueryPlan,
    filters: SearchFilters,
    sort: str | None,
    *,
    limit: int,
    fts_expr: str | None = None,
    min_rowid: int | None = None,
    pattern: str | None = None,
    rank_sql: str | None = None,
    ids: list[int] | None = None,
    head: bool = False,
    text: bool = False,
    skip: list[int] | None = None,
) -> tuple[str, list[Any]]:
    """One statement of a search, as ``(sql, params)``; every statement selects ``id`` and
    ``rank`` (``"fts"``, ``"top_up"``) or ``id`` and ``ts`` (the CJK steps), at most ``limit`` rows.

    ``step`` (one of :data:`SEARCH_STEPS`):

    * ``"fts"``: rows matching ``fts_expr`` (default ``plan.fts``) in ``sort`` order (BM25 rank,
      then newest id, under relevance); ``min_rowid`` keeps row ids ``>= min_rowid``. Unfiltered
      relevance reads the FTS5 table alone and stops at ``limit``: ordered by ``rank_sql`` (the
      index's rank as an explicit ``bm25(...)`` call, :func:`hermes_memory.sessions.term_stats.rank_sql`;
      SQLite's sorter, faster than FTS5's own) then ascending rowid, as FTS5 orders ties; without
      ``rank_sql`` by FTS5's ``rank`` column.
      With ``head``: the best ``limit`` rows by ``rank_sql`` (else FTS5's ``rank``), ties newest
      first, ignoring every filter: the order the filtered statement sorts in (:func:`filtered_head`).
    * ``"keep"``: which of ``ids`` pass ``filters`` and the negated words (selects ``id`` and,
      when the filters join ``sessions``, :data:`hermes_memory.sessions.search_head.KEEP_COLUMNS`,
      with ``text`` also ``content`` and ``tool_calls``).
    * ``"top_up"``: the newest rows matching the full ``plan.fts``; when the filters join
      ``sessions``, with :data:`hermes_memory.sessions.search_head.KEEP_COLUMNS` (and with ``text``
      ``content`` and ``tool_calls``) as ``"keep"`` selects them. ``skip``: row ids left out
      (the rows the search already holds), so they are neither joined nor scored again.
    * ``"cjk_trigram"``: rows of the trigram side table matching ``plan.cjk_trigram``;
      ``"cjk_like"``: rows whose content or tool name contains ``pattern`` (a ``LIKE`` pattern,
      ``\\`` escapes). Newest row first under relevance, else in ``sort``'s time order.

    Every step applies ``filters`` and the query's negated words (``plan.exclude_like``; the
    CJK steps also ``plan.exclude_fts``). Raises ``ValueError`` for an unknown step.
    """
    cond, params, needs_session = filter_sql(filters)
    order_kind = sort_order(sort)
    relevance = order_kind == "relevance"
    join_s = " JOIN sessions s ON s.id = m.session_id" if needs_session else ""
    # words after NOT: CJK literals leave every result, other words leave the CJK side too
    neg_like = "".join(
        " AND m.id NOT IN (SELECT rowid FROM hm_messages_cjk WHERE content LIKE ? ESCAPE '\\'"
        " OR tool_name LIKE ? ESCAPE '\\')" for _ in plan.exclude_like
    )
    neg_like_params = [p for lit in plan.exclude_like for p in ["%" + fts_mod.like_escape(lit) + "%"] * 2]
    from_fts = "SELECT m.id AS id, hm_messages_fts.rank AS rank FROM hm_messages_fts " \
               "JOIN messages m ON m.id = hm_messages_fts.rowid" + join_s
    own = not (relevance and plan.context)  # neighbours' text matches only relevance questions
    if step == "fts":
        expr = plan.fts if fts_expr is None else fts_expr
        expr = hmcontext.own_text(expr) if own and expr else expr
        window = " AND hm_messages_fts.rowid >= ?" if min_rowid else ""
        wparams = [min_rowid] if min_rowid else []
        if head:
            return (f"SELECT rowid AS id, {rank_sql or 'rank'} AS rank FROM hm_messages_fts WHERE hm_messages_fts MATCH ?"
                    + window + " ORDER BY rank, rowid DESC LIMIT ?", [expr, *wparams, limit])
        if not cond and not neg_like and relevance:
            if rank_sql:
                return (f"SELECT rowid AS id, {rank_sql} AS rank FROM hm_messages_fts WHERE hm_messages_fts MATCH ?"
                        + window + " ORDER BY rank, rowid LIMIT ?", [expr, *wparams, limit])
            return ("SELECT rowid AS id, rank FROM hm_messages_fts WHERE hm_messages_fts MATCH ?"
                    + window + " ORDER BY rank LIMIT ?", [expr, *wparams, limit])
        order = {"newest": "m.timestamp DESC, m.id DESC", "oldest": "m.timestamp ASC, m.id ASC",
                 "relevance": "hm_messages_fts.rank, m.id DESC"}[order_kind]
        return (from_fts + " WHERE hm_messages_fts MATCH ?" + window + cond + neg_like + f" ORDER BY {order} LIMIT ?",
                [expr, *wparams, *params, *neg_like_params, limit])
    if step == "keep":
        marks = ",".join("?" * len(ids or []))
        cols = (", " + search_head.KEEP_COLUMNS + (search_head.TEXT_COLUMNS if text else "")) if needs_session else ""
        return (f"SELECT m.id AS id{cols} FROM messages m{join_s} WHERE m.id IN ({marks})" + cond + neg_like,
                [*(ids or []), *params, *neg_like_params])
    if step == "top_up":
        full = hmcontext.own_text(plan.fts) if own and plan.fts else plan.fts
        if needs_session:  # the row's columns come with it (the search keeps them, as the filter check's)
            cols = ", " + search_head.KEEP_COLUMNS + (search_head.TEXT_COLUMNS if text else "")
            from_fts = from_fts.replace(" FROM hm_messages_fts ", cols + " FROM hm_messages_fts ", 1)
        # one statement text whatever the count (json_each): the statement cache keeps it
        left_out = " AND hm_messages_fts.rowid NOT IN (SELECT value FROM json_each(?))" if skip else ""
        skip_params = [json.dumps(skip)] if skip else []
        return (from_fts + " WHERE hm_messages_fts MATCH ?" + left_out + cond + neg_like
                + " ORDER BY hm_messages_fts.rowid DESC LIMIT ?", [full, *skip_params, *params, *neg_like_params, limit])
    neg_fts = " AND m.id NOT IN (SELECT rowid FROM hm_messages_fts WHERE hm_messages_fts MATCH ?)" if plan.exclude_fts else ""
    neg_fts_params = [hmcontext.own_text(" OR ".join(plan.exclude_fts))] if plan.exclude_fts else []
    base = "SELECT m.id AS id, m.timestamp AS ts FROM hm_messages_cjk c JOIN messages m ON m.id = c.rowid" + join_s
    # Under newest/oldest the side table is read in that time order (row ids need not follow
    # timestamps: imported history); relevance takes the newest rows.
    by_time = "m.timestamp ASC, m.id ASC" if order_kind == "oldest" else "m.timestamp DESC, m.id DESC"
    tail = [*params, *neg_like_params, *neg_fts_params, limit]
    if step == "cjk_trigram":
        return (base + " WHERE hm_messages_cjk MATCH ?" + cond + neg_like + neg_fts
                + f" ORDER BY {'c.rowid DESC' if relevance else by_time} LIMIT ?", [plan.cjk_trigram, *tail])
    if step == "cjk_like":
        return (base + " WHERE (c.content LIKE ? ESCAPE '\\' OR c.tool_name LIKE ? ESCAPE '\\')"
                + cond + neg_like + neg_fts + f" ORDER BY {by_time} LIMIT ?", [pattern, pattern, *tail])
    raise ValueError(f"unknown search step {step!r}; expected one of {', '.join(SEARCH_STEPS)}")


HEAD_FACTOR = 2
""":func:`filtered_head` reads this many times the rows it needs before it checks the filters."""


def filtered_head(conn: sqlite3.Connection, plan: fts_mod.QueryPlan, filters: SearchFilters, *, limit: int,
                  fts_expr: str | None, min_rowid: int | None, rank_sql: str,
                  kept_rows: dict[int, sqlite3.Row] | None = None, with_text: bool = False,
                  known: Container[int] = ()) -> list[tuple[int, float]] | None:
    """The rows the filtered relevance ``"fts"`` statement returns, as ``(id, rank)`` best first,
    found without joining ``messages`` and ``sessions`` for every matching row; ``None`` when this
    cannot tell (the caller then runs that statement).

    The best :data:`HEAD_FACTOR` x ``limit`` rows by rank alone (``"fts"`` with ``head``, ties
    newest first, the filtered statement's order) are checked against the filters (``"keep"``),
    ``limit`` first and more only while the page is short
    (:func:`hermes_memory.sessions.search_head.filtered_head`); the filtered statement's answer is
    the first ``limit`` rows that pass, when at least ``limit`` pass or the head held every match.
    ``kept_rows`` receives the checked rows' columns (id -> row) when the check joins ``sessions``,
    their texts too with ``with_text`` (``"keep"`` with ``text``). ``known``: ids known to pass
    (rows a statement under the same filters and plan returned), not checked again.
    A filtered ``session_search`` (roles, hidden sources, the live session) at 1M messages joined
    2,500 window rows for about 8 ms of CPU; the head and a check of all 600 rows took about a
    third of that, and where every row passes the check now reads 300."""
    head = build_search_sql("fts", plan, filters, None, limit=HEAD_FACTOR * limit, fts_expr=fts_expr,
                            min_rowid=min_rowid, rank_sql=rank_sql, head=True)
    return search_head.filtered_head(
        conn, head, lambda ids: build_search_sql("keep", plan, filters, None, limit=0, ids=ids, text=with_text),
        limit=limit, factor=HEAD_FACTOR, kept_rows=kept_rows, known=known)


def merge_hits(hits: dict[int, float], sessions: dict[int, str], found: dict[int, float], relevance: bool,
               rank_signals: signals.RankSignals | None = None) -> list[int]:
    """Ids of one search, best first: full-text ``hits`` (id -> rank) reranked under relevance
    (:func:`hermes_memory.sessions.ranking.rerank`, ``sessions``: id -> session id, with
    ``rank_signals``: answers of question turns may join) else as given, then the rows ``found``
    only by the CJK lookups (id -> timestamp), newest first."""
    ids = ranking.rerank(hits, sessions, rank_signals) if relevance and hits else list(hits)
    shown = set(ids)
    cjk_only = [i for i in found if i not in shown]
    if cjk_only:
        cjk_only.sort(key=lambda i: (-found[i], -i))
        ids += cjk_only
    return ids


def rank_signals(conn: Any, query: str, hits: dict[int, float], sessions: dict[int, str], filters: SearchFilters,
                 placeholder: str, texts: dict[int, Any] | None = None) -> signals.RankSignals | None:
    """:func:`hermes_memory.sessions.signals.gather` for one search on either engine (``conn`` a
    SQLite or psycopg connection, ``placeholder`` ``"?"``/``"%s"``; ``texts``: id -> content, as
    stored, of candidates the search already read, not read again); ``None`` when it fails (the
    rerank then uses BM25 alone: these signals must never fail a search). Callers run it only when
    ``plan.context`` (a plain query of two or more terms): a one-word lookup, a quoted phrase alone
    or query syntax asks for rows holding its words, not for answers."""
    try:
        return signals.gather(conn, query, hits, sessions, roles=filters.roles, since=filters.since,
                              until=filters.until, placeholder=placeholder, texts=texts)
    except Exception as exc:  # sqlite3.Error / psycopg.Error, or a row another program wrote oddly
        logger.warning("rank signals unavailable, BM25 order kept: %s", exc)
        return None


class MessageSearchMethods(StoreBase):
    """The search methods of :class:`~hermes_memory.sessions.db.SessionDB` (a mixin over
    :class:`~hermes_memory.sessions.connection.SQLiteStore`).

    ``semantic``: a :class:`hermes_memory.sessions.embeddings.SemanticSearch` when semantic search
    is on (:func:`hermes_memory.sessions.fusion.attach`), else ``None`` (lexical search only)."""

    semantic: Any = None

    @functools.cached_property
    def _term_stats(self) -> term_stats.TermStats:
        """Stem cache and TEMP tokenizer tables of this object's connection."""
        return term_stats.TermStats()

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
        *,
        as_read: bool = False,
    ) -> list[Any]:
        """Full-text search over all messages; any string is accepted and nothing is raised.

        ``query`` is planned by :func:`hermes_memory.sessions.fts.build_query` (an OR of informative
        terms, phrases for punctuated tokens, CJK via the trigram side table). Upper-case
        ``AND``/``OR``/``NOT``/``NEAR`` are plain words unless ``query_syntax`` is True (then they
        are operators; a query left with no positive term is searched as words). Filters: sources to
        include/exclude, roles, one session, ``user_id``, ``since <= timestamp < until`` (epoch s),
        sessions to leave out, and ``cwd_prefix`` (sessions whose working directory is that folder
        or below it; see :func:`cwd_clause`). ``sort``: ``None``/``"relevance"`` (BM25, best first),
        ``"newest"`` or ``"oldest"`` (ties broken by message id, so order is stable).

        Returns a list of dicts: ``id, session_id, role, snippet`` (matches wrapped in
        ``>>>``/``<<<``), ``timestamp, tool_name, source, model, title, user_id, session_started``,
        ``context`` (a list of the previous message, this one and the next one of the same session,
        each ``{"id", "role", "content"}`` cut to 200 chars; ``[]`` when ``with_context`` is False)
        and ``rank`` (BM25, lower is better; ``None`` for rows found only by the CJK side table).
        An empty or unsearchable query returns ``[]``. A SQLite failure returns ``[]`` and is
        logged, unless ``raise_errors`` is set, when :class:`SessionStoreError` is raised (the
        ``session_search`` tool does this so that a failure is never reported as "no results"). A
        role no message has (:func:`role_problem`) is refused the same way, ``ValueError`` when raised.

        ``as_read`` (with ``with_context`` and ``with_snippet`` False): the same rows, in the same
        order, as ``(id, row, rank)`` tuples instead of dicts, ``row`` the row as read (indexable
        by the dict keys above but ``id``'s, ``snippet``, ``rank`` and ``context``): the
        ``session_search`` tool reads 300 rows and shows at most 50 of them, and making a dict of
        each row it does not show cost about 0.6 ms of CPU a call at 1M messages.
        """
        if as_read and (with_context or with_snippet):
            raise ValueError("as_read needs with_context=False and with_snippet=False")
        try:
            self._resync_if_schema_changed()
            filters = SearchFilters.from_args(source_filter, exclude_sources, role_filter, session_id, user_id,
                                              since, until, exclude_session_ids, cwd_prefix)
            if bad_role := role_problem(filters.roles, self._read):
                return refused_search(bad_role, raise_errors)
            return self._search(query, filters, *page_bounds(limit, offset), sort, with_context, with_snippet,
                                query_syntax, as_read)
        except (SessionStoreError, sqlite3.Error) as exc:
            if raise_errors:
                if isinstance(exc, SessionStoreError):
                    raise
                raise SessionStoreError(f"search failed: {exc}") from exc
            logger.warning("session search for %r failed: %s", query, exc)
            return []

    def _search(
        self,
        query: str,
        filters: SearchFilters,
        limit: int,
        offset: int,
        sort: str | None,
        with_context: bool = True,
        with_snippet: bool = True,
        query_syntax: bool = False,
        as_read: bool = False,
    ) -> list[Any]:
        """Rank ``query`` (:meth:`_ranked`), keep the rows holding its literal terms when it has
        some (:func:`hermes_memory.sessions.search_rows.literal_page`), and shape one page (as
        ``(id, row, rank)`` tuples with ``as_read``, :meth:`search_messages`)."""
        if limit <= 0:
            return []
        terms = literal_mod.literal_terms(query)
        if not terms:
            found = self._ranked(query, filters, offset + limit, sort, query_syntax)
            page = [(i, found) for i in found.ids[offset:offset + limit]] if found is not None else []
        else:
            page = literal_page(lambda q, n: self._ranked(q, filters, n, sort, query_syntax, texts=True),
                                self._texts, query, terms, offset, limit, sort)
        if not page:
            return []
        with self._lock:
            conn = self._live()
            shaped: dict[int, Any] = {}
            for found in {id(r): r for _, r in page}.values():
                ids = [i for i, r in page if r is found]
                if as_read:
                    shaped.update((t[0], t) for t in self._rows_as_read(conn, ids, found.hits, found.rows))
                    continue
                shaped.update((row["id"], row) for row in self._materialise(
                    conn, ids, found.hits, found.plan, with_context, with_snippet, found.rows))
            return [shaped[i] for i, _ in page if i in shaped]

    def _texts(self, ids: list[int]) -> Texts:
        """The :data:`~hermes_memory.sessions.search_rows.Texts` of messages (unknown ids left out)."""
        with self._lock:
            conn = self._live()
            out: Texts = {}
            for start in range(0, len(ids), 500):
                chunk = ids[start:start + 500]
                out.update((int(r[0]), (r[1], r[2], r[3])) for r in conn.execute(
                    f"SELECT id, content, tool_name, tool_calls FROM messages WHERE id IN ({','.join('?' * len(chunk))})",
                    chunk))
            return out

    def _ranked(self, query: str, filters: SearchFilters, want: int, sort: str | None, query_syntax: bool,
                texts: bool = False) -> Ranked | None:
        """The ids of ``query``'s best ``want`` results and more (the statements of
        :func:`build_search_sql`, the rerank, semantic fusion when on, the time sort), with what
        was read on the way (:class:`~hermes_memory.sessions.search_rows.Ranked`); ``None`` for a
        query with nothing to search. With ``texts`` (or when the rank signals or the dropped-word
        check read them anyway) the candidates' texts are read in the statements that read their
        session ids, and kept in ``texts`` for the caller."""
        plan = fts_mod.build_query(query, syntax=query_syntax)
        if plan.empty or want <= 0:
            return None
        order_kind = sort_order(sort)
        relevance = order_kind == "relevance"
        stats = self._term_stats
        sem = self.semantic
        # the query is embedded before taking the lock: other threads' searches and writes never wait for it
        qvec = sem.query_vector(query) if sem is not None and relevance and not query_syntax else None
        with self._lock:
            conn = self._live()
            hits: dict[int, float] = {}  # id -> bm25 rank (negative; lower is better)
            sess_of: dict[int, str] = {}
            read: Texts = {}  # id -> (content, tool_name, tool_calls) of the rows whose text was read
            kept: dict[int, sqlite3.Row] = {}  # rows the filter check read, with their session columns
            fts_expr, dropped, min_rowid = stats.cap_terms(conn, plan) if relevance else (plan.fts, [], None)
            signals_on = relevance and plan.context
            need_text = relevance and (bool(dropped) or signals_on or texts)
            if fts_expr:
                pool = max(want, ranking.RERANK_POOL) if relevance else want
                rank_sql = term_stats.rank_sql(conn) if relevance else None
                head = filtered_head(conn, plan, filters, limit=pool, fts_expr=fts_expr, min_rowid=min_rowid,
                                     rank_sql=rank_sql, kept_rows=kept, with_text=need_text,
                                     ) if rank_sql and head_applies(plan, filters, rank_sql) else None
                if head is None:
                    sql, params = build_search_sql("fts", plan, filters, sort, limit=pool, fts_expr=fts_expr,
                                                   min_rowid=min_rowid, rank_sql=rank_sql)
                    head = [(int(r["id"]), float(r["rank"])) for r in conn.execute(sql, params).fetchall()]
                hits.update(head)
                search_head.rows_read(kept, list(hits), sess_of, read)
                if hits and relevance and dropped:
                    best = sorted(hits, key=hits.__getitem__)[:ranking.DROPPED_TERM_ROWS]
                    rest = [i for i in best if i not in read]
                    if rest:
                        term_stats.read_candidates(conn, rest, sess_of, read)
                    stats.score_dropped(conn, hits, dropped, {i: (sess_of[i], search_head.joined(read[i]))
                                                              for i in best if i in read})
                if relevance and (dropped or min_rowid) and len(hits) < want and plan.fts:
                    # The posting budget or the recency window left the page short (the kept words
                    # are rare, or the filters exclude their rows): fill it with the newest rows of
                    # the full query, ranked by their full BM25, so no match is lost.
                    # read lazily (rowid order needs no sorter): the rows past the page are never joined
                    # rows already held are left out in SQL (else joined, read and scored to be skipped)
                    sql, params = build_search_sql("top_up", plan, filters, sort, limit=want - len(hits),
                                                   text=need_text, skip=list(hits))
                    cur = conn.execute(sql, params)
                    try:
                        with_cols: bool | None = None
                        for r in cur:
                            if len(hits) >= want:
                                break
                            i = int(r["id"])
                            if i in hits:
                                continue
                            hits[i] = float(r["rank"])
                            if with_cols is None:
                                with_cols = "session_started" in r.keys()
                            if with_cols:  # its session id, text and result columns are not read again
                                kept[i] = r
                    finally:
                        cur.close()
                missing = [i for i in hits if i not in sess_of] if relevance else []
                search_head.rows_read(kept, missing, sess_of, read)
                missing = [i for i in missing if i not in sess_of]
                if missing:  # session ids (and texts) of the rows neither the filter check nor the dropped-word check read
                    term_stats.read_candidates(conn, missing, sess_of, read if need_text else None)
            found: dict[int, float] = {}
            if (plan.cjk_trigram or plan.cjk_like) and conn.execute(
                "SELECT 1 FROM hm_messages_cjk LIMIT 1"
            ).fetchone():
                steps = [build_search_sql("cjk_trigram", plan, filters, sort, limit=max(want, 50))] if plan.cjk_trigram else []
                steps += [build_search_sql("cjk_like", plan, filters, sort, limit=max(want, 50),
                                           pattern="%" + fts_mod.like_escape(lit) + "%") for lit in plan.cjk_like]
                for sql, params in steps:
                    for r in conn.execute(sql, params):
                        found.setdefault(int(r["id"]), r["ts"])
            sig = rank_signals(conn, query, hits, sess_of, filters, "?", texts={i: t[0] for i, t in read.items()},
                               ) if hits and signals_on else None
            ids = merge_hits(hits, sess_of, found, relevance, sig)
            if relevance and plan.context and hits and feedback.active(qvec is not None):  # names of the best hits search again
                fed: dict[int, sqlite3.Row] = {}
                ids = feedback_sql.run(conn, stats, plan, filters, sort, ids, hits, sess_of, sig, pool=pool,
                                       rank_sql=rank_sql, kept_rows=fed)
                for i, r in fed.items():  # the result rows of the ids it added are not read again
                    kept.setdefault(i, r)
            # a question naming someone who said some of the candidates: their own turns (speaker_focus)
            names = speakers.query_names(query) if sig is not None and sig.spoken else frozenset()
            if names and fts_expr and speaker_focus.pass_active(qvec is not None):
                ids = speaker_focus_sql.run_pass(conn, plan, filters, sort, ids, names, read, fts_expr=fts_expr,
                                                 min_rowid=min_rowid, rank_sql=rank_sql, known=hits)
            if qvec is not None:
                ids = self._fuse_semantic(conn, sem, qvec, ids, filters, query)
            if names:
                ids = speaker_focus_sql.tail(conn, names, ids, read)
            times: dict[int, float] = {}
            if ids and not relevance:
                times = {
                    int(r["id"]): float(r["timestamp"])
                    for r in conn.execute(
                        f"SELECT id, timestamp FROM messages WHERE id IN ({','.join('?' * len(ids))})", ids
                    )
                }
                time_sort(ids, times, order_kind)
            return Ranked(ids, hits, plan, kept, read, times)

    def _fuse_semantic(self, conn: sqlite3.Connection, sem: Any, qvec: Any, ids: list[int],
                       filters: SearchFilters, query: str = "") -> list[int]:
        """``ids`` (lexical relevance order) fused with the nearest indexed messages that pass
        ``filters`` (:func:`hermes_memory.sessions.fusion.semantic_candidates`: turns said by a
        speaker ``query`` names first, :func:`hermes_memory.sessions.fusion.fuse`). A failure (our vector table
        damaged or dropped by another program, a bad vector) is logged and leaves the lexical order."""
        cond, params, needs_session = filter_sql(filters)
        try:
            near = fusion.semantic_candidates(conn, sem.index, qvec, query, cond, params, needs_session)
        except (sqlite3.Error, ValueError, TypeError, MemoryError) as exc:
            logger.warning("semantic candidates failed; lexical order kept: %s", exc)
            return ids
        order = fusion.fuse(ids, near, weight=sem.weight, k=sem.k)
        if fusion.SESSION_SLOTS > 0 and len(order) > ranking.PAGE_ROWS:
            head = order[: 3 * ranking.PAGE_ROWS]
            group = dict(conn.execute(f"SELECT id, session_id FROM messages WHERE id IN ({','.join('?' * len(head))})",
                                      head).fetchall())
            head = ranking.session_slots([i for i in head if i in group], group, ranking.PAGE_ROWS,
                                         fusion.SESSION_SLOTS)
            order = head + order[3 * ranking.PAGE_ROWS:]
        return order

    def _materialise(
        self,
        conn: sqlite3.Connection,
        page: list[int],
        hits: dict[int, float],
        plan: fts_mod.QueryPlan,
        with_context: bool,
        with_snippet: bool = True,
        kept: dict[int, sqlite3.Row] | None = None,
    ) -> list[dict[str, Any]]:
        """The result rows of ``page`` (ids in order); without snippets, the rows in ``kept``
        (id -> row the filter check read, :data:`hermes_memory.sessions.search_head.KEEP_COLUMNS`)
        are not read again."""
        by_id = self._page_rows(conn, page, with_snippet, kept)
        contexts = self._contexts(conn, [(i, by_id[i]["session_id"]) for i in page if i in by_id]) if with_context else {}
        highlighter = fts_mod.Highlighter(plan.terms, self._term_stats.stems_for_terms(conn, plan.terms)) if with_snippet else None
        results = []
        for i in page:
            r = by_id.get(i)
            if r is None:
                continue
            snip = self._snippet(highlighter, r) if highlighter is not None else None
            results.append(result_row(i, r, snip, hits.get(i), contexts.get(i, [])))
        return results

    def _page_rows(self, conn: sqlite3.Connection, page: list[int], with_text: bool,
                   kept: dict[int, sqlite3.Row] | None) -> dict[int, Any]:
        """id -> joined message/session row of the ids of ``page`` (unknown ids left out): the rows
        of ``kept`` (the filter check's) when no text is needed, the others read in one statement
        (with ``content`` and ``tool_calls`` when ``with_text``)."""
        by_id: dict[int, Any] = {i: kept[i] for i in page if i in kept} if kept and not with_text else {}
        rest = [i for i in page if i not in by_id]
        if rest:
            text_cols = "m.content, m.tool_calls, " if with_text else ""
            by_id.update((int(r["id"]), r) for r in conn.execute(
                "SELECT m.id, m.session_id, m.role, " + text_cols + "m.timestamp, m.tool_name, "
                "s.source, s.model, s.title, s.user_id, s.started_at AS session_started "
                f"FROM messages m JOIN sessions s ON s.id = m.session_id WHERE m.id IN ({','.join('?' * len(rest))})",
                rest,
            ))
        return by_id

    def _rows_as_read(self, conn: sqlite3.Connection, page: list[int], hits: dict[int, float],
                      kept: dict[int, sqlite3.Row] | None) -> list[tuple[int, Any, float | None]]:
        """``(id, row, rank)`` of the ids of ``page`` in order: what :meth:`_materialise` makes each
        result dict of (without snippets and context), not made into dicts."""
        by_id = self._page_rows(conn, page, False, kept)
        return [(i, by_id[i], hits.get(i)) for i in page if i in by_id]

    def _snippet(self, highlighter: fts_mod.Highlighter, r: sqlite3.Row) -> str:
        return message_snippet(highlighter, r)

    def snippets_for(self, query: str, message_ids: list[int], query_syntax: bool = False) -> dict[int, str]:
        """``>>>match<<<`` snippets of ``query`` in the given messages (id -> snippet), built the
        same way as :meth:`search_messages` builds them. Unknown ids are left out."""
        ids = [int(i) for i in message_ids]
        if not ids:
            return {}
        plan = fts_mod.build_query(query, syntax=query_syntax)
        with self._lock:
            conn = self._live()
            hl = fts_mod.Highlighter(plan.terms, self._term_stats.stems_for_terms(conn, plan.terms))
            rows = conn.execute(
                f"SELECT id, content, tool_name, tool_calls FROM messages WHERE id IN ({','.join('?' * len(ids))})", ids
            ).fetchall()
            return {int(r["id"]): self._snippet(hl, r) for r in rows}

    def _contexts(self, conn: sqlite3.Connection, page: list[tuple[int, str]]) -> dict[int, list[dict[str, Any]]]:
        """The ``context`` of each ``(message id, session id)`` of a page (id -> rows), as
        :meth:`_context` builds it, in one statement for the common case: the rows at id - 1 and
        id + 1, when they belong to the same session, are its previous and next message. A row
        whose neighbour id is missing or in another session (first or last turn, interleaved
        sessions, deleted rows) is looked up by :meth:`_context`."""
        if not page:
            return {}
        probe = sorted({j for i, _ in page for j in (i - 1, i, i + 1)})
        near = {int(r[0]): r for r in conn.execute(
            f"SELECT id, session_id, role, content FROM messages WHERE id IN ({','.join('?' * len(probe))})", probe)}
        out: dict[int, list[dict[str, Any]]] = {}
        for i, sid in page:
            prev, this, nxt = near.get(i - 1), near.get(i), near.get(i + 1)
            if this is None or prev is None or nxt is None or prev[1] != sid or nxt[1] != sid:
                out[i] = self._context(conn, sid, i)
            else:
                out[i] = [context_row(r[0], r[2], r[3]) for r in (prev, this, nxt)]
        return out

    def _context(self, conn: sqlite3.Connection, session_id: str, message_id: int) -> list[dict[str, Any]]:
        rows = conn.execute(
            "SELECT * FROM (SELECT id, role, content FROM messages WHERE session_id = ? AND id < ? "
            "ORDER BY id DESC LIMIT 1) UNION ALL SELECT id, role, content FROM messages WHERE id = ? "
            "UNION ALL SELECT * FROM (SELECT id, role, content FROM messages WHERE session_id = ? AND id > ? "
            "ORDER BY id LIMIT 1)",
            (session_id, message_id, message_id, session_id, message_id),
        ).fetchall()
        return [context_row(r["id"], r["role"], r["content"]) for r in rows]

