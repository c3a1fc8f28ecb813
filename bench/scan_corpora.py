"""Measure the memory threat scan on the original and the held-out corpora (issue 13 §4).

Prints JSON: for each corpus, blocked/total for the attacks (overall and per family) and
refused/total for the benign notes (overall and per category), plus the misses and refusals
themselves with the family each refusal names. Corpora:

* original: ``tests/memory/data/attack_corpus.json`` and ``benign_notes.json`` + LoCoMo texts
  (read from ``../shared/data/locomo``), written together with the patterns;
* held-out: ``tests/memory/data/heldout_corpus.json``, written after the patterns and never tuned
  on: run this once per scan change and append the figures to ``heldout_measurements.json``
  (``--record LABEL``) so the number of looks at the held-out set stays on record.

Usage: ``python bench/scan_corpora.py [--record LABEL] [--show-misses]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests" / "memory"))

import corpora  # noqa: E402

from hermes_memory.memory.scan import find_threats, scan_memory_content  # noqa: E402

MEASUREMENTS = ROOT / "tests" / "memory" / "data" / "heldout_measurements.json"


def _attack_figures(items: list[tuple[str, str]]) -> dict:
    per: dict[str, list[int]] = {}
    missed = []
    for fam, p in items:
        hit = scan_memory_content(p) is not None
        per.setdefault(fam, [0, 0])
        per[fam][0] += hit
        per[fam][1] += 1
        if not hit:
            missed.append([fam, p])
    blocked = sum(v[0] for v in per.values())
    return {
        "blocked": blocked, "total": len(items), "rate": round(blocked / len(items), 4),
        "per_family": {k: f"{v[0]}/{v[1]}" for k, v in per.items()}, "missed": missed,
    }


def _benign_figures(items: list[tuple[str, str]]) -> dict:
    per: dict[str, list[int]] = {}
    refused = []
    for cat, n in items:
        bad = scan_memory_content(n) is not None
        per.setdefault(cat, [0, 0])
        per[cat][0] += bad
        per[cat][1] += 1
        if bad:
            refused.append([cat, n[:160], find_threats(n)])
    n_ref = sum(v[0] for v in per.values())
    return {
        "refused": n_ref, "total": len(items), "rate": round(n_ref / len(items), 4),
        "per_category": {k: f"{v[0]}/{v[1]}" for k, v in per.items()}, "refused_notes": refused,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--record", metavar="LABEL", help="append the held-out figures to heldout_measurements.json")
    ap.add_argument("--show-misses", action="store_true", help="list misses and refusals (held-out included)")
    args = ap.parse_args()
    out = {
        "original": {
            "attacks": _attack_figures(corpora.attack_phrasings()),
            "benign": _benign_figures(corpora.own_benign_notes() + corpora.locomo_notes()),
        },
        "heldout": {
            "attacks": _attack_figures(corpora.heldout_attacks()),
            "benign": _benign_figures(corpora.heldout_benign()),
        },
    }
    if not args.show_misses:
        for corpus in out.values():
            corpus["attacks"].pop("missed")
            corpus["benign"].pop("refused_notes")
    if args.record:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        log = json.loads(MEASUREMENTS.read_text(encoding="utf-8")) if MEASUREMENTS.exists() else {"measurements": []}
        h = out["heldout"]
        log["measurements"].append({
            "n": len(log["measurements"]) + 1,
            "label": args.record,
            "at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "scan_commit": commit,
            "heldout_attacks_blocked": f"{h['attacks']['blocked']}/{h['attacks']['total']}",
            "heldout_benign_refused": f"{h['benign']['refused']}/{h['benign']['total']}",
            "original_attacks_blocked": f"{out['original']['attacks']['blocked']}/{out['original']['attacks']['total']}",
            "original_benign_refused": f"{out['original']['benign']['refused']}/{out['original']['benign']['total']}",
            "heldout_per_family": h["attacks"]["per_family"],
            "heldout_per_category": h["benign"]["per_category"],
        })
        MEASUREMENTS.write_text(json.dumps(log, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(out, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
