"""The PostgreSQL connection behind :class:`~hermes_memory.sessions.pg.PgSessionDB`: a psycopg 3
connection pool, bounded-retry writes, reads, batches, close.

* Opening checks the URL (:func:`~hermes_memory.sessions.pg.dsn.check_url`), connects once to apply
  the migrations (:func:`~hermes_memory.sessions.pg.schema.migrate`, under an advisory lock) and
  then opens a :class:`psycopg_pool.ConnectionPool` of at most ``pool_size`` connections
  (autocommit; each write opens its own transaction). A server that cannot be reached, refuses
  the credentials or lacks the database raises
  :class:`~hermes_memory.errors.StorageUnavailableError` naming the server (password ``***``).
* Every write runs ``fn(conn)`` in one transaction on a pooled connection, under ``READ
  COMMITTED``. A row lock another writer holds is waited for at most ``timeout`` seconds
  (``lock_timeout``), then :class:`~hermes_memory.errors.SessionStoreError` ("stayed locked").
  Serialization failures and deadlocks are retried up to
  ``write_retries`` times after a random :data:`RETRY_SLEEP_RANGE` sleep, a unique-key race up to
  :data:`UNIQUE_RETRIES` times (the rerun sees the row the other writer committed: an existing
  session id, a title in use); then :class:`~hermes_memory.errors.SessionStoreError`. ``fn`` may
  run more than once. A pooled connection the server dropped while it was idle (a restart) is
  found when ``BEGIN`` fails and replaced; a connection lost after ``fn`` started is never
  retried (the commit may have happened): :class:`~hermes_memory.errors.StorageUnavailableError`.
* ``fn`` gets a :class:`PgConn`: the SQL dialect the SQLite store speaks (``?`` placeholders,
  rows that index by position and by name, ``LIKE`` folding ASCII case) on a psycopg connection,
  so the backend-neutral methods (:mod:`~hermes_memory.sessions.records`, titles, lineage,
  listing) and callers of ``_read``/``_execute_write``/``atomic`` run unchanged.
* Text PostgreSQL cannot hold is adapted on the way in: NUL characters become U+FFFD (SQLite
  stores them; PostgreSQL ``text`` cannot), lone surrogates are scrubbed by the codec as on SQLite.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import random
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

import psycopg
from psycopg import errors as pg_errors
from psycopg.adapt import Loader
from psycopg_pool import ConnectionPool, PoolClosed, PoolTimeout

from hermes_memory.errors import SessionStoreError, StorageUnavailableError
from hermes_memory.sessions.connection import BATCH_WRITES, CLOSED_MESSAGE, RETRY_SLEEP_RANGE, WRITE_RETRIES
from hermes_memory.sessions.pg import context_schema, decoded_schema
from hermes_memory.sessions.pg.dsn import check_url, redact_line, redact_url
from hermes_memory.sessions.pg.schema import HIDDEN_COLUMNS, migrate
from hermes_memory.storage import PG_FIX_HINT, open_pg_pool

T = TypeVar("T")
_S = TypeVar("_S", bound="PgStore")

UNIQUE_RETRIES = 2
"""Reruns of a write that lost a unique-key race (see the module doc)."""

_LIKE_RE = re.compile(r"(?<![A-Za-z_])LIKE\b")


@functools.lru_cache(maxsize=2048)
def translate(sql: str, with_params: bool) -> str:
    """SQLite-dialect SQL as psycopg runs it: ``?`` -> ``%s`` (and a literal ``%`` -> ``%%``) when
    parameters are passed; ``LIKE`` -> ``ILIKE`` (SQLite's LIKE folds ASCII case; ILIKE under the
    ``C`` collation of our columns folds the same letters)."""
    out = _LIKE_RE.sub("ILIKE", sql)
    if with_params:
        out = out.replace("%", "%%").replace("?", "%s")
    return out


def _clean(value: Any) -> Any:
    if isinstance(value, str) and "\x00" in value:
        return value.replace("\x00", "\ufffd")
    return value


def _params(params: Iterable[Any] | None) -> tuple[Any, ...]:
    return tuple(_clean(v) for v in params) if params is not None else ()


class Row(tuple):  # noqa: SLOT001  (a tuple subclass; the names live on the class)
    """A result row as :class:`sqlite3.Row` behaves: ``row[0]``, ``row["name"]``, ``dict(row)``,
    unpacking. Columns of :data:`~hermes_memory.sessions.pg.schema.HIDDEN_COLUMNS` are left out."""

    _names: tuple[str, ...] = ()
    _index: dict[str, int] = {}  # noqa: RUF012  (replaced per column list)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            try:
                key = self._index[key]
            except KeyError:
                raise IndexError(f"no column named {key!r}") from None
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        """The column names, in order."""
        return list(self._names)


@functools.lru_cache(maxsize=512)
def _row_class(names: tuple[str, ...]) -> type[Row]:
    return type("Row", (Row,), {"_names": names, "_index": {n: i for i, n in enumerate(names)}})


def row_factory(cursor: Any) -> Callable[[Sequence[Any]], Any]:
    """psycopg row factory producing :class:`Row`."""
    desc = cursor.description
    if desc is None:
        return tuple
    names = [c.name for c in desc]
    keep = [i for i, n in enumerate(names) if n not in HIDDEN_COLUMNS]
    cls = _row_class(tuple(names[i] for i in keep))
    if len(keep) == len(names):
        return cls
    return lambda values: cls(values[i] for i in keep)


class _NumberLoader(Loader):
    """``numeric`` as SQLite returns numbers: ``int`` when integral text (``sum()`` of bigints),
    ``float`` otherwise (never ``Decimal``)."""

    def load(self, data: Any) -> Any:
        text = bytes(data).decode("ascii")
        if text.lstrip("-").isdigit():
            return int(text)
        return float(text)


PLAN_CACHE_MODE = "force_custom_plan"
"""``plan_cache_mode`` of every pooled connection: a prepared statement is planned for the values
it runs with, never with a generic plan.

