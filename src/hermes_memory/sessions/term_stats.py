"""Term statistics for relevance search, read from the database: porter stems, document
frequencies, the posting budget and the BM25 weight of dropped terms.

:mod:`hermes_memory.sessions.ranking` decides with the numbers (pure functions); this module
reads them. Stems come from tokenising words with the index's own tokenizer in TEMP FTS5 tables
(nothing is written to the database file), cached per connection in a :class:`TermStats`.
"""

from __future__ import annotations

import logging
import re
import sqlite3
from typing import Any

from hermes_memory.sessions import fts as fts_mod
from hermes_memory.sessions import hmindex, ranking, word_match

logger = logging.getLogger("hermes_memory.sessions.db")

STEM_CACHE_MAX = 50_000
"""Cached stems per connection; the cache is emptied when it grows past this many words."""
DF_CACHE_MAX = 50_000
"""Cached document frequencies per connection; the cache is emptied past this many stems."""
DF_CACHE = True
"""Cache document frequencies (False: read every one from the index, as before; for
``bench/sessions.py --compare``)."""
DF_TABLE = "hm_term_df"
"""Document frequencies shared by every connection and process (:meth:`TermStats.doc_freqs`):
``stem -> (docs, through, changes)``, the rows holding ``stem`` among row ids ``<= through``,
valid while ``hm_meta.index_changes`` equals ``changes``. Ours; created by the first search
that stores one."""
DF_TABLE_SQL = (f"CREATE TABLE IF NOT EXISTS {DF_TABLE} (stem TEXT PRIMARY KEY, docs INTEGER NOT NULL, "
                "through INTEGER NOT NULL, changes TEXT NOT NULL) WITHOUT ROWID")
DF_STORE_LAG = 20_000
"""A stored frequency is written again when the rows appended since it was counted exceed this
many (what a later process counts by matching the word over them; about 1 ms at 20,000 rows)."""


_BM25_RE = re.compile(r"bm25\(\s*((?:[0-9.eE+-]+\s*(?:,\s*[0-9.eE+-]+\s*)*)?)\)")
def rank_sql(conn: sqlite3.Connection) -> str | None:
    """The rank our index is configured with (``hm_messages_fts_config``, set by
    :data:`hermes_memory.sessions.hmindex.RANK_SQL`) as an explicit ``bm25(hm_messages_fts, w...)``
    call, or ``None`` when the configured rank is not a plain ``bm25`` with numeric weights (the
    caller then orders by FTS5's ``rank`` column). Read each time: a rebuilt index may change it.

    Why: ``ORDER BY rank LIMIT n`` on an FTS5 table runs FTS5's own sorted plan, which costs
    1.3-1.6x SQLite's sorter over the same ``bm25()`` values (1M natural-English messages, one
    common word in a 2,500-row recency window: 13.0 vs 8.1 ms CPU for "caroline", 6.0 vs 4.4 ms
    for "pottery"); ties come out in ascending rowid both ways. ``None`` too on a SQLite error."""
    try:
        row = conn.execute(f"SELECT v FROM {hmindex.MAIN}_config WHERE k = 'rank'").fetchone()
    except sqlite3.Error as exc:
        logger.debug("rank configuration unreadable: %s", exc)
        return None
    if row is None:
        return f"bm25({hmindex.MAIN})"
    m = _BM25_RE.fullmatch(str(row[0]).strip())
    if m is None:
        return None
    try:
        weights = [float(w) for w in m.group(1).split(",")] if m.group(1).strip() else []
    except ValueError:
        return None
    return f"bm25({hmindex.MAIN}" + "".join(f", {w!r}" for w in weights) + ")"


