"""``search_titles`` on PostgreSQL (:class:`PgTitleSearchMethods`, a mixin of
:class:`~hermes_memory.sessions.pg.PgSessionDB` over its ``_connection()``, ``get_session`` and
``resolve_session_by_title``), with the rules of SQLite's
:meth:`hermes_memory.sessions.titles.TitleSearchMethods.search_titles`: an exact title (any
case, quotes around the query ignored, ``"title #N"`` lineages resolved to their highest N) comes
first, then titles in which every informative query term starts a word (or its stem does; CJK
terms as substrings), newest first. SQL narrows the rows with ``ILIKE`` (served by the
``pg_trgm`` index on titles); :class:`hermes_memory.sessions.fts.Highlighter` decides, as on SQLite.
"""

from __future__ import annotations

from typing import Any

import psycopg

from hermes_memory.errors import SessionStoreError
from hermes_memory.sessions import fts as fts_mod
from hermes_memory.sessions.codec import storable


class PgTitleSearchMethods:
    """``search_titles`` of :class:`~hermes_memory.sessions.pg.PgSessionDB` (see the module doc)."""

    _connection: Any
    _pg_terms: Any

    def search_titles(self, query: str, limit: int = 10, query_syntax: bool = False) -> list[dict[str, Any]]:
        """Sessions whose title matches ``query``, best first: the session row plus ``title_match``
        (``"exact"`` or ``"terms"``), as :meth:`SessionDB.search_titles` returns them; the scan
        stops at the ``limit`` newest term matches. ``[]`` for a query with nothing searchable.
        Raises :class:`SessionStoreError` on a database failure."""
        wanted = str(query or "").replace("\x00", "").strip().strip("`'\"").strip()
        if not wanted or limit <= 0 or not storable(wanted):
            return []
        try:
            return self._pg_search_titles(wanted, int(limit), query_syntax)
        except psycopg.Error as exc:
            raise SessionStoreError(f"title search failed: {str(exc).splitlines()[0] if str(exc) else exc}") from exc

    def _pg_search_titles(self, wanted: str, limit: int, query_syntax: bool) -> list[dict[str, Any]]:
        found: dict[str, tuple[int, float]] = {}  # id -> (0 exact | 1 terms, started_at)
        exact_id = self.resolve_session_by_title(wanted)  # type: ignore[attr-defined]
        plan = fts_mod.build_query(wanted, syntax=query_syntax)
        words = [w for t in plan.terms for w in t.split() if w]
        informative = any(fts_mod.contains_cjk(w) or (w.lower() not in fts_mod.STOPWORDS and len(w) > 1) for w in words)
        with self._connection() as conn:
            for sid, started in conn.execute(
                "SELECT id, started_at FROM sessions WHERE title = %s OR id = %s", [wanted, exact_id or ""]
            ).fetchall():
                found[sid] = (0, started or 0.0)
            if informative:  # a title is not found by "the" alone
                try:
                    stems = self._pg_terms.stems(conn, [w.lower() for w in words if not fts_mod.contains_cjk(w)])
                except psycopg.Error:
                    stems = {}
                sql = "SELECT id, title, started_at FROM sessions WHERE title IS NOT NULL"
                params: list[Any] = []
                for w in dict.fromkeys(w.lower() for w in words if w.isascii() and len(w) > 2):
                    sql += " AND (title ILIKE %s ESCAPE '\\' OR title ILIKE %s ESCAPE '\\')"
                    params += ["%" + fts_mod.like_escape(x) + "%" for x in (w, stems.get(w) or w)]
                checks = [fts_mod.Highlighter([w], [stems.get(w.lower()) or ""]) for w in words]
                folded = wanted.casefold()
                page, offset, terms_found = max(200, 20 * limit), 0, 0
                sql += " ORDER BY started_at DESC, id LIMIT %s OFFSET %s"
                while terms_found < limit:
                    rows = conn.execute(sql, [*params, page, offset]).fetchall()
                    for sid, title, started in rows:
                        if sid not in found and all(h.matches(title or "") for h in checks):
                            kind = 0 if (title or "").casefold() == folded else 1
                            found[sid] = (kind, started or 0.0)
                            terms_found += kind
                    if len(rows) < page:
                        break
                    offset += page
        ranked = sorted(found.items(), key=lambda kv: (kv[1][0], -kv[1][1], kv[0]))[:limit]
        out = []
        for sid, (kind, _) in ranked:
            row = self.get_session(sid)  # type: ignore[attr-defined]
            if row is not None:
                out.append({**row, "title_match": "exact" if kind == 0 else "terms"})
        return out
