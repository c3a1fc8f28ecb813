"""``PgSessionDB``: the sessions and messages of :class:`~hermes_memory.sessions.db.SessionDB` in
PostgreSQL, for deployments where many processes on many hosts share one store (issue 16).

Same public methods, return shapes and errors as the SQLite class: the session/message, title,
lineage and listing methods are the backend-neutral mixins both classes share
(:mod:`~hermes_memory.sessions.records`, :mod:`~hermes_memory.sessions.titles`,
:mod:`~hermes_memory.sessions.lineage`, :mod:`~hermes_memory.sessions.listing`), run here through
the connection of :mod:`hermes_memory.sessions.pg.connection`. Timestamps are the same epoch-second
floats, ids the same ints, JSON columns decoded the same way
(:mod:`~hermes_memory.sessions.codec`). Search (``search_messages``, ``snippets_for``,
``search_titles``) is added by the PostgreSQL search mixin; the SQLite-only members (``conn``,
``db_path``, ``fts_integrity_check``, ``synchronous``) do not exist here.

Differences a user can see: text holding NUL characters is stored with U+FFFD in their place
(PostgreSQL ``text`` cannot hold NUL); message ids are unique and increasing per session in
commit order, but with several writers the ids of different sessions interleave.
"""

from __future__ import annotations

from typing import Any

from hermes_memory.errors import SessionStoreError
from hermes_memory.sessions.browse import BrowseMethods
from hermes_memory.sessions.lineage import LineageMethods
from hermes_memory.sessions.listing import ListingMethods
from hermes_memory.sessions.pg.connection import PgConn, PgStore
from hermes_memory.sessions.pg.copy import CopyMethods
from hermes_memory.sessions.pg.search import PgMessageSearchMethods
from hermes_memory.sessions.pg.title_search import PgTitleSearchMethods
from hermes_memory.sessions.records import INSERT_MESSAGE_SQL, RecordMethods
from hermes_memory.sessions.titles import TitleMethods

MESSAGE_COLUMNS_SQL = (
    "id, session_id, role, content, tool_call_id, tool_calls, tool_name, effect_disposition, timestamp, "
    "token_count, finish_reason, reasoning, reasoning_content, reasoning_details, codex_reasoning_items, "
    "codex_message_items, platform_message_id, observed, active, compacted, api_content"
)
"""The public columns of ``messages``, in the SQLite order (``search_vector`` is not one)."""

_INSERT_RETURNING = INSERT_MESSAGE_SQL + " RETURNING id"

_APPEND_ONE_SQL = (
    "WITH s AS (UPDATE sessions SET message_count = coalesce(message_count, 0) + 1, "
    "tool_call_count = coalesce(tool_call_count, 0) + ?::bigint WHERE id = ? RETURNING id) "
    + INSERT_MESSAGE_SQL.split(" VALUES ")[0]
    + " SELECT s.id, ?::text, ?::text, ?::text, ?::text, ?::text, ?::double precision, ?::bigint, ?::text, "
    "?::text, ?::text, ?::text, ?::text, ?::text FROM s RETURNING id"
)
"""One message in one statement: the session row's counters (its lock first: one session's ids
follow commit order) and the row, in one round trip; no row back means an unknown session."""


class PgSessionDB(PgMessageSearchMethods, PgTitleSearchMethods, CopyMethods, TitleMethods, LineageMethods, ListingMethods,
                  BrowseMethods, RecordMethods, PgStore):
    """Sessions and messages in PostgreSQL; the store behind ``session_search`` when
    ``storage.backend`` is ``postgres``.

    ``url``: a libpq URL (``postgresql://USER:PASSWORD@HOST:5432/DATABASE``) or ``key=value``
    string. ``pool_size``: most connections this object holds (threads beyond it wait for one).
    ``timeout``: seconds to connect, to wait for a free pooled connection, and to wait for a row
    lock another writer holds (then ``SessionStoreError`` "stayed locked"). Opening applies the
    schema migrations (:mod:`hermes_memory.sessions.pg.schema`) under an advisory lock, so several
    processes may open one database at once. Safe to share between threads.

    ``backend`` is ``"postgres"``; ``location`` the URL without its password. ``migration``:
    ``{"from_version", "to_version", "applied"}`` of this open.

    Raises :class:`~hermes_memory.errors.StorageURLError` for a URL that cannot be parsed,
    :class:`~hermes_memory.errors.StorageUnavailableError` when the server cannot be reached or
    refuses us, :class:`~hermes_memory.errors.SessionStoreError` when the schema cannot be
    prepared or is newer than this code. Afterwards every method raises as the SQLite class does
    (:class:`~hermes_memory.errors.SessionStoreError`; ``StorageUnavailableError``, a subclass,
    when the server goes away).
    """

    _message_columns = MESSAGE_COLUMNS_SQL
    _for_update = " FOR UPDATE"
    _session_columns_sql = ("SELECT column_name FROM information_schema.columns "
                            "WHERE table_schema = current_schema() AND table_name = 'sessions'")
    _day_sql = "to_char(to_timestamp({col}) AT TIME ZONE 'UTC', 'YYYY-MM-DD')"

    def _insert_message(self, conn: PgConn, row: tuple[Any, ...]) -> int:
        return int(conn.execute(_INSERT_RETURNING, row).fetchone()[0])

    def _insert_messages(self, conn: PgConn, rows: list[tuple[Any, ...]]) -> list[int]:
        return [int(i) for i in conn.returning_many(_INSERT_RETURNING, rows)]

    def _append(self, session_id: str, rows: list[tuple[Any, ...]], calls: int) -> list[int]:
        if len(rows) != 1:
            return super()._append(session_id, rows, calls)

        def _do(conn: PgConn) -> list[int]:
            got = conn.execute(_APPEND_ONE_SQL, (calls, session_id, *rows[0][1:])).fetchone()
            if got is None:
                raise SessionStoreError(
                    f"unknown session {session_id!r}: create it with create_session() before appending."
                )
            return [int(got[0])]

        return self._execute_write(_do)

    def get_lineage(self, session_id: str) -> list[str]:
        """The ids from the root ancestor down to ``session_id`` (cycles are cut)."""
        with self._connection() as conn:
            return list(reversed(self._ancestors(PgConn(conn), session_id))) + [session_id]
