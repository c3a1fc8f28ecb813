"""The file backend of the curated memory: ``MEMORY.md`` and ``USER.md`` in a memories folder.

* Reads accept a UTF-8 BOM and CRLF / lone CR line ends; writes are always UTF-8, LF, no BOM.
  A file that cannot be read (OSError, invalid UTF-8) is *not* treated as empty: every mutation of
  it is refused and the bytes stay as they are.
* Every mutation takes the sidecar lock ``<file>.lock`` (:class:`.lock.SidecarLock`: ``flock`` plus a
  thread lock, mode 0600, a symlinked lock is refused), re-reads the file under the lock (so
  concurrent writers and hand edits merge; skipped when one ``lstat`` under the lock proves the file
  is the one last read or written, :mod:`.filecache`), then writes a temp file in the same
  directory, fsyncs it and ``os.replace``-s it over the file (system calls: ``open``, ``write``,
  ``fsync``, ``close`` of the replaced inode's cached descriptor *before* the rename, ``rename``,
  plus one ``fstat`` for the cache's validator; no directory fsync, like the reference agent and a
  bare atomic write). The entries just written are kept as the cache's parse once a count of
  ``§`` (or a ``split``) proves the text reads back as exactly those entries.
* A symlinked ``MEMORY.md`` stays a symlink: the lock and the temp file go next to the resolved
  target, so homes whose files link to one shared file serialise on one lock.
* With ``user_id`` (gateway mode) ``USER.md`` lives in ``users/<user_id>/`` while ``MEMORY.md``
  stays shared. Folders are created with mode 0700, files and backups with 0600.
"""

from __future__ import annotations

import errno
import glob
import os
import stat
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from hermes_memory.errors import MemoryStoreError
from hermes_memory.memory.backend import EntriesBackend, EntriesTxn, Stored
from hermes_memory.memory.entries import ENTRY_DELIMITER, normalise_newlines, parse_entries, validate_user_id
from hermes_memory.memory.filecache import ReadCache, trust_mode
from hermes_memory.memory.lock import LockSymlinkError, LockTimeout, SidecarLock
from hermes_memory.wording import clause

#: Seconds a mutation waits for the sidecar lock (a write holds it for milliseconds; ours, not the reference's).
LOCK_TIMEOUT_S = 30.0
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)


class LockFileError(MemoryStoreError, OSError):
    """The sidecar lock file is unsafe (a symlink) or cannot be created, opened or locked. Nothing was written."""


def _read_all(path: str | Path) -> bytes:
    """The bytes of ``path`` (``os.open`` + ``os.read``: fewer layers than ``Path.read_bytes``)."""
    fd = os.open(path, _READ_FLAGS)
    try:
        return _read_fd(fd)
    finally:
        os.close(fd)


