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
* held-out 4: ``tests/memory/data/heldout4_corpus.json``, the fourth sealed set: measured only with
  ``--record LABEL``, which appends every corpus's figures to ``heldout4_measurements.json`` so the
  number of looks at it stays on record. Without ``--record`` it is left out of the output.

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

#: The sealed set ``--record`` measures, and its log of looks (one entry per look).
SEALED = "heldout4"
MEASUREMENTS = ROOT / "tests" / "memory" / "data" / f"{SEALED}_measurements.json"


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


def record(out: dict, label: str, sealed: dict, path: Path, *, show_misses: bool, name: str = SEALED) -> dict:
    """Append one look at the sealed set to the log at ``path`` and return the entry written.

    ``out`` holds every other corpus's figures (``{corpus: {"attacks": ..., "benign": ...}}`` as made by
    :func:`_attack_figures` / :func:`_benign_figures`), ``sealed`` the sealed set's. The entry carries
    blocked/refused as "n/total" strings for each corpus, the sealed set's per family and per category,
    and with ``show_misses`` its missed attacks and refused notes (a note's first 160 chars).
    """
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    log = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"measurements": []}
    entry: dict = {
        "n": len(log["measurements"]) + 1,
        "label": label,
        "at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "scan_commit": commit,
    }
    for corpus_name, corpus in {**out, name: sealed}.items():
        a, b = corpus["attacks"], corpus["benign"]
        entry[f"{corpus_name}_attacks_blocked"] = f"{a['blocked']}/{a['total']}"
        entry[f"{corpus_name}_benign_refused"] = f"{b['refused']}/{b['total']}"
    entry[f"{name}_per_family"] = sealed["attacks"]["per_family"]
    entry[f"{name}_per_category"] = sealed["benign"]["per_category"]
    if show_misses:
        entry[f"{name}_missed"] = sealed["attacks"]["missed"]
        entry[f"{name}_refused"] = sealed["benign"]["refused_notes"]
    log["measurements"].append(entry)
    path.write_text(json.dumps(log, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return entry


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--record", metavar="LABEL", help=f"measure the sealed {SEALED} set too and append every figure to {MEASUREMENTS.name}")
    ap.add_argument("--show-misses", action="store_true", help="list misses and refusals (with --record, also the sealed set's, into the log)")
    args = ap.parse_args()
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
    }
    if args.record and len(json.loads(MEASUREMENTS.read_text(encoding="utf-8"))["measurements"]) >= 2:
        raise SystemExit(f"{SEALED} was looked at twice (before and after): a new sealed set needs its own log")
    if args.record:
        sealed = {
            "attacks": _attack_figures(corpora.heldout4_attacks()),
            "benign": _benign_figures(corpora.heldout4_benign()),
        }
        record(out, args.record, sealed, MEASUREMENTS, show_misses=args.show_misses)
        out[SEALED] = sealed
    if not args.show_misses:
        for corpus in out.values():
            corpus["attacks"].pop("missed")
            corpus["benign"].pop("refused_notes")
    print(json.dumps(out, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
