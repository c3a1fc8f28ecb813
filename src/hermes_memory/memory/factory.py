"""``open_memory_store``: the curated memory a home is configured for (Markdown files or PostgreSQL).

Every caller that reads or writes ``MEMORY.md``/``USER.md`` of a home opens its store here, so
``storage:`` in ``config.yaml`` (or ``HERMES_DATABASE_URL``) decides for all of them. See
:mod:`hermes_memory.storage`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_memory.storage import Storage, require_driver, resolve_storage

if TYPE_CHECKING:
    from hermes_memory.config import HermesConfig
    from hermes_memory.home import HermesHome
    from hermes_memory.memory.store import MemoryStore


def open_memory_store(home: HermesHome, config: HermesConfig, *, user_id: str | None = None,
                      storage: Storage | None = None) -> MemoryStore | Any:
    """Open the curated memory of ``home`` with the limits of ``config.memory`` (characters).

    SQLite homes get a ``MemoryStore`` on ``<home>/memories/``; PostgreSQL ones a
    ``PgMemoryStore`` on the rows of ``storage.profile``. ``user_id`` selects a gateway user's
    ``USER.md`` (``MEMORY.md`` stays shared); an unsafe one raises ``ValueError``. Both stores
    load lazily: call ``load_from_disk()`` at session start for the frozen snapshot. Raises
    :class:`~hermes_memory.errors.ConfigError` for an invalid ``storage:`` section or a missing
    driver.
    """
    mem = config.memory
    storage = storage or resolve_storage(config, home.root)
    if storage.is_postgres:
        require_driver()
        from hermes_memory.memory.pg import PgMemoryStore

        return PgMemoryStore(storage.url, mem.memory_char_limit, mem.user_char_limit,
                             profile=storage.profile, user_id=user_id)
    from hermes_memory.memory.store import MemoryStore

    return MemoryStore(home.memories_dir, mem.memory_char_limit, mem.user_char_limit, user_id=user_id)
