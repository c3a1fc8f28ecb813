"""Listing and finding sessions: newest-first pages, counts, and turning a user's session
reference (id, id prefix, title) into an id (:meth:`ListingMethods.resolve_session`).

A mixin of :class:`~hermes_memory.sessions.db.SessionDB` over
:class:`~hermes_memory.sessions.connection.SQLiteStore` (``_read``), plus :func:`cwd_clause`.
"""

from __future__ import annotations

import time
from typing import Any

from hermes_memory.errors import SessionLookupError, SessionStoreError  # noqa: F401 - re-exported
from hermes_memory.sessions import fts as fts_mod
from hermes_memory.sessions.codec import decode_content, storable
from hermes_memory.sessions.storebase import StoreBase

AMBIGUOUS_SHOWN = 5
"""How many candidate sessions an "ambiguous prefix" error lists."""


def cwd_clause(prefix: str, alias: str = "") -> tuple[str, list[Any]]:
    """SQL condition (and its parameters) for sessions whose ``cwd`` is the folder ``prefix`` or a
    folder below it (``/`` or ``\\`` separated). ``%`` and ``_`` in the path match themselves."""
    base = prefix.rstrip("/\\") or prefix
    esc = base.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    col = f"{alias}cwd"
    return (f"({col} = ? OR {col} LIKE ? ESCAPE '\\' OR {col} LIKE ? ESCAPE '\\')",
            [base, esc + "/%", esc + "\\\\%"])