psycopg prepares a statement on the server once a connection has run its text five times
(``prepare_threshold``), and PostgreSQL then switches to a generic plan, made without the
parameters' values, when its estimated cost is below the custom plans' average. For a search the
values decide the plan: which words (the tsquery), which roles and sources. Measured at 100k
messages (bench/storage.py's corpus, EXPLAIN (ANALYZE, BUFFERS) with ``force_generic_plan``,
load 6-7): the generic plan of ``session_search``'s ranked statement estimated one session
passing ``source NOT IN ($13, $14, $15)``, so it looped over all 2,000 sessions and tested the
tsquery on each session's 50 messages, 7.4 s; planned with the values, a Hash Join over the GIN
index's 2,422 candidates, 157 ms. Tool calls took 250 ms p50 and 6.1 s at worst over 30 questions
on one store. The search statements are also sent unprepared (``prepare=False``,
:mod:`hermes_memory.sessions.pg.search`), which holds behind a pooler that drops session
settings; this setting covers every other statement. Planning each execution costs well under a
millisecond for the store's primary-key and session lookups."""


def _configurer(lock_timeout_s: float) -> Callable[[psycopg.Connection[Any]], None]:
    def configure(conn: psycopg.Connection[Any]) -> None:
        conn.row_factory = row_factory
        conn.adapters.register_loader("numeric", _NumberLoader)
        # a row lock held by a stuck writer is waited for at most this long (SQLite: busy timeout)
        conn.execute(f"SET lock_timeout = {max(1, int(lock_timeout_s * 1000))}")
        conn.execute(f"SET plan_cache_mode = {PLAN_CACHE_MODE}")

    return configure


