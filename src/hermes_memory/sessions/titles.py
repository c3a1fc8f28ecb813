"""Session titles: the rules (pure functions) and the title methods of
:class:`~hermes_memory.sessions.db.SessionDB` (:class:`TitleMethods`, a mixin).

A title is cleaned by :func:`sanitize_title` (reference behaviour). Sessions of one lineage share
a base title numbered ``"base #2"``, ``"base #3"``...; the bare title counts as #1.
:func:`next_in_lineage` and :func:`best_in_lineage` decide from titles already read; the
methods run the range query of :func:`lineage_range`.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from collections.abc import Iterable
from typing import Any

from hermes_memory.sessions import fts as fts_mod
from hermes_memory.sessions import literal_terms as literal_mod
from hermes_memory.sessions.codec import storable
from hermes_memory.sessions.storebase import StoreBase

MAX_TITLE_CHARS = 100
"""Longest session title accepted after sanitising (reference)."""

_TITLE_NUMBER_RE = re.compile(r"^(.*?) #(\d+)$")
_INVISIBLE = {"\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"}


def sanitize_title(title: str | None) -> str | None:
    """Clean a session title: drop control, zero-width, bidi and BOM characters, collapse
    whitespace, trim (lone surrogates are dropped too). Returns ``None`` for nothing left. Raises ``ValueError`` ("title too long")
    when more than :data:`MAX_TITLE_CHARS` characters remain. Emoji, CJK and accents are kept."""
    if title is None:
        return None
    out = []
    for ch in str(title):
        if ch in "\t\n\r\x0b\x0c":
            out.append(" ")
            continue
        cat = unicodedata.category(ch)
        if ch in _INVISIBLE or cat in ("Cc", "Cf", "Cs"):  # Cs: lone surrogates (unstorable)
            continue
        out.append(ch)
    cleaned = " ".join("".join(out).split())
    if not cleaned:
        return None
    if len(cleaned) > MAX_TITLE_CHARS:
        raise ValueError(
            f"Session title too long: {len(cleaned)} characters (max {MAX_TITLE_CHARS}); shorten it."
        )
    return cleaned


def lineage_base(title: str) -> str:
    """``title`` without a trailing ``" #N"`` lineage number."""
    m = _TITLE_NUMBER_RE.match(title)
    return m.group(1) if m else title


def lineage_range(base: str) -> tuple[str, tuple[str, str, str]]:
    """SQL condition and parameters selecting ``base`` and every ``"base #..."`` title: a range,
    not ``LIKE``, so that it uses the title index."""
    return "title = ? OR (title > ? AND title < ?)", (base, base + " #", base + " $")


def lineage_number(title: str, base: str) -> int | None:
    """1 for the bare ``base``, N for ``"base #N"``, ``None`` for any other title."""
    if title == base:
        return 1
    m = _TITLE_NUMBER_RE.match(title)
    return int(m.group(2)) if m and m.group(1) == base else None


def next_in_lineage(base: str, titles: Iterable[str]) -> str:
    """``base`` when no title of ``titles`` belongs to its lineage, else ``"base #N"`` with N one
    above the highest number used."""
    highest = max((n for t in titles if (n := lineage_number(t, base)) is not None), default=0)
    return f"{base} #{highest + 1}" if highest else base


def best_in_lineage(base: str, rows: Iterable[tuple[str, str]]) -> str | None:
    """The id of the ``(id, title)`` row with the highest lineage number of ``base`` (the first
    such row on a tie), or ``None`` when none belongs to the lineage."""
    best: tuple[int, str] | None = None
    for sid, t in rows:
        n = lineage_number(t, base)
        if n is not None and (best is None or n > best[0]):
            best = (n, sid)
    return best[1] if best else None



class TitleMethods(StoreBase):
    """Title methods shared by :class:`~hermes_memory.sessions.db.SessionDB` and the PostgreSQL
    store (a mixin over a store's ``_read``/``_execute_write`` and the lineage methods); the SQL
    is written with ``?`` placeholders for both engines."""

    def set_session_title(self, session_id: str, title: str | None) -> bool:
        """Set (or clear with ``None``/``""``) a session's title. Returns False for an unknown session.

        Raises ``ValueError`` when the title is too long or held by another session -- unless that
        session is a compression predecessor of this one (reached through parents that each
        ended with ``end_reason == "compression"``): then the title moves down to this
        continuation and the predecessor's title is cleared (reference NEWEST). A branch or a
        subagent child never takes its parent's title.
        """
        clean = sanitize_title(title)

        def _do(conn: sqlite3.Connection) -> bool:
            if not conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
                return False
            if clean is not None:
                holder = conn.execute(
                    "SELECT id FROM sessions WHERE title = ? AND id != ?", (clean, session_id)
                ).fetchone()
                if holder is not None:
                    if holder[0] in self._compression_predecessors(conn, session_id):
                        conn.execute("UPDATE sessions SET title = NULL WHERE id = ?", (holder[0],))
                    else:
                        raise ValueError(
                            f"Session title {clean!r} is already in use by session {holder[0]}; "
                            "choose another title (see get_next_title_in_lineage)."
                        )
            conn.execute("UPDATE sessions SET title = ? WHERE id = ?", (clean, session_id))
            return True

        return self._execute_write(_do)

    sanitize_title = staticmethod(sanitize_title)
    """:func:`sanitize_title`, also reachable as ``SessionDB.sanitize_title`` (reference name)."""

    def get_session_by_title(self, title: str) -> dict[str, Any] | None:
        """The session row whose title is exactly ``title`` (after :func:`sanitize_title`), or
        ``None``. See :meth:`resolve_session_by_title` for the ``"title #N"`` lineage lookup."""
        clean = sanitize_title(title) if isinstance(title, str) else None
        if not clean or not storable(clean):
            return None
        rows = self._read("SELECT * FROM sessions WHERE title = ?", (clean,))
        return dict(rows[0]) if rows else None

    def get_session_title(self, session_id: str) -> str | None:
        """The session's title, or ``None`` (no title or unknown session)."""
        row = self.get_session(session_id)
        return row["title"] if row else None

    def get_next_title_in_lineage(self, base_title: str) -> str:
        """``base`` if no session uses it, else ``"base #N"`` with N one above the highest used
        number (the bare title counts as #1). A ``" #N"`` suffix on ``base_title`` is ignored."""
        base = lineage_base(sanitize_title(base_title) or "")
        cond, params = lineage_range(base)
        return next_in_lineage(base, [t for (t,) in self._read(f"SELECT title FROM sessions WHERE {cond}", params)])

    def resolve_session_by_title(self, title: str) -> str | None:
        """Session id whose title is ``title``, preferring the highest ``"title #N"``; else ``None``
        (also for text longer than any title may be)."""
        try:
            base = sanitize_title(title)
        except ValueError:  # too long to be a title, so no session has it
            return None
        if not base:
            return None
        cond, params = lineage_range(base)
        return best_in_lineage(base, [(sid, t) for sid, t in self._read(f"SELECT id, title FROM sessions WHERE {cond}", params)])



class TitleSearchMethods(StoreBase):
    """``search_titles`` on SQLite (a mixin of :class:`~hermes_memory.sessions.db.SessionDB` over
    :class:`TitleMethods` and the stems of
    :class:`~hermes_memory.sessions.message_search.MessageSearchMethods`). The SQL is written for
    both engines (``_read``); the PostgreSQL store gives its own :meth:`_title_stems`."""

    def search_titles(self, query: str, limit: int = 10, query_syntax: bool = False) -> list[dict[str, Any]]:
        """Sessions whose title matches ``query``, best first: the session row plus ``title_match``.

        ``"exact"``: the whole query (quotes and backticks around it ignored, any case) is the
        title; a ``"title #N"`` lineage resolves to its highest N (:meth:`resolve_session_by_title`).
        ``"terms"``: every informative term of the query (as planned by
        :func:`~hermes_memory.sessions.fts.build_query`) starts a word of the title, or its porter
        stem does (CJK terms as substrings). Exact matches come first, then newest ``started_at``;
        the scan stops at the ``limit`` newest term matches.
        ``[]`` for a query with nothing searchable. Raises :class:`SessionStoreError` on a
        database failure.
        """
        wanted = str(query or "").strip().strip("`'\"").strip()
        if not wanted or limit <= 0 or not storable(wanted):
            return []
        found: dict[str, tuple[int, float]] = {}  # id -> (0 exact | 1 terms, started_at)
        exact_id = self.resolve_session_by_title(wanted)
        for r in self._read("SELECT id, started_at FROM sessions WHERE title = ? OR id = ?", (wanted, exact_id or "")):
            found[r["id"]] = (0, r["started_at"] or 0.0)
        plan = fts_mod.build_query(wanted, syntax=query_syntax)
        words = [w for t in plan.terms for w in t.split() if w]
        informative = any(fts_mod.contains_cjk(w) or (w.lower() not in fts_mod.STOPWORDS and len(w) > 1) for w in words)
        if informative:  # a title is not found by "the" alone
            stems = self._title_stems([w.lower() for w in words if not fts_mod.contains_cjk(w)])
            # SQL narrows the rows (LIKE folds ASCII case; a word or its stem must occur), Python decides
            sql = "SELECT id, title, started_at FROM sessions WHERE title IS NOT NULL"
            params: list[Any] = []
            for w in dict.fromkeys(w.lower() for w in words if w.isascii() and len(w) > 2):
                sql += " AND (title LIKE ? ESCAPE '\\' OR title LIKE ? ESCAPE '\\')"
                params += ["%" + fts_mod.like_escape(x) + "%" for x in (w, stems.get(w) or w)]
            checks = [fts_mod.Highlighter([w], [stems.get(w.lower()) or ""]) for w in words]
            folded = wanted.casefold()
            page, offset, terms_found = max(200, 20 * limit), 0, 0
            # newest first; "+" keeps the planner on the title index for the filter (sorting the few matches)
            sql += " ORDER BY +started_at DESC, id LIMIT ? OFFSET ?"
            while terms_found < limit:
                rows = self._read(sql, [*params, page, offset])
                for r in rows:
                    if r["id"] not in found and all(h.matches(r["title"] or "") for h in checks):
                        kind = 0 if (r["title"] or "").casefold() == folded else 1
                        found[r["id"]] = (kind, r["started_at"] or 0.0)
                        terms_found += kind
                if len(rows) < page:
                    break
                offset += page
        ranked = sorted(found.items(), key=lambda kv: (kv[1][0], -kv[1][1], kv[0]))[:limit]
        out = []
        for sid, (kind, _) in ranked:
            row = self.get_session(sid)
            if row is not None:
                out.append({**row, "title_match": "exact" if kind == 0 else "terms"})
        terms = literal_mod.literal_terms(query)
        return self._literal_titles(wanted, out, terms, limit) if terms else out

    def _literal_titles(self, wanted: str, hits: list[dict[str, Any]], terms: list[str],
                        limit: int) -> list[dict[str, Any]]:
        """``hits`` of a query with literal terms (:mod:`hermes_memory.sessions.literal_terms`):
        only titles holding one of ``terms``, then, while fewer than ``limit``, the newest titles
        holding one found by ``LIKE`` (the term search skips one-letter words: "C# port" is found
        by its literal); ``wanted``: the query as :meth:`search_titles` compares it."""
        hits = [h for h in hits if literal_mod.contains_literal(h.get("title") or "", terms)]
        seen = {h["id"] for h in hits}
        for term in terms:
            if len(hits) >= limit:
                break
            rows = self._read("SELECT id, title FROM sessions WHERE title IS NOT NULL AND lower(title) LIKE ? ESCAPE '\\' "
                              "ORDER BY started_at DESC LIMIT ?", ("%" + fts_mod.like_escape(term.lower()) + "%", 4 * limit))
            for r in rows:
                if r["id"] in seen or not literal_mod.contains_literal(r["title"], terms) or len(hits) >= limit:
                    continue
                session = self.get_session(r["id"])
                if session is not None:
                    seen.add(r["id"])
                    match = "exact" if r["title"].casefold() == wanted.casefold() else "terms"
                    hits.append({**session, "title_match": match})
        return hits

    def _title_stems(self, words: list[str]) -> dict[str, str | None]:
        """word -> the index's stem of it (porter, from FTS5's own tokenizer); ``{}`` when the
        tokenizer tables fail (titles are then matched on the words alone)."""
        with self._lock:
            conn = self._live()
            try:
                return self._term_stats.stems(conn, words)
            except sqlite3.Error:
                return {}

