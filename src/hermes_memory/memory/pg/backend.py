"""The PostgreSQL backend of the curated memory, and :class:`PgMemoryStore` over it.

Entries are rows of ``hm_memory_entries`` keyed by (profile, target, user id) with their position
(:mod:`.schema`). The stored text of a target is its rows joined by the delimiter, parsed exactly as
a file would be, so a row edited by hand (spaces, an empty row, a delimiter line inside) shows up to
the drift guard as the same file would.

A mutation is one transaction on one connection: ``pg_advisory_xact_lock(ENTRY_LOCK_CLASS,
hash(profile, target, user))`` (waiting at most ``lock_timeout_s`` seconds through ``SET LOCAL
lock_timeout``), then the read, the store's decision, and at most one write (delete the key's rows,
insert the new list with positions 0..n-1) followed by ``COMMIT``, which also releases the lock. So N
processes on N hosts writing one target are serialised by the server: nothing is lost, a duplicate
is seen by the next writer, and the limit is checked against what is really stored. A refusal
rolls back: no row changes.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from hermes_memory.errors import MemoryDatabaseError
from hermes_memory.memory.backend import EntriesBackend, EntriesTxn, Stored
from hermes_memory.memory.entries import (
    DEFAULT_MEMORY_CHAR_LIMIT,
    DEFAULT_USER_CHAR_LIMIT,
    ENTRY_DELIMITER,
    FILE_NAMES,
    parse_entries,
    validate_user_id,
)
from hermes_memory.memory.pg.schema import ENTRY_LOCK_CLASS, get_pool
from hermes_memory.memory.store import MemoryStore
from hermes_memory.storage import redact_url

_KEY = "profile = %s AND target = %s AND user_id = %s"
_SELECT = f"SELECT content FROM hm_memory_entries WHERE {_KEY} ORDER BY position"
_DELETE = f"DELETE FROM hm_memory_entries WHERE {_KEY}"
_INSERT = (
    "INSERT INTO hm_memory_entries (profile, target, user_id, position, content) "
    "SELECT %s, %s, %s, t.ord - 1, t.content FROM unnest(%s::text[]) WITH ORDINALITY AS t(content, ord)"
)


def validate_profile(profile: str) -> str:
    """Return ``profile`` if it is a usable profile name (same rules as a user id), else raise ``ValueError``."""
    try:
        return validate_user_id(profile) or ""
    except ValueError:
        raise ValueError(
            f"unsafe profile {profile!r}: use 1-128 letters, digits, '.', '_', '@' or '-', starting with a letter or digit."
        ) from None


def lock_key(profile: str, target: str, user_id: str) -> int:
    """The signed 32-bit second key of a target's advisory lock (CRC-32 of the key; a collision only
    makes two targets share one lock, never lets two writers of one target in)."""
    h = zlib.crc32(f"{profile}\0{target}\0{user_id}".encode())
    return h - (1 << 32) if h >= 1 << 31 else h


class _PgTxn(EntriesTxn):
    def __init__(self, conn: Any, key: tuple[str, str, str], stored: Stored) -> None:
        self._conn, self._key, self.stored = conn, key, stored
        self.finished = False

    def save(self, entries: Sequence[str], *, canonical: bool = False) -> list[str]:
        if self.finished:
            raise MemoryDatabaseError("this memory transaction is already finished; nothing was written")
        conn = self._conn
        with conn.pipeline():  # delete, insert and commit in one round trip
            conn.execute(_DELETE, self._key)
            if entries:
                conn.execute(_INSERT, (*self._key, list(entries)))
            conn.commit()  # durable now; the advisory lock goes with the transaction
        self.finished = True
        return entries if isinstance(entries, list) else list(entries)  # rows read back as written

    def backup(self) -> tuple[str, str]:
        if self.finished:
            raise MemoryDatabaseError("this memory transaction is already finished; no backup was made")
        conn, text = self._conn, self.stored.text
        row = conn.execute(
            f"SELECT id FROM hm_memory_drift_backups WHERE {_KEY} AND content = %s ORDER BY id DESC LIMIT 1",
            (*self._key, text),
        ).fetchone()
        if row is None:
            row = conn.execute(
                "INSERT INTO hm_memory_drift_backups (profile, target, user_id, content) VALUES (%s, %s, %s, %s) "
                "RETURNING id", (*self._key, text),
            ).fetchone()
        conn.commit()  # the copy must survive the refusal that follows (which writes nothing else)
        self.finished = True
        return f"hm_memory_drift_backups row {row[0]}", f"hm_memory_drift_backups:{row[0]}"


class PgBackend(EntriesBackend):
    """Entries of one (profile, user) in the database at ``url`` (see the module docstring).

    Opening connects (one pool per process and URL) and creates or migrates the schema; raises
    :class:`~hermes_memory.errors.MemoryDatabaseError` when the database cannot be used.
    """

    kind = "postgres"
    untouched = "its rows were left untouched"

    def __init__(self, url: str, *, profile: str = "default", user_id: str | None = None) -> None:
        self.url = url
        self.profile = validate_profile(profile)
        self.user_id = validate_user_id(user_id)
        self.lock_timeout_s = 30.0
        self._pool = get_pool(url)

    def key(self, target: str) -> tuple[str, str, str]:
        """``(profile, target, user_id)`` of ``target``'s rows (``user_id`` is ``''`` for the shared MEMORY.md)."""
        user = (self.user_id or "") if target == "user" else ""
        return self.profile, target, user

    def location(self, target: str) -> str:
        _, _, user = self.key(target)
        who = f", user {user}" if user else ""
        return f"{redact_url(self.url)} ({FILE_NAMES[target]} of profile {self.profile}{who})"

    def read(self, target: str) -> Stored:
        try:
            with self._pool.connection() as conn:
                with conn.pipeline():  # the query and the end of its transaction in one round trip
                    cur = conn.execute(_SELECT, self.key(target))
                    conn.commit()
                rows = cur.fetchall()
        except Exception as exc:  # noqa: BLE001 - an unreachable database is an unreadable target, not a crash
            return Stored([], error=f"the memory database {redact_url(self.url)} is unavailable ({_line(exc)})")
        return _stored(rows)

    @contextmanager
    def mutation(self, target: str) -> Iterator[EntriesTxn]:
        import psycopg

        key = self.key(target)
        try:
            with self._pool.connection() as conn:
                try:
                    conn.execute(
                        "SELECT set_config('lock_timeout', %s, true), pg_advisory_xact_lock(%s, %s)",
                        (f"{max(1, int(self.lock_timeout_s * 1000))}ms", ENTRY_LOCK_CLASS, lock_key(*key)),
                    )
                    txn = _PgTxn(conn, key, _stored(conn.execute(_SELECT, key).fetchall()))
                    yield txn
                finally:
                    if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                        conn.rollback()  # a refusal or an error: no row changes, the lock is released
        except psycopg.errors.LockNotAvailable as exc:
            raise MemoryDatabaseError(
                f"another writer has held the lock of {self.location(target)} for more than "
                f"{self.lock_timeout_s:g} s; nothing was written. Retry later."
            ) from exc
        except psycopg.Error as exc:
            raise MemoryDatabaseError(
                f"the memory database {redact_url(self.url)} failed during a write to {FILE_NAMES[target]} "
                f"({_line(exc)}); nothing was written."
            ) from exc

    def drift_fix(self, target: str, reason: str, limit: int, backup_name: str) -> str:
        what = (
            f"split the long entry into entries separated by a line holding only '§' (each under {limit:,} chars)"
            if reason == "too_big"
            else "delete the blank lines, trailing spaces and empty entries around the lines holding only '§'"
        )
        return (
            f"Export the entries (hermes-memory memory export --to DIR), {what} in {FILE_NAMES[target]} there and "
            f"load it back with hermes-memory memory import --from DIR --replace, or restore {backup_name}; then retry."
        )

    def user_ids(self) -> list[str]:
        with self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT DISTINCT user_id FROM hm_memory_entries WHERE profile = %s AND target = 'user' "
                "AND user_id <> '' ORDER BY 1", (self.profile,),
            ).fetchall()
        return [r[0] for r in rows]


