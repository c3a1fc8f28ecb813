"""Benchmark: the memory threat scan over the attack and benign corpora, and on 64 KiB adversarial texts.

Prints JSON: block rate on the attack corpus (``tests/memory/data/attack_corpus.json``), false
positives on the benign corpus (our notes + LoCoMo read from ``../shared/data/locomo``), scan time
per entry in microseconds (median, p95, mean, max) for each corpus, and the time of one scan of
each 64 KiB adversarial near-miss string (milliseconds; a catastrophic-backtracking regex would
take seconds to hours here). The scan is timed uncached (``scan._scan``), per entry the fastest of
``--repeat`` scans, on the thread's CPU clock by default (``--clock cpu``: on a machine shared with
other jobs the wall clock mostly measures the neighbours; ``--clock wall`` for an idle machine).
``median_us`` is the p50 per entry.

Usage: ``python bench/memory_scan.py [--repeat N] [--clock cpu|wall]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests" / "memory"))

import corpora  # noqa: E402
from adversarial import adversarial_texts  # noqa: E402

from hermes_memory.memory import scan  # noqa: E402


def _timed(texts: list[str], repeat: int, clock=time.thread_time_ns) -> dict[str, float]:
    per: list[float] = []
    for t in texts:
        best = 1 << 62
        for _ in range(repeat):
            t0 = clock()
            scan._scan(t)
            best = min(best, clock() - t0)
        per.append(best / 1000)
    per.sort()
    return {
        "n": len(per),
        "median_us": round(statistics.median(per), 1),
        "p95_us": round(per[int(0.95 * (len(per) - 1))], 1),
        "mean_us": round(statistics.fmean(per), 1),
        "max_us": round(per[-1], 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="scans per text; the fastest counts (default 5)")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu", help="thread CPU time (default) or wall time")
    args = ap.parse_args()
    clock = time.thread_time_ns if args.clock == "cpu" else time.perf_counter_ns
    attacks = corpora.attack_phrasings()
    own = corpora.own_benign_notes()
    locomo = corpora.locomo_notes()
    missed = [(f, p) for f, p in attacks if scan.scan_memory_content(p) is None]
    refused = [(c, n, scan.find_threats(n)) for c, n in own + locomo if scan.scan_memory_content(n) is not None]
    adv = {}
    for name, text in adversarial_texts().items():
        t0 = time.perf_counter()
        scan.find_threats(text)
        adv[name] = round((time.perf_counter() - t0) * 1000, 2)
    out = {
        "attack_phrasings": len(attacks),
        "blocked": len(attacks) - len(missed),
        "block_rate": round((len(attacks) - len(missed)) / len(attacks), 4),
        "missed": missed,
        "benign_notes": len(own) + len(locomo),
        "benign_refused": len(refused),
        "false_positive_rate": round(len(refused) / (len(own) + len(locomo)), 5),
        "refused": refused,
        "clock": args.clock,
        "scan_us": {
            "own_notes": _timed([n for _, n in own], args.repeat, clock),
            "locomo": _timed([n for _, n in locomo], args.repeat, clock),
            "attacks": _timed([p for _, p in attacks], args.repeat, clock),
        },
        "adversarial_64k_ms": adv,
    }
    print(json.dumps(out, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
