"""``search_titles`` on PostgreSQL: SQLite's own
:meth:`hermes_memory.sessions.titles.TitleSearchMethods.search_titles` (its SQL runs on both
engines through the store's ``_read``: ``LIKE`` becomes ``ILIKE``, served by the ``pg_trgm`` index
on titles), with the stems of the PostgreSQL index (:class:`PgTitleSearchMethods`, a mixin of
:class:`~hermes_memory.sessions.pg.PgSessionDB`). An exact title comes first, then titles in which
every informative query term starts a word (or its stem does; CJK terms as substrings), newest
first, exactly as on SQLite.
"""

from __future__ import annotations

from typing import Any

import psycopg

from hermes_memory.sessions.titles import TitleSearchMethods


class PgTitleSearchMethods(TitleSearchMethods):
    """``search_titles`` of :class:`~hermes_memory.sessions.pg.PgSessionDB` (see the module doc)."""

    _connection: Any
    _pg_terms: Any

    def _title_stems(self, words: list[str]) -> dict[str, str | None]:
        """word -> its lexeme under the search configuration (Snowball English, unaccented);
        ``{}`` when the server cannot say (titles are then matched on the words alone)."""
        if not words:
            return {}
        try:
            with self._connection() as conn:
                return self._pg_terms.stems(conn, words)
        except psycopg.Error:
            return {}
