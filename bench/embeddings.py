"""Cost of local semantic search (search.embeddings: on). Prints JSON.

* ``index``: background-indexer throughput (:func:`hermes_memory.sessions.indexer.index_pending`,
  the real model) over ``--messages`` chat-like messages: texts per second, and what an append
  costs meanwhile (p50/p95 ms of appends made from another thread while batches are embedded,
  beside the same appends with no indexer running);
* ``query``: time to embed one query (p50/p95 ms);
* ``search``: what fusion adds to a relevance search over ``--sizes`` stored vectors (random
  unit vectors written to ``hm_embeddings``, messages to match): search p50/p95 with and without
  semantic search, the query's own embedding left out (cached), bytes per vector added to state.db.
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=160)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--sizes", default="10000,100000")
    args = ap.parse_args()
    out = {"bench": "embeddings", "model": emb.model_id(), "index": bench_index(args.messages, args.threads),
           "search": [bench_search(int(s)) for s in args.sizes.split(",") if s]}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
