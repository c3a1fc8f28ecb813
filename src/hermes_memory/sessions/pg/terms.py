"""Term statistics for relevance search on PostgreSQL: stems, document frequencies, the posting
budget and the weight of dropped terms (the counterpart of
:mod:`hermes_memory.sessions.term_stats`, deciding with the same pure rules of
:mod:`hermes_memory.sessions.ranking`).

Document frequencies of rare words are counted on the GIN index of the messages' ``tsvector``
(bounded at :data:`DF_COUNT_CAP` rows); a frequent word takes the planner's estimate
(``pg_stats.most_common_elems``, kept by ``ANALYZE``/autovacuum), so a common word costs no scan.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from hermes_memory.sessions import fts as fts_mod
from hermes_memory.sessions import ranking
from hermes_memory.sessions.pg.search_schema import CHANGES_KEY, TS_CONFIG
from hermes_memory.sessions.pg.search_sql import TSQ, TSV
from hermes_memory.sessions.pg.tsquery import TsPlan, term_tsquery

DF_COUNT_CAP = 20_000
"""Rows counted at most for one term's document frequency (a bounded index scan)."""
ESTIMATE_ABOVE = 5_000
"""Lexemes the statistics put in more rows than this take the estimate instead of a count
(as many rows as ``SINGLE_TERM_WINDOW``: such a term is dropped or windowed anyway, so an
estimate within a few per cent changes its small IDF by less than that)."""
STATS_TTL_S = 300.0
"""Seconds the frequent-lexeme statistics are kept before they are read again."""
DF_CACHE = True
"""Keep counted document frequencies while the messages are unchanged (False: count each time;
for A/B measurements)."""
DF_CACHE_MAX = 50_000
"""Cached document frequencies per database object; emptied when it grows past this many terms."""
STAMP_SQL = ("(SELECT coalesce(max(id), 0) FROM messages), "
             f"(SELECT value::bigint FROM hm_meta WHERE key = '{CHANGES_KEY}')")
"""What the document-frequency cache is valid for: the highest message id (BM25's N) and the count
of committed transactions that changed ``messages`` (schema 6,
:data:`~hermes_memory.sessions.pg.search_schema.CHANGES_MIGRATION_SQL`), read in the statement that
counts, so in the counts' own snapshot: a change committed by any connection invalidates the cache
for the next query, and a change not yet committed is neither counted nor stamped. (Schema 5 read
``pg_stat_user_tables`` instead: 0.3-1.7 ms of planning a query, and another connection's update or
delete reached it only once that connection reported its statistics.) Without the counter row
nothing is cached. A stale frequency would change a word's IDF, never which rows match. Counting a
frequency reads its rows' heap pages (no index-only count for a GIN match): up to
:data:`ESTIMATE_ABOVE` pages a term, about 6 ms for a 2,400-row term at 100k messages, every query,
for the same words. Like SQLite's cache (:mod:`hermes_memory.sessions.term_stats`), which its
index's change counter invalidates."""
_COUNT_SQL = f", (SELECT count(*) FROM (SELECT 1 FROM messages m WHERE {TSV} @@ {TSQ} LIMIT %s) x)"
STEM_CACHE_MAX = 50_000
"""Cached stems per database object; the cache is emptied when it grows past this many words."""


@dataclass
class TermPlan:
    """What a relevance search scores: ``query`` (tsquery text, the plan's or capped), each OR
    term with its document frequency (``terms``/``dfs``, kept terms only), the ``dropped``
    frequent terms with theirs, the recency window's first id (``min_id``) and ``n_rows``
    (the highest message id, BM25's N as SQLite takes it)."""

    query: str | None
    terms: list[str]
    dfs: list[int]
    dropped: list[tuple[str, int]]
    min_id: int | None
    n_rows: int

    def idfs(self) -> list[float]:
        return [ranking.bm25_idf(self.n_rows, df) for df in self.dfs]


