"""Benchmark of the Holographic provider's fact store. Prints one JSON object.

1. Latency: ``add_fact`` and hybrid ``search`` (plus probe, related, reason, contradict) at 10k and 100k stored facts (synthetic facts with
   names, places and words drawn Zipf-distributed from a 5k-word vocabulary). Medians and p95 in milliseconds over N operations
   measured in this run, plus the 100k/10k ratio.
2. Recall@5 on the LoCoMo dev split (``$HERMES_SHARED/data/locomo/locomo-dev.json``; Maharana et al.,
   ACL 2024, CC BY-NC 4.0, evaluation only): each conversation's ``observation`` facts go into a fresh
   store; each question (categories 1-4; adversarial 5 reported separately) is a query; a hit is a
   top-5 fact whose evidence turn ids intersect the question's evidence. Three retrievers on the same
   facts: plain FTS5 (BM25 order), the hybrid search without HRR (``hrr_weight=0``) and the full
   hybrid search (FTS5 + Jaccard + HRR, trust-weighted). Each fact is learned (``learned_at``) when
   its session took place, so questions naming a date can use it. Reported for the tuning split
   (conversations 0-2) and the validation split (3-4) separately.

Usage: ``python bench/holographic.py [--sizes 10000 100000] [--ops 200] [--skip-latency]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from hermes_memory.plugins.holographic import hrr
from hermes_memory.plugins.holographic.retrieval import FactRetriever
from hermes_memory.plugins.holographic.store import FactStore
from hermes_memory.sessions.importers.locomo import parse_locomo_date

NAMES = ["Alice Smith", "Bob Jones", "Carol King", "Dan Brown", "Eve Adams", "Frank Moore", "Grace Lee", "Hank Hill",
         "Ivy Chen", "Jack Ryan", "Kara Diaz", "Liam Ortiz", "Mona Patel", "Nate Gray", "Olga Petrova", "Paul Kim"]
CITIES = ["Berlin", "Paris", "London", "Tokyo", "Lisbon", "Denver", "Austin", "Toronto", "Madrid", "Oslo"]
VERBS = ["likes", "uses", "prefers", "visited", "maintains", "reviewed", "deployed", "bought", "learned", "recommends"]


def _vocab(rng: random.Random, n: int = 5000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(4, 9))) for _ in range(n)]


_ZIPF: list[float] = []


def _words(rng: random.Random, vocab: list[str], k: int) -> list[str]:
    """``k`` words drawn with Zipf weights 1/rank, as word frequencies in natural text are."""
    if len(_ZIPF) != len(vocab):
        _ZIPF[:] = [1.0 / (r + 1) for r in range(len(vocab))]
    return rng.choices(vocab, weights=_ZIPF, k=k)


def _fact(rng: random.Random, vocab: list[str], i: int) -> tuple[str, str, str]:
    words = " ".join(_words(rng, vocab, rng.randint(3, 8)))
    content = f"{rng.choice(NAMES)} {rng.choice(VERBS)} {words} in {rng.choice(CITIES)} (note {i})"
    return content, rng.choice(["user_pref", "project", "tool", "general"]), ""


def _ms(samples: list[float]) -> dict[str, float]:
    s = sorted(samples)
    return {"median_ms": round(statistics.median(s) * 1000, 3), "p95_ms": round(s[int(0.95 * (len(s) - 1))] * 1000, 3)}


def latency(sizes: list[int], ops: int, seed: int = 7) -> dict[str, object]:
    rng = random.Random(seed)
    vocab = _vocab(rng)
    out: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        store = FactStore(Path(tmp) / "bench.db")
        retriever = FactRetriever(store)
        n = 0
        load_s = 0.0
        for size in sorted(sizes):
            t0 = time.perf_counter()
            while n < size:
                batch = [_fact(rng, vocab, i) for i in range(n, min(size, n + 5000))]
                store.add_facts(batch)
                n += len(batch)
            load_s += time.perf_counter() - t0
            adds = []
            for j in range(ops):
                content, cat, tags = _fact(rng, vocab, 10_000_000 + size + j)
                t = time.perf_counter()
                store.add_fact(content, cat, tags)
                adds.append(time.perf_counter() - t)
            n += ops
            searches = []
            for _ in range(ops):
                q = f"{rng.choice(NAMES).split()[0]} {rng.choice(VERBS)} {_words(rng, vocab, 1)[0]} {rng.choice(CITIES)}"
                t = time.perf_counter()
                retriever.search(q, min_trust=0.0, limit=10, touch=False)
                searches.append(time.perf_counter() - t)
            entity_ops: dict[str, list[float]] = {"probe": [], "related": [], "reason": [], "contradict": []}
            for j in range(max(5, ops // 10)):
                a, b = rng.sample(NAMES, 2)
                city = rng.choice(CITIES)
                for op, call in (("probe", lambda a=a: retriever.probe(a, limit=10)),
                                 ("related", lambda a=a: retriever.related(a, limit=10)),
                                 ("reason", lambda a=a, c=city: retriever.reason([a, c], limit=10))):
                    t = time.perf_counter()
                    call()
                    entity_ops[op].append(time.perf_counter() - t)
                if j < 3:
                    t = time.perf_counter()
                    retriever.contradict(limit=10)
                    entity_ops["contradict"].append(time.perf_counter() - t)
            out[str(size)] = {"facts": store.count(), "add": _ms(adds), "search": _ms(searches),
                              **{op: _ms(v) for op, v in entity_ops.items()},
                              "bulk_load_facts_per_s": round(size / load_s) if load_s else None}
        store.close()
    keys = sorted(out, key=int)
    if len(keys) >= 2:
        lo, hi = out[keys[0]], out[keys[-1]]
        out["ratio_largest_to_smallest"] = {
            "add_median": round(hi["add"]["median_ms"] / lo["add"]["median_ms"], 2),
            "search_median": round(hi["search"]["median_ms"] / lo["search"]["median_ms"], 2),
        }
    out["ops_per_size"] = ops
    return out


_EVID = re.compile(r"^D(\d+):(\d+)$")


def _evidence(raw: object) -> set[str]:
    items = raw if isinstance(raw, list) else [raw]
    out = set()
    for item in items:
        for piece in re.split(r"[;,\s]+", str(item)):
            if _EVID.match(piece.strip()):
                out.add(piece.strip())
    return out


SPLITS = {"tuning": (0, 1, 2), "validation": (3, 4)}
"""LoCoMo conversations ranking constants may be fitted to (tuning) and those kept for validation."""


def locomo_recall(path: Path, k: int = 5, conversations: tuple[int, ...] | None = None) -> dict[str, object]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if conversations is not None:
        data = [data[i] for i in conversations if i < len(data)]
    systems = ("fts5_bm25", "hybrid_no_hrr", "hybrid_hrr")
    hits = {s: {c: 0 for c in range(1, 6)} for s in systems}
    totals = {c: 0 for c in range(1, 6)}
    skipped = {"no_or_malformed_evidence": 0}
    n_facts = 0
    query_s: dict[str, list[float]] = {s: [] for s in systems}
    for conv in data:
        with tempfile.TemporaryDirectory() as tmp:
            store = FactStore(Path(tmp) / "locomo.db")
            evid: dict[int, set[str]] = {}
            for session, by_speaker in sorted(conv["observation"].items()):
                # a fact is learned when its session took place (session_<n>_observation -> session_<n>_date_time)
                learned = parse_locomo_date(conv["conversation"].get(session.replace("_observation", "_date_time")))
                for _speaker, facts in by_speaker.items():
                    for text, ev in facts:
                        fid, _ = store.add_fact(text, "general", "", learned_at=learned)
                        evid.setdefault(fid, set()).update(_evidence(ev))
            n_facts += store.count()
            no_hrr = FactRetriever(store, hrr_weight=0.0)
            full = FactRetriever(store, hrr_weight=0.3)

            def run_one(name: str, q: str, store: FactStore = store, no_hrr: FactRetriever = no_hrr,
                        full: FactRetriever = full) -> list[int]:
                if name == "fts5_bm25":
                    return [r["fact_id"] for r, _ in store.fts(q, limit=k)]
                retriever = no_hrr if name == "hybrid_no_hrr" else full
                return [r["fact_id"] for r in retriever.search(q, min_trust=0, limit=k, touch=False)]

            for qa in conv["qa"]:
                gold = _evidence(qa.get("evidence") or [])
                if not gold:
                    skipped["no_or_malformed_evidence"] += 1
                    continue
                cat = int(qa["category"])
                totals[cat] += 1
                for name in systems:
                    t = time.perf_counter()
                    ids = run_one(name, qa["question"])
                    query_s[name].append(time.perf_counter() - t)
                    if any(evid.get(i, set()) & gold for i in ids):
                        hits[name][cat] += 1
            store.close()
    scored = [1, 2, 3, 4]
    n = sum(totals[c] for c in scored)
    result: dict[str, object] = {
        "conversations": len(data), "observation_facts": n_facts, "questions_scored_cat1_4": n,
        "questions_adversarial_cat5": totals[5], "skipped": skipped, "k": k,
    }
    for s in systems:
        result[s] = {
            f"recall@{k}_cat1_4": round(sum(hits[s][c] for c in scored) / n, 4) if n else None,
            "by_category": {str(c): round(hits[s][c] / totals[c], 4) if totals[c] else None for c in range(1, 6)},
            "query_median_ms": round(statistics.median(query_s[s]) * 1000, 3) if query_s[s] else None,
        }
    base = result["fts5_bm25"][f"recall@{k}_cat1_4"]
    if base:
        result["ratio_hybrid_hrr_to_fts5"] = round(result["hybrid_hrr"][f"recall@{k}_cat1_4"] / base, 3)
    return result


def _locomo_path() -> Path:
    shared = os.environ.get("HERMES_SHARED")
    root = Path(shared) if shared else Path(__file__).resolve().parents[2] / "shared"
    return root / "data" / "locomo" / "locomo-dev.json"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--ops", type=int, default=200)
    ap.add_argument("--skip-latency", action="store_true")
    ap.add_argument("--skip-recall", action="store_true")
    args = ap.parse_args()
    out: dict[str, object] = {"numpy": hrr.HAVE_NUMPY, "hrr_dim": hrr.DEFAULT_DIM, "python": sys.version.split()[0]}
    if not args.skip_latency:
        out["latency"] = latency(args.sizes, args.ops)
    if not args.skip_recall:
        path = _locomo_path()
        out["locomo"] = ({name: locomo_recall(path, conversations=idx) for name, idx in SPLITS.items()}
                         if path.exists() else {"error": f"{path} not found; set HERMES_SHARED"})
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