def _stored(rows: Sequence[Sequence[Any]]) -> Stored:
    text = ENTRY_DELIMITER.join(r[0] for r in rows)
    return Stored(parse_entries(text), text=text)


def _line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


class PgMemoryStore(MemoryStore):
    """A :class:`MemoryStore` whose entries are rows in PostgreSQL: the same methods, results and rendering.

    ``url``: a libpq URL or ``key=value`` string; ``profile``: the namespace of one deployment's
    memory (a "home"), so several profiles share a database; ``user_id``: the gateway user whose
    USER.md this store edits (MEMORY.md stays shared by the profile). Limits are characters,
    delimiters included. Raises ``ValueError`` for an unsafe ``user_id``/``profile`` or a limit
    <= 0, :class:`~hermes_memory.errors.MemoryDatabaseError` when the database cannot be opened.
    """

    def __init__(
        self,
        url: str,
        memory_char_limit: int | str = DEFAULT_MEMORY_CHAR_LIMIT,
        user_char_limit: int | str = DEFAULT_USER_CHAR_LIMIT,
        *,
        profile: str = "default",
        user_id: str | None = None,
    ) -> None:
        for lim in (memory_char_limit, user_char_limit):
            if int(lim) <= 0:
                raise ValueError(f"char limits must be a positive number of characters, got {lim}")
        backend = PgBackend(url, profile=profile, user_id=user_id)
        super().__init__(None, memory_char_limit, user_char_limit, user_id, backend=backend)
        self.url = url
        self.profile = backend.profile