class PgTermStats:
    """Stem cache and term counting for one :class:`PgSessionDB` (thread-safe enough: the cache
    is a dict written with whole values)."""

    def __init__(self) -> None:
        self.cache: dict[str, str | None] = {}
        self._frequent: tuple[float, dict[str, int]] | None = None
        self._dfs: dict[str, int] = {}  # tsquery text -> counted rows, valid while the key holds
        self._dfs_key: tuple[int, int] | None = None
        self._lock = threading.Lock()

    def stems(self, conn: Any, words: list[str]) -> dict[str, str | None]:
        """The lexeme of each word under :data:`TS_CONFIG` (word -> lexeme, ``None`` for a stop
        word), cached. Raises ``psycopg.Error``."""
        todo = [w for w in dict.fromkeys(words) if w not in self.cache]
        if todo:
            rows = conn.execute(
                f"SELECT t.w, (SELECT min(lexeme) FROM unnest(to_tsvector('{TS_CONFIG}', t.w))) "
                "FROM unnest(%s::text[]) AS t(w)", [todo]
            ).fetchall()
            got = {r[0]: r[1] for r in rows}
            if len(self.cache) + len(todo) > STEM_CACHE_MAX:
                self.cache.clear()
            for w in todo:
                self.cache[w] = got.get(w)
        return {w: self.cache.get(w) for w in words}

    def stems_for_terms(self, conn: Any, terms: list[str]) -> list[str]:
        """The stems of the non-CJK words of ``terms`` (for highlighting); ``[]`` on an error."""
        words = [w.lower() for t in terms for w in t.split() if not fts_mod.contains_cjk(w)]
        if not words:
            return []
        try:
            return [s for s in self.stems(conn, words).values() if s]
        except Exception:  # highlighting is cosmetic; a failure leaves the plain words
            return []

    def document_frequencies(self, conn: Any, terms: list[str], lexemes: list[str | None] | None = None) -> list[int]:
        """Rows matching each tsquery text of ``terms``. A one-word term whose lexeme
        (``lexemes[i]``) the planner's statistics put in more than :data:`ESTIMATE_ABOVE` rows
        takes that estimate (counting it would read that many rows); the others are counted on
        the GIN index, each up to :data:`DF_COUNT_CAP`, in one statement."""
        return self.counts(conn, terms, lexemes)[0] if terms else []

    def counts(self, conn: Any, terms: list[str], lexemes: list[str | None] | None = None) -> tuple[list[int], int]:
        """``(document_frequencies(terms, lexemes), n_rows)`` in one statement, ``n_rows`` being
        the highest message id (at least 1; BM25's N as SQLite takes it)."""
        lexemes = lexemes or [None] * len(terms)
        frequent = self.frequent_lexemes(conn) if terms else {}
        dfs = [frequent.get(lex, 0) if lex else 0 for lex in lexemes]
        with self._lock:
            known = dict(self._dfs) if DF_CACHE else {}
            key = self._dfs_key
        todo = [i for i, df in enumerate(dfs) if not df and terms[i] not in known]
        # unprepared: planned for its words (connection.PLAN_CACHE_MODE says why)
        row = conn.execute(f"SELECT {STAMP_SQL}" + _COUNT_SQL * len(todo),
                           [p for i in todo for p in (terms[i], DF_COUNT_CAP)], prepare=False).fetchone()
        stamp = (int(row[0] or 0), int(row[1])) if row[1] is not None else None
        for i, n in zip(todo, row[2:], strict=True):
            dfs[i] = int(n)
        rest = [i for i, df in enumerate(dfs) if not df and i not in todo]
        if rest and (stamp is None or stamp != key):
            # the messages changed since these were counted: count them again
            got = conn.execute("SELECT 0, 0" + _COUNT_SQL * len(rest),
                               [p for i in rest for p in (terms[i], DF_COUNT_CAP)], prepare=False).fetchone()
            for i, n in zip(rest, got[2:], strict=True):
                dfs[i] = int(n)
        else:
            for i in rest:
                dfs[i] = known[terms[i]]
        with self._lock:
            if stamp != self._dfs_key or len(self._dfs) > DF_CACHE_MAX:
                self._dfs = {}
                self._dfs_key = stamp
            if stamp is not None:
                self._dfs.update((terms[i], dfs[i]) for i in todo + rest)
        return dfs, int(row[0] or 0) or 1

    def frequent_lexemes(self, conn: Any) -> dict[str, int]:
        """lexeme -> estimated rows, for the lexemes ``ANALYZE`` found in more than
        :data:`ESTIMATE_ABOVE` rows of ``messages`` (``pg_stats.most_common_elems`` times the
        table's row estimate); re-read every :data:`STATS_TTL_S` seconds, ``{}`` without statistics."""
        now = time.monotonic()
        if self._frequent is not None and now - self._frequent[0] < STATS_TTL_S:
            return self._frequent[1]
        out: dict[str, int] = {}
        try:
            row = conn.execute(
                "SELECT s.most_common_elems::text::text[], s.most_common_elem_freqs, c.reltuples "
                "FROM pg_stats s JOIN pg_class c ON c.relname = s.tablename AND c.relnamespace = s.schemaname::regnamespace "
                "WHERE s.tablename = 'messages' AND s.attname = %s AND s.schemaname = current_schema()",
                [TSV.split(".")[-1]],
            ).fetchone()
        except Exception:  # statistics are an optimisation; counting still works
            row = None
        if row and row[0] and row[1] and row[2] and float(row[2]) > 0:
            for lexeme, freq in zip(row[0], row[1], strict=False):  # freqs carry 3 extra numbers at the end
                est = int(float(freq) * float(row[2]))
                if est > ESTIMATE_ABOVE:
                    out[lexeme] = est
        self._frequent = (now, out)
        return out

    def plan_terms(self, conn: Any, plan: fts_mod.QueryPlan, ts: TsPlan) -> TermPlan:
        """Bound the work of a relevance search as SQLite's ``TermStats.cap_terms`` does (see
        :data:`hermes_memory.sessions.ranking.POSTINGS_BUDGET`): for a plain OR query the most
        frequent terms are dropped when together they match more than the budget (prefix
        queries are never capped), and when even the kept terms match more than
        ``SINGLE_TERM_WINDOW`` rows, ``min_id`` limits scoring to the newest part of the
        history holding about that many of their matches."""
        if not ts.query or not plan.or_terms:
            return TermPlan(ts.query, [], [], [], None, self.counts(conn, [])[1])
        terms = [term_tsquery(t) for t in plan.or_terms]
        single = [t.pieces[0].lower() if len(t.pieces) == 1 and not t.prefix else None for t in plan.or_terms]
        stems = self.stems(conn, [w for w in single if w])
        dfs, n_rows = self.counts(conn, terms, [stems.get(w) if w else None for w in single])
        if any(t.prefix for t in plan.or_terms) or sum(dfs) <= ranking.POSTINGS_BUDGET:
            return TermPlan(ts.query, terms, dfs, [], None, n_rows)
        kept, dropped_idx, total = ranking.choose_terms(dfs)
        min_id = ranking.window_start(n_rows, total) if total > ranking.SINGLE_TERM_WINDOW else None
        query = " | ".join(terms[i] for i in kept)
        return TermPlan(query, [terms[i] for i in kept], [dfs[i] for i in kept],
                        [(terms[i], dfs[i]) for i in dropped_idx], min_id, n_rows)

    @staticmethod
    def score_dropped(conn: Any, hits: dict[int, float], best: list[int], tp: TermPlan) -> None:
        """Give the ``best`` candidates the IDF of each dropped frequent term they hold (``hits``:
        id -> rank, lower is better, changed in place), as SQLite's ``score_dropped`` does."""
        if not best or not tp.dropped:
            return
        cols = ", ".join(f"{TSV} @@ {TSQ}" for _ in tp.dropped)
        rows = conn.execute(f"SELECT m.id, {cols} FROM messages m WHERE m.id = ANY(%s)",
                            [*(t for t, _ in tp.dropped), best]).fetchall()
        idfs = [ranking.bm25_idf(tp.n_rows, df) for _, df in tp.dropped]
        for r in rows:
            for found, idf in zip(r[1:], idfs, strict=True):
                if found:
                    hits[int(r[0])] -= idf
