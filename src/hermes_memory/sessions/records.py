"""Sessions and messages: the methods :class:`~hermes_memory.sessions.db.SessionDB` (SQLite) and
:class:`~hermes_memory.sessions.pg.PgSessionDB` (PostgreSQL) share (:class:`RecordMethods`, a mixin).

The SQL here is written once, with ``?`` placeholders, and runs on both engines: the PostgreSQL
store hands ``fn(conn)`` an adapter that speaks the same dialect
(:class:`hermes_memory.sessions.pg.connection.PgConn`). What differs between the engines is
behind three hooks of the store: ``_insert_message(conn, row) -> id``,
``_insert_messages(conn, rows) -> ids`` and ``_message_columns`` (the column list a message read
selects). The store also provides ``_read(sql, params)`` and ``_execute_write(fn)``.

Times are Unix epoch seconds (float). Counts of text are characters unless said otherwise.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from hermes_memory.errors import SessionStoreError
from hermes_memory.sessions import fts as fts_mod
from hermes_memory.sessions.codec import (
    decode_json,
    encode_content,
    encode_json,
    row_to_message,
    scrub,
    storable,
)
from hermes_memory.sessions.storebase import StoreBase
from hermes_memory.sessions.titles import sanitize_title

INSERT_MESSAGE_SQL = (
    "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, "
    "timestamp, token_count, finish_reason, reasoning, reasoning_content, reasoning_details, "
    "codex_reasoning_items, codex_message_items) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)
"""The one INSERT of a message row (14 columns, in the order :meth:`SessionDB.append_message` builds)."""


MESSAGE_ROW_COLUMNS = (
    "session_id", "role", "content", "tool_call_id", "tool_calls", "tool_name", "timestamp", "token_count",
    "finish_reason", "reasoning", "reasoning_content", "reasoning_details", "codex_reasoning_items",
    "codex_message_items",
)
"""The columns of one prepared message row, in :data:`INSERT_MESSAGE_SQL` order."""


def message_row(session_id: str, role: str, m: dict[str, Any], now: float) -> tuple[tuple[Any, ...], int]:
    """One message dict (keys of :meth:`RecordMethods.append_message`; ``name`` for ``tool_name``)
    as a row of :data:`MESSAGE_ROW_COLUMNS` (text scrubbed, JSON encoded, ``now`` when it has no
    ``timestamp``), and the tool calls it adds to the session's ``tool_call_count`` (assistant only)."""
    role = fts_mod.scrub_text(role)
    tc = m.get("tool_calls")
    decoded = decode_json(tc) if isinstance(tc, str) else tc
    calls = len(decoded) if isinstance(decoded, list) and role == "assistant" else 0
    row = (
        session_id,
        role,
        encode_content(m.get("content")),
        scrub(m.get("tool_call_id")),
        encode_json(tc),
        scrub(m.get("tool_name") or m.get("name")),
        m.get("timestamp") if m.get("timestamp") is not None else now,
        m.get("token_count"),
        scrub(m.get("finish_reason")),
        scrub(m.get("reasoning")),
        scrub(m.get("reasoning_content")),
        encode_json(m.get("reasoning_details")),
        encode_json(m.get("codex_reasoning_items")),
        encode_json(m.get("codex_message_items")),
    )
    return row, calls


