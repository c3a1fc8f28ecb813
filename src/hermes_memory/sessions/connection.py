"""The SQLite connection behind :class:`~hermes_memory.sessions.db.SessionDB`: open, pragmas,
file modes, bounded-retry writes and reads, batches, close.

* WAL journal, foreign keys on, files mode 0600, ``synchronous=FULL`` by default (``"normal"``
  on request; see :mod:`hermes_memory.sessions.db`).
* Every write runs in ``BEGIN IMMEDIATE`` under a per-object lock, with a SQLite busy timeout
  (``timeout`` seconds) and up to ``write_retries`` retries after a random
  :data:`RETRY_SLEEP_RANGE` sleep while the database is locked/busy; then
  :class:`~hermes_memory.errors.SessionStoreError` is raised, never swallowed (failure case B26).
  Every :data:`CHECKPOINT_EVERY` writes a passive WAL checkpoint is attempted.
* Opening first checks, in one read transaction, whether anything must change
  (:func:`hermes_memory.sessions.migrations.current_report`); when nothing must, it writes nothing
  and takes no write lock (reads answer while another process holds ``BEGIN IMMEDIATE``/``EXCLUSIVE``),
  and :meth:`SQLiteStore.close` of a store that never wrote skips its checkpoint. Otherwise opening
  migrates the file (:func:`hermes_memory.sessions.migrations.migrate`) and finishes any
  pending build of our ``hm_*`` index (:mod:`hermes_memory.sessions.hmindex`); a move of that index
  from layout 2 to 3 runs for at most :data:`hermes_memory.sessions.hmrelayout.BUDGET_S` seconds per
  open (the old index serves search meanwhile), then :meth:`SQLiteStore.continue_relayout` or
  :meth:`SQLiteStore.continue_relayout_in_background` carry it on.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from hermes_memory.errors import SessionStoreError
from hermes_memory.home import HermesHome
from hermes_memory.sessions import hmindex, hmrelayout
from hermes_memory.sessions.migrations import current_report, migrate
from hermes_memory.sessions.sqlite_env import (
    LOCKED,
    PLACE_FAULTS,
    open_read_only,
    place_fault_message,
    sqlite_cause,
)
from hermes_memory.wording import clause

logger = logging.getLogger("hermes_memory.sessions.db")

T = TypeVar("T")
_S = TypeVar("_S", bound="SQLiteStore")

WRITE_RETRIES = 15
"""Retries of a locked/busy write before :class:`SessionStoreError` (reference: 15)."""
RETRY_SLEEP_RANGE = (0.020, 0.150)
"""Random sleep between write retries, seconds (reference: 20-150 ms)."""
CHECKPOINT_EVERY = 50
"""A passive WAL checkpoint is attempted after this many writes (reference: 50)."""
BATCH_WRITES = 500
"""Writes per transaction inside :meth:`SQLiteStore.batch` (bounds what another process waits for)."""
PAGE_CACHE_KIB = 32_768
"""SQLite page cache per connection, KiB (SQLite's default is 2,000 KiB): search reads the same
index pages (doclists, sizes, message rows) query after query; on natural English at 1M messages
question search CPU p50/p95 fell from 17.4/22.2 to 14.5/17.6 ms (bench/sessions.py). The cache
fills only as pages are read, up to this bound."""
MMAP_BYTES = 1 << 30
"""SQLite ``PRAGMA mmap_size`` per connection, bytes: pages are read through a read-only memory map
of the database file instead of a ``read()`` copy each (SQLite writes through its own calls either
way). A search reads hundreds of scattered message rows per call: at 1M messages the 300-row
filter check of ``session_search`` took about 2.8 ms of CPU read by copy and 2.0 ms mapped
(docs/benchmarks.md, issue 15 tool-call latency). 0 turns it off (SQLite's default)."""
SYNCHRONOUS_MODES = ("full", "normal")
"""Accepted ``synchronous`` settings of :class:`SessionDB` (SQLite ``PRAGMA synchronous``)."""

RELAYOUT_PAUSE_S = 0.05
"""Pause of the background relayout between two steps, seconds: any append waiting for the write
lock gets it between steps (it never waits longer than one step, 0.2-0.4 s)."""

CLOSED_MESSAGE = "SessionDB is closed; open a new SessionDB."


def _is_lock_error(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


_WAL_WRITE_LOCK_BYTE = 120
"""Offset in ``<db>-shm`` of SQLite's WAL writer lock (``WALINDEX_LOCK_OFFSET`` + ``WAL_WRITE_LOCK``)."""


def wal_writer(db_path: Path) -> tuple[int, str] | None:
    """``(pid, command line)`` of the process holding the WAL write lock of ``db_path`` (a write
    transaction), read from Linux's ``/proc/locks``; ``None`` where that cannot be told (another
    OS, a lock of this process, no such lock)."""
    try:
        st = os.stat(str(db_path) + "-shm")
        file_id = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"  # as /proc/locks writes it
        with open("/proc/locks", encoding="ascii", errors="replace") as f:
            rows = f.read().splitlines()
    except OSError:
        return None
    for row in rows:
        parts = row.split()
        if "->" in parts:
            continue  # a waiter, not the holder
        try:
            pid, dev_inode, start = int(parts[4]), parts[5], parts[6]
        except (IndexError, ValueError):
            continue
        if parts[1] != "POSIX" or parts[3] != "WRITE" or pid == os.getpid():
            continue
        if dev_inode == file_id and start == str(_WAL_WRITE_LOCK_BYTE):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmd = " ".join(f.read().replace(b"\0", b" ").decode(errors="replace").split())
            except OSError:
                cmd = "command unknown"
            return pid, cmd[:120] or "command unknown"
    return None


class SQLiteStore:
    """One SQLite connection shared between threads (one lock), with bounded-retry writes.

    The base of :class:`~hermes_memory.sessions.db.SessionDB`, which documents the constructor's
    arguments. Raises :class:`SessionStoreError` if the file cannot be opened or migrated (its
    message says "move it aside" only for a damaged file; a full disk, an I/O error, a read-only
    place or a refused permission get their cause and fix, :mod:`hermes_memory.sessions.sqlite_env`),
    and ``ValueError`` for an unknown ``synchronous`` mode. ``read_only``: open an existing file
    without writing anything (:func:`~hermes_memory.sessions.sqlite_env.open_read_only`); then a file whose schema or index needs
    bringing up to date is refused with :class:`SessionStoreError`, and writes fail.
    """

    def __init__(
        self,
        db_path: str | os.PathLike[str] | None = None,
        *,
        timeout: float = 1.0,
        write_retries: int = WRITE_RETRIES,
        synchronous: str = "full",
        read_only: bool = False,
    ) -> None:
        sync = str(synchronous).strip().lower()
        if sync not in SYNCHRONOUS_MODES:
            raise ValueError(f"synchronous must be one of {', '.join(SYNCHRONOUS_MODES)}; got {synchronous!r}")
        self.synchronous = sync
        path = Path(db_path) if db_path is not None else HermesHome.resolve().state_db
        self.db_path = path.expanduser().resolve()
        self.timeout = float(timeout)
        self.write_retries = int(write_retries)
        self._lock = threading.RLock()
        self._writes = 0
        self._batch: dict[str, int] | None = None
        self._relayout_stop = threading.Event()
        self._relayout_thread: threading.Thread | None = None
        self.read_only = bool(read_only)
        if self.read_only:
            self._conn, self.migration, self._schema_cookie = open_read_only(self.db_path, self.timeout)
            return
        try:
            self.db_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            existing = self._existing_files()
            if not self.db_path.exists():
                fd = os.open(self.db_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                os.close(fd)
            self._conn = sqlite3.connect(
                str(self.db_path), timeout=self.timeout, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as exc:
            raise SessionStoreError(
                f"cannot open session database {self.db_path}: {clause(exc)}. Check the path and its permissions."
            ) from exc
        self._conn.row_factory = sqlite3.Row
        try:
            mode = self._conn.execute("PRAGMA journal_mode").fetchone()[0]  # a read: already WAL, no write
            if str(mode).lower() != "wal":
                mode = self._conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                logger.warning("state.db journal_mode is %s, not WAL (filesystem without shared memory?)", mode)
            self._conn.execute("PRAGMA foreign_keys=ON")
            self._conn.execute(f"PRAGMA synchronous={sync.upper()}")
            self._conn.execute(f"PRAGMA cache_size=-{PAGE_CACHE_KIB}")
            self._conn.execute(f"PRAGMA mmap_size={int(MMAP_BYTES)}")

            self.migration = self._open_schema()
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            cause = sqlite_cause(exc)
            if isinstance(exc, sqlite3.OperationalError) and cause == LOCKED:
                raise self._open_locked_error(exc, reading=True) from exc  # held, not damaged: never "move it aside"
            if cause in PLACE_FAULTS:  # the disk or the mount, not the file: never "move it aside"
                raise SessionStoreError(place_fault_message(self.db_path, exc, cause)) from exc
            raise SessionStoreError(
                f"{self.db_path} is not a usable session database: {clause(exc)}. Move it aside to start a new one."
            ) from exc
        except SessionStoreError:
            self._conn.close()
            raise
        self._secure_files(existing)

    def _open_schema(self) -> dict[str, Any]:
        """Bring the file up to date for this open and return :func:`migrate`'s report.

        First, in one read transaction (no write lock is taken, so this answers at once while
        another process holds a write transaction), :func:`current_report` checks whether anything
        must change; when nothing must (the usual open of a home in use) nothing is written. Only
        otherwise :func:`migrate`, the pending index build and a bounded relayout run in write
        transactions with the bounded retries of :meth:`_execute_write`; a lock held by another
        program throughout raises :class:`SessionStoreError` saying so (:meth:`_open_locked_error`)."""
        conn = self._conn
        try:
            conn.execute("BEGIN")  # deferred: reads only, one snapshot
            try:
                report = current_report(conn)
                cookie = conn.execute("PRAGMA schema_version").fetchone()[0]
            finally:
                conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:  # not WAL (a rollback journal) and a writer holds it
            if _is_lock_error(exc):
                raise self._open_locked_error(exc, reading=True) from exc
            raise
        if report is not None:
            self._schema_cookie = cookie
            return report
        try:
            report = self._execute_write(migrate)
            hmindex.finish_backfill(self._execute_write, report["index"], hmrelayout.BUDGET_S)
        except SessionStoreError as exc:
            if isinstance(exc.__cause__, sqlite3.OperationalError) and _is_lock_error(exc.__cause__):
                raise self._open_locked_error(exc.__cause__) from exc.__cause__
            raise
        self._schema_cookie = conn.execute("PRAGMA schema_version").fetchone()[0]
        return report

    def _open_locked_error(self, last: Exception, reading: bool = False) -> SessionStoreError:
        holder = wal_writer(self.db_path)
        who = (f"process {holder[0]} ({holder[1]})" if holder else
               "another process (the Hermes Agent, an import or another hermes-memory command)")
        why = ("could not be read (its journal is not WAL, so a writer keeps readers out)" if reading else
               "needs its hermes-memory index or schema brought up to date before it can be read")
        waited = (f"{self.timeout:g} s busy timeout" if reading else
                  f"{self.write_retries} retries, {self.timeout:g} s busy timeout each")
        return SessionStoreError(
            f"session database {self.db_path} {why}, and another process held a write transaction on it throughout "
            f"({waited}): {last}. "
            f"It is held by {who}; nothing was changed. Retry when it has finished (or close it)."
        )

    def _existing_files(self) -> set[str]:
        """Which of ``state.db``, ``-wal``, ``-shm`` exist (as suffixes ``""``, ``"-wal"``, ``"-shm"``)."""
        return {s for s in ("", "-wal", "-shm") if os.path.lexists(str(self.db_path) + s)}

    def _secure_files(self, existing: set[str]) -> None:
        """Mode 0600 on the files this open created. When ``state.db`` was in ``existing`` (the
        reference agent's, say) nothing is changed: it and its sidecars keep their mode and owner,
        and a ``-wal``/``-shm`` SQLite created for it has its mode already (docs/security.md §5)."""
        if os.name == "nt" or "" in existing:
            return
        for suffix in ("", "-wal", "-shm"):
            p = Path(str(self.db_path) + suffix)
            try:
                if suffix not in existing and p.exists() and not p.is_symlink():
                    os.chmod(p, 0o600)
            except OSError:
                pass

    def _live(self) -> sqlite3.Connection:
        """The open connection; raises :class:`SessionStoreError` once closed. Call under ``_lock``."""
        if self._conn is None:
            raise SessionStoreError(CLOSED_MESSAGE)
        return self._conn

    def _resync_if_schema_changed(self) -> None:
        """Catch our ``hm_*`` index up when another program changed the schema since we looked (for
        example rebuilt ``messages``, which drops our triggers): a long-running ``serve`` then keeps
        finding what the reference writes. One ``PRAGMA schema_version`` read when nothing changed."""
        with self._lock:
            if self._conn is None:
                return
            cookie = self._conn.execute("PRAGMA schema_version").fetchone()[0]
            if cookie == self._schema_cookie:
                return
            report = self._execute_write(hmindex.sync)
            hmindex.finish_backfill(self._execute_write, report, hmrelayout.BUDGET_S)
            self._schema_cookie = self._conn.execute("PRAGMA schema_version").fetchone()[0]
        if report["action"] != "none":
            logger.info("state.db schema changed by another program; our index: %s", report)

    @property
    def conn(self) -> sqlite3.Connection:
        """The underlying connection (for tests, benchmarks and importers; prefer the methods)."""
        return self._conn

    def relayout_progress(self) -> dict[str, Any] | None:
        """How far the move of our index from layout 2 to 3 is: ``None`` when none is under way, else
        :func:`hermes_memory.sessions.hmrelayout.progress`'s ``{"phase", "done", "total"}`` (messages)."""
        with self._lock:
            return hmrelayout.progress(self._live())

    def continue_relayout(self, budget_s: float | None = None,
                          progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
        """Carry the pending layout-2 -> 3 move on in this thread, one write transaction per step, for
        ``budget_s`` seconds (``None``: to the end). ``progress(done, total)`` (messages) is called
        after each step. Returns ``{"relaid": int, "pending": bool}``; raises
        :class:`SessionStoreError` as :meth:`_execute_write` does (the steps committed stay)."""
        def report() -> None:
            now = self.relayout_progress()
            if progress is not None and now is not None:
                progress(now["done"], now["total"])

        relaid, _steps, pending = hmrelayout.run_steps(
            self._relayout_step, budget_s, report if progress is not None else None)
        return {"relaid": relaid, "pending": pending}

    def _relayout_step(self) -> dict[str, Any]:
        """One :func:`hermes_memory.sessions.hmrelayout.step`; the swap and drop change the schema,
        so the cookie moves on with it (else the next read would resync as if another program had)."""
        with self._lock:
            conn = self._live()
            before = conn.execute("PRAGMA schema_version").fetchone()[0]
            got = self._execute_write(hmrelayout.step)
            if before == self._schema_cookie:
                self._schema_cookie = conn.execute("PRAGMA schema_version").fetchone()[0]
            return got

    def continue_relayout_in_background(self, pause_s: float = RELAYOUT_PAUSE_S) -> bool:
        """Start a daemon thread that carries a pending layout-2 -> 3 move on, one step (one write
        transaction, the store's write lock held for that step only) every ``pause_s`` seconds, until
        it is done or :meth:`close` stops it. For long-lived processes (``serve``, ``ui``, ``chat``).
        Returns True when a thread runs (False: nothing pending, or one already runs). A step that
        fails (database locked by another program) is retried after a longer pause."""
        with self._lock:
            if self._conn is None or self._relayout_thread is not None:
                return False
            if hmrelayout.progress(self._conn) is None:
                return False
            self._relayout_stop.clear()
            thread = threading.Thread(target=self._relayout_loop, args=(pause_s,),
                                      name="hermes-memory-relayout", daemon=True)
            self._relayout_thread = thread
            thread.start()  # under the lock: close() never sees a thread it cannot join
        return True

    def _relayout_loop(self, pause_s: float) -> None:
        wait = pause_s
        while not self._relayout_stop.is_set():
            try:
                got = self._relayout_step()
            except SessionStoreError as exc:
                if self._relayout_stop.is_set() or self._conn is None:
                    return
                logger.warning("hermes-memory index: relayout step deferred: %s", exc)
                wait = min(max(wait * 2, 1.0), 30.0)
            else:
                wait = pause_s
                if not got["pending"]:
                    logger.info("hermes-memory index: relayout finished in the background")
                    return
            self._relayout_stop.wait(wait)

    def close(self) -> None:
        """Stop the background relayout (after its current step), checkpoint (passive) and close
        the connection. Safe to call twice."""
        self._relayout_stop.set()
        thread = self._relayout_thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        with self._lock:
            if self._conn is None:
                return
            if self._writes:  # a store that only read leaves the files as it found them
                try:
                    self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
                except sqlite3.Error:
                    pass
            self._conn.close()
            self._conn = None  # type: ignore[assignment]

    def __enter__(self: _S) -> _S:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _retry_sleep(self, attempt: int) -> None:
        if attempt < self.write_retries:
            time.sleep(random.uniform(*RETRY_SLEEP_RANGE))

    def _locked_error(self, last: Exception | None) -> SessionStoreError:
        holder = wal_writer(self.db_path)
        who = f" (process {holder[0]}: {holder[1]})" if holder else ""
        return SessionStoreError(
            f"session database {self.db_path} stayed locked after {self.write_retries} retries "
            f"({self.timeout:g} s busy timeout each): {last}. Another process{who} holds a long write "
            "transaction; close it or retry later."
        )

    def _count_write(self) -> None:
        self._writes += 1
        if self._writes % CHECKPOINT_EVERY == 0:
            try:
                self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
            except sqlite3.Error:
                pass

    def _execute_write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(conn)`` inside ``BEGIN IMMEDIATE`` … ``COMMIT`` with bounded jittered retries.

        Raises :class:`SessionStoreError` when the database stays locked after
        ``write_retries`` retries, or on any other SQLite error (the transaction is rolled back).
        Exceptions raised by ``fn`` that are not SQLite errors (e.g. ``ValueError``) roll back and
        propagate unchanged. ``fn`` may run more than once (once per retry).
        """
        with self._lock:
            self._live()
            if self._batch is not None:
                return self._batched_write(fn)
            last: Exception | None = None
            for attempt in range(self.write_retries + 1):
                try:
                    self._conn.execute("BEGIN IMMEDIATE")
                except sqlite3.OperationalError as exc:
                    if _is_lock_error(exc):
                        last = exc
                        self._retry_sleep(attempt)
                        continue
                    raise SessionStoreError(self._write_failed(exc)) from exc
                try:
                    result = fn(self._conn)
                    self._conn.execute("COMMIT")
                except BaseException as exc:
                    if self._conn.in_transaction:
                        self._conn.execute("ROLLBACK")
                    if isinstance(exc, sqlite3.OperationalError) and _is_lock_error(exc):
                        last = exc
                        self._retry_sleep(attempt)
                        continue
                    if isinstance(exc, sqlite3.Error):
                        raise SessionStoreError(self._write_failed(exc)) from exc
                    raise
                self._count_write()
                return result
            raise self._locked_error(last) from last

    @contextlib.contextmanager
    def atomic(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: ``with db.atomic() as conn: conn.execute(...)``.

        Starts ``BEGIN IMMEDIATE`` with the bounded jittered retries of :meth:`_execute_write`
        (so once the block runs, this connection holds the write lock and the block runs once),
        commits when the block ends, rolls back when it raises. Inside :meth:`batch` the block is
        one savepoint of the batch instead. Raises :class:`SessionStoreError` when the database
        stays locked, on a closed database, or for a SQLite error in the block (rolled back);
        other exceptions roll back and propagate unchanged.
        """
        with self._lock:
            conn = self._live()
            if self._batch is not None:
                with self._savepoint() as c:
                    yield c
                self._after_batched_write()
                return
            last: Exception | None = None
            for attempt in range(self.write_retries + 1):
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    break
                except sqlite3.OperationalError as exc:
                    if not _is_lock_error(exc):
                        raise SessionStoreError(self._write_failed(exc)) from exc
                    last = exc
                    self._retry_sleep(attempt)
            else:
                raise self._locked_error(last) from last
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise SessionStoreError(self._write_failed(exc)) from exc
                raise
            self._count_write()

    @contextlib.contextmanager
    def batch(self, commit_every: int = BATCH_WRITES) -> Iterator[None]:
        """Group the writes made inside the ``with`` block into transactions of ``commit_every``
        writes (one fsync each under ``synchronous=FULL``) instead of one per write: for importers.

        Each write still succeeds or fails alone (a savepoint), so a refused write inside the batch
        undoes only itself. Writes already committed stay if the block raises; the open part is
        rolled back. Other threads using this object wait until the block ends; other processes
        wait at most one chunk. Raises :class:`SessionStoreError` as :meth:`_execute_write` does.
        """
        with self._lock:
            if self._batch is not None:  # nested: the outer batch decides
                yield
                return
            self._execute_write(lambda c: None)  # fail early (closed, locked) outside the batch
            self._begin_batch()
            self._batch = {"writes": 0, "every": max(1, int(commit_every))}
            try:
                yield
            except BaseException:
                self._batch = None
                if self._conn is not None and self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
            self._batch = None
            self._commit_batch()

    def _begin_batch(self) -> None:
        for attempt in range(self.write_retries + 1):
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if not _is_lock_error(exc) or attempt == self.write_retries:
                    raise SessionStoreError(self._write_failed(exc)) from exc
                time.sleep(random.uniform(*RETRY_SLEEP_RANGE))

    @contextlib.contextmanager
    def _savepoint(self) -> Iterator[sqlite3.Connection]:
        """One write inside a batch: undone alone when it raises (SQLite errors become
        :class:`SessionStoreError`)."""
        self._conn.execute("SAVEPOINT hm_write")
        try:
            yield self._conn
        except BaseException as exc:
            self._conn.execute("ROLLBACK TO hm_write")
            self._conn.execute("RELEASE hm_write")
            if isinstance(exc, sqlite3.Error):
                raise SessionStoreError(self._write_failed(exc)) from exc
            raise
        self._conn.execute("RELEASE hm_write")

    def _after_batched_write(self) -> None:
        batch = self._batch
        assert batch is not None
        batch["writes"] += 1
        if batch["writes"] % batch["every"] == 0:
            self._commit_batch()
            self._begin_batch()

    def _commit_batch(self) -> None:
        """Commit a batch's transaction; when that fails (a full disk) it is rolled back whole and
        :class:`SessionStoreError` says why (what earlier chunks committed stays)."""
        try:
            self._conn.execute("COMMIT")
        except sqlite3.Error as exc:
            self._batch = None
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            raise SessionStoreError(self._write_failed(exc)) from exc

    def _write_failed(self, exc: sqlite3.Error) -> str:
        cause = sqlite_cause(exc)
        return (place_fault_message(self.db_path, exc, cause, "write to") if cause in PLACE_FAULTS
                else f"session database write failed: {exc}")

    def _batched_write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        with self._savepoint() as conn:
            result = fn(conn)
        self._after_batched_write()
        return result

    def _read(self, sql: str, params: Iterable[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            conn = self._live()
            try:
                return conn.execute(sql, tuple(params)).fetchall()
            except sqlite3.DatabaseError as exc:
                hint = (" The file is damaged: move it aside (or restore a backup) to start a new one."
                        if "malformed" in str(exc) or "not a database" in str(exc) else "")
                raise SessionStoreError(f"session database {self.db_path} read failed: {clause(exc)}.{hint}") from exc
            except (sqlite3.Error, OverflowError, UnicodeEncodeError) as exc:
                raise SessionStoreError(f"session database read failed (bad parameter): {exc}") from exc