def _read_fd(fd: int) -> bytes:
    """Everything from ``fd``'s position to its end."""
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _decode(data: bytes) -> Stored:
    """Parse the bytes of a memory file (BOM and CR line ends accepted); invalid UTF-8 sets ``error``."""
    try:
        text = normalise_newlines(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        return Stored([], error=f"not valid UTF-8 at byte {exc.start}")
    return Stored(parse_entries(text), text=text)


def _os_error(exc: OSError) -> Stored:
    return Stored([], error=f"{type(exc).__name__}: {exc.strerror or exc}")


def _mkdir_private(folder: Path) -> None:
    """Create ``folder`` and every missing parent with mode 0700 (existing folders are left as they are).

    ``Path.mkdir(parents=True, mode=...)`` applies the mode to the last folder only, so ``users/``
    (whose entries name every user) and a fresh home root came out world-readable.
    """
    missing = []
    p = Path(folder)
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        d.mkdir(mode=0o700, exist_ok=True)


def real_path(path: Path) -> Path:
    """The file that is really written: the resolved target when ``path`` is a symlink."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


class _Mutation(EntriesTxn):
    """The critical section of :meth:`FileBackend.mutation` and its transaction in one plain object.

    No generator and no second object per write (issue 13 §6): ``__enter__`` takes the lock, reads
    the file under it and returns ``self``; ``__exit__`` releases the lock.
    """

    __slots__ = ("_backend", "_path", "_spath", "_lock", "_real", "stored")

    def __init__(self, backend: FileBackend, path: Path, spath: str) -> None:
        self._backend, self._path, self._spath = backend, path, spath
        self._lock: SidecarLock | None = None
        self._real = ""

    def __enter__(self) -> EntriesTxn:
        backend, path = self._backend, self._path
        lock, real, st = backend._lock_current(self._spath)
        self._lock, self._real = lock, real
        try:
            if real not in backend._swept:
                backend.sweep_temp_files(real, resolved=True)
            self.stored = backend._read_locked(path, real, st)
            return self
        except BaseException:
            self._lock = None
            lock.release()
            raise

    def __exit__(self, *exc: object) -> None:
        lock, self._lock = self._lock, None
        if lock is not None:
            lock.release()

    def save(self, entries: Sequence[str], *, canonical: bool = False) -> list[str]:
        text = ENTRY_DELIMITER.join(entries)
        return self._backend._save(self._real, self._path, text, entries if canonical else None)

    def backup(self) -> tuple[str, str]:
        copy = backup_file(self._path)
        return copy.name, str(copy)


class FileBackend(EntriesBackend):
    """MEMORY.md / USER.md under ``memory_dir`` (see the module docstring); ``user_id`` is validated."""

    kind = "file"

    def __init__(self, memory_dir: str | os.PathLike[str], user_id: str | None = None) -> None:
        self.memory_dir = Path(memory_dir)
        self.user_id = validate_user_id(user_id)
        self.lock_timeout_s = LOCK_TIMEOUT_S
        self._locks: dict[str, SidecarLock] = {}
        self._swept: set[str] = set()
        self._tmp_seq = 0
        self._paths: dict[str, Path] = {}
        self._spaths: dict[str, str] = {}  # target -> str(path): no pathlib frames per write
        self._reals: dict[str, str] = {}  # a file's path -> the real file locked last time (symlinks)
        self._cache = ReadCache()
        self._folders: dict[str, tuple[str, str]] = {}  # a real file -> (its folder, its temp files' prefix)

    # ------------------------------------------------------------------ the interface
    def path_for(self, target: str) -> Path:
        """The file of ``target`` (``"user"`` -> USER.md, per user in gateway mode; else MEMORY.md)."""
        path = self._paths.get(target)
        if path is None:
            if target == "user":
                folder = self.memory_dir / "users" / self.user_id if self.user_id is not None else self.memory_dir
                path = folder / "USER.md"
            else:
                path = self.memory_dir / "MEMORY.md"
            self._paths[target] = path
        return path

    def location(self, target: str) -> str:
        return str(self.path_for(target))

    def read(self, target: str) -> Stored:
        return self._read_path(self.path_for(target))

    @staticmethod
    def _read_path(path: Path) -> Stored:
        try:
            data = _read_all(path)
        except FileNotFoundError:
            return Stored([])
        except OSError as exc:
            return _os_error(exc)
        return _decode(data)

    def mutation(self, target: str) -> _Mutation:
        path = self.path_for(target)
        spath = self._spaths.get(target)
        if spath is None:
            spath = self._spaths[target] = os.fspath(path)
        return _Mutation(self, path, spath)

    def close(self) -> None:
        """Close the held-open descriptors (read cache and sidecar locks); the backend stays usable."""
        self._cache.close()
        for lock in self._locks.values():
            lock.close()

    def drift_fix(self, target: str, reason: str, limit: int, backup_name: str) -> str:
        path = self.path_for(target)
        if reason == "too_big":
            return (
                f"Open {path} and split the added text into entries separated by a line holding only '§' "
                f"(each entry under {limit:,} chars), or restore it from {backup_name}; then retry."
            )
        return (
            f"Open {path} and delete the blank lines, trailing spaces and empty entries around the lines "
            f"holding only '§', or restore it from {backup_name}; then retry."
        )

    def user_ids(self) -> list[str]:
        users = self.memory_dir / "users"
        try:
            names = sorted(p.name for p in users.iterdir() if (p / "USER.md").is_file())
        except OSError:
            return []
        out = []
        for name in names:
            try:
                out.append(validate_user_id(name) or "")
            except ValueError:
                continue  # not a folder this store made; never followed
        return out

    # ------------------------------------------------------------------ reading under the lock
    def _lock_current(self, path: Path | str) -> tuple[SidecarLock, str, os.stat_result | None]:
        """Lock the file ``path`` really is now and ``lstat`` it under that lock: ``(lock, real, lstat)``.

        The lock sits next to the real file (see :meth:`locked`); which file that is, is checked
        again under the lock (one ``lstat``, which is also the read cache's validator), so a
        symlink made or removed meanwhile sends us round to the right lock.
        """
        spath = path if isinstance(path, str) else os.fspath(path)
        real = self._reals.get(spath, spath)
        while True:
            lock = self._acquire(real)
            try:
                try:
                    st: os.stat_result | None = os.lstat(spath)
                except OSError:
                    st = None  # missing or unreadable: the read says which
                now = os.path.realpath(spath) if st is not None and stat.S_ISLNK(st.st_mode) else spath
            except BaseException:
                lock.release()
                raise
            if now == real:
                return lock, real, st
            lock.release()
            self._reals[spath] = real = now

    def _read_locked(self, path: Path, real: str, st: os.stat_result | None) -> Stored:
        """The state of ``path`` under its lock: the read cache when ``st`` proves it current, else a read."""
        cache = self._cache
        if st is None or not stat.S_ISREG(st.st_mode):  # missing, a symlink, something odd: plain read
            cache.drop(real)
            return self._read_path(path)
        mode = trust_mode(self._folder(real)[0], st.st_dev)
        hit = cache.fresh(real, st, mode)
        if hit is not None:
            return hit
        try:
            fd = os.open(real, _READ_FLAGS)
        except FileNotFoundError:
            cache.drop(real)
            return Stored([])
        except OSError as exc:
            cache.drop(real)
            return _os_error(exc)
        kept = False
        try:
            taken = time.time_ns()
            fst = os.fstat(fd) if mode else None  # before the read: a change after it shows in the validator
            data = _read_fd(fd)
            stored = cache.same_bytes(real, data) or _decode(data)
            if stored.error is None:
                cache.keep(real, fd if mode else None, fst, taken, data, stored.entries, stored.text)
                kept = mode is not None
            else:
                cache.drop(real)
            return stored
        except OSError as exc:
            cache.drop(real)
            return _os_error(exc)
        finally:
            if not kept:
                os.close(fd)

    # ------------------------------------------------------------------ locking
    def _acquire(self, real: str) -> SidecarLock:
        """Take the sidecar lock of the real file ``real``; raises :class:`LockFileError` (nothing written)."""
        lock = self._locks.get(real)
        if lock is None:
            lock = self._locks[real] = SidecarLock(f"{real}.lock", mode=0o600)
        lock_path = lock.lock_path
        try:
            try:
                lock.acquire(timeout=self.lock_timeout_s)
            except FileNotFoundError:  # first write into a new home: create the folder, then retry
                _mkdir_private(Path(real).parent)
                lock.acquire(timeout=self.lock_timeout_s)
        except LockSymlinkError as exc:
            raise LockFileError(
                errno.ELOOP,
                f"refusing to use lock file {lock_path}: it is a symlink. Delete it (the store recreates it) and retry.",
            ) from exc
        except LockTimeout as exc:  # a writer stopped mid-write (Ctrl-Z, a hung disk) must not hang every turn
            raise LockFileError(
                errno.EAGAIN,
                f"another process has held {lock_path} for more than {self.lock_timeout_s:g} s; nothing was "
                "written. Retry later, or find and resume/stop the stuck hermes-memory process.",
            ) from exc
        except OSError as exc:  # a broken home: the folder is a file, read-only, missing rights...
            raise LockFileError(
                exc.errno or errno.EIO,
                f"cannot use lock file {lock_path}: {exc.strerror or exc}. Nothing was written; make "
                f"{os.path.dirname(real)} a writable folder and retry.",
            ) from exc
        return lock

    @contextmanager
    def locked(self, path: Path, *, resolved: bool = False) -> Iterator[None]:
        """Hold the sidecar lock of ``path`` (raises :class:`LockFileError`; ``resolved``: ``path`` is real)."""
        # The sidecar sits next to the file really written, so two homes whose MEMORY.md links to
        # one shared file serialise on one lock (a lock per link lost updates, and one writer's
        # temp sweep deleted the other's live temp file).
        lock = self._acquire(os.fspath(path if resolved else real_path(path)))
        try:
            yield
        finally:
            lock.release()

    # ------------------------------------------------------------------ writing
    @staticmethod
    def _temp_prefix(name: str) -> str:
        return f".mem_{name}."

    def _folder(self, real: str) -> tuple[str, str]:
        """``(folder, temp prefix)`` of the real file ``real``, computed once per file."""
        known = self._folders.get(real)
        if known is None:
            folder, name = os.path.split(real)
            known = self._folders[real] = (folder, os.path.join(folder, self._temp_prefix(name)))
        return known

    def sweep_temp_files(self, path: str | Path, *, resolved: bool = False) -> None:
        """Delete temp files left by a writer of ``path`` that crashed (once per backend and file).

        Runs under the file's lock: every writer holds that lock while its temp file exists, so any
        temp file with this file's prefix found now belongs to a dead writer.
        """
        key = os.fspath(path if resolved else real_path(Path(path)))
        if key in self._swept:
            return
        self._swept.add(key)
        folder, name = os.path.split(key)
        prefix = self._temp_prefix(name)
        try:
            with os.scandir(folder or ".") as it:
                stale = [e.path for e in it if e.name.startswith(prefix) and e.name.endswith(".tmp")]
        except OSError:
            return
        for p in stale:
            try:
                os.unlink(p)
            except OSError:
                pass

    def write(self, path: Path, text: str, *, resolved: bool = False) -> None:
        """Write ``text`` (UTF-8, LF) to ``path`` atomically: temp in the real target's folder, fsync, replace.

        The temp file is ``.mem_<name>.<pid>.<n>.tmp``, created exclusively with mode 0600 and
        ``O_NOFOLLOW`` (the lock is held, so only a crashed writer's leftovers can share the prefix,
        and those are swept). ``resolved``: ``path`` is already the real file. Raises
        :class:`MemoryStoreError` when the write fails (the old file is unchanged).
        """
        self._save(os.fspath(path if resolved else real_path(path)), path, text)

    def _save(self, real: str, path: Path, text: str, entries: Sequence[str] | None = None) -> list[str]:
        """:meth:`write` of ``text`` to the real file ``real`` (``path`` names it in errors), keeping the cache.

        ``entries``: what ``text`` joins, each stripped, non-empty and unique (``save(canonical=True)``);
        the cache then keeps them instead of parsing ``text`` again, once a count of '§' (or, when
        an entry holds one, a ``split``) proves that no delimiter hides inside an entry. Returns the
        entries a re-read gives (``entries`` itself when it is a list and reads back unchanged).

        System calls: ``open`` (O_EXCL), ``write``, ``fsync``, ``close`` (of the replaced inode's
        cached descriptor, or of the temp file where nothing is cached), ``rename``; then, where the
        read cache is trusted, ``fstat`` of the still-open new inode (its validator).
        """
        data = text.encode("utf-8")
        cache = self._cache
        folder, prefix = self._folder(real)
        mode = trust_mode(folder)
        tmp = fd = None
        try:
            fd, tmp = self._open_temp(prefix, folder)
            done = os.write(fd, data)
            if done < len(data):  # a short write (a signal, a full quota): the rest, piece by piece
                view = memoryview(data)[done:]
                while view:
                    view = view[os.write(fd, view):]
            os.fsync(fd)
            if mode is None:  # nothing to keep open: close first, as a plain atomic write does
                os.close(fd)
                fd = None
            # Let go of the inode being replaced before the rename: closing the last descriptor of
            # an inode that a rename already unlinked costs ext4 a second journal update (taking
            # it off the orphan list), about 20 us on a RAM-backed ext4 (docs/benchmarks.md).
            cache.drop(real)
            os.replace(tmp, real)
            tmp = None
        except OSError as exc:
            cache.drop(real)
            raise MemoryStoreError(f"Failed to write memory file {path}: {clause(exc)}. The old file is unchanged.") from exc
        finally:
            if tmp is not None:
                if fd is not None:
                    os.close(fd)
                    fd = None
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
        # Written: what follows only feeds the cache; a failure here must not report a failed write.
        # Exactly what a re-read would give: a BOM or CR would be normalised by the read, so only
        # then is the text decoded again from the bytes.
        written: list[str]
        if "\r" in text or text.startswith("\ufeff"):
            stored = _decode(data)
            written, text = stored.entries, stored.text
        else:
            written = entries if isinstance(entries, list) else list(entries or ())
            # The text reads back as exactly these entries when each '§' in it is a delimiter's
            # (no entry holds one: counted, nothing allocated), or else when the split says so.
            if entries is None or (text.count("§") != len(written) - 1 and text.split(ENTRY_DELIMITER) != written):
                written = parse_entries(text)
        try:
            taken = time.time_ns()
            st = os.fstat(fd) if fd is not None else None
        except OSError:
            os.close(fd)  # type: ignore[arg-type]
            return written
        cache.keep(real, fd, st, taken, data, written, text)
        return written

    def _open_temp(self, prefix: str, folder: str) -> tuple[int, str]:
        """Create and open a fresh temp file ``<prefix><pid>.<n>.tmp`` in ``folder`` (made on first use)."""
        for attempt in range(100):
            self._tmp_seq += 1
            tmp = f"{prefix}{os.getpid()}.{self._tmp_seq}.tmp"
            try:
                return os.open(tmp, _TEMP_FLAGS, 0o600), tmp
            except FileExistsError:
                continue
            except FileNotFoundError:
                if attempt:
                    raise
                _mkdir_private(Path(folder))
        raise FileExistsError(errno.EEXIST, f"no free temp file name in {folder}")


def backup_file(path: Path) -> Path:
    """Copy ``path`` to ``<name>.bak.<unix_ts>`` (mode 0600 from the start) and return the copy.

    An existing backup with the same bytes is reused, so a model retrying against one drifted
    file does not pile up identical copies. Raises :class:`MemoryStoreError` if it cannot copy.
    """
    try:
        data = path.read_bytes()
        for old in sorted(path.parent.glob(f"{glob.escape(path.name)}.bak.*")):
            try:
                if old.is_file() and not old.is_symlink() and old.read_bytes() == data:
                    return old
            except OSError:
                continue
        stamp, n = int(time.time()), 0
        while True:
            backup = path.with_name(f"{path.name}.bak.{stamp}" + (f".{n}" if n else ""))
            try:
                fd = os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
                break
            except FileExistsError:
                n += 1
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        return backup
    except OSError as exc:  # pragma: no cover - depends on the filesystem
        raise MemoryStoreError(f"could not back up drifted {path}: {exc}") from exc