class RecordMethods(StoreBase):
    """Sessions, messages, export, delete and prune (a mixin over a store; see the module doc)."""

    _message_columns = "*"
    """What a message read selects (``*`` on SQLite; the public columns on PostgreSQL)."""
    _for_update = ""
    """Appended to the SELECT that finds the sessions a delete/prune removes: ``" FOR UPDATE"`` on
    PostgreSQL, so an append to the same session waits for the delete instead of racing it (on
    SQLite the write transaction already excludes every other writer)."""

    def _insert_message(self, conn: Any, row: tuple[Any, ...]) -> int:
        """Insert one prepared row (:data:`MESSAGE_ROW_COLUMNS`) and return its id (SQLite: ``lastrowid``)."""
        return int(conn.execute(INSERT_MESSAGE_SQL, row).lastrowid)

    def _insert_messages(self, conn: Any, rows: list[tuple[Any, ...]]) -> list[int]:
        """Insert prepared rows in order and return their ids in the same order."""
        return [self._insert_message(conn, r) for r in rows]

    # ------------------------------------------------------------------ sessions
    def create_session(
        self,
        session_id: str | None = None,
        source: str = "cli",
        model: str | None = None,
        model_config: dict[str, Any] | str | None = None,
        system_prompt: str | None = None,
        user_id: str | None = None,
        parent_session_id: str | None = None,
        title: str | None = None,
        started_at: float | None = None,
    ) -> str:
        """Create a session row and return its id (a new UUID4 hex-ish string when not given).

        Creating an id that already exists is a no-op that returns the id (idempotent; the
        stored row is not changed). ``title`` goes through :func:`sanitize_title`; a title held by
        another session raises ``ValueError``. A ``parent_session_id`` that does not exist raises
        :class:`SessionStoreError`.
        """
        sid = session_id or uuid.uuid4().hex
        clean_title = sanitize_title(title)
        cfg = model_config if model_config is None or isinstance(model_config, str) else json.dumps(model_config)

        def _do(conn: Any) -> str:
            if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (sid,)).fetchone():
                return sid
            if clean_title is not None and conn.execute(
                "SELECT 1 FROM sessions WHERE title = ?", (clean_title,)
            ).fetchone():
                raise ValueError(f"Session title {clean_title!r} is already in use; choose another title.")
            conn.execute(
                "INSERT INTO sessions (id, source, user_id, model, model_config, system_prompt, "
                "parent_session_id, started_at, title) VALUES (?,?,?,?,?,?,?,?,?)",
                (
                    sid,
                    source or "cli",
                    user_id,
                    model,
                    cfg,
                    system_prompt,
                    parent_session_id,
                    started_at if started_at is not None else time.time(),
                    clean_title,
                ),
            )
            return sid

        return self._execute_write(_do)

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        """The session row as a dict (all columns), or ``None`` if unknown."""
        if not storable(session_id):
            return None
        rows = self._read("SELECT * FROM sessions WHERE id = ?", (session_id,))
        return dict(rows[0]) if rows else None

    def end_session(self, session_id: str, reason: str) -> bool:
        """Set ``ended_at`` (now) and ``end_reason``. The first end wins: returns False (and changes
        nothing) when the session is already ended or unknown; :meth:`reopen_session` re-arms it."""

        def _do(conn: Any) -> bool:
            cur = conn.execute(
                "UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL",
                (time.time(), reason, session_id),
            )
            return cur.rowcount > 0

        return self._execute_write(_do)

    def reopen_session(self, session_id: str) -> bool:
        """Clear ``ended_at``/``end_reason`` so the session can be ended again. False if unknown."""
        return self._execute_write(
            lambda c: c.execute(
                "UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = ?", (session_id,)
            ).rowcount
            > 0
        )

    def update_token_counts(
        self,
        session_id: str,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
        reasoning_tokens: int = 0,
        cost_usd: float | None = None,
        model: str | None = None,
        api_call_count: int | None = None,
        absolute: bool = False,
    ) -> bool:
        """Add the token counts (tokens, not chars) and ``cost_usd`` (to ``estimated_cost_usd``) to
        the session, or set them when ``absolute``. ``api_call_count`` is added (default +0) or set.
        ``model`` is stored only when the session has none yet. Returns False for an unknown session."""
        counters = {
            "input_tokens": int(input_tokens or 0),
            "output_tokens": int(output_tokens or 0),
            "cache_read_tokens": int(cache_read_tokens or 0),
            "cache_write_tokens": int(cache_write_tokens or 0),
            "reasoning_tokens": int(reasoning_tokens or 0),
        }
        if absolute:
            sets = [f"{k} = ?" for k in counters]
            params: list[Any] = list(counters.values())
            if cost_usd is not None:
                sets.append("estimated_cost_usd = ?")
                params.append(float(cost_usd))
            if api_call_count is not None:
                sets.append("api_call_count = ?")
                params.append(int(api_call_count))
        else:
            sets = [f"{k} = coalesce({k}, 0) + ?" for k in counters]
            params = list(counters.values())
            if cost_usd is not None:
                sets.append("estimated_cost_usd = coalesce(estimated_cost_usd, 0) + ?")
                params.append(float(cost_usd))
            if api_call_count is not None:
                sets.append("api_call_count = coalesce(api_call_count, 0) + ?")
                params.append(int(api_call_count))
        if model:
            sets.append("model = coalesce(model, ?)")
            params.append(model)
        params.append(session_id)
        sql = f"UPDATE sessions SET {', '.join(sets)} WHERE id = ?"
        return self._execute_write(lambda c: c.execute(sql, params).rowcount > 0)


    def update_system_prompt(self, session_id: str, system_prompt: str | None) -> bool:
        """Store the session's system prompt (replacing it). Returns False for an unknown session."""
        value = scrub(system_prompt)
        return self._execute_write(
            lambda c: c.execute("UPDATE sessions SET system_prompt = ? WHERE id = ?", (value, session_id)).rowcount > 0
        )

    def ensure_session(self, session_id: str, source: str = "cli", model: str | None = None) -> str:
        """Make sure a session row exists (created with ``source``/``model`` if missing; an existing
        row is left unchanged) so that messages can be appended to it. Returns the id."""
        return self.create_session(session_id=session_id, source=source, model=model)


    # ------------------------------------------------------------------ messages
    def append_message(
        self,
        session_id: str,
        role: str,
        content: Any = None,
        tool_name: str | None = None,
        tool_calls: list[dict[str, Any]] | str | None = None,
        tool_call_id: str | None = None,
        token_count: int | None = None,
        finish_reason: str | None = None,
        reasoning: str | None = None,
        reasoning_content: str | None = None,
        reasoning_details: Any = None,
        codex_reasoning_items: Any = None,
        codex_message_items: Any = None,
        timestamp: float | None = None,
    ) -> int:
        """Store one message and return its row id.

        ``content`` may be text or a list/dict (stored as prefixed JSON, returned decoded); lone
        surrogates are scrubbed. ``tool_calls`` (OpenAI list) is stored as JSON. The session's
        ``message_count`` grows by 1 and, for assistant messages, ``tool_call_count`` by the number
        of tool calls. Raises :class:`SessionStoreError` for an unknown session or after the
        bounded retries of a locked database.
        """
        fields = {
            "content": content, "tool_name": tool_name, "tool_calls": tool_calls, "tool_call_id": tool_call_id,
            "token_count": token_count, "finish_reason": finish_reason, "reasoning": reasoning,
            "reasoning_content": reasoning_content, "reasoning_details": reasoning_details,
            "codex_reasoning_items": codex_reasoning_items, "codex_message_items": codex_message_items,
            "timestamp": timestamp,
        }
        row, calls = message_row(session_id, str(role), fields, time.time())
        return self._append(session_id, [row], calls)[0]

    def append_messages(self, session_id: str, messages: list[dict[str, Any]]) -> list[int]:
        """Append many OpenAI-style message dicts in ONE transaction; returns their row ids.

        Keys as for :meth:`append_message` (``name`` is accepted for ``tool_name``, ``timestamp``
        for a given time). Used by importers and batch writers.
        """
        if not messages:
            return []
        now = time.time()
        prepared = [message_row(session_id, str(m.get("role") or "user"), m, now) for m in messages]
        return self._append(session_id, [r for r, _ in prepared], sum(c for _, c in prepared))

    def _append(self, session_id: str, rows: list[tuple[Any, ...]], calls: int) -> list[int]:
        """Insert prepared rows in one transaction, counting them (and ``calls`` tool calls) on the
        session; raises :class:`SessionStoreError` for an unknown session."""

        def _do(conn: Any) -> list[int]:
            # the session row first: it is the lock that keeps one session's ids in commit order
            updated = conn.execute(
                "UPDATE sessions SET message_count = coalesce(message_count, 0) + ?, "
                "tool_call_count = coalesce(tool_call_count, 0) + ? WHERE id = ?",
                (len(rows), calls, session_id),
            ).rowcount
            if not updated:
                raise SessionStoreError(
                    f"unknown session {session_id!r}: create it with create_session() before appending."
                )
            return [self._insert_message(conn, rows[0])] if len(rows) == 1 else self._insert_messages(conn, rows)

        return self._execute_write(_do)

    def update_message_content(self, message_id: int, content: Any) -> bool:
        """Rewrite one message's content (redaction, persisted pruning). The full-text index
        follows: the old wording no longer matches. Returns False for an unknown id."""
        enc = encode_content(content)
        return self._execute_write(
            lambda c: c.execute("UPDATE messages SET content = ? WHERE id = ?", (enc, message_id)).rowcount > 0
        )

    def _row_to_message(self, row: Any) -> dict[str, Any]:
        """:func:`~hermes_memory.sessions.codec.row_to_message` (the dashboard reads rows with it)."""
        return row_to_message(row)

    def get_messages(self, session_id: str) -> list[dict[str, Any]]:
        """All messages of a session in order (by id), every column, JSON columns decoded."""
        rows = self._read(f"SELECT {self._message_columns} FROM messages WHERE session_id = ? ORDER BY id", (session_id,))
        return [row_to_message(r) for r in rows]

    def get_message(self, message_id: int) -> dict[str, Any] | None:
        """One message by id (decoded), or ``None``."""
        rows = self._read(f"SELECT {self._message_columns} FROM messages WHERE id = ?", (message_id,))
        return row_to_message(rows[0]) if rows else None

    def get_messages_window(
        self, session_id: str, around_message_id: int, window: int = 5
    ) -> tuple[list[dict[str, Any]], bool, bool]:
        """Messages ``window`` before and after ``around_message_id`` in its session (inclusive).
        Returns ``(messages, more_before, more_after)``."""
        before = self._read(
            f"SELECT {self._message_columns} FROM messages WHERE session_id = ? AND id < ? ORDER BY id DESC LIMIT ?",
            (session_id, around_message_id, window + 1),
        )
        after = self._read(
            f"SELECT {self._message_columns} FROM messages WHERE session_id = ? AND id >= ? ORDER BY id LIMIT ?",
            (session_id, around_message_id, window + 2),
        )
        more_before = len(before) > window
        more_after = len(after) > window + 1
        rows = list(reversed(before[:window])) + list(after[: window + 1])
        return [row_to_message(r) for r in rows], more_before, more_after

    # ------------------------------------------------------------------ export / delete / prune
    def export_session(self, session_id: str) -> dict[str, Any] | None:
        """The session row (all columns, ``title`` may be ``None``) plus ``messages`` (decoded), or
        ``None`` for an unknown session. JSON-serialisable."""
        s = self.get_session(session_id)
        if s is None:
            return None
        s["messages"] = self.get_messages(session_id)
        return s

    def export_all(self, source: str | None = None) -> list[dict[str, Any]]:
        """:meth:`export_session` for every session (optionally one source), oldest first."""
        if source:
            ids = self._read("SELECT id FROM sessions WHERE source = ? ORDER BY started_at, id", (source,))
        else:
            ids = self._read("SELECT id FROM sessions ORDER BY started_at, id")
        return [e for (sid,) in ids if (e := self.export_session(sid)) is not None]

    def _forget_derived(self, conn: Any, session_ids: list[str]) -> None:
        """Delete what this engine derives from these sessions' messages outside the messages table
        (in the caller's transaction, before the messages go). Nothing by default; SQLite drops
        their semantic-search vectors."""

    def delete_session(self, session_id: str) -> bool:
        """Delete a session and its messages (they leave the search index too). Child sessions are
        detached (``parent_session_id`` set to NULL), never deleted. False for an unknown id."""
        if not storable(session_id):
            return False

        def _do(conn: Any) -> bool:
            if not conn.execute("SELECT 1 FROM sessions WHERE id = ?" + self._for_update, (session_id,)).fetchone():
                return False
            conn.execute("UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ?", (session_id,))
            self._forget_derived(conn, [session_id])  # e.g. semantic-search vectors go with the messages
            conn.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
            return True

        return self._execute_write(_do)

    def prune_sessions(self, older_than_days: float = 90, source: str | None = None) -> int:
        """Delete ENDED sessions that started more than ``older_than_days`` days ago (optionally of
        one source) and return how many. Sessions that never ended are never pruned; children of
        pruned sessions that stay are detached. Running it twice prunes nothing the second time."""
        cutoff = time.time() - float(older_than_days) * 86400.0

        def _do(conn: Any) -> int:
            sql = "SELECT id FROM sessions WHERE ended_at IS NOT NULL AND started_at < ?"
            params: list[Any] = [cutoff]
            if source:
                sql += " AND source = ?"
                params.append(source)
            ids = [r[0] for r in conn.execute(sql + self._for_update, params).fetchall()]
            if not ids:
                return 0
            for chunk_start in range(0, len(ids), 500):
                chunk = ids[chunk_start : chunk_start + 500]
                marks = ",".join("?" * len(chunk))
                conn.execute(f"UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id IN ({marks})", chunk)
                self._forget_derived(conn, chunk)
                conn.execute(f"DELETE FROM messages WHERE session_id IN ({marks})", chunk)
                conn.execute(f"DELETE FROM sessions WHERE id IN ({marks})", chunk)
            return len(ids)

        return self._execute_write(_do)
