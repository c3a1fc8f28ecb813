"""Benchmark: MemoryStore add / replace / remove latency against a bare durable write of the same bytes.

Each round adds an entry, replaces it and removes it again (the store keeps ten seed entries, so
every write is the same size class). Right after each store op, the *same bytes* the store wrote
are written by a bare ``mkstemp + write + fsync + os.replace`` in the same folder, so both sides
see the same disk and the same moment. Medians are microseconds; the ratio is
``median(op) / median(bare)`` and the goal is at most 1.5 (issue 13 §6): the lock, the check that
the file did not change, the threat scan and the bookkeeping must cost little next to the write.

**What "fast disk" means here.** The ratio depends on what a durable write costs on the disk, so
every ``--dir`` is measured and reported on its own, all in one run (default: ``/dev/shm`` and the
system temp folder):

* ``tmpfs`` (``/dev/shm``): not a disk. ``fsync`` is free, so the bare write is only its system
  calls and the ratio shows every microsecond of Python: the worst case for the ratio, a bound no
  disk can beat;
* a real disk (``/tmp``, ``/work``): the fsync dominates both sides. On a RAM-backed ext4 (a loop
  device on tmpfs: a journal commit with no device latency, the fastest any ext4 disk can be) the
  bare write is a few hundred microseconds; on SSDs behind a hypervisor it is milliseconds.

``breakeven_bare_us`` = 2 x ``fixed_cpu``: the ratio is within 1.5 on any disk whose bare durable
write takes at least that long. ``headroom_us`` per op = 1.5 x median(bare) - median(op): the CPU
an op could still add in that folder (a larger threat scan, issue 13 §4) and stay within the goal.

``breakdown_us`` times parts of an op in the same run, each on its own (medians): ``lock``
(acquire + release of the sidecar lock), ``critical_section`` (lock, the ``lstat`` under it and the
read-cache check: what a write pays before it decides), ``read_miss`` (a full re-read and parse,
paid only when the read cache cannot prove the file unchanged), ``scan`` (the threat scan of the
note, uncached), split into ``scan_regex`` (invisible characters, normalisation, the keyword gate and the
regex families with their leetspeak and decoded views), ``scan_learned_features`` (the learned layer's
feature sets of every window) and ``scan_learned_score`` (their weights summed; the note is benign, so no explained hit),
``write`` (the store's temp-write + fsync + rename), and ``fixed_cpu`` = median(op) - median(bare). ``read_cache`` counts the ops that skipped the re-read (``hits``) and
names the cache's trust mode for the folder (``multigrain``, ``tick`` or ``null``: always re-read).

``scan_in_op`` is the scan as an op really pays it (the parts above are timed back to back, with
warm caches; inside an op the scan runs right after the previous write's fsync slept, and costs
two to four times as much): after the main rounds, as many more rounds (each op still followed by
its bare write) alternate between ops whose scan is timed and ops whose scan is skipped.
``scan_us`` is the median of the timed scans of adds and replaces, ``op_cost_us`` = median(add and
replace with the scan) - median(add and replace without it): what the scan adds to an op, its own
time plus the caches it takes from the rest of the op; ``share`` = ``op_cost_us`` / median(add and
replace); ``back_to_back_us`` is the median of as many scans run one after another (warm), and
``cold_factor`` = ``op_cost_us / back_to_back_us``: a scan layer that adds X us back to back adds
about ``cold_factor`` times X to an op.

``reference`` runs the same rounds through the reference agent's own ``MemoryStore`` (its venv,
``~/.cache/hermes-memory/backends/hermes-agent-0.19.0``) in the same folder, with its own bare
writes beside it; ``--no-reference`` skips it.

Usage: ``python bench/memory_ops.py [--rounds N] [--dir DIR ...] [--no-reference]``. The RAM-backed
ext4 folder is made by ``sh bench/ramdisk_ext4.sh`` (root; prints its mount point,
``/mnt/hermes-ext4`` by default; ``--remove`` takes it down).
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from hermes_memory.memory import MemoryStore, scan_learned  # noqa: E402
from hermes_memory.memory import ops as ops_mod  # noqa: E402
from hermes_memory.memory import scan as scan_mod  # noqa: E402
from hermes_memory.memory.filecache import trust_mode  # noqa: E402
from hermes_memory.memory.scan_text import find_invisible, for_matching  # noqa: E402

GOAL_RATIO = 1.5  # issue 13 §6: store ops at most 1.5x a bare temp-write + fsync + rename
REFERENCE_PYTHON = Path.home() / ".cache/hermes-memory/backends/hermes-agent-0.19.0/bin/python"

SEEDS = [f"Seed fact {i}: the deploy host uses port {8000 + i} behind nginx" for i in range(10)]


def bare_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".bare_", suffix=".tmp")
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def _fs_type(path: str) -> str:
    """The file system type of the mount holding ``path`` (``/proc/mounts``; "unknown" elsewhere)."""
    best, kind = "", "unknown"
    real = os.path.realpath(path).rstrip("/") + "/"
    try:
        with open("/proc/mounts", encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                if len(parts) > 2 and real.startswith(parts[1].rstrip("/") + "/") and len(parts[1]) > len(best):
                    best, kind = parts[1], parts[2]
    except OSError:
        pass
    return kind


def _us(xs: list[float]) -> float:
    return round(statistics.median(xs) * 1e6, 1)


def _summary(times: dict[str, list[float]]) -> dict:
    med = {k: statistics.median(v) for k, v in times.items()}
    ops_all = times["add"] + times["replace"] + times["remove"]
    ratio_all = round(statistics.median(ops_all) / med["bare"], 3)
    fixed = statistics.median(ops_all) - med["bare"]
    return {
        "median_us": {k: round(v * 1e6, 1) for k, v in med.items()},
        "ratio": {k: round(med[k] / med["bare"], 3) for k in ("add", "replace", "remove")},
        "ratio_all_ops": ratio_all,
        "meets_goal": ratio_all <= GOAL_RATIO,
        "fixed_cpu_us": round(fixed * 1e6, 1),
        "breakeven_bare_us": round(2 * fixed * 1e6, 1),
        # how much more CPU each op could spend (a larger scan, issue 13 §4) and still meet the goal here
        "headroom_us": {k: round((GOAL_RATIO * med["bare"] - med[k]) * 1e6, 1) for k in ("add", "replace", "remove")},
    }


FAST_DISK = (
    "The ratio depends on what a durable write costs, so each folder is reported on its own: on tmpfs fsync is "
    "free and the ratio shows every microsecond of CPU (no disk is faster: the worst case for the ratio); on a disk "
    "the fsync dominates. The goal holds on any disk whose bare write takes at least breakeven_bare_us."
)


def _kind(fs: str) -> str:
    if fs in ("tmpfs", "ramfs"):
        return "memory (not a disk: fsync is free, CPU dominates)"
    return "disk (fsync reaches the device or, for a RAM-backed loop device, the journal)"


def run_ours(folder: str, rounds: int) -> dict:
    with tempfile.TemporaryDirectory(dir=folder) as d:
        mem = Path(d) / "memories"
        store = MemoryStore(mem)
        for seed in SEEDS:
            store.add("memory", seed)
        store.load_from_disk()
        backend = store._file_backend()
        mem_file = mem / "MEMORY.md"
        bare_file = mem / "BARE.md"
        times: dict[str, list[float]] = {"add": [], "replace": [], "remove": [], "bare": []}
        parts: dict[str, list[float]] = {"lock": [], "critical_section": [], "read_miss": [], "scan": [], "scan_regex": [],
                                         "scan_learned_features": [], "scan_learned_score": [], "write": []}

        def measure(name: str, fn) -> None:
            t0 = time.perf_counter()
            r = fn()
            times[name].append(time.perf_counter() - t0)
            if not r["success"]:
                raise SystemExit(f"{name} failed: {r}")
            data = mem_file.read_bytes()
            t0 = time.perf_counter()
            bare_write(bare_file, data)
            times["bare"].append(time.perf_counter() - t0)

        def part(name: str, fn) -> None:
            t0 = time.perf_counter()
            fn()
            parts[name].append(time.perf_counter() - t0)

        def lock_cycle() -> None:
            backend._acquire(str(mem_file)).release()

        def critical_section() -> None:
            with backend.mutation("memory"):
                pass

        def scan_regex(text: str) -> None:
            if not find_invisible(text):
                scan_mod._scan_views(for_matching(text), True)

        model = scan_learned._shipped()

        def learned_score(feats: list[set[str]]) -> None:  # a benign note: no explained hit is built
            max(scan_learned._window_score(model, f) for f in feats)

        hits0, misses0 = backend._cache.hits, backend._cache.misses
        for i in range(rounds):
            note = f"Round {i}: user prefers concise answers and metric units"
            measure("add", lambda note=note: store.add("memory", note))
            measure("replace", lambda i=i: store.replace("memory", f"Round {i}:", f"Round {i}: user prefers short answers"))
            measure("remove", lambda i=i: store.remove("memory", f"Round {i}:"))
        hits, misses = backend._cache.hits - hits0, backend._cache.misses - misses0
        for i in range(rounds):
            note = f"Round {i}: user prefers concise answers and metric units"
            part("lock", lock_cycle)
            part("critical_section", critical_section)
            part("read_miss", lambda: store._read("memory"))
            part("scan", lambda note=note: scan_mod._scan(note + " (uncached)"))
            part("scan_regex", lambda note=note: scan_regex(note + " (uncached)"))
            low = for_matching(note + " (uncached)").lower()
            part("scan_learned_features", lambda low=low: scan_learned.window_features(low))
            feats = scan_learned.window_features(low)
            part("scan_learned_score", lambda feats=feats: learned_score(feats))
            text = mem_file.read_text(encoding="utf-8")
            part("write", lambda text=text: store._write(mem_file, text))
        in_op = scan_in_op(store, max(rounds, 2), measure, times)
        file_chars = len(mem_file.read_text(encoding="utf-8"))
        mode = trust_mode(str(mem))
    out = _summary(times)
    out["breakdown_us"] = {**{k: _us(v) for k, v in parts.items()}, "fixed_cpu": out["fixed_cpu_us"]}
    out["scan_in_op"] = in_op
    out["read_cache"] = {"mode": mode, "hits": hits, "misses": misses}
    out["file_chars"] = file_chars
    return out


def scan_in_op(store: MemoryStore, rounds: int, measure, times: dict[str, list[float]]) -> dict:
    """The scan's cost inside ops (see the module docstring): ``{"scan_us", "op_cost_us", "share"}``.

    ``measure(name, fn)`` runs and times one op and its bare write, appending to ``times[name]``;
    the extra rounds' timings are taken out of ``times`` again, so the main figures stay the main rounds'.
    """
    real = ops_mod.scan_memory_content
    scans: list[float] = []

    def timed(text: str) -> str | None:
        t0 = time.perf_counter()
        r = real(text)
        scans.append(time.perf_counter() - t0)
        return r

    keep = {k: len(v) for k, v in times.items()}
    with_scan: list[float] = []
    without: list[float] = []
    try:
        for i in range(rounds):
            skip = i % 2 == 1
            ops_mod.scan_memory_content = (lambda text: None) if skip else timed
            note = f"Round {i} in op: user prefers concise answers and metric units"
            measure("add", lambda note=note: store.add("memory", note))
            measure("replace", lambda i=i: store.replace("memory", f"Round {i} in op:", f"Round {i}: user prefers short answers"))
            measure("remove", lambda i=i: store.remove("memory", f"Round {i}:"))
            (without if skip else with_scan).extend([times["add"][-1], times["replace"][-1]])
    finally:
        ops_mod.scan_memory_content = real
        for k, kept in keep.items():
            del times[k][kept:]
    warm: list[float] = []
    for i in range(rounds):  # the same scans back to back: nothing sleeps in between
        text = f"Round {i} back to back: user prefers concise answers and metric units"
        t0 = time.perf_counter()
        real(text)
        warm.append(time.perf_counter() - t0)
    cost = statistics.median(with_scan) - statistics.median(without)
    warm_us = _us(warm)
    return {"scan_us": _us(scans), "op_cost_us": round(cost * 1e6, 1),
            "share": round(cost / statistics.median(with_scan), 3), "back_to_back_us": warm_us,
            "cold_factor": round(cost * 1e6 / warm_us, 2) if warm_us else None, "rounds": rounds}


_REFERENCE_LOOP = r"""
import json, os, statistics, sys, tempfile, time
from pathlib import Path
home, rounds = Path(sys.argv[1]), int(sys.argv[2])
os.environ["HERMES_HOME"] = str(home)
from tools.memory_tool import MemoryStore
seeds = json.loads(sys.argv[3])
store = MemoryStore()
store.load_from_disk()
for s in seeds:
    store.add("memory", s)
