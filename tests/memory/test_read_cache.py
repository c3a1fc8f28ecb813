"""The file backend's read cache (issue 13 §6) never hides a change made by someone else.

A mutation skips re-reading MEMORY.md when one ``lstat`` under the lock proves the file is the one
it last read or wrote (docs/benchmarks.md, memory section). These tests make the changes a stat
validator can miss: in-place edits of the same size in the same millisecond, an edit that puts the
old mtime back, a file deleted and recreated with the same size and mtime (inode numbers are
reused), a rename by another process and by the reference agent itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from hermes_memory.memory import ENTRY_DELIMITER, MemoryStore, filecache
from hermes_memory.memory.filecache import FINE_MARGIN_NS, ReadCache, trust_mode

HERE = Path(__file__).resolve().parent


def _same_size_edit(path: Path, old: str, new: str) -> None:
    """Rewrite ``old`` as ``new`` (same length) inside ``path`` in place: same inode, same size."""
    assert len(old.encode()) == len(new.encode())
    data = path.read_bytes()
    at = data.index(old.encode())
    with open(path, "r+b") as f:
        f.seek(at)
        f.write(new.encode())


def test_a_same_size_in_place_edit_in_the_same_millisecond_as_our_write_is_seen(mem_dir: Path) -> None:
    s = MemoryStore(mem_dir, memory_char_limit=100_000)
    path = mem_dir / "MEMORY.md"
    for i in range(100):
        s.add("memory", f"note {i:03d} alpha")
        _same_size_edit(path, f"note {i:03d} alpha", f"note {i:03d} OMEGA")  # microseconds later
        assert s.add("memory", f"after {i:03d}")["success"]
        entries = path.read_text().split(ENTRY_DELIMITER)
        assert f"note {i:03d} OMEGA" in entries and f"note {i:03d} alpha" not in entries
        assert s.memory_entries == entries


def test_an_in_place_edit_that_puts_the_old_mtime_back_is_seen(mem_dir: Path) -> None:
    s = MemoryStore(mem_dir, memory_char_limit=100_000)
    path = mem_dir / "MEMORY.md"
    s.add("memory", "deploy host is alpha")
    before = os.stat(path)
    _same_size_edit(path, "alpha", "gamma")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # size and mtime as we cached them
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)
    assert s.add("memory", "second note")["success"]
    assert path.read_text() == "deploy host is gamma" + ENTRY_DELIMITER + "second note"


def test_a_file_deleted_and_recreated_with_the_same_size_and_mtime_is_seen(mem_dir: Path) -> None:
    """Inode numbers are reused at once on ext4 and tmpfs; the cache holds its inode open against that."""
    s = MemoryStore(mem_dir, memory_char_limit=100_000)
    path = mem_dir / "MEMORY.md"
    for i in range(200):
        s.add("memory", f"fact {i:03d} one")
        st = os.stat(path)
        text = path.read_text().replace(f"fact {i:03d} one", f"fact {i:03d} two")
        os.unlink(path)
        path.write_text(text)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert s.add("memory", f"then {i:03d}")["success"]
        entries = path.read_text().split(ENTRY_DELIMITER)
        assert f"fact {i:03d} two" in entries and f"fact {i:03d} one" not in entries, i


_EDITOR = """
import sys
path, old, new = sys.argv[1:4]
data = open(path, "rb").read()
at = data.index(old.encode())
with open(path, "r+b") as f:
    f.seek(at)
    f.write(new.encode())
