"""What a SQLite error says about the session database's file, and the message a user gets for it.

Only real damage (``file is not a database``, ``database disk image is malformed``) means the file
is unusable and may be moved aside. A full disk, an I/O error, a read-only file system, a
permission refused or a file SQLite cannot open are faults of the place the file lives: the
database is intact, and moving it aside would only hide the user's history, so their messages
name the cause and the fix and never suggest it. A store that cannot be opened for writing is
opened read-only where SQLite can (:func:`read_only_uris`), so the commands that only read still
work on a read-only mount.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import quote

from hermes_memory.errors import SessionStoreError
from hermes_memory.sessions.migrations import current_report

DAMAGED, LOCKED, FULL, READ_ONLY, UNREACHABLE, OTHER = "damaged", "locked", "full", "read_only", "unreachable", "other"
PLACE_FAULTS = (FULL, READ_ONLY, UNREACHABLE)
"""Causes that lie in the file's place (disk, mount, permissions), not in the database."""

# SQLite primary result codes (sqlite3.h): the low byte of an extended code
_CODES = {11: DAMAGED, 26: DAMAGED, 5: LOCKED, 6: LOCKED, 13: FULL, 8: READ_ONLY, 3: UNREACHABLE,
          10: UNREACHABLE, 14: UNREACHABLE, 23: UNREACHABLE}
_WORDS = ((DAMAGED, ("malformed", "not a database")), (LOCKED, ("locked", "busy")),
          (FULL, ("disk is full", "no space")), (READ_ONLY, ("readonly", "read-only")),
          (UNREACHABLE, ("disk i/o", "unable to open", "permission", "authoriz")))


def sqlite_cause(exc: BaseException) -> str:
    """One of ``"damaged"``, ``"locked"``, ``"full"``, ``"read_only"``, ``"unreachable"`` (I/O
    error, permission, cannot open) or ``"other"`` for ``exc``: by its SQLite result code
    (``sqlite_errorcode``) where it has one, else by the words of its message."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int) and (code & 0xFF) in _CODES:
        return _CODES[code & 0xFF]
    text = str(exc).lower()
    for cause, words in _WORDS:
        if any(w in text for w in words):
            return cause
    return OTHER


def place_fault_message(path: Path, exc: BaseException, cause: str, doing: str = "open") -> str:
    """The message for a :data:`PLACE_FAULTS` ``cause``: what failed, why, the fix, and that the
    database is not damaged (``doing``: ``"open"``, ``"write to"``, ...)."""
    where = path.parent
    if cause == UNREACHABLE and _no_space(where):
        cause = FULL  # a full tmpfs answers "disk I/O error" when SQLite grows its -shm
    if cause == FULL:
        fix = f"the disk holding {where} is full: free space there, then retry"
    elif cause == READ_ONLY:
        fix = (f"{where} cannot be written (a read-only mount, or files this user may not write): remount it "
               "read-write or fix the permissions of the folder and of state.db, -wal and -shm, then retry")
    else:
        fix = (f"check that {where} is mounted and readable and writable by this user (the folder, state.db "
               "and its -wal and -shm files), and that its disk has free space, then retry")
    return (f"cannot {doing} session database {path}: {exc}. This is a fault of its location, not of the "
            f"database: {fix}. The file itself is not damaged: do not move it aside.")


def _no_space(folder: Path) -> bool:
    try:
        st = os.statvfs(folder)
    except (OSError, AttributeError):
        return False
    return st.f_bavail == 0 or st.f_favail == 0


def read_only_uris(path: Path) -> list[str]:
    """SQLite URIs to read ``path`` without writing, in the order to try: ``mode=ro`` (sees other
    processes' writes; needs the ``-shm`` to exist or be creatable), then, only on a file system
    mounted read-only (``statvfs`` ``ST_RDONLY``), ``immutable=1``, which reads with no locks and no
    ``-shm`` at all: safe only because nothing can write a file on a read-only mount (and it reads
    the main file only: what a ``-wal`` left there without its ``-shm`` holds is not seen)."""
    uri = "file:" + quote(str(path))
    uris = [uri + "?mode=ro"]
    try:
        read_only_mount = bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        read_only_mount = False
    if read_only_mount:
        uris.append(uri + "?mode=ro&immutable=1")
    return uris


PAGE_CACHE_KIB = 32_768
"""Page cache of a read-only connection, KiB: that of :mod:`hermes_memory.sessions.connection`."""


def open_read_only(path: Path, timeout: float) -> tuple[sqlite3.Connection, dict[str, Any], int]:
    """``(connection, current_report, schema cookie)`` of ``path`` opened without writing: each of
    :func:`read_only_uris` in turn, kept when its schema and index are current (nothing to write).
    Raises :class:`SessionStoreError` with the first failure's cause and fix, or saying the file
    needs one open where it can be written first."""
    first: sqlite3.Error | None = None
    for uri in read_only_uris(path):
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            first = first or exc
            continue
        conn.row_factory = sqlite3.Row
        try:
            conn.execute(f"PRAGMA cache_size=-{PAGE_CACHE_KIB}")
            conn.execute("BEGIN")
            try:
                report = current_report(conn)
                cookie = int(conn.execute("PRAGMA schema_version").fetchone()[0])
            finally:
                conn.execute("COMMIT")
        except sqlite3.Error as exc:
            conn.close()
            first = first or exc
            continue
        if report is None:
            conn.close()
            raise SessionStoreError(
                f"session database {path} can only be read here, and its schema or search index needs bringing up "
                "to date first: run any hermes-memory command where the file can be written (or make its folder "
                "writable), then retry.")
        return conn, report, cookie
    assert first is not None
    cause = sqlite_cause(first)
    if cause in PLACE_FAULTS:
        raise SessionStoreError(place_fault_message(path, first, cause, "read")) from first
    if cause == LOCKED:
        raise SessionStoreError(f"session database {path} could not be read: another process held a write "
                                f"transaction on it throughout ({first}); retry when it has finished.") from first
    raise SessionStoreError(f"{path} is not a usable session database: {first}. Move it aside to start a new one.") from first
