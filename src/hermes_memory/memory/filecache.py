"""The read cache of the file backend: skip re-reading MEMORY.md / USER.md that cannot have changed.

Every mutation re-reads its file under the sidecar lock, because another process may have written
it (our other processes, the reference Hermes Agent, which replaces the file by rename, or a person
in an editor, who may rewrite it in place). Reading and parsing costs about as much as the lock
itself (issue 13 §6), so the backend keeps, per file, the entries it last read or wrote together
with a validator: ``(st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns)`` of that inode. Under the
lock, one ``lstat`` of the path decides:

* **another inode** (a rename by anyone, a deleted file): re-read. We keep a descriptor of the
  cached inode open, so its number cannot be handed to a new file while it is cached;
* **same inode, any of size / mtime / ctime differ** (an in-place edit, a ``touch``): re-read.
  ``ctime`` cannot be set by programs (``utime`` sets it to *now*), so restoring an mtime does not
  hide an edit;
* **everything equal**: the cache is trusted only when a later change *must* have shown in ctime.
  A file system stamps ctime from a clock with a tick (a jiffy, 1-10 ms, for the coarse kernel
  clock; a whole second on ext4 with 128-byte inodes), so an edit in the same tick as the write we
  cached would look identical. It is ruled out in one of two ways:

  - **multigrain timestamps** (Linux 6.13 and later on ext4, xfs, btrfs and tmpfs): once ctime has
    been read (our ``fstat``/``lstat``), the next change of that inode gets a fine-grained ctime
    strictly after it (the kernel's documentation, ``filesystems/multigrain-ts``). Those times are
    still cut to the file system's granularity, so a ctime without a sub-millisecond part (ext4
    with 128-byte inodes keeps whole seconds) falls back to the tick rule below;
  - otherwise (**tick** mode, older kernels on the same file systems): the cached ctime must be at
    least :data:`FINE_MARGIN_NS` older than the moment the validator was taken
    (:data:`COARSE_MARGIN_NS` when ctime has no sub-millisecond part, i.e. a coarse file system),
    and the clock must not have gone back since; a file written moments ago is re-read.

  Where neither holds (network and FUSE file systems, whose ``stat`` may come from a client cache;
  overlayfs; an unknown mount; Windows and macOS, where ``/proc/self/mounts`` does not exist) the
  file is always re-read.

Even when it re-reads, the backend skips decoding and parsing when the bytes equal the cached ones.

Known limit (shared by every stat validator, ``make`` and ``git`` included): a program writing the
file through a shared ``mmap`` changes it without updating its times until write-back; no editor
writes MEMORY.md that way.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

from hermes_memory.memory.backend import Stored

#: File systems whose ``stat`` is served by the local kernel from the inode itself.
LOCAL_FS = frozenset({"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "f2fs"})
#: File systems with multigrain ctime from Linux 6.13 (the kernel's ``FS_MGTIME`` flag).
MULTIGRAIN_FS = frozenset({"ext4", "xfs", "btrfs", "tmpfs"})
MULTIGRAIN_KERNEL = (6, 13)
#: Tick mode: twice the longest coarse-clock tick (a jiffy at HZ=100 is 10 ms).
FINE_MARGIN_NS = 20_000_000
#: Tick mode on a file system whose ctimes are whole milliseconds or coarser (FAT-like, ext4 with
#: 128-byte inodes: one second; 2 s FAT times), with room for the coarse clock lagging.
COARSE_MARGIN_NS = 2_500_000_000

_modes: dict[str, tuple[int | None, str | None]] = {}


def _mount_fs(folder: str) -> str | None:
    """The file system type of the mount holding ``folder`` (longest mount point), from /proc/self/mounts."""
    real = os.path.realpath(folder).rstrip("/") + "/"
    best, kind = -1, None
    try:
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as f:
            for line in f:
                parts = line.split()
                if len(parts) < 3:
                    continue
                point = parts[1].replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\").rstrip("/") + "/"
                if real.startswith(point) and len(point) > best:
                    best, kind = len(point), parts[2]
    except OSError:
        return None
    return kind


def _kernel_version() -> tuple[int, int]:
    try:
        major, minor = os.uname().release.split(".")[:2]
        return int(major), int("".join(c for c in minor if c.isdigit()) or 0)
    except (AttributeError, ValueError):
        return (0, 0)


def trust_mode(folder: str, dev: int | None = None) -> str | None:
    """How far a validator of a file in ``folder`` can be trusted: ``"multigrain"``, ``"tick"`` or ``None``.

    ``None`` means always re-read (see the module docstring). Computed once per folder and
    process, and again when ``dev`` (the ``st_dev`` of a file there) differs from the one it was
    computed for, so a file system mounted over the folder later is noticed.
    """
    known = _modes.get(folder)
    if known is not None and (dev is None or known[0] == dev):
        return known[1]
    mode = None
    if sys.platform.startswith("linux"):
        fs = _mount_fs(folder)
        if fs in LOCAL_FS:
            mode = "multigrain" if fs in MULTIGRAIN_FS and _kernel_version() >= MULTIGRAIN_KERNEL else "tick"
    _modes[folder] = (dev, mode)
    return mode


def stat_key(st: os.stat_result) -> tuple[int, int, int, int, int]:
    """The validator of one inode: ``(st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns)``."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


