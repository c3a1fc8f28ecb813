"""Benchmark: curated-memory writes on the file store and on PostgreSQL, side by side in one run.

Two measures per backend:

* ``latency_ms``: medians of ``add`` / ``replace`` / ``remove`` from one process (ten seed entries,
  so every write is the same size class) and of a fresh ``load_from_disk`` (``load``);
* ``throughput``: adds per second to one target with 1 and 4 writer processes at once (each adds
  ``--adds`` distinct entries; the limit is set high so none is refused), and a check that every
  entry landed exactly once.

PostgreSQL is a throwaway local cluster started by ``tests/pgserver.py`` (``fsync=off``: it measures
our SQL, locking and round trips, not a disk), or ``--database URL`` to measure a real server (rows
go to fresh ``bench-*`` profiles, left in place); the file store writes to the system temp folder
(``--dir`` to choose the disk). Prints JSON.

Usage: ``python bench/memory_backends.py [--rounds N] [--adds N] [--database URL] [--dir DIR]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from hermes_memory.memory import MemoryStore  # noqa: E402

_WRITER = """
import sys, time, os
sys.path.insert(0, sys.argv[6])
from hermes_memory.memory import MemoryStore
kind, where, name, n, go = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
if kind == "postgres":
    from hermes_memory.memory.pg import PgMemoryStore
    url, _, profile = where.rpartition("#")
    s = PgMemoryStore(url, memory_char_limit=10**7, profile=profile)
else:
    s = MemoryStore(where, memory_char_limit=10**7)
while not os.path.exists(go):
    time.sleep(0.0005)
for i in range(n):
    s.reset_consolidation_failures()
    r = s.add("memory", f"{name} note {i:05d}: the build cache lives on the second disk")
    assert r["success"], r
"""


def open_store(kind: str, where: str, **kw) -> MemoryStore:
    """``where``: a folder (file) or ``URL#profile`` (postgres; each phase writes a profile of its own)."""
    if kind == "postgres":
        from hermes_memory.memory.pg import PgMemoryStore

        url, _, profile = where.rpartition("#")
        return PgMemoryStore(url, profile=profile, **kw)
    return MemoryStore(where, **kw)


def latency(kind: str, where: str, rounds: int) -> dict[str, float]:
    store = open_store(kind, where)
    for i in range(10):
        store.add("memory", f"Seed fact {i}: the deploy host uses port {8000 + i} behind nginx")
    times: dict[str, list[float]] = {"add": [], "replace": [], "remove": [], "load": []}

    def measure(name: str, fn) -> None:
        t0 = time.perf_counter()
        r = fn()
        times[name].append(time.perf_counter() - t0)
        if r is not None and not r["success"]:
            raise SystemExit(f"{kind} {name} failed: {r}")

    for i in range(rounds):
        measure("add", lambda i=i: store.add("memory", f"Round {i}: user prefers concise answers and metric units"))
        measure("replace", lambda i=i: store.replace("memory", f"Round {i}:", f"Round {i}: user prefers short answers"))
        measure("remove", lambda i=i: store.remove("memory", f"Round {i}:"))
        fresh = open_store(kind, where)
        measure("load", fresh.load_from_disk)
    return {k: round(statistics.median(v) * 1000, 3) for k, v in times.items()}


def throughput(kind: str, where: str, writers: int, adds: int, tmp: Path) -> dict[str, float | int | bool]:
    go = tmp / f"go-{kind}-{writers}"
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, kind, where, f"w{k}", str(adds), str(go), str(ROOT / "src")])
             for k in range(writers)]
    time.sleep(1.5)  # let every writer import and connect before the clock starts
    t0 = time.perf_counter()
    go.write_text("")
    codes = [p.wait() for p in procs]
    wall = time.perf_counter() - t0
    stored = open_store(kind, where, memory_char_limit=10**7).memory_entries
    expected = {f"w{k} note {i:05d}: the build cache lives on the second disk" for k in range(writers) for i in range(adds)}
    got = [e for e in stored if e.startswith("w")]
    return {
        "writers": writers,
        "adds": writers * adds,
        "seconds": round(wall, 3),
        "adds_per_s": round(writers * adds / wall, 1),
        "all_landed_once": codes == [0] * writers and sorted(got) == sorted(expected),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=100, help="add+replace+remove+load rounds (default 100)")
    ap.add_argument("--adds", type=int, default=100, help="adds per writer process in the throughput run (default 100)")
    ap.add_argument("--database", default=None, help="PostgreSQL URL to measure (default: a throwaway local cluster)")
    ap.add_argument("--dir", default=None, help="folder on the disk to measure for the file store")
    args = ap.parse_args()

    server = None
    if args.database:
        url = args.database
    else:
        from tests.pgserver import PostgresServer

        server = PostgresServer().start()
        url = server.create_database()
    run = uuid.uuid4().hex[:8]
    urls = [f"{url}#bench-{run}-{k}" for k in range(3)]  # profiles of their own: nothing else is touched
    out: dict[str, dict] = {}
    try:
        with tempfile.TemporaryDirectory(dir=args.dir) as d:
            tmp = Path(d)
            dirs = [str(tmp / f"mem{k}") for k in range(3)]
            for kind, places in (("file", dirs), ("postgres", urls)):
                out[kind] = {
                    "latency_ms": latency(kind, places[0], args.rounds),
                    "throughput": [throughput(kind, places[1 + k], w, args.adds, tmp) for k, w in enumerate((1, 4))],
                }
    finally:
        from hermes_memory.memory.pg import close_pools

        close_pools()
        if server is not None:
            server.stop()
    out["ratio_postgres_over_file"] = {
        k: round(out["postgres"]["latency_ms"][k] / out["file"]["latency_ms"][k], 2) for k in out["file"]["latency_ms"]
    }
    out["cpu_count"] = os.cpu_count()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
