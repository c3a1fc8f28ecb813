"""The sidecar lock (issue 13 §6): excludes processes and threads, times out clearly, stays safe."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from hermes_memory.memory import LockFileError, MemoryStore
from hermes_memory.memory.lock import LockSymlinkError, LockTimeout, SidecarLock
from tests.helpers.values import present

_HOLDER = """
import fcntl, sys
fd = open(sys.argv[1], "a")
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.read()
"""


def _hold(path: Path) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-c", _HOLDER, str(path)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None and p.stdout.readline().strip() == "held"
    return p


def test_another_process_holding_the_lock_makes_acquire_wait_then_time_out(tmp_path: Path) -> None:
    path = tmp_path / "x.lock"
    holder = _hold(path)
    try:
        lock = SidecarLock(path)
        t0 = time.monotonic()
        with pytest.raises(LockTimeout):
            lock.acquire(timeout=0.3)
        assert time.monotonic() - t0 >= 0.3
    finally:
        holder.communicate("")
    lock.acquire(timeout=1)  # released by the holder's exit: now it is free
    lock.release()


def test_store_waits_for_a_short_holder_and_then_writes(mem_dir: Path) -> None:
    s = MemoryStore(mem_dir)
    s.add("memory", "seed")
    holder = _hold(mem_dir / "MEMORY.md.lock")
    threading.Timer(0.3, lambda: holder.stdin.close()).start()  # type: ignore[union-attr]
    t0 = time.monotonic()
    assert s.add("memory", "after the holder")["success"]
    assert time.monotonic() - t0 >= 0.25
    holder.wait(5)
    assert MemoryStore(mem_dir).memory_entries == ["seed", "after the holder"]


def test_threads_sharing_one_store_are_excluded(mem_dir: Path) -> None:
    s = MemoryStore(mem_dir, memory_char_limit=100_000)
    errors: list[object] = []

    def work(k: int) -> None:
        for i in range(25):
            r = s.add("memory", f"thread {k} note {i}")
            if not r["success"]:
                errors.append(r)

    ts = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
    assert len(MemoryStore(mem_dir, memory_char_limit=100_000).memory_entries) == 150


def test_two_stores_in_one_process_exclude_each_other(mem_dir: Path) -> None:
    a = MemoryStore(mem_dir, memory_char_limit=100_000)
    b = MemoryStore(mem_dir, memory_char_limit=100_000)

    def work(s: MemoryStore, tag: str) -> None:
        for i in range(30):
            s.add("memory", f"{tag} {i}")

    ts = [threading.Thread(target=work, args=(a, "a")), threading.Thread(target=work, args=(b, "b"))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert len(MemoryStore(mem_dir, memory_char_limit=100_000).memory_entries) == 60


def test_a_second_thread_times_out_while_the_first_holds(tmp_path: Path) -> None:
    lock = SidecarLock(tmp_path / "x.lock")
    lock.acquire(timeout=1)
    out: list[BaseException] = []

    def other() -> None:
        try:
            lock.acquire(timeout=0.2)
        except LockTimeout as exc:
            out.append(exc)

    t = threading.Thread(target=other)
    t.start()
    t.join()
    lock.release()
    assert out and "another thread" in str(out[0])


def test_lock_is_reentrant_in_one_thread(tmp_path: Path) -> None:
    lock = SidecarLock(tmp_path / "x.lock")
    lock.acquire(timeout=1)
    lock.acquire(timeout=1)
    lock.release()
    holder_probe = subprocess.run(
        [sys.executable, "-c", "import fcntl,sys; f=open(sys.argv[1]); fcntl.flock(f, fcntl.LOCK_EX|fcntl.LOCK_NB)",
         str(tmp_path / "x.lock")], capture_output=True)
    assert holder_probe.returncode != 0  # still held after one of two releases
    lock.release()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX fork")
def test_a_forked_child_does_not_share_the_parents_lock(tmp_path: Path) -> None:
    path = tmp_path / "x.lock"
    lock = SidecarLock(path)
    lock.acquire(timeout=1)  # the descriptor is open (and locked) when we fork
    pid = os.fork()
    if pid == 0:  # child: must NOT get the lock while the parent holds it
        code = 1
        try:
            try:
                lock.acquire(timeout=0.3)
            except LockTimeout:
                code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    lock.release()
    assert os.waitstatus_to_exitcode(status) == 0


def test_a_lock_file_deleted_and_recreated_is_reopened(tmp_path: Path) -> None:
    """Two writers must never lock two different inodes of one lock path."""
    path = tmp_path / "x.lock"
    lock = SidecarLock(path)
    lock.acquire(timeout=1)
    lock.release()
    path.unlink()
    holder = _hold(path)  # another process creates a new file there and holds it
    try:
        with pytest.raises(LockTimeout):
            lock.acquire(timeout=0.2)
    finally:
        holder.communicate("")


def test_a_waiter_on_a_lock_file_that_is_replaced_locks_the_new_file(tmp_path: Path) -> None:
    """Waiting on an inode that another writer replaced must not wait for that inode's holder."""
    path = tmp_path / "x.lock"
    holder = _hold(path)  # holds the old inode for as long as this test runs
    lock = SidecarLock(path)
    got: list[object] = []

    def waiter() -> None:
        try:
            lock.acquire(timeout=20)
        except BaseException as exc:  # noqa: BLE001 - reported below
            got.append(exc)
            return
        got.append(os.fstat(present(lock._fd, "the held lock's descriptor")).st_ino)
        lock.release()

    try:
        t = threading.Thread(target=waiter)
        t.start()
        time.sleep(0.2)  # the waiter is now retrying on the old inode
        path.unlink()
        path.touch(mode=0o600)  # a new lock file at the path, held by nobody
        t.join(30)
        assert got == [os.stat(path).st_ino]  # the new file's inode, not a timeout
    finally:
        holder.communicate("")


