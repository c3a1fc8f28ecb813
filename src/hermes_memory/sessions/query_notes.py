"""What a search says about its query besides the hits (the ``session_search`` tool's ``note``,
the CLI's ``note:`` line and its JSON):

* a query cut at :data:`MAX_QUERY_CHARS`: the planner searches the first
  :data:`~hermes_memory.sessions.fts.MAX_QUERY_CHARS` characters of a query (the reference's cap);
  a longer one is never refused, but the result says that the rest was not searched;
* a ``query_syntax`` query that left no positive word, searched as plain words;
* a query of common words only (``the and of``): the planner searches them as typed instead of
  finding nothing, and the result says that its hits match common words only.
"""

from __future__ import annotations

from typing import Any

from hermes_memory.sessions.fts import MAX_QUERY_CHARS, build_query

STOPWORDS_NOTE = ("the query has only common words (stopwords or one-letter words); they were searched as "
                  "typed, so the hits may match them anywhere (add a distinctive word, or quote a phrase)")
FELL_BACK_NOTE = ("query_syntax left no word to look for (only operators or NOT-ed words); searched the words "
                  "as plain terms.")


def long_query_note(query: Any) -> str | None:
    """The note for a query over :data:`MAX_QUERY_CHARS` characters, else ``None``."""
    if not isinstance(query, str) or len(query) <= MAX_QUERY_CHARS:
        return None
    return (f"the query is {len(query):,} characters long; only its first {MAX_QUERY_CHARS:,} were searched "
            "(shorten it, or search for its key words, to search all of it)")


def join_notes(*notes: str | None) -> str | None:
    """The notes that are not ``None``, joined by ``"; "`` (``None`` when there are none)."""
    kept = [n for n in notes if n]
    return "; ".join(kept) if kept else None


def search_note(query: Any, syntax: bool = False, found: bool = True) -> str | None:
    """Every note for a discovery ``query`` (str; anything else gives ``None``) planned with
    ``syntax`` (query syntax on): a long query (:func:`long_query_note`), a ``query_syntax`` query
    searched as plain words (:data:`FELL_BACK_NOTE`), a query of common words only
    (:data:`STOPWORDS_NOTE`, only when ``found``: it explains hits, and an empty result of such a
    query stays the reference's bare empty success); joined by ``"; "``, ``None`` when none applies. Plans the query
    with :func:`~hermes_memory.sessions.fts.build_query` (pure, never raises)."""
    if not isinstance(query, str):
        return None
    plan = build_query(query, syntax=syntax)
    return join_notes(long_query_note(query), FELL_BACK_NOTE if syntax and plan.fell_back else None,
                      STOPWORDS_NOTE if found and plan.stopwords_only else None)
