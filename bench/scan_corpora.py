"""Measure the memory threat scan on the original and the held-out corpora (issue 13 §4).

Prints JSON: for each corpus, blocked/total for the attacks (overall and per family) and
refused/total for the benign notes (overall and per category), plus the misses and refusals
themselves with the family each refusal names. Corpora:

* original: ``tests/memory/data/attack_corpus.json`` and ``benign_notes.json`` + LoCoMo texts
  (read from ``../shared/data/locomo``), written together with the patterns;
* dev: ``tests/memory/data/dev_corpus.json``, the tuning set;
* held-out: ``tests/memory/data/heldout_corpus.json``, the first held-out set; looked at five times
  (``heldout_measurements.json``) and since then tuning data (its ``about`` says so);
* held-out 2: ``tests/memory/data/heldout2_corpus.json``, the second sealed set; looked at twice
  (``heldout2_measurements.json``: before and after) and tuning data since;
* held-out 3: ``tests/memory/data/heldout3_corpus.json``, the third sealed set; looked at twice
  (``heldout3_measurements.json``: before and after) and tuning data since;
* held-out 4: ``tests/memory/data/heldout4_corpus.json``; looked at twice
  (``heldout4_measurements.json``) and tuning data since;
* tuning 6: ``tests/memory/data/tuning6_corpus.json``, tuning data from the start (its honest figure
  is its fold of ``bench/train_scan_classifier.py --cv``).

A sealed set is measured only by ``--record LABEL --set NAME``, which is ``python -m
tests.memory.sealed NAME --record LABEL`` (its rules and its log, ``tests/memory/sealed.py``): it prints
the overall figures of that look and nothing else.

Usage: ``python bench/scan_corpora.py [--show-misses]`` or ``python bench/scan_corpora.py --record LABEL --set NAME``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from tests.memory import corpora, sealed  # noqa: E402

from hermes_memory.memory.scan import find_threats, scan_memory_content  # noqa: E402


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
    ap.add_argument("--record", metavar="LABEL", help="record a look at the sealed set --set (tests/memory/sealed.py) instead")
    ap.add_argument("--set", metavar="NAME", help="with --record: the sealed set (data/NAME_corpus.json)")
    ap.add_argument("--show-misses", action="store_true", help="list misses and refusals")
    args = ap.parse_args()
    if args.record:
        if not args.set:
            raise SystemExit("--record needs --set NAME: the sealed set to look at")
        raise SystemExit(sealed.main([args.set, "--record", args.record]))
    dev_attacks, dev_benign = corpora.dev_set()
    out = {
        "original": {
            "attacks": _attack_figures(corpora.attack_phrasings()),
            "benign": _benign_figures(corpora.own_benign_notes() + corpora.locomo_notes()),
        },
        "dev": {
            "attacks": _attack_figures([("dev", t) for t in dev_attacks]),
            "benign": _benign_figures([("dev", t) for t in dev_benign]),
        },
        "heldout": {
            "attacks": _attack_figures(corpora.heldout_attacks()),
            "benign": _benign_figures(corpora.heldout_benign()),
        },
        "heldout2": {
            "attacks": _attack_figures(corpora.heldout2_attacks()),
            "benign": _benign_figures(corpora.heldout2_benign()),
        },
        "heldout3": {
            "attacks": _attack_figures(corpora.heldout3_attacks()),
            "benign": _benign_figures(corpora.heldout3_benign()),
        },
        "heldout4": {
            "attacks": _attack_figures(corpora.heldout4_attacks()),
            "benign": _benign_figures(corpora.heldout4_benign()),
        },
        "tuning6": {
            "attacks": _attack_figures(corpora.tuning6_attacks()),
            "benign": _benign_figures(corpora.tuning6_benign()),
        },
    }
    if not args.show_misses:
        for corpus in out.values():
            corpus["attacks"].pop("missed")
            corpus["benign"].pop("refused_notes")
    print(json.dumps(out, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
