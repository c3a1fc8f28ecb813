"""The sidecar lock of a memory file: ``fcntl.flock`` on a held-open descriptor plus a thread lock.

A memory write costs one fsync (tens to hundreds of microseconds on a fast disk), so the lock
must cost little next to it. :mod:`filelock` opens, truncates and closes the lock file on every
acquire and release and tracks forks on each call; that was about 40 % of the fixed CPU of an
add (issue 13 §6). :class:`SidecarLock` keeps the same guarantees for less:

* other processes are excluded by an exclusive ``flock`` on the lock file, taken without blocking
  and retried with a short back-off until the timeout (then :class:`LockTimeout`);
* threads of this process that share the object are excluded by a :class:`threading.RLock`
  (re-entrant like :class:`filelock.FileLock`); two objects on one file exclude each other
  through ``flock``, which conflicts between open file descriptions even in one process;
* the lock file is created with mode 0600 and ``O_NOFOLLOW``; before each acquire it is
  ``lstat``-ed: a symlink is refused (:class:`LockSymlinkError`) and a file that was deleted or
  replaced since it was opened is reopened, so two writers never lock two different inodes. A lock
  file that already exists keeps its mode and owner: the reference agent locks the same
  ``<file>.lock`` (0644 from its umask) and we never alter a file another program owns
  (docs/security.md §5);
* after a ``fork`` the child reopens the file instead of sharing the parent's open file
  description (which would make both "hold" the lock); the descriptor is close-on-exec.

Where ``fcntl`` does not exist (Windows) the same interface is served by :class:`filelock.FileLock`.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
import time

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

#: First and longest sleep (seconds) between two tries of a contended lock. A memory write holds
#: the lock for about a millisecond, so the first retry comes soon; the cap keeps a long wait cheap.
_FIRST_BACKOFF_S = 0.0005
_MAX_BACKOFF_S = 0.05
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class LockTimeout(TimeoutError):
    """The lock stayed held by someone else for longer than the timeout (seconds, in ``args[1]``)."""


class LockSymlinkError(OSError):
    """The lock file is a symlink; it is never followed (someone could point it at another file)."""


class SidecarLock:
    """An exclusive, re-entrant lock on ``lock_path`` for processes and threads.

    ``acquire(timeout)`` waits at most ``timeout`` seconds and raises :class:`LockTimeout`;
    :class:`LockSymlinkError` when the lock path is a symlink; ``OSError`` when the file cannot
    be created or opened (missing folder, no rights). ``release`` undoes one ``acquire``. The
    descriptor stays open between acquisitions and is closed by :meth:`close` (or at exit).
    """

    def __init__(self, lock_path: str | os.PathLike[str], mode: int = 0o600) -> None:
        self.lock_path = os.fspath(lock_path)
        self.mode = mode
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None
        self._pid = 0
        self._ino: tuple[int, int] | None = None
        self._fallback = None
        if fcntl is None:  # pragma: no cover - Windows
            from filelock import FileLock

            self._fallback = FileLock(self.lock_path, mode=mode)

    # -------------------------------------------------------------- public
    def acquire(self, timeout: float) -> None:
        """Take the lock, waiting at most ``timeout`` seconds (see the class docstring for errors)."""
        fd = self._fd
        if fd is not None and self._pid == os.getpid() and self._depth == 0 and self._thread_lock.acquire(False):
            # The common case in one frame: free in this process, descriptor open. Same checks as
            # _flock: the flock, then one lstat proving the path is still our inode and no symlink
            # (else the general path below reopens or refuses).
            if self._depth == 0:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    pass
                else:
                    try:
                        st = os.lstat(self.lock_path)
                    except OSError:
                        st = None
                    if st is not None and (st.st_dev, st.st_ino) == self._ino and not stat.S_ISLNK(st.st_mode):
                        self._depth = 1
                        return
                    fcntl.flock(fd, fcntl.LOCK_UN)
            self._thread_lock.release()
        deadline = time.monotonic() + timeout
        if self._fd is not None and self._pid != os.getpid():
            # A forked child: the inherited descriptor shares the parent's open file description
            # (and so its flock), and the thread lock's state is the parent's. Start afresh; closing
            # the inherited descriptor would not unlock the parent anyway.
            self._fd, self._ino, self._depth = None, None, 0
            self._thread_lock = threading.RLock()
        if not self._thread_lock.acquire(timeout=max(timeout, 0)):
            raise LockTimeout(f"{self.lock_path} is held by another thread", timeout)
        try:
            if self._depth == 0:
                if self._fallback is not None:  # pragma: no cover - Windows
                    self._fallback.acquire(timeout=timeout)
                else:
                    self._flock(deadline, timeout)
            self._depth += 1
        except BaseException:
            self._thread_lock.release()
            raise

    def release(self) -> None:
        """Undo one :meth:`acquire`; the last one unlocks the file (the descriptor stays open)."""
        self._depth -= 1
        try:
            if self._depth == 0:
                if self._fallback is not None:  # pragma: no cover - Windows
                    self._fallback.release()
                elif self._fd is not None:
                    fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            self._thread_lock.release()

    def close(self) -> None:
        """Close the held-open descriptor (the lock must not be held)."""
        with self._thread_lock:
            self._close_fd()

    def __del__(self) -> None:
        try:
            self._close_fd()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    # -------------------------------------------------------------- internals
    def _close_fd(self) -> None:
        fd, self._fd, self._ino = self._fd, None, None
        if fd is not None and self._pid == os.getpid():
            os.close(fd)

    def _check_path(self) -> os.stat_result | None:
        """``lstat`` the lock path: refuse a symlink; ``None`` if missing. Never changes the file's mode."""
        try:
            st = os.lstat(self.lock_path)
        except FileNotFoundError:
            return None
        if stat.S_ISLNK(st.st_mode):
            raise LockSymlinkError(errno.ELOOP, f"lock file {self.lock_path} is a symlink")
        return st

    def _open(self) -> int:
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | _O_NOFOLLOW | _O_CLOEXEC, self.mode)
        st = os.fstat(fd)
        self._fd, self._pid, self._ino = fd, os.getpid(), (st.st_dev, st.st_ino)
        return fd

    def _flock(self, deadline: float, timeout: float) -> None:
        """Lock the file that is at ``lock_path`` now: ``flock`` first, then one ``lstat`` to check it.

        Uncontended this is two system calls (``flock`` + ``lstat``; the descriptor stays open):
        the ``lstat`` after the ``flock`` both refuses a symlink and proves that the inode we hold
        is still the one at the path (deleted or replaced meanwhile: unlock, reopen, go round).
        """
        backoff = _FIRST_BACKOFF_S
        while True:
            fd = self._fd
            if fd is None:
                self._check_path()  # refuse a symlink before creating anything
                fd = self._open()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                pass
            else:
                try:
                    st = self._check_path()
                except BaseException:
                    fcntl.flock(fd, fcntl.LOCK_UN)
                    raise
                if st is not None and (st.st_dev, st.st_ino) == self._ino:
                    return
                # Deleted or replaced since we opened it: that inode no longer guards anything.
                fcntl.flock(fd, fcntl.LOCK_UN)
                self._close_fd()
                continue
            now = time.monotonic()
            if now >= deadline:
                raise LockTimeout(f"{self.lock_path} is held by another process", timeout)
            time.sleep(min(backoff, deadline - now))
            backoff = min(backoff * 2, _MAX_BACKOFF_S)
            st = self._check_path()
            if st is None or (st.st_dev, st.st_ino) != self._ino:
                self._close_fd()  # waiting on a stale inode: lock the file that is there now