class PgConn:
    """One psycopg connection speaking the SQLite store's dialect (see the module doc): what a
    write function ``fn(conn)`` and an ``atomic()`` block receive. ``raw`` is the psycopg connection."""

    def __init__(self, raw: psycopg.Connection[Any]) -> None:
        self.raw = raw

    def execute(self, sql: str, params: Iterable[Any] | None = None) -> Any:
        """Run one statement; returns the psycopg cursor (``fetchone``, ``fetchall``, ``rowcount``)."""
        p = _params(params)
        return self.raw.execute(translate(sql, bool(p)), p or None)

    def executemany(self, sql: str, seq: Iterable[Iterable[Any]]) -> Any:
        """Run one statement for each parameter tuple of ``seq`` (pipelined)."""
        cur = self.raw.cursor()
        cur.executemany(translate(sql, True), [_params(p) for p in seq])
        return cur

    def returning_many(self, sql: str, seq: Iterable[Iterable[Any]]) -> list[Any]:
        """``executemany`` of a statement with ``RETURNING x``: the first column of each result,
        in the order of ``seq``."""
        cur = self.raw.cursor()
        cur.executemany(translate(sql, True), [_params(p) for p in seq], returning=True)
        out = []
        while True:
            row = cur.fetchone()
            if row is not None:
                out.append(row[0])
            if not cur.nextset():
                return out


logger = logging.getLogger("hermes_memory.sessions.pg")

ANALYZE_AFTER_ROWS = 5_000
"""A :meth:`PgStore.batch` that added at least this many messages, and more than a tenth of what
the planner thought the table held, ends with ``ANALYZE`` of ``messages`` and ``sessions``."""


def _message_rows(conn: psycopg.Connection[Any]) -> tuple[int, float]:
    """``(highest message id, the planner's row estimate of messages)`` (-1 estimate: never analysed)."""
    row = conn.execute("SELECT (SELECT coalesce(max(id), 0) FROM messages), "
                       "(SELECT reltuples FROM pg_class WHERE oid = 'messages'::regclass)").fetchone()
    if row is None:
        return 0, -1.0
    return int(row[0] or 0), float(row[1] if row[1] is not None else -1)


def _analyze_after_bulk(conn: psycopg.Connection[Any], before: tuple[int, float]) -> bool:
    """Refresh the planner's statistics after a bulk load (see :data:`ANALYZE_AFTER_ROWS`);
    returns True when it ran ``ANALYZE``.

    Why: until autovacuum gets to a freshly loaded table the planner has no statistics for it and
    guesses; measured after loading 20k-100k messages in one batch (bench/storage.py, load 3-12),
    search then read every row (a sequential scan testing the tsquery on each, 115 ms at 20k) and
    joined sessions by a nested loop over every pair (390,621 rows removed by the join filter):
    whole ``session_search`` calls of 0.9-5 s instead of 20-110 ms once analysed. A failure (a user
    who does not own the tables) is logged and leaves the statistics to autovacuum."""
    try:
        top, _ = _message_rows(conn)
        added = top - before[0]
        if added < ANALYZE_AFTER_ROWS or added <= 0.1 * max(before[1], 0.0):
            return False
        conn.execute("ANALYZE messages")
        conn.execute("ANALYZE sessions")
        return True
    except psycopg.Error as exc:
        logger.warning("ANALYZE after a bulk load failed (autovacuum will do it): %s", _first_line(exc))
        return False


def _connection_lost(exc: BaseException) -> bool:
    state = getattr(exc, "sqlstate", None)
    return isinstance(exc, psycopg.OperationalError) and (
        state is None or state.startswith("08") or state in ("57P01", "57P02", "57P03")
    )


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return redact_line(lines[0]) if lines else type(exc).__name__