print("edited", flush=True)
"""


def test_an_in_place_edit_by_another_process_is_kept(mem_dir: Path) -> None:
    s = MemoryStore(mem_dir, memory_char_limit=100_000)
    path = mem_dir / "MEMORY.md"
    s.add("memory", "editor target: before")
    out = subprocess.run([sys.executable, "-c", _EDITOR, str(path), "before", "AFTER!"],
                         capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "edited"
    assert s.add("memory", "ours again")["success"]
    assert path.read_text() == "editor target: AFTER!" + ENTRY_DELIMITER + "ours again"


def test_a_write_by_another_store_in_the_same_millisecond_is_never_overwritten(mem_dir: Path) -> None:
    a, b = MemoryStore(mem_dir, memory_char_limit=100_000), MemoryStore(mem_dir, memory_char_limit=100_000)
    for i in range(100):
        assert a.add("memory", f"a{i:03d}")["success"]
        assert b.add("memory", f"b{i:03d}")["success"]  # a rename: a new inode of the same size class
    assert a.add("memory", "last")["success"]
    want = [x for i in range(100) for x in (f"a{i:03d}", f"b{i:03d}")] + ["last"]
    assert (mem_dir / "MEMORY.md").read_text().split(ENTRY_DELIMITER) == want


def test_a_rename_by_the_reference_agents_memory_store_is_never_lost(tmp_path: Path) -> None:
    from tests import backends

    ref_python = backends.ensure("hermes-agent")
    home = tmp_path / "home"
    mem_dir = home / "memories"
    s = MemoryStore(mem_dir, memory_char_limit=100_000)
    assert s.add("memory", "ours first")["success"]
    for i in range(3):
        out = subprocess.run([str(ref_python), str(HERE / "ref_memory_writer.py"), str(home), "memory",
                              f"reference note {i}"], capture_output=True, text=True, timeout=180)
        assert out.returncode == 0, out.stderr[-2000:]
        ref = json.loads(out.stdout.strip().splitlines()[-1])
        assert all(r["success"] for r in ref["results"]), ref
        assert s.add("memory", f"ours after {i}")["success"]
    want = ["ours first"] + [x for i in range(3) for x in (f"reference note {i}", f"ours after {i}")]
    assert s.memory_entries == want
    assert (mem_dir / "MEMORY.md").read_text().split(ENTRY_DELIMITER) == want


def test_the_reference_agent_reads_what_we_wrote_after_a_cached_write(tmp_path: Path) -> None:
    from tests import backends

    ref_python = backends.ensure("hermes-agent")
    home = tmp_path / "home"
    s = MemoryStore(home / "memories")
    for text in ("one", "two", "three"):
        assert s.add("memory", text)["success"]
    out = subprocess.run([str(ref_python), str(HERE / "ref_memory_writer.py"), str(home), "memory"],
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1])["entries"] == ["one", "two", "three"]


# ---------------------------------------------------------------- when the validator is trusted
def _st(ino: int = 7, size: int = 10, mtime: int = 0, ctime: int = 0, dev: int = 1) -> os.stat_result:
    return SimpleNamespace(st_dev=dev, st_ino=ino, st_size=size, st_mtime_ns=mtime, st_ctime_ns=ctime)  # type: ignore[return-value]


def _cache_with(path: str, st: os.stat_result, taken_ns: int, fd: int | None) -> ReadCache:
    c = ReadCache()
    c.keep(path, fd, st, taken_ns, b"x", ["x"], "x")
    return c


@pytest.fixture
def spare_fd(tmp_path: Path):
    fd = os.open(tmp_path / "held", os.O_RDWR | os.O_CREAT, 0o600)
    yield fd  # the cache under test closes it


def test_tick_mode_trusts_a_validator_only_when_ctime_is_a_margin_older_than_the_stat(spare_fd: int) -> None:
    now = time.time_ns()
    recent = _st(ctime=now - FINE_MARGIN_NS // 2 + 1)  # written within the margin: a same-tick edit could hide
    c = _cache_with("/m", recent, now, spare_fd)
    assert c.fresh("/m", recent, "tick") is None
    assert c.fresh("/m", recent, "multigrain") is not None  # multigrain: the next change gets a new ctime
    old = _st(ctime=now - 3 * FINE_MARGIN_NS + 1)
    c.keep("/m", spare_fd, old, now, b"x", ["x"], "x")
    assert c.fresh("/m", old, "tick") is not None
    coarse = _st(ctime=(now // 1_000_000_000 - 1) * 1_000_000_000)  # whole seconds: a coarse file system
    c.keep("/m", spare_fd, coarse, now, b"x", ["x"], "x")
    assert c.fresh("/m", coarse, "tick") is None
    c.keep("/m", spare_fd, coarse, now, b"x", ["x"], "x")
    assert c.fresh("/m", coarse, "multigrain") is None  # whole seconds: multigrain cannot split one
    c.keep("/m", spare_fd, old, now + 10**12, b"x", ["x"], "x")  # the clock has gone back since
    assert c.fresh("/m", old, "tick") is None
    assert c.fresh("/m", old, None) is None  # untrusted file system: always re-read
    c.close()


def test_any_difference_in_inode_size_mtime_or_ctime_drops_the_cache(spare_fd: int) -> None:
    base = dict(ino=7, size=10, mtime=5, ctime=5, dev=1)
    for field in base:
        c = _cache_with("/m", _st(**base), time.time_ns(), os.dup(spare_fd))
        assert c.fresh("/m", _st(**base), "multigrain") is not None
        assert c.fresh("/m", _st(**{**base, field: base[field] + 1}), "multigrain") is None, field
        assert c.fresh("/m", _st(**base), "multigrain") is None  # dropped, not just skipped
    os.close(spare_fd)


def test_only_local_file_systems_are_trusted_and_multigrain_needs_linux_6_13(monkeypatch: pytest.MonkeyPatch) -> None:
    if not sys.platform.startswith("linux"):
        pytest.fail("this test reads /proc/self/mounts: run it on Linux")
    monkeypatch.setattr(filecache, "_modes", {})
    for fs, kernel, want in [("nfs4", (6, 18), None), ("fuse.sshfs", (6, 18), None), ("overlay", (6, 18), None),
                             ("cifs", (6, 18), None), ("ext4", (6, 12), "tick"), ("ext4", (6, 13), "multigrain"),
                             ("tmpfs", (6, 18), "multigrain"), ("ext3", (6, 18), "tick")]:
        monkeypatch.setattr(filecache, "_mount_fs", lambda folder, fs=fs: fs)
        monkeypatch.setattr(filecache, "_kernel_version", lambda kernel=kernel: kernel)
        assert trust_mode(f"/x/{fs}/{kernel}") == want, (fs, kernel)
    # recomputed when the folder's device changes (something was mounted over it)
    monkeypatch.setattr(filecache, "_mount_fs", lambda folder: "ext4")
    assert trust_mode("/y", dev=1) == "multigrain"
    monkeypatch.setattr(filecache, "_mount_fs", lambda folder: "nfs4")
    assert trust_mode("/y", dev=1) == "multigrain"
    assert trust_mode("/y", dev=2) is None


def test_the_mount_table_names_the_file_system_of_a_folder(tmp_path: Path) -> None:
    if not sys.platform.startswith("linux"):
        pytest.fail("this test reads /proc/self/mounts: run it on Linux")
    assert filecache._mount_fs("/proc") == "proc"
    assert filecache._mount_fs(str(tmp_path)) not in (None, "proc")


def test_an_untrusted_file_system_rereads_every_time_and_holds_no_descriptor(
    mem_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(filecache, "_modes", {})
    monkeypatch.setattr(filecache, "_mount_fs", lambda folder: "nfs4")
    s = MemoryStore(mem_dir, memory_char_limit=100_000)
    path = mem_dir / "MEMORY.md"
    s.add("memory", "remote alpha")
    assert not [fd for fd in os.listdir("/proc/self/fd") if os.path.realpath(f"/proc/self/fd/{fd}") == str(path)]
    _same_size_edit(path, "alpha", "gamma")
    assert s.add("memory", "next")["success"]
    assert path.read_text() == "remote gamma" + ENTRY_DELIMITER + "next"


# ---------------------------------------------------------------- symlinks appearing and going
def test_a_file_turned_into_a_symlink_between_writes_is_written_through_the_link(mem_dir: Path, tmp_path: Path) -> None:
    s = MemoryStore(mem_dir)
    link = mem_dir / "MEMORY.md"
    assert s.add("memory", "local fact")["success"]  # cached: a regular file, its inode held open
    shared = tmp_path / "dotfiles" / "MEMORY.md"
    shared.parent.mkdir()
    shared.write_text("shared fact")
    link.unlink()
    link.symlink_to(shared)
    assert s.add("memory", "second")["success"]
    assert link.is_symlink() and shared.read_text() == "shared fact" + ENTRY_DELIMITER + "second"
    assert (shared.parent / "MEMORY.md.lock").exists()  # the lock went next to the real file
    _same_size_edit(shared, "shared", "SHARED")  # an edit of the target behind the link
    assert s.add("memory", "third")["success"]
    assert shared.read_text().split(ENTRY_DELIMITER) == ["SHARED fact", "second", "third"]
    link.unlink()  # and back to a plain file
    link.write_text("plain again")
    assert s.add("memory", "fourth")["success"]
    assert not link.is_symlink() and link.read_text() == "plain again" + ENTRY_DELIMITER + "fourth"
    assert shared.read_text().split(ENTRY_DELIMITER) == ["SHARED fact", "second", "third"]


def test_after_a_failed_write_the_next_write_rereads_the_file(mem_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_memory.memory import filebackend

    s = MemoryStore(mem_dir)
    path = mem_dir / "MEMORY.md"
    assert s.add("memory", "kept alpha")["success"]
    real_fsync = os.fsync

    def full_disk(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(filebackend.os, "fsync", full_disk)
    with pytest.raises(Exception, match="No space left"):
        s.add("memory", "lost")
    monkeypatch.setattr(filebackend.os, "fsync", real_fsync)
    assert path.read_text() == "kept alpha"
    _same_size_edit(path, "alpha", "gamma")
    assert s.add("memory", "next")["success"]
    assert path.read_text() == "kept gamma" + ENTRY_DELIMITER + "next"


def test_on_an_older_kernel_a_write_is_reread_until_its_ctime_is_a_margin_old(
    mem_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tick mode end to end: the op right after a write re-reads; once the file is old enough, it is trusted."""
    monkeypatch.setattr(filecache, "_modes", {})
    monkeypatch.setattr(filecache, "_kernel_version", lambda: (6, 1))
    s = MemoryStore(mem_dir)
    cache = s.backend._cache  # type: ignore[attr-defined]
    assert s.add("memory", "first")["success"]
    if trust_mode(str(mem_dir)) != "tick":
        pytest.fail(f"{mem_dir} is not on a local file system this test can use ({filecache._mount_fs(str(mem_dir))})")
    assert s.add("memory", "first")["success"]  # a duplicate: no write, but the file was just written
    assert (cache.hits, cache.misses) == (0, 1)  # the first add found no file: nothing to check
    time.sleep(3 * FINE_MARGIN_NS / 1e9)
    assert s.add("memory", "first")["success"]  # re-read (validator taken moments after the write) ...
    assert s.add("memory", "first")["success"]  # ... and now trusted: the ctime is older than the margin
    assert (cache.hits, cache.misses) == (1, 2)
    _same_size_edit(mem_dir / "MEMORY.md", "first", "FIRST")
    assert s.add("memory", "second")["success"]
    assert (mem_dir / "MEMORY.md").read_text() == "FIRST" + ENTRY_DELIMITER + "second"

