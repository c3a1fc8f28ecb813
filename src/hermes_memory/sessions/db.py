"""``SessionDB``: every session and message in one SQLite file (``$HERMES_HOME/state.db``).

Behaviour follows the reference Hermes Agent's own ``SessionDB``, on the same file:

* WAL journal, foreign keys on, files mode 0600, ``synchronous=FULL`` by default (as the
  reference agent): every acknowledged commit is fsynced to the WAL before it returns, so it
  survives a power cut or an OS crash. ``synchronous="normal"`` (``sessions.synchronous`` in
  config.yaml) skips that fsync: still no corruption under WAL, but the last committed
  transactions may be lost on a power cut or OS crash (not on a crash of this process). Batch
  writers (:meth:`SessionDB.append_messages`, importers) commit once per batch, not per row.
* Every write runs in ``BEGIN IMMEDIATE`` under a per-object lock, with a SQLite busy timeout
  (``timeout`` seconds, default 1.0) and up to ``write_retries`` (default 15) retries after a
  random 20-150 ms sleep when the database is locked/busy. When the retries are spent a
  :class:`~hermes_memory.errors.SessionStoreError` is raised -- never swallowed (failure case B26).
  Every 50 writes a passive WAL checkpoint is attempted.
* Full-text search: our FTS5 index ``hm_messages_fts`` (porter + unicode61) kept in step with
  ``messages`` by our ``hm_*`` triggers, plus the trigram side table ``hm_messages_cjk`` for rows
  with CJK text (B23, B24); the reference's own ``messages_fts*`` objects are never touched. See
  :mod:`hermes_memory.sessions.migrations`, :mod:`hermes_memory.sessions.hmindex` and
  :mod:`hermes_memory.sessions.fts`.

The class is put together from one module per job: the connection, bounded-retry writes and
batches (:mod:`~hermes_memory.sessions.connection`), how values are stored in text columns
(:mod:`~hermes_memory.sessions.codec`), titles (:mod:`~hermes_memory.sessions.titles`), lineage
(:mod:`~hermes_memory.sessions.lineage`), listing and resolving sessions
(:mod:`~hermes_memory.sessions.listing`) and message search
(:mod:`~hermes_memory.sessions.message_search`); this module keeps sessions, messages and
export/delete/prune, and every name that was importable from it before.

Times are Unix epoch seconds (float). Counts of text are characters unless said otherwise.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from typing import Any

from hermes_memory.errors import SessionStoreError
from hermes_memory.sessions import fts as fts_mod
from hermes_memory.sessions.codec import (  # noqa: F401  (re-exported: importable here as before)
    JSON_CONTENT_PREFIX,
    decode_content,
    decode_json,
    encode_content,
    encode_json,
    row_to_message,
    scrub,
    storable,
)
from hermes_memory.sessions.connection import (  # noqa: F401  (re-exported)
    BATCH_WRITES,
    CHECKPOINT_EVERY,
    RETRY_SLEEP_RANGE,
    SYNCHRONOUS_MODES,
    WRITE_RETRIES,
    SQLiteStore,
    _is_lock_error,
)
from hermes_memory.sessions.embeddings import forget_sessions
from hermes_memory.sessions.lineage import _MEMORY_CONTEXT_RE, LineageMethods, _repeats_pending_prompt  # noqa: F401
from hermes_memory.sessions.listing import AMBIGUOUS_SHOWN, ListingMethods, SessionLookupError, cwd_clause  # noqa: F401
from hermes_memory.sessions.message_search import (  # noqa: F401  (re-exported)
    CONTEXT_CHARS,
    SNIPPET_TOKENS,
    MessageSearchMethods,
    SearchFilters,
    build_search_sql,
)
from hermes_memory.sessions.message_search import as_list as _as_list  # noqa: F401
from hermes_memory.sessions.ranking import (  # noqa: F401  (re-exported: importable here as before)
    DROPPED_TERM_ROWS,
    NEIGHBOUR_WEIGHT,
    POSTINGS_BUDGET,
    RERANK_POOL,
    SESSION_WEIGHT,
    SINGLE_TERM_WINDOW,
)
from hermes_memory.sessions.titles import (  # noqa: F401
    _INVISIBLE,
    _TITLE_NUMBER_RE,
    MAX_TITLE_CHARS,
    TitleMethods,
    sanitize_title,
)

# The old private names of the codec (importers used them); kept for one release.
_encode_content = encode_content
_decode_content = decode_content
_encode_json = encode_json
_decode_json = decode_json
_scrub = scrub
_storable = storable

INSERT_MESSAGE_SQL = (
    "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, "
    "timestamp, token_count, finish_reason, reasoning, reasoning_content, reasoning_details, "
    "codex_reasoning_items, codex_message_items) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)
"""The one INSERT of a message row (14 columns, in the order :meth:`SessionDB.append_message` builds)."""


class SessionDB(TitleMethods, LineageMethods, ListingMethods, MessageSearchMethods, SQLiteStore):
    """Sessions and messages in one SQLite file; the store behind ``session_search``.

    ``db_path``: the database file, default ``HermesHome.resolve().state_db`` (the folder is
    created). ``timeout``: SQLite busy timeout for one attempt, seconds. ``write_retries``: bounded
    retries of a locked write (see module doc). ``synchronous``: ``"full"`` (default, every
    commit is durable) or ``"normal"`` (faster; the last commits may be lost on a power cut or OS
    crash; see the module doc); anything else raises ``ValueError``. Safe to share between threads
    (one connection, one lock); several processes may open the same file. Raises
    :class:`SessionStoreError` if the file cannot be opened or migrated.
    """

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

        def _do(conn: sqlite3.Connection) -> str:
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
        if not _storable(session_id):
            return None
        rows = self._read("SELECT * FROM sessions WHERE id = ?", (session_id,))
        return dict(rows[0]) if rows else None

    def end_session(self, session_id: str, reason: str) -> bool:
        """Set ``ended_at`` (now) and ``end_reason``. The first end wins: returns False (and changes
        nothing) when the session is already ended or unknown; :meth:`reopen_session` re-arms it."""

        def _do(conn: sqlite3.Connection) -> bool:
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
        value = _scrub(system_prompt)
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
        if tool_calls is not None and isinstance(tool_calls, str):
            decoded = decode_json(tool_calls)
            n_calls = len(decoded) if isinstance(decoded, list) else 0
        else:
            n_calls = len(tool_calls) if isinstance(tool_calls, list) else 0
        row = (
            session_id,
            fts_mod.scrub_text(str(role)),
            encode_content(content),
            scrub(tool_call_id),
            encode_json(tool_calls),
            scrub(tool_name),
            timestamp if timestamp is not None else time.time(),
            token_count,
            scrub(finish_reason),
            scrub(reasoning),
            scrub(reasoning_content),
            encode_json(reasoning_details),
            encode_json(codex_reasoning_items),
            encode_json(codex_message_items),
        )
        added_calls = n_calls if role == "assistant" else 0

        def _do(conn: sqlite3.Connection) -> int:
            updated = conn.execute(
                "UPDATE sessions SET message_count = coalesce(message_count, 0) + 1, "
                "tool_call_count = coalesce(tool_call_count, 0) + ? WHERE id = ?",
                (added_calls, session_id),
            ).rowcount
            if not updated:
                raise SessionStoreError(
                    f"unknown session {session_id!r}: create it with create_session() before appending."
                )
            cur = conn.execute(
                INSERT_MESSAGE_SQL,
                row,
            )
            return int(cur.lastrowid)

        return self._execute_write(_do)

    def append_messages(self, session_id: str, messages: list[dict[str, Any]]) -> list[int]:
        """Append many OpenAI-style message dicts in ONE transaction; returns their row ids.

        Keys as for :meth:`append_message` (``name`` is accepted for ``tool_name``, ``timestamp``
        for a given time). Used by importers and batch writers.
        """
        if not messages:
            return []
        prepared = []
        calls_total = 0
        now = time.time()
        for m in messages:
            role = fts_mod.scrub_text(str(m.get("role") or "user"))
            tc = m.get("tool_calls")
            if isinstance(tc, str):
                dec = decode_json(tc)
                n = len(dec) if isinstance(dec, list) else 0
            else:
                n = len(tc) if isinstance(tc, list) else 0
            if role == "assistant":
                calls_total += n
            prepared.append(
                (
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
            )

        def _do(conn: sqlite3.Connection) -> list[int]:
            if not conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
                raise SessionStoreError(
                    f"unknown session {session_id!r}: create it with create_session() before appending."
                )
            ids = []
            for r in prepared:
                cur = conn.execute(
                    INSERT_MESSAGE_SQL,
                    r,
                )
                ids.append(int(cur.lastrowid))
            conn.execute(
                "UPDATE sessions SET message_count = coalesce(message_count, 0) + ?, "
                "tool_call_count = coalesce(tool_call_count, 0) + ? WHERE id = ?",
                (len(prepared), calls_total, session_id),
            )
            return ids

        return self._execute_write(_do)

    def update_message_content(self, message_id: int, content: Any) -> bool:
        """Rewrite one message's content (redaction, persisted pruning). The full-text index
        follows: the old wording no longer matches. Returns False for an unknown id."""
        enc = encode_content(content)
        return self._execute_write(
            lambda c: c.execute("UPDATE messages SET content = ? WHERE id = ?", (enc, message_id)).rowcount > 0
        )

    def _row_to_message(self, row: sqlite3.Row) -> dict[str, Any]:
        """:func:`~hermes_memory.sessions.codec.row_to_message` (the dashboard reads rows with it)."""
        return row_to_message(row)

    def get_messages(self, session_id: str) -> list[dict[str, Any]]:
        """All messages of a session in order (by id), every column, JSON columns decoded."""
        rows = self._read("SELECT * FROM messages WHERE session_id = ? ORDER BY id", (session_id,))
        return [row_to_message(r) for r in rows]

    def get_message(self, message_id: int) -> dict[str, Any] | None:
        """One message by id (decoded), or ``None``."""
        rows = self._read("SELECT * FROM messages WHERE id = ?", (message_id,))
        return row_to_message(rows[0]) if rows else None

    def get_messages_window(
        self, session_id: str, around_message_id: int, window: int = 5
    ) -> tuple[list[dict[str, Any]], bool, bool]:
        """Messages ``window`` before and after ``around_message_id`` in its session (inclusive).
        Returns ``(messages, more_before, more_after)``."""
        before = self._read(
            "SELECT * FROM messages WHERE session_id = ? AND id < ? ORDER BY id DESC LIMIT ?",
            (session_id, around_message_id, window + 1),
        )
        after = self._read(
            "SELECT * FROM messages WHERE session_id = ? AND id >= ? ORDER BY id LIMIT ?",
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

    def delete_session(self, session_id: str) -> bool:
        """Delete a session and its messages (they leave the search index too). Child sessions are
        detached (``parent_session_id`` set to NULL), never deleted. False for an unknown id."""
        if not storable(session_id):
            return False

        def _do(conn: sqlite3.Connection) -> bool:
            if not conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
                return False
            conn.execute("UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ?", (session_id,))
            forget_sessions(conn, [session_id])  # semantic-search vectors go with the messages
            conn.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
            return True

        return self._execute_write(_do)

    def prune_sessions(self, older_than_days: float = 90, source: str | None = None) -> int:
        """Delete ENDED sessions that started more than ``older_than_days`` days ago (optionally of
        one source) and return how many. Sessions that never ended are never pruned; children of
        pruned sessions that stay are detached. Running it twice prunes nothing the second time."""
        cutoff = time.time() - float(older_than_days) * 86400.0

        def _do(conn: sqlite3.Connection) -> int:
            sql = "SELECT id FROM sessions WHERE ended_at IS NOT NULL AND started_at < ?"
            params: list[Any] = [cutoff]
            if source:
                sql += " AND source = ?"
                params.append(source)
            ids = [r[0] for r in conn.execute(sql, params).fetchall()]
            if not ids:
                return 0
            for chunk_start in range(0, len(ids), 500):
                chunk = ids[chunk_start : chunk_start + 500]
                marks = ",".join("?" * len(chunk))
                conn.execute(f"UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id IN ({marks})", chunk)
                forget_sessions(conn, chunk)
                conn.execute(f"DELETE FROM messages WHERE session_id IN ({marks})", chunk)
                conn.execute(f"DELETE FROM sessions WHERE id IN ({marks})", chunk)
            return len(ids)

        return self._execute_write(_do)

    def fts_integrity_check(self) -> bool:
        """Run FTS5 ``integrity-check`` on the main index (True if it passes; raises
        :class:`SessionStoreError` describing the corruption otherwise)."""
        try:
            self._execute_write(
                lambda c: c.execute("INSERT INTO hm_messages_fts(hm_messages_fts, rank) VALUES('integrity-check', 1)")
            )
        except SessionStoreError:
            raise
        return True
