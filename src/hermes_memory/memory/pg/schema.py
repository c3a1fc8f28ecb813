"""The PostgreSQL schema of the curated memory, its versioned migrations, and one pool per database URL.

Tables (all prefixed ``hm_memory_`` so they share a database with the session tables):

* ``hm_memory_entries(profile, target, user_id, position, content, updated_at)``: one row per entry;
  ``user_id`` is ``''`` for the shared MEMORY.md and for USER.md outside gateway mode; ``position``
  is 0-based and dense, renumbered on every write; primary key ``(profile, target, user_id, position)``.
* ``hm_memory_drift_backups(id, profile, target, user_id, taken_at, content)``: the joined text of a
  target kept before a drift refusal (the database form of ``MEMORY.md.bak.<ts>``).
* ``hm_memory_schema(version, name, applied_at)``: the migrations applied.

:func:`ensure_schema` applies missing migrations inside one transaction holding the advisory lock
:data:`SCHEMA_LOCK`, so processes that open the same empty database at once create it exactly once;
when the schema is current it costs one query and takes no lock. A database migrated by a newer
hermes-memory (a version above :data:`SCHEMA_VERSION`) is refused rather than written wrongly.
"""

from __future__ import annotations

import atexit
import os
import threading
from typing import Any

from hermes_memory.errors import MemoryDatabaseError
from hermes_memory.storage import PG_FIX_HINT, open_pg_pool, redact_secrets, redact_url

#: ``pg_advisory_xact_lock(int4, int4)`` class of every lock this package takes ("hmem"). The
#: two-key form never conflicts with the one-bigint-key locks other parts take (PostgreSQL keeps
#: the two key spaces apart).
LOCK_CLASS = 0x686D656D
#: The (class, key) held while migrating; target locks use :data:`ENTRY_LOCK_CLASS`.
SCHEMA_LOCK = (LOCK_CLASS, 0)
ENTRY_LOCK_CLASS = LOCK_CLASS + 1

MIGRATIONS: list[tuple[int, str, str]] = [
    (
        1,
        "entries and drift backups",
        """
        CREATE TABLE hm_memory_entries (
            profile    text        NOT NULL,
            target     text        NOT NULL CHECK (target IN ('memory', 'user')),
            user_id    text        NOT NULL DEFAULT '',
            position   integer     NOT NULL CHECK (position >= 0),
            content    text        NOT NULL,
            updated_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (profile, target, user_id, position)
        );
        CREATE TABLE hm_memory_drift_backups (
            id       bigserial   PRIMARY KEY,
            profile  text        NOT NULL,
            target   text        NOT NULL,
            user_id  text        NOT NULL,
            taken_at timestamptz NOT NULL DEFAULT now(),
            content  text        NOT NULL
        );
        CREATE INDEX hm_memory_drift_backups_key ON hm_memory_drift_backups (profile, target, user_id, id);
        """,
    ),
]
SCHEMA_VERSION = max(v for v, _, _ in MIGRATIONS)

#: Connections per process and database: a mutation holds one for about a millisecond.
POOL_MAX_SIZE = 4
#: Seconds libpq may take to connect (a refused connection fails at once; see storage.open_pg_pool).
CONNECT_TIMEOUT_S = 30.0
#: Seconds an operation waits for a pooled connection (all busy, or the server gone) before it is
#: refused with MemoryDatabaseError: a write holds one for milliseconds, and an agent turn must not
#: hang on a database that went away (ours, not the reference's).
GET_CONNECTION_TIMEOUT_S = 5.0

_pools: dict[tuple[int, str], Any] = {}
_pools_lock = threading.Lock()


def ensure_schema(conn: Any) -> int:
    """Apply the missing migrations on ``conn`` (autocommit off); returns the schema version now in place.

    Raises :class:`MemoryDatabaseError` when the database holds a newer schema than this code knows.
    """
    exists = conn.execute("SELECT to_regclass('hm_memory_schema') IS NOT NULL").fetchone()[0]
    current = conn.execute("SELECT coalesce(max(version), 0) FROM hm_memory_schema").fetchone()[0] if exists else -1
    conn.commit()
    if current == SCHEMA_VERSION:
        return SCHEMA_VERSION
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", SCHEMA_LOCK)
        conn.execute(
            "CREATE TABLE IF NOT EXISTS hm_memory_schema (version integer PRIMARY KEY, name text NOT NULL, "
            "applied_at timestamptz NOT NULL DEFAULT now())"
        )
        applied = {r[0] for r in conn.execute("SELECT version FROM hm_memory_schema").fetchall()}
        newer = [v for v in applied if v > SCHEMA_VERSION]
        if newer:
            raise MemoryDatabaseError(
                f"the memory tables in this database are at schema version {max(newer)}, newer than this "
                f"hermes-memory understands ({SCHEMA_VERSION}); upgrade hermes-memory on this host."
            )
        for version, name, sql in MIGRATIONS:
            if version not in applied:
                conn.execute(sql)
                conn.execute("INSERT INTO hm_memory_schema (version, name) VALUES (%s, %s)", (version, name))
    return SCHEMA_VERSION


def describe_url(url: str) -> str:
    """The old name of :func:`hermes_memory.storage.redact_url` here (``url`` without its secrets)."""
    return redact_url(url)


def get_pool(url: str) -> Any:
    """The process's connection pool for ``url``, opened and migrated on first use.

    One pool per (process, URL): a forked child builds its own (a pool's sockets and threads do not
    survive ``fork``). Raises :class:`MemoryDatabaseError` naming the database (without password)
    when it cannot be reached within :data:`CONNECT_TIMEOUT_S` seconds or its schema is unusable.
    """
    key = (os.getpid(), url)
    pool = _pools.get(key)
    if pool is not None:
        return pool
    with _pools_lock:
        pool = _pools.get(key)
        if pool is not None:
            return pool
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError as exc:  # pragma: no cover - the postgres extra is missing
            raise MemoryDatabaseError(
                "PostgreSQL storage needs psycopg 3 and psycopg-pool: pip install 'hermes-memory[postgres]'."
            ) from exc
        try:
            _, pool = open_pg_pool(
                url, connect_timeout_s=CONNECT_TIMEOUT_S, autocommit=False, prepare=ensure_schema,
                min_size=1, max_size=POOL_MAX_SIZE, timeout=GET_CONNECTION_TIMEOUT_S,
                check=ConnectionPool.check_connection, name=f"hermes-memory {redact_url(url)}",
            )
        except MemoryDatabaseError:
            raise
        except psycopg.OperationalError as exc:
            raise MemoryDatabaseError(
                f"cannot open the memory database {redact_url(url)}: {_first_line(exc)}. {PG_FIX_HINT}"
            ) from None
        except Exception as exc:  # noqa: BLE001 - psycopg, OS errors: one clear message
            raise MemoryDatabaseError(
                f"cannot open the memory database {redact_url(url)}: {_first_line(exc)}. Check the URL "
                "(postgresql://USER:PASSWORD@HOST:5432/DATABASE) and that its user may create the "
                "hm_memory_* tables."
            ) from exc
        _pools[key] = pool
        return pool


def close_pools() -> None:
    """Close every pool this process opened (at exit; tests call it between databases)."""
    with _pools_lock:
        mine = [k for k in _pools if k[0] == os.getpid()]
        for k in mine:
            try:
                _pools.pop(k).close()
            except Exception:  # noqa: BLE001 - closing at exit must not raise
                pass


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return redact_secrets(text[0]) if text else type(exc).__name__  # libpq may echo the conninfo


atexit.register(close_pools)