@dataclass
class _Slot:
    key: tuple[int, int, int, int, int]
    fd: int | None  # the cached inode, held open so that its number is not reused
    taken_ns: int  # time.time_ns() just before the stat that gave ``key``
    data: bytes
    entries: tuple[str, ...]
    text: str


class ReadCache:
    """Per-file cache of the last state read or written under the lock (one per backend).

    Paths are the real files' paths (``str``). A slot holds an open descriptor only in a trusted
    mode; :meth:`close` closes them all.
    """

    def __init__(self) -> None:
        self._slots: dict[str, _Slot] = {}
        #: Lookups that skipped the read / that had to read (bench/memory_ops.py prints them).
        self.hits = self.misses = 0

    def fresh(self, path: str, st: os.stat_result, mode: str | None) -> Stored | None:
        """The cached state of ``path`` if the ``lstat`` result ``st`` (taken under the lock) proves it current."""
        slot = self._slots.get(path)
        self.misses += 1
        if slot is None or mode is None or slot.fd is None:
            return None
        if (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns) != slot.key:  # stat_key, inline
            self.drop(path)
            return None
        ctime = slot.key[4]
        fine = ctime % 1_000_000  # 0: a file system storing whole milliseconds or seconds at best
        if mode != "multigrain" or not fine:  # multigrain times are cut to the file system's granularity too
            margin = FINE_MARGIN_NS if fine else COARSE_MARGIN_NS
            if time.time_ns() < slot.taken_ns or ctime > slot.taken_ns - margin:
                return None
        self.misses -= 1
        self.hits += 1
        return Stored(list(slot.entries), text=slot.text)

    def same_bytes(self, path: str, data: bytes) -> Stored | None:
        """The cached parse of ``path`` when ``data`` is byte for byte what was cached (no validator needed)."""
        slot = self._slots.get(path)
        if slot is None or slot.data != data:
            return None
        return Stored(list(slot.entries), text=slot.text)

    def keep(self, path: str, fd: int | None, st: os.stat_result | None, taken_ns: int, data: bytes,
             entries: Sequence[str], text: str) -> None:
        """Remember ``entries`` / ``text`` as the state of ``path`` (bytes ``data``); takes ownership of ``fd``.

        ``st`` is ``fstat(fd)``, taken after ``taken_ns``; without ``fd`` only the bytes are kept.
        """
        old = self._slots.get(path)
        if old is not None and old.fd is not None and old.fd != fd:
            _close(old.fd)
        key = stat_key(st) if st is not None else (0, 0, -1, 0, 0)
        self._slots[path] = _Slot(key, fd, taken_ns, data, tuple(entries), text)

    def drop(self, path: str) -> None:
        """Forget ``path`` (closing its descriptor)."""
        slot = self._slots.pop(path, None)
        if slot is not None and slot.fd is not None:
            _close(slot.fd)

    def close(self) -> None:
        """Forget every file."""
        for path in list(self._slots):
            self.drop(path)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass
