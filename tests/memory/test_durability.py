"""Locks, atomic writes, symlinks, real-process concurrency and SIGKILL crash safety (docs/reference.md §1, B11)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from hermes_memory.memory import ENTRY_DELIMITER, LockFileError, MemoryStore
from hermes_memory.memory.store import parse_entries
from tests.helpers.values import present
from tests.memory import crash_writer
from tests.memory.backing import Backing

HERE = Path(__file__).resolve().parent


def _env() -> dict[str, str]:
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[2] / "src")
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join([src, root, env.get("PYTHONPATH", "")])
    return env


# ---------------------------------------------------------------- lock file
def test_lock_file_is_0600_under_umask_002(mem_dir: Path) -> None:
    old = os.umask(0o002)
    try:
        MemoryStore(mem_dir).add("memory", "fact")
    finally:
        os.umask(old)
    assert (os.stat(mem_dir / "MEMORY.md.lock").st_mode & 0o777) == 0o600


def test_an_existing_lock_file_keeps_its_mode(mem_dir: Path) -> None:
    lock = mem_dir / "MEMORY.md.lock"
    lock.write_text("")
    os.chmod(lock, 0o664)
    MemoryStore(mem_dir).add("memory", "fact")
    assert (os.stat(lock).st_mode & 0o777) == 0o664


def test_symlinked_lock_is_refused_with_oserror(mem_dir: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("do not touch")
    (mem_dir / "MEMORY.md.lock").symlink_to(victim)
    s = MemoryStore(mem_dir)
    with pytest.raises(OSError, match="symlink"):
        s.add("memory", "fact")
    with pytest.raises(LockFileError):
        s.remove("memory", "fact")
    assert victim.read_text() == "do not touch"
    assert not (mem_dir / "MEMORY.md").exists()


# ---------------------------------------------------------------- atomic write
def test_symlinked_memory_file_stays_a_symlink(mem_dir: Path, tmp_path: Path) -> None:
    real_dir = tmp_path / "dotfiles"
    real_dir.mkdir()
    target = real_dir / "MEMORY.md"
    target.write_text("fact A")
    link = mem_dir / "MEMORY.md"
    link.symlink_to(target)
    s = MemoryStore(mem_dir)
    assert s.add("memory", "fact B")["success"]
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "fact A\n§\nfact B"
    assert not list(mem_dir.glob(".mem_*")) and not list(real_dir.glob(".mem_*"))


def test_cross_device_symlink_target_is_written_whole(mem_dir: Path) -> None:
    shm = Path("/dev/shm")
    base = shm if shm.is_dir() and os.access(shm, os.W_OK) else None
    other = Path(tempfile.mkdtemp(dir=base))
    try:
        target = other / "MEMORY.md"
        target.write_text("fact A")
        (mem_dir / "MEMORY.md").symlink_to(target)
        s = MemoryStore(mem_dir)
        big = "y" * 1500
        assert s.add("memory", big)["success"]
        assert target.read_text() == "fact A\n§\n" + big
        assert (mem_dir / "MEMORY.md").is_symlink()
    finally:
        for p in other.iterdir():
            p.unlink()
        other.rmdir()


def test_failed_write_leaves_file_and_no_temp(mem_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = MemoryStore(mem_dir)
    s.add("memory", "fact A")
    before = (mem_dir / "MEMORY.md").read_bytes()

    def boom(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    from hermes_memory.errors import MemoryStoreError

    with pytest.raises(MemoryStoreError, match="Failed to write memory file"):
        s.add("memory", "fact B")
    assert (mem_dir / "MEMORY.md").read_bytes() == before
    assert not list(mem_dir.glob(".mem_*"))
    monkeypatch.undo()
    assert s.memory_entries == ["fact A"]  # live state not advanced by the failed write


# ---------------------------------------------------------------- concurrency with real processes
_ADDER = """
import sys, time, pathlib
from hermes_memory.memory import MemoryStore
d, who, go = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
s = MemoryStore(d, memory_char_limit=1_000_000, user_char_limit=1_000_000)
while not go.exists():
    time.sleep(0.005)
for i in range(50):
    r = s.add("memory", f"p{who}-{i}")
    assert r["success"], r
"""


@pytest.mark.slow
def test_B11_eight_processes_fifty_adds_each_lose_nothing(mem_dir: Path, tmp_path: Path) -> None:
    go = tmp_path / "go"
    procs = [
        subprocess.Popen([sys.executable, "-c", _ADDER, str(mem_dir), str(w), str(go)], env=_env())
        for w in range(8)
    ]
    time.sleep(0.5)
    go.write_text("go")
    for p in procs:
        assert p.wait(timeout=240) == 0
    text = (mem_dir / "MEMORY.md").read_text(encoding="utf-8")
    entries = text.split(ENTRY_DELIMITER)
    assert len(entries) == 400 and len(set(entries)) == 400
    assert set(entries) == {f"p{w}-{i}" for w in range(8) for i in range(50)}
    assert parse_entries(text) == entries
    for w in range(8):  # each writer's own entries stay in its order
        mine = [e for e in entries if e.startswith(f"p{w}-")]
        assert mine == [f"p{w}-{i}" for i in range(50)]


# ---------------------------------------------------------------- crash safety
@pytest.mark.slow
def test_sigkill_at_random_points_never_corrupts(mem_dir: Path) -> None:
    rng = random.Random(1234)
    path = mem_dir / "MEMORY.md"
    table = crash_writer.committed_states(50_000)
    seen_ops: list[int] = []
    for _trial in range(50):
        p = subprocess.Popen(
            [sys.executable, str(HERE / "crash_writer.py"), str(mem_dir)],
            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        assert p.stdout is not None
        line = p.stdout.readline()
        assert line.strip() == "ready", p.stderr.read() if p.stderr else ""
        time.sleep(rng.uniform(0.0, 0.08))
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
        assert p.returncode == -signal.SIGKILL
        raw = path.read_bytes() if path.exists() else b""
        text = raw.decode("utf-8")  # always valid UTF-8
        entries = parse_entries(text)
        assert text == ENTRY_DELIMITER.join(entries)  # canonical form, nothing half-written
        key = (int(entries[0][6:12]), int(entries[-1][6:12])) if entries else (-1, -1)
        assert key in table, f"state {key} was never committed"
        assert entries == crash_writer.expected_entries(*key)
        seen_ops.append(table[key])
    assert seen_ops == sorted(seen_ops)  # progress only moves forward
    assert seen_ops[-1] > 50  # the writers really wrote
    # temp files of killed writers are swept by the next writer under the lock
    assert len(list(mem_dir.glob(".mem_MEMORY.md.*.tmp"))) <= 1
    MemoryStore(mem_dir, memory_char_limit=10_000_000).add("memory", "after the crashes")
    assert not list(mem_dir.glob(".mem_*.tmp"))


def test_stale_temp_files_of_other_file_are_not_touched(mem_dir: Path) -> None:
    stale = mem_dir / ".mem_MEMORY.md.abc123.tmp"
    stale.write_text("half")
    foreign = mem_dir / ".mem_USER.md.zzz.tmp"
    foreign.write_text("in flight")
    MemoryStore(mem_dir).add("memory", "fact")
    assert not stale.exists() and foreign.exists()


_WRITER = """
import sys
from hermes_memory.memory import LockFileError, MemoryStore, validate_user_id
s = MemoryStore(sys.argv[1], memory_char_limit=100000)
for i in range(int(sys.argv[3])):
    r = s.add("memory", f"{sys.argv[2]}-{i}")
    assert r["success"], r
"""


def test_two_homes_whose_memory_md_links_to_one_file_lose_no_update(tmp_path: Path) -> None:
    """Two profiles sharing one MEMORY.md through symlinks must serialise on the *target*.

    With the lock next to each link, the writers raced (lost updates) and one writer's temp-file
    sweep deleted the other's live temp file (``Failed to write memory file``).
    """
    shared = tmp_path / "dotfiles" / "MEMORY.md"
    shared.parent.mkdir()
    shared.write_text("")
    homes = []
    for k in (1, 2):
        d = tmp_path / f"home{k}" / "memories"
        d.mkdir(parents=True)
        (d / "MEMORY.md").symlink_to(shared)
        homes.append(d)
    n = 30
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(d), f"p{k}", str(n)], env=_env(),
                         stderr=subprocess.PIPE, text=True)
        for k, d in enumerate(homes)
    ]
    errs = [p.communicate()[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errs
    entries = parse_entries(shared.read_text(encoding="utf-8"))
    assert sorted(entries) == sorted(f"p{k}-{i}" for k in range(2) for i in range(n))
    assert all((d / "MEMORY.md").is_symlink() for d in homes)


def test_memories_path_that_is_a_file_gives_a_store_error_not_a_raw_oserror(tmp_path: Path) -> None:
    """A broken home (``memories`` is a file) must raise the documented error, and the CLI must say so."""
    (tmp_path / "memories").write_text("not a folder")
    s = MemoryStore(tmp_path / "memories")
    with pytest.raises(LockFileError, match="memories"):
        s.add("memory", "fact")
    res = subprocess.run(
        [sys.executable, "-m", "hermes_memory", "--home", str(tmp_path), "memory", "add", "fact"],
        env=_env(), capture_output=True, text=True,
    )
    assert res.returncode == 1
    assert "Traceback" not in res.stderr and "error:" in res.stderr
    assert (tmp_path / "memories").read_text() == "not a folder"


def test_repeated_drift_refusals_reuse_one_private_backup(tmp_path: Path) -> None:
    """Each refused call used to add another identical MEMORY.md.bak.* copy (a model retries)."""
    path = tmp_path / "MEMORY.md"
    path.write_text("seed\n§\n" + "z" * 2400, encoding="utf-8")
    s = MemoryStore(tmp_path)
    r1 = s.replace("memory", "seed", "seed2")
    r2 = s.remove("memory", "seed")
    r3 = s.apply_batch("memory", [{"action": "add", "content": "x"}])
    assert not (r1["success"] or r2["success"] or r3["success"])
    backups = sorted(tmp_path.glob("MEMORY.md.bak.*"))
    assert len(backups) == 1
    assert r1["drift_backup"] == r2["drift_backup"] == r3["drift_backup"] == str(backups[0])
    assert backups[0].read_bytes() == path.read_bytes()
    assert (backups[0].stat().st_mode & 0o777) == 0o600
    with path.open("a", encoding="utf-8") as f:  # a different drifted state gets its own copy
        f.write("more")
    r4 = s.remove("memory", "seed")
    assert r4["drift_backup"] != r1["drift_backup"] and len(list(tmp_path.glob("MEMORY.md.bak.*"))) == 2


_HOLDER = """
import fcntl, sys, time
fd = open(sys.argv[1], "a")
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.read()  # hold until the test closes stdin
"""


def test_lock_held_by_a_stuck_process_gives_an_error_not_a_hang(tmp_path: Path) -> None:
    """A writer stopped mid-write (Ctrl-Z) must not hang every agent turn forever."""
    s = MemoryStore(tmp_path)
    assert s.add("memory", "alpha")["success"]
    before = (tmp_path / "MEMORY.md").read_bytes()
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(tmp_path / "MEMORY.md.lock")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        s.lock_timeout_s = 0.2
        with pytest.raises(LockFileError, match="another process"):
            s.add("memory", "beta")
        assert (tmp_path / "MEMORY.md").read_bytes() == before
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait()
    assert s.add("memory", "beta")["success"]


# ---------------------------------------------------------------- B11
def test_B11_stale_instances_merge_on_disk(backing: Backing) -> None:
    backing.seed("memory", "seed")
    a, b = backing.new(), backing.new()
    a.load_from_disk()
    b.load_from_disk()
    assert a.add("memory", "alpha")["success"]
    assert b.add("memory", "beta")["success"]  # b never saw alpha
    assert b.replace("memory", "seed", "seed2")["success"]
    backing.seed("memory", present(backing.text("memory")) + "\n§\ngamma")  # external writer
    assert a.remove("memory", "alpha")["success"]
    assert set(backing.new().entries("memory")) == {"seed2", "beta", "gamma"}
    assert present(a.format_for_system_prompt("memory")).endswith("\nseed")  # snapshot stays frozen