def test_a_lock_path_turned_into_a_symlink_after_opening_is_refused(tmp_path: Path, mem_dir: Path) -> None:
    s = MemoryStore(mem_dir)
    s.add("memory", "seed")
    lock = mem_dir / "MEMORY.md.lock"
    lock.unlink()
    victim = tmp_path / "victim"
    victim.write_text("keep")
    lock.symlink_to(victim)
    with pytest.raises(LockFileError, match="symlink"):
        s.add("memory", "more")
    assert victim.read_text() == "keep" and MemoryStore(mem_dir).memory_entries == ["seed"]


def test_lock_symlink_error_is_an_oserror(tmp_path: Path) -> None:
    (tmp_path / "x.lock").symlink_to(tmp_path / "nowhere")
    with pytest.raises(LockSymlinkError):
        SidecarLock(tmp_path / "x.lock").acquire(timeout=1)


def test_a_lock_file_another_program_made_keeps_its_mode_on_every_acquire(mem_dir: Path) -> None:
    """The reference agent's ``MEMORY.md.lock`` is 0644; we lock it as it is, first acquire and fast path."""
    lock = mem_dir / "MEMORY.md.lock"
    lock.touch()
    os.chmod(lock, 0o644)
    s = MemoryStore(mem_dir)
    s.add("memory", "one")
    assert (os.stat(lock).st_mode & 0o777) == 0o644
    os.chmod(lock, 0o666)  # changed by its owner while our descriptor is open
    s.add("memory", "two")
    s.add("memory", "three")
    assert (os.stat(lock).st_mode & 0o777) == 0o666
    assert s.entries("memory") == ["one", "two", "three"]


def test_store_timeout_error_is_clear(mem_dir: Path) -> None:
    s = MemoryStore(mem_dir)
    s.add("memory", "seed")
    holder = _hold(mem_dir / "MEMORY.md.lock")
    try:
        s.lock_timeout_s = 0.2
        with pytest.raises(LockFileError, match=r"another process has held .*MEMORY.md.lock for more than 0.2 s"):
            s.add("memory", "blocked")
    finally:
        holder.communicate("")
    assert MemoryStore(mem_dir).memory_entries == ["seed"]
