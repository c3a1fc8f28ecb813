"""Benchmark: MemoryStore add / replace / remove latency against a bare durable write of the same bytes.

Each round adds an entry, replaces it and removes it again (the store keeps ten seed entries, so
every write is the same size class). Right after each store op, the *same bytes* the store wrote
are written by a bare ``mkstemp + write + fsync + os.replace`` in the same folder, so both sides
see the same disk and the same moment. Prints JSON with medians (milliseconds) and the ratio
``median(op) / median(bare)``; the goal is a ratio of at most 1.5 (the lock, the re-read under
the lock, the parse and the threat scan must cost little next to the fsync).

``breakdown_us`` times the parts of an op in the same run, each on its own (medians, microseconds):
``lock`` (acquire + release of the store's sidecar lock), ``scan`` (the threat scan of the note,
uncached), ``read`` (re-read and parse of the file under the lock), ``write`` (the store's own
temp-write + fsync + rename), and ``fixed_cpu`` = median(op) - median(bare).

``fs`` names the file system of DIR. On tmpfs (``--dir /dev/shm``, the "fast disk" of issue 13 §6)
``fsync`` costs nothing, so the bare write is only its system calls (~50-60 us) and every
microsecond of Python in an op shows in the ratio; on a disk the fsync dominates both sides.

Usage: ``python bench/memory_ops.py [--rounds N] [--dir DIR]`` (DIR must be on the disk to measure;
default: the system temp folder).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from hermes_memory.memory import MemoryStore  # noqa: E402
from hermes_memory.memory import scan as scan_mod  # noqa: E402

GOAL_RATIO = 1.5  # issue 2: store ops at most 1.5x a bare temp-write + fsync + rename


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
    try:
        with open("/proc/mounts", encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                real = os.path.realpath(path).rstrip("/") + "/"
                if len(parts) > 2 and real.startswith(parts[1].rstrip("/") + "/") and len(parts[1]) > len(best):
                    best, kind = parts[1], parts[2]
    except OSError:
        pass
    return kind


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=200, help="add+replace+remove rounds (default 200)")
    ap.add_argument("--dir", default=None, help="folder on the disk to measure (default: system temp)")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(dir=args.dir) as d:
        mem = Path(d) / "memories"
        store = MemoryStore(mem)
        for i in range(10):
            store.add("memory", f"Seed fact {i}: the deploy host uses port {8000 + i} behind nginx")
        store.load_from_disk()
        mem_file = mem / "MEMORY.md"
        bare_file = mem / "BARE.md"
        times: dict[str, list[float]] = {"add": [], "replace": [], "remove": [], "bare": []}

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

        parts: dict[str, list[float]] = {"lock": [], "scan": [], "read": [], "write": []}

        def part(name: str, fn) -> None:
            t0 = time.perf_counter()
            fn()
            parts[name].append(time.perf_counter() - t0)

        def lock_cycle() -> None:
            with store._locked(mem_file):
                pass

        for i in range(args.rounds):
            note = f"Round {i}: user prefers concise answers and metric units"
            measure("add", lambda note=note: store.add("memory", note))
            measure("replace", lambda i=i: store.replace("memory", f"Round {i}:", f"Round {i}: user prefers short answers"))
            measure("remove", lambda i=i: store.remove("memory", f"Round {i}:"))
            part("lock", lock_cycle)
            part("scan", lambda note=note: scan_mod._scan(note + " (uncached)"))
            part("read", lambda: store._read("memory"))
            text = mem_file.read_text(encoding="utf-8")
            part("write", lambda text=text: store._write(mem_file, text))
        file_chars = len(mem_file.read_text(encoding="utf-8"))

    ms = {k: statistics.median(v) * 1000 for k, v in times.items()}
    ops_all = times["add"] + times["replace"] + times["remove"]
    ratio_all = round(statistics.median(ops_all) * 1000 / ms["bare"], 3)
    out = {
        "rounds": args.rounds,
        "dir": args.dir or tempfile.gettempdir(),
        "fs": _fs_type(args.dir or tempfile.gettempdir()),
        "median_ms": {k: round(v, 4) for k, v in ms.items()},
        "ratio": {k: round(ms[k] / ms["bare"], 3) for k in ("add", "replace", "remove")},
        "ratio_all_ops": ratio_all,
        "goal_ratio_max": GOAL_RATIO,
        "meets_goal": ratio_all <= GOAL_RATIO,
        "file_chars": file_chars,
        "breakdown_us": {
            **{k: round(statistics.median(v) * 1e6, 1) for k, v in parts.items()},
            "fixed_cpu": round((statistics.median(ops_all) - statistics.median(times["bare"])) * 1e6, 1),
        },
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