class ListingMethods(StoreBase):
    """Listing, counting and resolving sessions (a mixin of :class:`~hermes_memory.sessions.db.SessionDB`)."""

    def list_sessions(
        self,
        source: str | None = None,
        limit: int = 20,
        offset: int = 0,
        user_id: str | None = None,
        include_preview: bool = True,
        cwd_prefix: str | None = None,
    ) -> list[dict[str, Any]]:
        """Sessions newest first (by ``started_at``, ties by id): every column plus ``preview``
        (first user message, 80 chars) and ``last_active`` (newest message time or ``started_at``).
        ``cwd_prefix`` keeps sessions run in that folder or below it (:func:`cwd_clause`)."""
        where, params = [], []
        if source:
            where.append("source = ?")
            params.append(source)
        if cwd_prefix is not None:
            clause, extra = cwd_clause(cwd_prefix)
            where.append(clause)
            params += extra
        if user_id is not None:
            where.append("user_id = ?")
            params.append(user_id)
        clause = (" WHERE " + " AND ".join(where)) if where else ""
        columns = ""
        if include_preview:  # one query, not two more per session (a round trip each on a server)
            columns = (", (SELECT m.content FROM messages m WHERE m.session_id = s.id AND m.role = 'user' "
                     "ORDER BY m.id LIMIT 1) AS hm_preview, "
                     "(SELECT max(m.timestamp) FROM messages m WHERE m.session_id = s.id) AS hm_last")
        rows = self._read(
            f"SELECT s.*{columns} FROM sessions s{clause} ORDER BY started_at DESC, id DESC LIMIT ? OFFSET ?",
            [*params, max(0, int(limit)), max(0, int(offset))],
        )
        out = []
        for r in rows:
            d = dict(r)
            if include_preview:
                text, last = decode_content(d.pop("hm_preview")), d.pop("hm_last")
                d["preview"] = (text if isinstance(text, str) else "")[:80]  # "" without a user message
                d["last_active"] = last if last is not None else d["started_at"]
            out.append(d)
        return out

    def search_sessions(self, source: str | None = None, limit: int = 20, offset: int = 0) -> list[dict[str, Any]]:
        """Reference name for :meth:`list_sessions` (sessions newest first, paginated)."""
        return self.list_sessions(source=source, limit=limit, offset=offset)

    def session_count(self, source: str | None = None, cwd_prefix: str | None = None) -> int:
        """Number of sessions (optionally of one source, and run in or below ``cwd_prefix``)."""
        if cwd_prefix is not None:
            clause, params = cwd_clause(cwd_prefix)
            if source:
                clause += " AND source = ?"
                params.append(source)
            return int(self._read(f"SELECT count(*) FROM sessions WHERE {clause}", params)[0][0])
        if source:
            return int(self._read("SELECT count(*) FROM sessions WHERE source = ?", (source,))[0][0])
        return int(self._read("SELECT count(*) FROM sessions")[0][0])

    def message_count(self, session_id: str | None = None) -> int:
        """Number of messages in total or in one session."""
        if session_id:
            return int(self._read("SELECT count(*) FROM messages WHERE session_id = ?", (session_id,))[0][0])
        return int(self._read("SELECT count(*) FROM messages")[0][0])

    def resolve_session_id(self, prefix: str) -> str | None:
        """Full id for an exact id or a unique prefix (``%``/``_`` are literal); ``None`` when
        unknown or ambiguous."""
        if not prefix or not storable(prefix):
            return None
        if self._read("SELECT 1 FROM sessions WHERE id = ?", (prefix,)):
            return prefix
        rows = self._read(
            "SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\\' LIMIT 2", (fts_mod.like_escape(prefix) + "%",)
        )
        return rows[0]["id"] if len(rows) == 1 else None

    def session_id_candidates(self, prefix: str, limit: int = 5) -> tuple[list[dict[str, Any]], int]:
        """Sessions whose id starts with ``prefix`` (``%``/``_`` literal): up to ``limit`` rows
        ``{"id", "title", "started_at"}`` (oldest first, then id) and the total number that match.
        ``([], 0)`` for an empty or unstorable prefix."""
        if not prefix or not storable(prefix):
            return [], 0
        pattern = fts_mod.like_escape(prefix) + "%"
        total = self._read("SELECT count(*) FROM sessions WHERE id LIKE ? ESCAPE '\\'", (pattern,))[0][0]
        rows = self._read(
            "SELECT id, title, started_at FROM sessions WHERE id LIKE ? ESCAPE '\\' ORDER BY started_at, id LIMIT ?",
            (pattern, max(0, int(limit))),
        )
        return [{"id": r["id"], "title": r["title"], "started_at": r["started_at"]} for r in rows], int(total)

    def resolve_session(self, ref: str, *, by_title: bool = True) -> str:
        """Full session id for ``ref``: an exact id, a unique id prefix or (``by_title``) a title
        (see :meth:`resolve_session_by_title`); a unique prefix wins over a title.

        The one place the CLI and the agent turn a user's session reference into an id. Raises
        :class:`SessionLookupError` (a :class:`SessionStoreError`) when nothing matches, or when
        ``ref`` is a prefix of several ids: then the message says "ambiguous" and lists up to 5
        of them (id, title, start time in UTC) and ``candidates`` holds them.
        """
        sid = self.resolve_session_id(ref) or (self.resolve_session_by_title(ref) if by_title else None)
        if sid:
            return sid
        shown, total = self.session_id_candidates(ref, limit=AMBIGUOUS_SHOWN)
        if total > 1:
            lines = []
            for c in shown:
                started = (time.strftime("%Y-%m-%d %H:%M", time.gmtime(float(c["started_at"])))
                           if c["started_at"] is not None else "-")
                lines.append(f"  {c['id']}  {c['title'] or '(untitled)'}  started {started} UTC")
            more = f"\n  ... and {total - len(shown)} more" if total > len(shown) else ""
            raise SessionLookupError(
                f"session id prefix {ref!r} is ambiguous: it matches {total} sessions:\n"
                + "\n".join(lines) + more + "\nGive more characters of the id.",
                ref, shown,
            )
        what = "id, id prefix or title" if by_title else "id or id prefix"
        raise SessionLookupError(
            f"no session matches {ref!r} (as an {what}); list sessions with `hermes-memory sessions list`.",
            ref, [],
        )
