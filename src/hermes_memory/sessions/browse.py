"""Browsing sessions: the read-only views the dashboard and the coding-agent hooks need (a filtered
page of sessions with its total, a page of one transcript, token sums per day, the prompts sessions
started with, the last exchange of a session), plus recording a session's working directory.

A mixin (:class:`BrowseMethods`) shared by :class:`~hermes_memory.sessions.db.SessionDB` (SQLite)
and :class:`~hermes_memory.sessions.pg.PgSessionDB` (PostgreSQL): the SQL is written once with
``?`` placeholders, as in :mod:`~hermes_memory.sessions.records`. The two things that differ are
two class attributes of the store: ``_session_columns_sql`` (the names of the ``sessions``
columns) and ``_day_sql`` (an epoch-seconds column as a UTC ``YYYY-MM-DD`` day).

Callers outside the sessions package use these methods, never the stores' private ``_read`` /
``_execute_write``. Times are Unix epoch seconds (float); token counts are tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hermes_memory.sessions import fts as fts_mod
from hermes_memory.sessions.codec import decode_content, row_to_message, strip_content_prefix
from hermes_memory.sessions.listing import cwd_clause
from hermes_memory.sessions.storebase import StoreBase

PAGE_COLUMNS = (
    "id", "source", "user_id", "title", "model", "started_at", "ended_at", "end_reason", "message_count",
    "tool_call_count", "input_tokens", "output_tokens", "cache_read_tokens", "parent_session_id", "cwd",
)
"""The columns of each row of :meth:`BrowseMethods.session_page`."""

DISTINCT_COLUMNS = ("source", "user_id", "cwd")
"""The ``sessions`` columns :meth:`BrowseMethods.distinct_values` may list."""

MEMORY_BLOCK_MARK = "%chars]%"
"""``LIKE`` pattern of a system prompt holding a memory block: each block header ends with
``[P% — C/L chars]`` (rendered by :class:`~hermes_memory.memory.MemoryStore`)."""


@dataclass(frozen=True)
class SessionQuery:
    """Which sessions a page holds; ``None`` (or ``""``) means "any".

    ``started_from`` / ``started_before``: epoch seconds, the first inclusive, the second exclusive.
    ``title_contains``: a case-insensitive substring of the title (``%`` and ``_`` are literal).
    ``cwd_prefix``: sessions run in that folder or below it (:func:`cwd_clause`).
    """

    source: str | None = None
    user_id: str | None = None
    started_from: float | None = None
    started_before: float | None = None
    title_contains: str | None = None
    cwd_prefix: str | None = None

    def where(self) -> tuple[str, list[Any]]:
        """``(" WHERE ..." or "", params)`` for ``FROM sessions`` (``?`` placeholders, both engines)."""
        where: list[str] = []
        params: list[Any] = []
        if self.source:
            where.append("source = ?")
            params.append(self.source)
        if self.user_id:
            where.append("user_id = ?")
            params.append(self.user_id)
        if self.started_from is not None:
            where.append("started_at >= ?")
            params.append(float(self.started_from))
        if self.started_before is not None:
            where.append("started_at < ?")
            params.append(float(self.started_before))
        if self.title_contains:
            where.append("title LIKE ? ESCAPE '\\'")
            params.append("%" + fts_mod.like_escape(self.title_contains) + "%")
        if self.cwd_prefix:
            clause, extra = cwd_clause(self.cwd_prefix)
            where.append(clause)
            params += extra
        return ((" WHERE " + " AND ".join(where)) if where else ""), params


def _int(value: Any) -> int:
    return int(value or 0)  # PostgreSQL sums are numeric, and NULL over no rows


class BrowseMethods(StoreBase):
    """Read-only views for the dashboard and the hooks (a mixin over a store; see the module doc)."""

    _session_columns_sql = "SELECT name FROM pragma_table_info('sessions')"
    """One row per column of ``sessions``, its name first (SQLite; PostgreSQL reads information_schema)."""
    _day_sql = "date({col}, 'unixepoch')"
    """An epoch-seconds column ``{col}`` as its UTC day, ``YYYY-MM-DD`` (SQLite; PostgreSQL uses ``to_char``)."""

    def session_columns(self) -> set[str]:
        """The names of the ``sessions`` table's columns (a ``state.db`` of an older agent may lack some)."""
        return {str(r[0]) for r in self._read(self._session_columns_sql)}

    def distinct_values(self, column: str, limit: int = 500) -> list[str]:
        """The distinct non-empty values of ``column`` (one of :data:`DISTINCT_COLUMNS`) over all
        sessions, sorted, at most ``limit``; ``[]`` when this database has no such column. Raises
        ``ValueError`` for another column."""
        if column not in DISTINCT_COLUMNS:
            raise ValueError(f"distinct_values lists {', '.join(DISTINCT_COLUMNS)}, not {column!r}")
        if column not in self.session_columns():
            return []
        rows = self._read(f"SELECT DISTINCT {column} FROM sessions WHERE {column} IS NOT NULL AND {column} != '' "
                          f"ORDER BY {column} LIMIT ?", (max(0, int(limit)),))
        return [r[0] for r in rows]

    def session_page(self, query: SessionQuery, limit: int, offset: int = 0) -> tuple[int, list[dict[str, Any]]]:
        """``(total, rows)``: how many sessions match ``query``, and ``limit`` of them from ``offset``,
        newest first (``started_at``, then id). Each row has :data:`PAGE_COLUMNS` (``cwd`` is ``None``
        where the database records none)."""
        clause, params = query.where()
        total = _int(self._read(f"SELECT count(*) FROM sessions{clause}", params)[0][0])
        columns = ", ".join(PAGE_COLUMNS)
        if "cwd" not in self.session_columns():
            columns = columns.replace("cwd", "NULL AS cwd")
        rows = self._read(f"SELECT {columns} FROM sessions{clause} ORDER BY started_at DESC, id DESC LIMIT ? OFFSET ?",
                          [*params, max(0, int(limit)), max(0, int(offset))])
        return total, [dict(r) for r in rows]

    def first_user_texts(self, session_ids: list[str]) -> dict[str, str]:
        """The first user message of each session, as text (decoded; a JSON content as its JSON);
        sessions without one are left out. ``{session_id: text}``."""
        if not session_ids:
            return {}
        marks = ",".join("?" * len(session_ids))
        rows = self._read(
            f"SELECT m.session_id, m.content FROM messages m WHERE m.id IN (SELECT min(id) FROM messages "
            f"WHERE session_id IN ({marks}) AND role = 'user' GROUP BY session_id)", list(session_ids))
        out = {}
        for r in rows:
            out[r["session_id"]] = strip_content_prefix(r["content"] or "")
        return out

    def message_page(self, session_id: str, limit: int, offset: int = 0) -> list[dict[str, Any]]:
        """``limit`` messages of a session from ``offset``, in order (by id), decoded as
        :meth:`get_messages` returns them."""
        rows = self._read(f"SELECT {self._message_columns} FROM messages WHERE session_id = ? ORDER BY id LIMIT ? OFFSET ?",
                          (session_id, max(0, int(limit)), max(0, int(offset))))
        return [row_to_message(r) for r in rows]

    def session_summaries(self, session_ids: list[str]) -> dict[str, dict[str, Any]]:
        """``{id: {"id", "title", "started_at", "end_reason"}}`` of the sessions among ``session_ids``
        that exist."""
        if not session_ids:
            return {}
        rows = self._read(f"SELECT id, title, started_at, end_reason FROM sessions WHERE id IN "
                          f"({','.join('?' * len(session_ids))})", list(session_ids))
        return {r["id"]: dict(r) for r in rows}

    def child_sessions(self, session_id: str) -> list[dict[str, Any]]:
        """The sessions whose parent is ``session_id``, oldest first: ``[{"id", "title", "started_at",
        "end_reason"}]``."""
        rows = self._read("SELECT id, title, started_at, end_reason FROM sessions WHERE parent_session_id = ? "
                          "ORDER BY started_at, id", (session_id,))
        return [dict(r) for r in rows]

    def sessions_with_memory_blocks(self, limit: int) -> list[dict[str, Any]]:
        """The newest ``limit`` sessions whose stored system prompt holds a memory block
        (:data:`MEMORY_BLOCK_MARK`), newest first: ``[{"id", "title", "source", "started_at",
        "system_prompt"}]``."""
        rows = self._read("SELECT id, title, source, started_at, system_prompt FROM sessions WHERE system_prompt LIKE ? "
                          "ORDER BY started_at DESC, id DESC LIMIT ?", (MEMORY_BLOCK_MARK, max(0, int(limit))))
        return [dict(r) for r in rows]

    def session_tokens_since(self, since: float) -> list[dict[str, Any]]:
        """Token counters of every session that may have run at or after ``since`` (started then,
        still open, or ended then): ``[{"id", "day", "input", "cache_read", "output", "started_in_window"}]``
        where ``day`` is the UTC day it started and ``input`` counts all input tokens, cache reads
        included (``state.db`` keeps these per session, not per message)."""
        day = self._day_sql.format(col="started_at")
        rows = self._read(
            f"SELECT id, {day} AS day, coalesce(input_tokens, 0) AS inp, coalesce(cache_read_tokens, 0) AS cached, "
            "coalesce(output_tokens, 0) AS outp, CASE WHEN started_at >= ? THEN 1 ELSE 0 END AS in_window "
            "FROM sessions WHERE started_at >= ? OR ended_at IS NULL OR ended_at >= ?", (since, since, since))
        return [{"id": str(r["id"]), "day": str(r["day"]), "input": _int(r["inp"]), "cache_read": _int(r["cached"]),
                 "output": _int(r["outp"]), "started_in_window": bool(r["in_window"])} for r in rows]

    def message_days_since(self, since: float) -> list[dict[str, Any]]:
        """For the sessions :meth:`session_tokens_since` returns: how many of each one's messages
        were written on each UTC day, ``[{"session_id", "day", "replies", "messages"}]`` (``replies``:
        assistant messages, about one per model call)."""
        day = self._day_sql.format(col="m.timestamp")
        rows = self._read(
            f"SELECT m.session_id AS sid, {day} AS day, "
            "sum(CASE WHEN m.role = 'assistant' THEN 1 ELSE 0 END) AS replies, count(*) AS n "
            "FROM messages m JOIN sessions s ON s.id = m.session_id "
            "WHERE s.started_at >= ? OR s.ended_at IS NULL OR s.ended_at >= ? GROUP BY m.session_id, day",
            (since, since))
        return [{"session_id": str(r["sid"]), "day": str(r["day"]), "replies": _int(r["replies"]),
                 "messages": _int(r["n"])} for r in rows]

    def token_totals(self) -> dict[str, int]:
        """Sums over every session: ``{"sessions", "input", "cache_read", "cache_write", "output"}`` (tokens)."""
        t = self._read("SELECT count(*) AS n, sum(coalesce(input_tokens, 0)) AS inp, "
                       "sum(coalesce(cache_read_tokens, 0)) AS cached, sum(coalesce(output_tokens, 0)) AS outp, "
                       "sum(coalesce(cache_write_tokens, 0)) AS written FROM sessions")[0]
        return {"sessions": _int(t["n"]), "input": _int(t["inp"]), "cache_read": _int(t["cached"]),
                "cache_write": _int(t["written"]), "output": _int(t["outp"])}

    def sessions_per_source(self) -> list[tuple[str, int]]:
        """``[(source, number of sessions)]``, most first (ties by source)."""
        rows = self._read("SELECT source, count(*) AS n FROM sessions GROUP BY source ORDER BY n DESC, source")
        return [(str(r["source"]), _int(r["n"])) for r in rows]

    def recent_turn_messages(self, session_id: str, limit: int = 50) -> list[dict[str, Any]]:
        """The newest ``limit`` user and assistant messages of a session that have content, newest
        first: ``[{"role", "content"}]`` (content decoded: text, or a list/dict for JSON content)."""
        rows = self._read("SELECT role, content FROM messages WHERE session_id = ? AND role IN ('user', 'assistant') "
                          "AND content IS NOT NULL ORDER BY id DESC LIMIT ?", (session_id, max(0, int(limit))))
        return [{"role": r["role"], "content": decode_content(r["content"])} for r in rows]

    def set_session_cwd(self, session_id: str, cwd: str) -> bool:
        """Record the working directory a session runs in, unless it has one already (the first
        recorded wins). False for an unknown session or an empty ``cwd``; raises
        :class:`~hermes_memory.errors.SessionStoreError` as every write does."""
        if not cwd:
            return False
        return bool(self._execute_write(lambda c: c.execute(
            "UPDATE sessions SET cwd = coalesce(cwd, ?) WHERE id = ?", (cwd, session_id)).rowcount > 0))
