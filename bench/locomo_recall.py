"""LoCoMo evidence recall through ``session_search``'s search path. Prints one JSON object.

Imports ``shared/data/locomo/locomo-dev.json`` (found via ``$HERMES_SHARED`` or the repository's
sibling ``shared/`` folder) into a fresh SessionDB with the ``locomo`` importer, then asks every
question with :func:`hermes_memory.sessions.search.discovery_rows` (the rows discovery mode
groups), limited to the question's conversation (``user_id`` = sample id), and reports:

* recall@1/5/10 of evidence turns: *any* (at least one evidence turn in the top k rows) and
  *all* (every evidence turn in the top k), and of evidence *sessions* (a top-k row from a session
  holding evidence), overall and by category (1 multi-hop, 2 temporal, 3 open-domain,
  4 single-hop, 5 adversarial); overall figures are given for categories 1-4 (as published
  tables do) and for all;
* query latency p50/p95 in ms; questions skipped (no or malformed evidence), counted.

Target (issue 3): any-evidence recall@10 >= 70 % (a plain BM25 baseline measured 65.6 %).
LoCoMo: Maharana et al., ACL 2024 (snap-research/locomo), CC BY-NC 4.0, evaluation use only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.importers import import_path
from hermes_memory.sessions.importers.locomo import session_id_for
from hermes_memory.sessions.search import discovery_rows

EVIDENCE_RE = re.compile(r"^D(\d+):(\d+)$")
KS = (1, 5, 10)
CATEGORIES = {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop", 5: "adversarial"}


def shared_dir() -> Path:
    env = os.environ.get("HERMES_SHARED")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "shared"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=None, help="LoCoMo JSON (default: shared/data/locomo/locomo-dev.json)")
    args = ap.parse_args()
    data_path = Path(args.data) if args.data else shared_dir() / "data" / "locomo" / "locomo-dev.json"
    data = json.loads(data_path.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        db = SessionDB(Path(tmp) / "state.db")
        t0 = time.perf_counter()
        report = import_path(db, data_path, "locomo")
        import_s = time.perf_counter() - t0
        # message id -> (sample, "D<s>:<t>")
        dia: dict[int, tuple[str, str]] = {}
        for conv in data:
            sample = str(conv["sample_id"])
            for key in conv["conversation"]:
                m = re.match(r"^session_(\d+)$", key)
                if not m:
                    continue
                n = int(m.group(1))
                for t, msg in enumerate(db.get_messages(session_id_for(sample, n)), start=1):
                    dia[msg["id"]] = (sample, f"D{n}:{t}")
        stats: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        latencies: list[float] = []
        skipped = {"no_evidence": 0, "malformed_evidence": 0}
        questions = 0
        for conv in data:
            sample = str(conv["sample_id"])
            for qa in conv.get("qa", []):
                ev = [e.strip() for e in qa.get("evidence") or [] for e in re.split(r"[;,]\s*|\s+", e) if e.strip()]
                good = [e for e in ev if EVIDENCE_RE.match(e)]
                if not ev:
                    skipped["no_evidence"] += 1
                    continue
                if len(good) != len(ev):
                    skipped["malformed_evidence"] += 1
                    if not good:
                        continue
                questions += 1
                gold = set(good)
                gold_sessions = {e.split(":")[0] for e in gold}
                t0 = time.perf_counter()
                rows = discovery_rows(db, str(qa["question"]), user_id=sample, limit=max(KS))
                latencies.append((time.perf_counter() - t0) * 1000)
                got = [dia.get(r["id"], ("", ""))[1] for r in rows]
                cat = CATEGORIES.get(int(qa.get("category", 0)), "unknown")
                for k in KS:
                    top = got[:k]
                    any_hit = float(bool(gold & set(top)))
                    all_hit = float(gold <= set(top))
                    sess_hit = float(bool(gold_sessions & {g.split(":")[0] for g in top if g}))
                    for bucket in (cat, "all", "cat1_4" if cat in ("multi_hop", "temporal", "open_domain", "single_hop") else None):
                        if bucket is None:
                            continue
                        stats[bucket][f"any@{k}"].append(any_hit)
                        stats[bucket][f"all@{k}"].append(all_hit)
                        stats[bucket][f"session@{k}"].append(sess_hit)
        db.close()
    table = {
        bucket: {name: round(100 * statistics.fmean(v), 1) for name, v in sorted(vals.items())}
        | {"questions": len(next(iter(vals.values())))}
        for bucket, vals in stats.items()
    }
    latencies.sort()
    out = {
        "bench": "locomo_recall",
        "data": str(data_path),
        "conversations": len(data),
        "questions": questions,
        "skipped": skipped,
        "import": {**{k: v for k, v in report.as_dict().items() if k != "errors"}, "errors": len(report.errors), "seconds": round(import_s, 2)},
        "recall_percent": table,
        "latency_ms": {
            "p50": round(statistics.median(latencies), 3),
            "p95": round(latencies[int(0.95 * (len(latencies) - 1))], 3),
        },
        "target": {"any_evidence_recall_at_10_percent": 70.0, "baseline_plain_bm25_percent": 65.6},
        "credit": "LoCoMo: Maharana et al., ACL 2024 (snap-research/locomo), CC BY-NC 4.0",
    }
    print(json.dumps(out, indent=2))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
