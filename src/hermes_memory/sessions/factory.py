"""``open_session_db``: the session store a home is configured for (SQLite file or PostgreSQL).

Every caller that needs the session history of a home (the agent loop, the MCP server, the CLI,
the hooks, the dashboard) opens it here, so ``storage:`` in ``config.yaml`` (or
``HERMES_DATABASE_URL``) decides for all of them. See :mod:`hermes_memory.storage`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_memory.storage import Storage, require_driver, resolve_storage

if TYPE_CHECKING:
    from hermes_memory.config import HermesConfig
    from hermes_memory.home import HermesHome
    from hermes_memory.sessions.db import SessionDB


def open_session_db(home: HermesHome, config: HermesConfig, *, timeout: float | None = None,
                    write_retries: int | None = None, storage: Storage | None = None,
                    reading: bool = False) -> SessionDB | Any:
    """Open the session store of ``home``: a ``SessionDB`` on ``<home>/state.db``, or a
    ``PgSessionDB`` on the configured PostgreSQL database.

    ``timeout`` (seconds): SQLite's busy timeout of one attempt / PostgreSQL's wait for a pooled
    connection; ``None`` keeps each class's default. ``write_retries`` applies to SQLite only
    (PostgreSQL waits on row locks instead). ``storage`` overrides the resolution from ``config``
    (the migration passes its target). Both classes have the same public methods and expose
    ``backend`` (``"sqlite"``/``"postgres"``) and ``location`` (a path / the URL without its
    password). Raises :class:`~hermes_memory.errors.ConfigError` for an invalid ``storage:``
    section or a missing driver, :class:`~hermes_memory.errors.SessionStoreError` when the
    database cannot be opened or migrated.

    ``reading`` (the commands that only read: list, search, show, export, status): when the SQLite
    file cannot be opened for writing because of its place (a read-only mount, a full disk, an
    I/O error or a refused permission), it is opened read-only instead (``SessionDB(read_only=True)``);
    when that fails too, the first error is raised.
    """
    storage = storage or resolve_storage(config, home.root)
    if storage.is_postgres:
        require_driver()
        from hermes_memory.sessions.pg import PgSessionDB

        kwargs: dict[str, Any] = {"pool_size": storage.pool_size}
        if timeout is not None:
            kwargs["timeout"] = timeout
        return PgSessionDB(storage.url, **kwargs)
    from hermes_memory.sessions.db import SessionDB

    sqlite_kwargs: dict[str, Any] = {"synchronous": config.sessions.synchronous}
    if timeout is not None:
        sqlite_kwargs["timeout"] = timeout
    if write_retries is not None:
        sqlite_kwargs["write_retries"] = write_retries
    if not reading:
        return SessionDB(home.state_db, **sqlite_kwargs)
    from hermes_memory.errors import SessionStoreError
    from hermes_memory.sessions.sqlite_env import PLACE_FAULTS, sqlite_cause

    try:
        return SessionDB(home.state_db, **sqlite_kwargs)
    except SessionStoreError as exc:
        cause = exc.__cause__
        if cause is None or not (isinstance(cause, OSError) or sqlite_cause(cause) in PLACE_FAULTS):
            raise
        try:
            return SessionDB(home.state_db, read_only=True, **sqlite_kwargs)
        except SessionStoreError:
            raise exc from cause
