"""What the session mixins use of the store they are mixed into, declared once for the type checker.

:class:`~hermes_memory.sessions.db.SessionDB` and :class:`~hermes_memory.sessions.pg.PgSessionDB`
are put together from mixins (records, titles, lineage, listing, browse, search) over a store
(:class:`~hermes_memory.sessions.connection.SQLiteStore` or
:class:`~hermes_memory.sessions.pg.connection.PgStore`). Each mixin derives from :class:`StoreBase`,
which names, only for mypy, the store's members and the other mixins' methods a mixin calls; at
run time it is an empty class and the store's own definitions are the ones used.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

T = TypeVar("T")


class StoreBase:
    """The members a session mixin may use (see the module doc); nothing at run time."""

    if TYPE_CHECKING:
        _message_columns: str
        _for_update: str
        _lock: Any
        _conn: Any
        _term_stats: Any  # TermStats: a cached property of the SQLite search mixin

        def _read(self, sql: str, params: Iterable[Any] = ()) -> list[Any]: ...
        def _execute_write(self, fn: Callable[[Any], T]) -> T: ...
        def _live(self) -> Any: ...
        def _resync_if_schema_changed(self) -> None: ...
        def get_session(self, session_id: str) -> dict[str, Any] | None: ...
        def get_messages(self, session_id: str) -> list[dict[str, Any]]: ...
        def get_lineage(self, session_id: str) -> list[str]: ...
        def resolve_session_by_title(self, title: str) -> str | None: ...
        def _compression_predecessors(self, conn: Any, session_id: str) -> list[str]: ...
