"""What a search says about its query besides the hits: a query cut at :data:`MAX_QUERY_CHARS`.

The planner searches the first :data:`~hermes_memory.sessions.fts.MAX_QUERY_CHARS` characters of a
query (the reference's cap); a longer one is never refused, but the result says that the rest was
not searched (the ``session_search`` tool's ``note``, the CLI's ``note:`` line and its JSON).
"""

from __future__ import annotations

from typing import Any

from hermes_memory.sessions.fts import MAX_QUERY_CHARS


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
