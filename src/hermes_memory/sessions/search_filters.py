"""What a message search keeps and in which order: :class:`SearchFilters`, their SQL condition
(:func:`filter_sql`, SQLite placeholders; :mod:`hermes_memory.sessions.pg.search_sql` rewrites it
for psycopg), the sort order and the page bounds (both engines). Pure functions; nothing here runs
a statement (:func:`role_problem` runs the reader it is given).
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hermes_memory.sessions.listing import cwd_clause

if TYPE_CHECKING:
    from hermes_memory.sessions.fts import QueryPlan

logger = logging.getLogger("hermes_memory.sessions.db")


@dataclass(frozen=True)
class SearchFilters:
    """What a search keeps: sources to include/exclude, roles, one session, ``user_id``,
    ``since <= timestamp < until`` (epoch seconds), sessions to leave out, and sessions run in
    ``cwd_prefix`` or below it. Empty lists and ``None`` filter nothing."""

    sources: list[str] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)
    session_id: str | None = None
    user_id: str | None = None
    since: float | None = None
    until: float | None = None
    excluded_sessions: list[str] = field(default_factory=list)
    cwd_prefix: str | None = None

    @classmethod
    def from_args(
        cls,
        source_filter: list[str] | str | None = None,
        exclude_sources: list[str] | str | None = None,
        role_filter: list[str] | str | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
        since: float | None = None,
        until: float | None = None,
        exclude_session_ids: list[str] | None = None,
        cwd_prefix: str | None = None,
    ) -> SearchFilters:
        """The filters of ``search_messages``'s arguments (both engines): source and role lists
        may be given as ``"a, b"`` strings (:func:`as_list`)."""
        return cls(as_list(source_filter), as_list(exclude_sources), as_list(role_filter), session_id, user_id,
                   since, until, list(exclude_session_ids or []), cwd_prefix)


KNOWN_ROLES = ("user", "assistant", "system", "tool")
"""The roles of stored messages: what the reference agent writes (its ``hermes_state.py``) and the
importers map every source's roles to."""


def role_problem(roles: list[str], read: Callable[[str, Iterable[Any]], list[Any]]) -> str | None:
    """Why a role filter can match nothing: ``"unknown role 'asistant'; did you mean 'assistant'? ..."``
    for the first role of ``roles`` that is neither one of :data:`KNOWN_ROLES` nor held by a stored
    message, else ``None``. ``read(sql, params)`` is the store's reader (``?`` placeholders); it runs
    only for a role outside :data:`KNOWN_ROLES` (one ``LIMIT 1`` lookup), so a store holding another
    program's own role still finds it."""
    for role in roles:
        if role in KNOWN_ROLES or read("SELECT 1 FROM messages WHERE role = ? LIMIT 1", (role,)):
            continue
        close = difflib.get_close_matches(role.strip().lower(), KNOWN_ROLES, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else "."
        return f"unknown role {role!r}{hint} Messages have the roles {', '.join(KNOWN_ROLES)}."
    return None


def refused_search(message: str, raise_errors: bool) -> list[Any]:
    """What ``search_messages`` does with a filter that can match nothing (``message`` says why):
    ``[]`` with ``message`` logged as a warning, as for a failed search, or ``ValueError(message)``
    raised when ``raise_errors`` is set (the CLI and the ``session_search`` tool show it)."""
    if raise_errors:
        raise ValueError(message)
    logger.warning("session search refused: %s", message)
    return []


MAX_SEARCH_LIMIT = 1000
"""The most results one ``search_messages`` call returns (a larger ``limit`` is cut to it)."""


def page_bounds(limit: int, offset: int) -> tuple[int, int]:
    """``(limit, offset)`` of a search page, clamped: ``0 <= limit <= MAX_SEARCH_LIMIT``, ``offset >= 0``."""
    return max(0, min(int(limit), MAX_SEARCH_LIMIT)), max(0, int(offset))


def filter_sql(f: SearchFilters) -> tuple[str, list[Any], bool]:
    """``(" AND ..." condition or "", params, needs_session)`` on ``messages m`` (and ``sessions s``
    when ``needs_session``)."""
    where: list[str] = []
    params: list[Any] = []
    needs_session = False
    if f.cwd_prefix is not None:
        clause, extra = cwd_clause(f.cwd_prefix, "s.")
        where.append(clause)
        params += extra
        needs_session = True
    if f.sources:
        where.append(f"s.source IN ({','.join('?' * len(f.sources))})")
        params += f.sources
        needs_session = True
    if f.excluded:
        where.append(f"s.source NOT IN ({','.join('?' * len(f.excluded))})")
        params += f.excluded
        needs_session = True
    if f.user_id is not None:
        where.append("s.user_id = ?")
        params.append(f.user_id)
        needs_session = True
    if f.roles:
        where.append(f"m.role IN ({','.join('?' * len(f.roles))})")
        params += f.roles
    if f.session_id is not None:
        where.append("m.session_id = ?")
        params.append(f.session_id)
    if f.excluded_sessions:
        where.append(f"m.session_id NOT IN ({','.join('?' * len(f.excluded_sessions))})")
        params += f.excluded_sessions
    if f.since is not None:
        where.append("m.timestamp >= ?")
        params.append(float(f.since))
    if f.until is not None:
        where.append("m.timestamp < ?")
        params.append(float(f.until))
    return (" AND " + " AND ".join(where)) if where else "", params, needs_session


def sort_order(sort: str | None) -> str:
    """``"newest"`` (also ``recent``/``desc``), ``"oldest"`` (also ``asc``) or ``"relevance"``
    (anything else, ``None`` included)."""
    s = (sort or "").lower()
    if s in ("newest", "recent", "desc"):
        return "newest"
    if s in ("oldest", "asc"):
        return "oldest"
    return "relevance"


def broad_filters(filters: SearchFilters) -> bool:
    """True for filters that most rows pass (roles, excluded sources and sessions): worth
    :func:`filtered_head`. A filter to one session, user, source set, time span or folder is left
    to the joined statement, which finds its few rows directly."""
    return not (filters.sources or filters.session_id or filters.user_id is not None or filters.since is not None
                or filters.until is not None or filters.cwd_prefix is not None)


def as_list(value: list[str] | tuple[str, ...] | str | None) -> list[str]:
    """A filter value as a list: ``None`` -> ``[]``, ``"a, b"`` -> ``["a", "b"]``."""
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return [str(v) for v in value if v]


def head_applies(plan: QueryPlan, filters: SearchFilters, rank_sql: str | None) -> bool:
    """True when a relevance statement under ``plan`` and ``filters`` goes through
    :func:`hermes_memory.sessions.message_search.filtered_head`: a rank expression, something to check (a filter condition or the plan's
    exclusions) and only :func:`broad_filters`. The search's first statement and the feedback pass
    (:mod:`hermes_memory.sessions.feedback_sql`) decide by this one rule."""
    return bool(rank_sql and (filter_sql(filters)[0] or plan.exclude_like) and broad_filters(filters))