class PgStore:
    """A psycopg pool with bounded-retry writes (the base of :class:`~hermes_memory.sessions.pg.PgSessionDB`,
    which documents the constructor). Safe to share between threads; any number of processes and
    hosts may open the same database."""

    backend = "postgres"
    """Which engine holds the sessions (``"sqlite"`` for :class:`~hermes_memory.sessions.db.SessionDB`)."""

    def __init__(
        self, url: str, *, pool_size: int = 4, timeout: float = 30.0, write_retries: int = WRITE_RETRIES
    ) -> None:
        self._url = check_url(url)
        self.location = redact_url(self._url)
        """The database URL with any password replaced by ``***`` (for status output and errors)."""
        self.pool_size = max(1, int(pool_size))
        self.timeout = float(timeout)
        self.write_retries = int(write_retries)
        self._local = threading.local()

        def prepare(conn: psycopg.Connection[Any]) -> dict[str, Any]:
            migration = migrate(conn)
            migration["context_backfilled"] = context_schema.backfill(conn)
            migration["json_text_recomputed"] = decoded_schema.recompute(conn, budget_s=decoded_schema.OPEN_BUDGET_S)
            migration["json_text_pending"] = decoded_schema.pending(conn)
            return migration

        try:
            self.migration, pool = open_pg_pool(
                self._url, connect_timeout_s=self.timeout, autocommit=True, prepare=prepare, min_size=1,
                max_size=self.pool_size, configure=_configurer(self.timeout), timeout=self.timeout,
                name="hermes-memory-sessions",
            )
        except psycopg.OperationalError as exc:
            raise StorageUnavailableError(
                f"cannot connect to PostgreSQL at {self.location}: {_first_line(exc)}. {PG_FIX_HINT}"
            ) from None
        except pg_errors.DuplicateTable as exc:  # a table of ours by name, not by our migrations
            raise SessionStoreError(
                f"cannot prepare the PostgreSQL session database {self.location}: {_first_line(exc)}: that table "
                "was not created by hermes-memory's migrations, so it belongs to another program and is left as "
                "it is (nothing was changed). Give hermes-memory a database of its own (createdb hermes) and point "
                "storage.url or HERMES_DATABASE_URL at it."
            ) from exc
        except psycopg.Error as exc:
            raise SessionStoreError(
                f"cannot prepare the PostgreSQL session database {self.location}: {_first_line(exc)}. "
                "The user needs CREATE rights on the database (and the pg_trgm and unaccent extensions, from postgresql-contrib, must be installable)."
            ) from exc
        self._pool: ConnectionPool[Any] | None = pool
        self._stop_background = threading.Event()
        self._background: threading.Thread | None = None
        if self.migration.get("json_text_pending"):
            self._background = threading.Thread(target=self._recompute_in_background, daemon=True,
                                                name="hermes-memory-json-text-recompute")
            self._background.start()

    # ------------------------------------------------------------------ connections
    @contextlib.contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        """This thread's batch connection when a :meth:`batch` is open, else one from the pool."""
        held = getattr(self._local, "batch", None)
        if held is not None:
            yield held["conn"]
            return
        pool = self._pool
        if pool is None:
            raise SessionStoreError(CLOSED_MESSAGE)
        try:
            with pool.connection(timeout=self.timeout) as conn:
                yield conn
        except PoolTimeout as exc:
            raise StorageUnavailableError(
                f"no connection to PostgreSQL at {self.location} within {self.timeout:g} s "
                f"(pool of {self.pool_size}): {_first_line(exc)}. {PG_FIX_HINT}"
            ) from None
        except PoolClosed:
            raise SessionStoreError(CLOSED_MESSAGE) from None

    def _unavailable(self, exc: BaseException) -> StorageUnavailableError:
        return StorageUnavailableError(
            f"lost the connection to PostgreSQL at {self.location}: {_first_line(exc)}. {PG_FIX_HINT}"
        )

    def _recompute_in_background(self) -> None:
        """Go on with the search-value recomputation the open left (:data:`decoded_schema.OPEN_BUDGET_S`),
        one step (one transaction) at a time on a plain connection of its own, as the open's: on a
        pooled one (its session settings, :func:`_configurer`; ``force_custom_plan`` is the likely
        cause, not isolated) the same steps took 3x as long (200,000 messages, quiet machine: 323 s
        against 102 s; docs/benchmarks.md), until it is done, another process holds the mark, or :meth:`close` asks it to
        stop; a process that exits meanwhile loses only the step in progress (rolled back; the next
        open resumes). Never raises: a failure is logged."""
        try:
            with psycopg.connect(self._url, autocommit=True, connect_timeout=max(2, math.ceil(self.timeout))) as conn:
                self.migration["json_text_recomputed"] += decoded_schema.recompute(conn, stop=self._stop_background.is_set)
                self.migration["json_text_pending"] = decoded_schema.pending(conn)
        except Exception as exc:  # a lost server or a closed pool: the next open resumes
            logger.warning("hermes-memory: recomputing search values in the background stopped (%s); the next open resumes",
                           _first_line(exc))

    def wait_for_recomputation(self, timeout: float | None = None) -> bool:
        """Wait at most ``timeout`` seconds (``None``: no limit) for the background recomputation this
        open started to end; True when none is running. ``migration["json_text_recomputed"]`` then
        counts the rows of the open and of the background together."""
        thread = self._background
        if thread is not None:
            thread.join(timeout)
        return thread is None or not thread.is_alive()

    def close(self) -> None:
        """Close the pool (waits for connections in use to come back, and for a background
        recomputation step to end). Safe to call twice."""
        self._stop_background.set()
        if self._background is not None:
            self._background.join()
            self._background = None
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    def __enter__(self: _S) -> _S:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ reads and writes
    def _read(self, sql: str, params: Iterable[Any] = ()) -> list[Any]:
        """Run one query, return its rows (:class:`Row`). A pooled connection the server dropped
        (a restart, an idle timeout) is replaced and the query rerun. Raises
        :class:`SessionStoreError` (:class:`StorageUnavailableError` when the server is gone)."""
        stale_left = self.pool_size + 1
        while True:
            try:
                with self._connection() as conn:
                    return PgConn(conn).execute(sql, params).fetchall()
            except (UnicodeEncodeError, OverflowError, psycopg.DataError) as exc:
                raise SessionStoreError(f"session database read failed (bad parameter): {_first_line(exc)}") from exc
            except psycopg.Error as exc:
                if _connection_lost(exc):
                    if stale_left > 0 and getattr(self._local, "batch", None) is None:
                        stale_left -= 1
                        continue
                    raise self._unavailable(exc) from exc
                raise SessionStoreError(f"session database {self.location} read failed: {_first_line(exc)}.") from exc

    def _retry_sleep(self, attempt: int) -> None:
        if attempt < self.write_retries:
            time.sleep(random.uniform(*RETRY_SLEEP_RANGE))

    def _execute_write(self, fn: Callable[[PgConn], T]) -> T:
        """Run ``fn(PgConn)`` in one transaction with bounded retries (see the module doc).

        Raises :class:`SessionStoreError` when the retries are spent or for any other database
        error (rolled back); :class:`StorageUnavailableError` when the connection is lost.
        Exceptions raised by ``fn`` that are not database errors roll back and propagate unchanged.
        """
        held = getattr(self._local, "batch", None)
        if held is not None:
            return self._batched_write(held, fn)
        last: Exception | None = None
        unique_left, stale_left, attempt = UNIQUE_RETRIES, self.pool_size + 1, 0
        while True:
            ran = False
            try:
                with self._connection() as conn, conn.transaction():
                    ran = True
                    return fn(PgConn(conn))
            except pg_errors.LockNotAvailable as exc:
                raise SessionStoreError(
                    f"session database {self.location} stayed locked for {self.timeout:g} s: {_first_line(exc)}. "
                    "Another process holds a long write transaction on the same rows; close it or retry later."
                ) from exc
            except (pg_errors.SerializationFailure, pg_errors.DeadlockDetected) as exc:
                last = exc
                if attempt >= self.write_retries:
                    break
                self._retry_sleep(attempt)
                attempt += 1
            except pg_errors.UniqueViolation as exc:
                if unique_left <= 0:
                    raise SessionStoreError(f"session database write failed: {_first_line(exc)}") from exc
                unique_left -= 1
            except psycopg.Error as exc:
                if not ran and _connection_lost(exc) and stale_left > 0:
                    stale_left -= 1  # a pooled connection the server dropped while idle: BEGIN failed, nothing ran
                    continue
                raise self._write_error(exc) from exc
        raise SessionStoreError(
            f"session database {self.location} stayed busy after {self.write_retries} retries: {last}. "
            "Other writers hold the same rows; retry later."
        ) from last

    def _write_error(self, exc: BaseException) -> SessionStoreError:
        if _connection_lost(exc):
            return self._unavailable(exc)
        return SessionStoreError(f"session database write failed: {_first_line(exc)}")

    @contextlib.contextmanager
    def atomic(self) -> Iterator[PgConn]:
        """One write transaction: ``with db.atomic() as conn: conn.execute(...)`` (``?`` SQL).

        Commits when the block ends, rolls back when it raises; inside :meth:`batch` the block is
        one savepoint of the batch. Runs once (no retry). Raises :class:`SessionStoreError` on a
        closed store or for a database error in the block (rolled back); other exceptions roll
        back and propagate unchanged.
        """
        held = getattr(self._local, "batch", None)
        if held is not None:
            with self._savepoint(held["conn"]) as c:
                yield c
            self._after_batched_write(held)
            return
        try:
            with self._connection() as conn, conn.transaction():
                yield PgConn(conn)
        except psycopg.Error as exc:
            raise self._write_error(exc) from exc

    @contextlib.contextmanager
    def batch(self, commit_every: int = BATCH_WRITES) -> Iterator[None]:
        """Group this thread's writes inside the block into transactions of ``commit_every`` writes
        on one connection (reads in the block see them). Each write is a savepoint: a refused
        write undoes only itself. Writes already committed stay if the block raises; the open part
        is rolled back. Other threads keep their own connections. Raises :class:`SessionStoreError`
        as :meth:`_execute_write` does."""
        if getattr(self._local, "batch", None) is not None:
            yield
            return
        try:
            with self._connection() as conn:
                state = {"conn": conn, "writes": 0, "every": max(1, int(commit_every))}
                try:
                    before = _message_rows(conn)
                except psycopg.Error:  # statistics are an optimisation: never refuse the batch for them
                    before = (2**62, -1.0)
                conn.execute("BEGIN")
                self._local.batch = state
                try:
                    yield
                except BaseException:
                    self._local.batch = None
                    conn.execute("ROLLBACK")
                    raise
                self._local.batch = None
                conn.execute("COMMIT")
                _analyze_after_bulk(conn, before)
        except psycopg.Error as exc:
            raise self._write_error(exc) from exc

    @contextlib.contextmanager
    def _savepoint(self, conn: psycopg.Connection[Any]) -> Iterator[PgConn]:
        conn.execute("SAVEPOINT hm_write")
        try:
            yield PgConn(conn)
        except BaseException as exc:
            conn.execute("ROLLBACK TO SAVEPOINT hm_write")
            conn.execute("RELEASE SAVEPOINT hm_write")
            if isinstance(exc, psycopg.Error):
                raise self._write_error(exc) from exc
            raise
        conn.execute("RELEASE SAVEPOINT hm_write")

    def _after_batched_write(self, held: dict[str, Any]) -> None:
        held["writes"] += 1
        if held["writes"] % held["every"] == 0:
            held["conn"].execute("COMMIT")
            held["conn"].execute("BEGIN")

    def _batched_write(self, held: dict[str, Any], fn: Callable[[PgConn], T]) -> T:
        with self._savepoint(held["conn"]) as conn:
            result = fn(conn)
        self._after_batched_write(held)
        return result
