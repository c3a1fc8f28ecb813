"""Benchmark: what the learned layer of the threat scan adds per memory entry (issue 13 §4, §6).

Prints JSON, measured in one run on the thread's CPU clock (fastest of ``--repeat`` runs per
entry, uncached, the three timings interleaved entry by entry): for typical entries (our benign notes and LoCoMo texts of 100-300 chars) the
microseconds of the regex layer alone (invisible characters + families + leetspeak/decoded views,
the scan as it was before the learned layer), of the learned layer alone, and of the whole scan
(``scan._scan``), each as median and p95; then the learned layer's milliseconds on each 64 KiB
adversarial string and on 16/32/64 KiB of one of them (linear time: the ratios stay near 2).

Usage: ``python bench/scan_learned_cost.py [--repeat N]``.
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
from hermes_memory.memory.scan_learned import score  # noqa: E402
from hermes_memory.memory.scan_text import find_invisible, for_matching  # noqa: E402


def _regex_only(text: str) -> object:
    if find_invisible(text):
        return True
    return scan._scan_views(for_matching(text), True)[0]


def _learned_only(text: str) -> object:
    return scan._learned(for_matching(text))


def _best_us(fn, text: str, repeat: int) -> float:
    best = 1 << 62
    for _ in range(repeat):
        t0 = time.thread_time_ns()
        fn(text)
        best = min(best, time.thread_time_ns() - t0)
    return best / 1000


def _summary(values: list[float]) -> dict[str, float]:
    values = sorted(values)
    return {"median_us": round(statistics.median(values), 1), "p95_us": round(values[int(0.95 * (len(values) - 1))], 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    notes = [n for _, n in corpora.own_benign_notes() + corpora.locomo_notes() if 100 <= len(n) <= 300]
    scan._learned("warm up the model")  # load the weights outside the timing
    regex: list[float] = []
    learned: list[float] = []
    whole: list[float] = []
    for t in notes:  # interleaved per entry, so a neighbour's load hits all three alike
        regex.append(_best_us(_regex_only, t, args.repeat))
        learned.append(_best_us(_learned_only, t, args.repeat))
        whole.append(_best_us(scan._scan, t, args.repeat))
    adv = adversarial_texts()
    adv_ms = {k: round(_best_us(lambda t: score(for_matching(t).lower()), v, 1) / 1000, 2) for k, v in adv.items()}
    one = next(iter(adv.values()))
    sizes = {n: _best_us(lambda t: score(for_matching(t).lower()), one[: n * 1024], 2) / 1000 for n in (16, 32, 64)}
    out = {
        "entries": len(notes),
        "median_chars": statistics.median(len(t) for t in notes),
        "regex_layer": _summary(regex),
        "learned_layer": _summary(learned),
        "whole_scan": _summary(whole),
        "extra_per_entry": _summary([w - r for w, r in zip(whole, regex, strict=True)]),
        "adversarial_64k_learned_ms": adv_ms,
        "learned_ms_by_kib": {str(k): round(v, 2) for k, v in sizes.items()},
        "ratio_32_to_16": round(sizes[32] / sizes[16], 2),
        "ratio_64_to_32": round(sizes[64] / sizes[32], 2),
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
