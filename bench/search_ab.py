"""Two versions of the query path timed on the same queries, interleaved: which is faster under one load?

Latency figures taken in separate processes on the shared machine vary by a third from one
process to the next; a comparison of two versions needs them to see the same load. This script
starts one worker process per version (``--base-python``/``--base-src``: the old tree's
interpreter and ``src``; the new one is this checkout), warms both with every query once (each
word's document frequency cached, the warm case), then sends each query to both in turn
(alternating which goes first on every pass) and records each call's thread CPU and wall time
inside the worker. Kinds: ``bench/sessions.py``'s questions and two-word queries through
``search_messages`` (limit 20) and the questions through whole ``session_search`` calls.

    python bench/search_ab.py --db <1M natural db> --corpus natural --base-python /work/main/.venv/bin/python \\
        --base-src /work/main/src

Prints one JSON object: per kind and version ``[cpu_p50, cpu_p95, wall_p50, wall_p95]`` in ms,
medians over ``--passes`` passes; ``<version>_min_cpu``: ``[p50, p95]`` over the queries of each
query's least CPU over the passes (a load spike in one pass does not move it); ``median_ratio``:
the median over queries of new / base of those least CPU times; and the load average at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search_identity import bench_queries  # noqa: E402


def worker(db_path: str) -> None:
    """Answer ``[kind, query]`` lines on stdin with ``[cpu_ms, wall_ms]`` lines (kind ``tool``: a
    whole ``session_search`` call, else ``search_messages``)."""
    from hermes_memory.sessions.db import SessionDB
    from hermes_memory.sessions.search import session_search

    db = SessionDB(db_path)
    print("ready", flush=True)
    for line in sys.stdin:
        kind, q = json.loads(line)
        t0, c0 = time.perf_counter(), time.thread_time()
        if kind == "tool":
            session_search({"query": q}, db)
        else:
            db.search_messages(q, limit=20)
        print(json.dumps([(time.thread_time() - c0) * 1000, (time.perf_counter() - t0) * 1000]), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True, help="a database bench/sessions.py built")
    ap.add_argument("--corpus", choices=("natural", "synthetic"), required=True)
    ap.add_argument("--base-python", required=True, help="the old tree's interpreter")
    ap.add_argument("--base-src", required=True, help="the old tree's src folder")
    ap.add_argument("--queries", type=int, default=200, help="questions and as many two-word queries")
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.db)
        return
    here = Path(__file__).resolve()
    versions = {"base": (args.base_python, args.base_src), "new": (sys.executable, str(here.parent.parent / "src"))}
    procs: dict[str, Any] = {}
    for name, (python, src) in versions.items():
        procs[name] = subprocess.Popen([python, str(here), "--worker", "--db", args.db, "--corpus", args.corpus,
                                        "--base-python", "-", "--base-src", "-"], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=src))
        if procs[name].stdout.readline().strip() != "ready":
            raise SystemExit(f"the {name} worker did not start")

    def ask(name: str, kind: str, q: str) -> list[float]:
        p = procs[name]
        p.stdin.write(json.dumps([kind, q]) + "\n")
        p.stdin.flush()
        return list(json.loads(p.stdout.readline()))

    n = args.queries
    qs = bench_queries(args.corpus, n)
    kinds = {"questions": ("search", qs[:n]), "two_word": ("search", qs[n:]), "session_search": ("tool", qs[:n])}
    for kind, batch in kinds.values():
        for q in batch:
            for name in procs:
                ask(name, kind, q)
    out: dict[str, Any] = {"bench": "search_ab", "corpus": args.corpus, "queries": n, "passes": args.passes}
    for label, (kind, batch) in kinds.items():
        per: dict[str, list[tuple[float, float, float, float]]] = {name: [] for name in procs}
        best: dict[str, list[float]] = {name: [float("inf")] * len(batch) for name in procs}
        for p in range(args.passes):
            cpu: dict[str, list[float]] = {name: [] for name in procs}
            wall: dict[str, list[float]] = {name: [] for name in procs}
            order = list(procs) if p % 2 == 0 else list(procs)[::-1]
            for qi, q in enumerate(batch):
                for name in order:
                    c, w = ask(name, kind, q)
                    cpu[name].append(c)
                    wall[name].append(w)
                    best[name][qi] = min(best[name][qi], c)
            for name in procs:
                cs, ws = sorted(cpu[name]), sorted(wall[name])
                k = int(0.95 * (len(cs) - 1))
                per[name].append((statistics.median(cs), cs[k], statistics.median(ws), ws[k]))
        out[label] = {name: [round(statistics.median(x[i] for x in v), 2) for i in range(4)] for name, v in per.items()}
        for name, least in best.items():  # each query's least CPU over the passes: load spikes left out
            srt = sorted(least)
            out[label][name + "_min_cpu"] = [round(statistics.median(srt), 2), round(srt[int(0.95 * (len(srt) - 1))], 2)]
        if "base" in best and "new" in best:
            out[label]["median_ratio"] = round(statistics.median(
                x / y for x, y in zip(best["new"], best["base"], strict=True) if y > 0), 3)
    out["load_end"] = [round(x, 2) for x in os.getloadavg()]
    for p in procs.values():
        p.stdin.close()
        p.wait()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