mem_file = home / "memories" / "MEMORY.md"
bare_file = home / "memories" / "BARE.md"
times = {"add": [], "replace": [], "remove": [], "bare": []}
BARE_WRITE
def measure(name, fn):
    t0 = time.perf_counter(); r = fn(); times[name].append(time.perf_counter() - t0)
    if not r.get("success"):
        raise SystemExit(f"{name} failed: {r}")
    data = mem_file.read_bytes()
    t0 = time.perf_counter(); bare_write(bare_file, data); times["bare"].append(time.perf_counter() - t0)
for i in range(rounds):
    measure("add", lambda: store.add("memory", f"Round {i}: user prefers concise answers and metric units"))
    measure("replace", lambda: store.replace("memory", f"Round {i}:", f"Round {i}: user prefers short answers"))
    measure("remove", lambda: store.remove("memory", f"Round {i}:"))
print(json.dumps(times))
"""


def run_reference(folder: str, rounds: int) -> dict:
    if not REFERENCE_PYTHON.exists():
        return {"skipped": f"{REFERENCE_PYTHON} is not installed (tests.backends.ensure installs it)"}
    with tempfile.TemporaryDirectory(dir=folder) as d:
        code = _REFERENCE_LOOP.replace("BARE_WRITE", inspect.getsource(bare_write))  # the very same baseline
        proc = subprocess.run([str(REFERENCE_PYTHON), "-c", code, d, str(rounds), json.dumps(SEEDS)],
                              capture_output=True, text=True, timeout=3600, cwd=d)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip()[-2000:]}
    return _summary(json.loads(proc.stdout.strip().splitlines()[-1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=300, help="add+replace+remove rounds per folder (default 300)")
    ap.add_argument("--dir", action="append", default=None,
                    help="folder on a file system to measure; repeat for several (default: /dev/shm and the system temp)")
    ap.add_argument("--no-reference", action="store_true", help="skip the reference agent's MemoryStore")
    args = ap.parse_args()
    dirs = args.dir or [d for d in ("/dev/shm", tempfile.gettempdir()) if os.path.isdir(d)]
    runs = []
    for folder in dirs:
        fs = _fs_type(folder)
        run = {"dir": folder, "fs": fs, "kind": _kind(fs), "rounds": args.rounds, **run_ours(folder, args.rounds)}
        if not args.no_reference:
            run["reference"] = run_reference(folder, args.rounds)
        runs.append(run)
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = None
    print(json.dumps({"goal_ratio_max": GOAL_RATIO, "fast_disk": FAST_DISK, "load_avg_1m": load, "cpus": os.cpu_count(), "runs": runs}, indent=2))


if __name__ == "__main__":
    main()