class TermStats:
    """Per-connection stem cache and TEMP tokenizer tables (create one per connection)."""

    def __init__(self) -> None:
        self.cache: dict[str, str | None] = {}
        self.temp_ready = False
        self.dfs: dict[str, tuple[int, int]] = {}
        """stem -> (rows holding it among ids <= through, through), valid for :attr:`dfs_changes`."""
        self.dfs_changes: str | None = None
        self.stored: dict[str, int] = {}
        """stem -> ``through`` of its row in :data:`DF_TABLE`, as last read or written here."""
        self.stored_miss: set[str] = set()
        """Stems not in :data:`DF_TABLE` (valid for :attr:`dfs_changes`) when last looked for."""

    def stems(self, conn: sqlite3.Connection, words: list[str]) -> dict[str, str | None]:
        """Index tokens (porter stems) of ``words`` (word -> stem, ``None`` when the tokenizer
        yields none), by tokenising them with the same tokenizer in a TEMP FTS5 table. Cached.
        Raises ``sqlite3.Error`` from the TEMP tables."""
        cache = self.cache
        todo = [w for w in dict.fromkeys(words) if w not in cache]
        if todo:
            if not self.temp_ready:
                conn.execute(
                    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.hm_tok USING fts5(x, "
                    "tokenize='porter unicode61 remove_diacritics 2')"
                )
                conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.hm_tok_v USING fts5vocab(temp, hm_tok, instance)")
                conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.hm_fts_v USING fts5vocab(main, hm_messages_fts, row)")
                self.temp_ready = True
            conn.execute("DELETE FROM temp.hm_tok")
            conn.executemany("INSERT INTO temp.hm_tok(rowid, x) VALUES (?, ?)", list(enumerate(todo, start=1)))
            got = {int(d): t for d, t in conn.execute("SELECT doc, term FROM temp.hm_tok_v")}
            for i, w in enumerate(todo, start=1):
                cache[w] = got.get(i)
            if len(cache) > STEM_CACHE_MAX:
                cache.clear()
        return {w: cache.get(w) for w in words}

    def stems_for_terms(self, conn: sqlite3.Connection, terms: list[str]) -> list[str]:
        """The stems of the non-CJK words of ``terms`` (for highlighting); ``[]`` on a SQLite error."""
        words = [w.lower() for t in terms for w in t.split() if not fts_mod.contains_cjk(w)]
        try:
            return [s for s in self.stems(conn, words).values() if s]
        except sqlite3.Error:
            return []

    def doc_freqs(self, conn: sqlite3.Connection, terms: list[list[tuple[str, str | None]]]) -> list[int]:
        """Document frequency of each term, exact: rows of our index holding it. A term is a list
        of ``(word, stem)`` pieces (:meth:`stems`); it counts its rarest stem, ``None`` stems are
        skipped, a term with none counts 0.

        Each stem's count among rows ``<= through`` is cached with ``through`` while
        ``hm_meta.index_changes`` (:data:`hermes_memory.sessions.hmindex.CHANGES_KEY`) stays the same:
        rows appended since are counted with a rowid-bounded match (only their postings are read),
        the first lookup of a stem reads its whole doclist (``fts5vocab``). Everything is read in one
        snapshot. Raises ``sqlite3.Error``."""
        own = not conn.in_transaction
        if own:
            conn.execute("BEGIN")
        store: dict[str, tuple[int, int]] = {}
        try:
            changes = hmindex.meta_get(conn, hmindex.CHANGES_KEY) if DF_CACHE else None
            if changes is not None and (changes != self.dfs_changes or len(self.dfs) > DF_CACHE_MAX):
                self.dfs.clear()
                self.stored.clear()
                self.stored_miss.clear()
                self.dfs_changes = changes
            row = conn.execute("SELECT rowid FROM hm_messages_fts ORDER BY rowid DESC LIMIT 1").fetchone()
            top = int(row[0]) if row else 0
            if changes is not None:
                self._load_stored(conn, changes, [s for p in terms for w, s in p if s is not None and w.isalnum()])
            out = []
            for pieces in terms:
                df = None
                for word, stem in pieces:
                    if stem is None:
                        continue
                    n = self._stem_df(conn, word, stem, top, changes is not None and word.isalnum(), store)
                    df = n if df is None else min(df, n)
                out.append(df or 0)
        finally:
            if own:
                conn.execute("COMMIT")
        if own and store and changes is not None:
            self._store(conn, changes, store)
        return out

    def _load_stored(self, conn: sqlite3.Connection, changes: str, stems: list[str]) -> None:
        """Take the stored frequencies (:data:`DF_TABLE`) of the ``stems`` this connection has not
        cached that are valid for ``changes`` (another process counted them, or this one before it
        restarted). Nothing when the table is missing or unreadable."""
        todo = [s for s in dict.fromkeys(stems) if s not in self.dfs and s not in self.stored_miss]
        if not todo:
            return
        try:
            rows = conn.execute(f"SELECT stem, docs, through FROM {DF_TABLE} WHERE changes = ? AND stem IN "
                                f"({','.join('?' * len(todo))})", [changes, *todo]).fetchall()
        except sqlite3.Error as exc:  # no such table yet: nothing stored
            logger.debug("stored term frequencies unreadable: %s", exc)
            rows = []
        for stem, docs, through in rows:
            self.dfs[str(stem)] = (int(docs), int(through))
            self.stored[str(stem)] = int(through)
        self.stored_miss.update(s for s in todo if s not in self.dfs)

    def _store(self, conn: sqlite3.Connection, changes: str, counts: dict[str, tuple[int, int]]) -> None:
        """Store ``counts`` (stem -> (docs, through), counted while ``hm_meta.index_changes`` was
        ``changes``) in :data:`DF_TABLE` for other connections and processes, in a write
        transaction of its own that never waits: when another writer holds the lock, the file is
        read-only or anything fails, nothing is stored (the next search tries again) and nothing
        is raised. A row stored with an older ``changes`` is ignored by every reader."""
        try:
            wait = conn.execute("PRAGMA busy_timeout").fetchone()[0]
            conn.execute("PRAGMA busy_timeout = 0")
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    conn.execute(DF_TABLE_SQL)
                    conn.executemany(f"INSERT OR REPLACE INTO {DF_TABLE}(stem, docs, through, changes) VALUES (?, ?, ?, ?)",
                                     [(stem, n, through, changes) for stem, (n, through) in counts.items()])
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
            finally:
                conn.execute(f"PRAGMA busy_timeout = {int(wait)}")
        except sqlite3.Error as exc:  # tried again only DF_STORE_LAG rows later: a read-only file costs one try
            logger.debug("term frequencies not stored: %s", exc)
        for stem, (_n, through) in counts.items():
            self.stored[stem] = through
            self.stored_miss.discard(stem)

    def _stem_df(self, conn: sqlite3.Connection, word: str, stem: str, top: int, cache: bool,
                 store: dict[str, tuple[int, int]]) -> int:
        """Rows holding ``stem`` (the index token of ``word``) among rowids ``<= top``; cached when ``cache``
        (``word`` must then be one token: the rows appended since are counted by matching it), and
        put in ``store`` when :data:`DF_TABLE` lacks it or holds it :data:`DF_STORE_LAG` rows behind."""
        hit = self.dfs.get(stem) if cache else None
        if hit is None:
            row = conn.execute("SELECT doc FROM temp.hm_fts_v WHERE term = ?", (stem,)).fetchone()
            n = int(row[0]) if row else 0
        else:
            n, through = hit
            if through < top:
                # rows appended since: match the word (the index's tokenizer turns it into ``stem``)
                n += conn.execute(
                    "SELECT count(*) FROM hm_messages_fts WHERE hm_messages_fts MATCH ? AND rowid > ? AND rowid <= ?",
                    ('"' + word + '"', through, top)).fetchone()[0]
        if cache:
            self.dfs[stem] = (n, top)
            if top - self.stored.get(stem, -DF_STORE_LAG - 1) > DF_STORE_LAG:
                store[stem] = (n, top)
        return n

    def cap_terms(
        self, conn: sqlite3.Connection, plan: fts_mod.QueryPlan
    ) -> tuple[str | None, list[tuple[fts_mod.Term, int]], int | None]:
        """Bound the work of a relevance search (see :data:`hermes_memory.sessions.ranking.POSTINGS_BUDGET`).

        Returns ``(fts_expression, dropped_terms_with_df, min_rowid)``: the expression is
        ``plan.fts`` minus the most frequent OR terms when together they match more than
        ``POSTINGS_BUDGET`` rows; when even the rarest term alone matches more than
        ``SINGLE_TERM_WINDOW`` rows, ``min_rowid`` limits scoring to the newest part of the history
        holding about that many of its matches (recency window), else it is ``None``."""
        if not plan.fts or not plan.or_terms or any(t.prefix for t in plan.or_terms):
            return plan.fts, [], None
        try:
            pieces = [p.lower() for t in plan.or_terms for p in t.pieces]
            stems = self.stems(conn, pieces)
            dfs = self.doc_freqs(conn, [[(p.lower(), stems.get(p.lower())) for p in t.pieces] for t in plan.or_terms])
        except sqlite3.Error as exc:  # the cap is an optimisation; never fail a search over it
            logger.debug("term statistics unavailable: %s", exc)
            return plan.fts, [], None
        if sum(dfs) <= ranking.POSTINGS_BUDGET:
            return plan.fts, [], None
        kept, dropped_idx, total = ranking.choose_terms(dfs)
        dropped = [(plan.or_terms[i], dfs[i]) for i in dropped_idx]
        min_rowid = None
        if total > ranking.SINGLE_TERM_WINDOW:
            max_id = conn.execute("SELECT max(id) FROM messages").fetchone()[0] or 0
            min_rowid = ranking.window_start(max_id, total)
        return " OR ".join(plan.or_terms[i].render() for i in kept), dropped, min_rowid

    def score_dropped(
        self,
        conn: sqlite3.Connection,
        hits: dict[int, float],
        dropped: list[tuple[fts_mod.Term, int]],
        cand: dict[int, tuple[str, str]],
    ) -> None:
        """Give candidates the BM25 weight of the frequent terms left out of the FTS query
        (``hits``: id -> rank, changed in place).

        For each dropped term found in a candidate's text (word-prefix match on the term or its
        porter stem) the rank falls by the term's IDF, ``ln((N - n + 0.5) / (n + 0.5))`` as in FTS5's
        bm25 -- the exact contribution of one occurrence in a row of average length."""
        if not hits or not dropped:
            return
        n_rows = conn.execute("SELECT max(id) FROM messages").fetchone()[0] or 1
        alts = []
        for term, _df in dropped:
            words = [p.lower() for p in term.pieces]
            alts.append(sorted({w for w in words if w} | {s.lower() for s in self.stems(conn, words).values() if s}))
        ids = list(hits)
        found = word_match.found_per_term(alts, [cand.get(i, ("", ""))[1] for i in ids])
        for k, (_term, df) in enumerate(dropped):
            idf = ranking.bm25_idf(n_rows, df)
            for i, row in zip(ids, found, strict=True):
                if row[k]:
                    hits[i] -= idf

def read_candidates(conn: sqlite3.Connection, ids: list[int], sessions: dict[int, str],
                    texts: dict[int, tuple[Any, Any, Any]] | None) -> None:
    """Fill ``sessions`` (id -> session id) of the BM25 candidates ``ids`` and, unless ``texts`` is
    ``None``, ``texts`` (id -> ``(content, tool_name, tool_calls)`` as stored), in one statement."""
    if texts is None:
        sessions.update((int(r[0]), r[1]) for r in conn.execute(
            f"SELECT id, session_id FROM messages WHERE id IN ({','.join('?' * len(ids))})", ids))
        return
    for r in conn.execute(f"SELECT id, session_id, content, tool_name, tool_calls FROM messages "
                          f"WHERE id IN ({','.join('?' * len(ids))})", ids):
        sessions[int(r[0])] = r[1]
        texts[int(r[0])] = (r[2], r[3], r[4])
