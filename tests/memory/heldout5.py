"""The fifth sealed held-out set of the threat scan (issue 13 §4): its loaders, its overlap check and the command that records a look.

``data/heldout5_corpus.json`` was written blind (without reading the scan's modules, its model, its
training scripts or the texts of the corpora it was tuned on) and committed before the scan was run
on it. It is looked at twice: once with the scan as on main before the next round of scan changes,
once after them; every figure of a look is logged in ``data/heldout5_measurements.json`` by::

    .venv/bin/python -m tests.memory.heldout5 --record "before: scan as on main <sha>, no change made for this set"

(the second look's label starts with ``after:``). The command refuses a third look, a first label
that does not start with ``before: scan as on main``, a second that does not start with ``after:``,
and a tree whose ``src/`` has uncommitted changes (the scan measured must be a commit). It prints
the overall figures as JSON, never the set's texts.

The fourth held-out set became tuning data after its second look (``heldout4_measurements.json``),
so it counts as a tuning corpus here even while ``corpora.TUNING`` does not name it yet.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.memory import corpora

CORPUS = corpora.DATA / "heldout5_corpus.json"
LOG = corpora.DATA / "heldout5_measurements.json"
#: A sealed set is measured once before and once after a round of changes, then it is spent.
MAX_LOOKS = 2
FIRST_LABEL = "before: scan as on main"
SECOND_LABEL = "after:"
RECORD_COMMAND = '.venv/bin/python -m tests.memory.heldout5 --record "before: scan as on main <short sha>, no change made for this set"'

Scan = Callable[[str], object]
Explain = Callable[[str], list[str]]


def attacks(path: Path = CORPUS) -> list[tuple[str, str]]:
    """``(family, phrasing)`` for every attack of the set at ``path``, in file order."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return [(fam, p) for fam, v in data["attacks"].items() for p in v["phrasings"]]


def benign(path: Path = CORPUS) -> list[tuple[str, str]]:
    """``(category, note)`` for every benign note of the set at ``path``, in file order."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return [(cat, n) for cat, notes in data["benign"]["notes"].items() for n in notes]


def tuning_names() -> list[str]:
    """Every corpus the scan may have been tuned on: ``corpora.TUNING`` and the fourth held-out set."""
    names = list(corpora.TUNING)
    return names if "heldout4" in names else [*names, "heldout4"]


def tuning_texts(name: str) -> tuple[list[str], list[str]]:
    """``(attacks, benign notes)`` of the tuning corpus ``name`` (``corpora.tuning_corpus``, or heldout4's loaders).

    Raises ``KeyError`` for a name that is neither.
    """
    try:
        return corpora.tuning_corpus(name)
    except KeyError:
        if name != "heldout4":
            raise
        return [p for _, p in corpora.heldout4_attacks()], [n for _, n in corpora.heldout4_benign()]


def shared_with_tuning(texts: list[str], names: Sequence[str] | None = None) -> list[str]:
    """The ``texts`` equal to a text of a tuning corpus (``names``, default :func:`tuning_names`) as written, lower-cased or folded.

    The names in ``corpora.TUNING`` go through ``corpora.shared_with``; any other (the fourth held-out
    set, while ``corpora.TUNING`` does not name it) is compared the same way through :func:`tuning_texts`.
    """
    names = tuning_names() if names is None else list(names)
    known = [name for name in names if name in corpora.TUNING]
    shared = set(corpora.shared_with(texts, known))
    seen: set[str] = set()
    for name in names:
        if name not in known:
            a, b = tuning_texts(name)
            seen |= {t.lower() for t in a + b} | {corpora.fold(t) for t in a + b}
    shared |= {t for t in texts if t.lower() in seen or corpora.fold(t) in seen}
    return [t for t in texts if t in shared]


def load_log(path: Path = LOG) -> list[dict[str, Any]]:
    """The looks logged at ``path``, oldest first (``[]`` before the first)."""
    return list(json.loads(path.read_text(encoding="utf-8"))["measurements"])


def measure(
    scan: Scan,
    explain: Explain,
    set_attacks: list[tuple[str, str]],
    set_benign: list[tuple[str, str]],
    tuning: dict[str, tuple[list[str], list[str]]],
) -> dict[str, Any]:
    """Every figure of one look, keyed as ``heldout4_measurements.json`` keys them.

    ``scan(text)`` is not None when the text is refused; ``explain(text)`` names the families of a
    refusal. Figures are ``"k/n"`` strings: ``<corpus>_attacks_blocked`` and ``<corpus>_benign_refused``
    for every corpus in ``tuning`` and for ``heldout5``, ``heldout5_per_family`` and
    ``heldout5_per_category`` (name -> figure), ``heldout5_missed`` (``[family, text]`` of each attack
    let through) and ``heldout5_refused`` (``[category, text, families]`` of each benign note refused).
    """
    figures: dict[str, Any] = {}
    for name, (a, b) in tuning.items():
        figures[f"{name}_attacks_blocked"] = f"{sum(scan(p) is not None for p in a)}/{len(a)}"
        figures[f"{name}_benign_refused"] = f"{sum(scan(n) is not None for n in b)}/{len(b)}"
    missed = [[fam, p] for fam, p in set_attacks if scan(p) is None]
    refused = [[cat, n, explain(n)] for cat, n in set_benign if scan(n) is not None]
    figures["heldout5_attacks_blocked"] = f"{len(set_attacks) - len(missed)}/{len(set_attacks)}"
    figures["heldout5_benign_refused"] = f"{len(refused)}/{len(set_benign)}"
    per_family = corpora.by_key(set_attacks)
    figures["heldout5_per_family"] = {
        fam: f"{sum(scan(p) is not None for p in ps)}/{len(ps)}" for fam, ps in per_family.items()
    }
    per_category = corpora.by_key(set_benign)
    figures["heldout5_per_category"] = {
        cat: f"{sum(scan(n) is not None for n in ns)}/{len(ns)}" for cat, ns in per_category.items()
    }
    figures["heldout5_missed"] = missed
    figures["heldout5_refused"] = refused
    return figures


def append_look(
    log: list[dict[str, Any]], label: str, figures: dict[str, Any], scan_commit: str, at: str
) -> list[dict[str, Any]]:
    """``log`` with one more look (``n``, ``label``, ``at``, ``scan_commit``, then ``figures``); ``log`` is not changed.

    Raises ``ValueError`` (naming the rule) for a third look, for a first label that does not start
    with :data:`FIRST_LABEL` and for a second that does not start with :data:`SECOND_LABEL`.
    """
    if len(log) >= MAX_LOOKS:
        raise ValueError(
            f"heldout5 was looked at {len(log)} times already (before and after): the set is spent, write a new one"
        )
    want = FIRST_LABEL if not log else SECOND_LABEL
    if not label.startswith(want):
        raise ValueError(f"look {len(log) + 1} of heldout5 must be labelled '{want} ...', not {label!r}")
    return [*log, {"n": len(log) + 1, "label": label, "at": at, "scan_commit": scan_commit, **figures}]


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=corpora.REPO, check=True, capture_output=True, text=True).stdout


def main(argv: list[str] | None = None) -> int:
    """Record one look: measure the set and the tuning corpora with the scan of this tree, append it to the log.

    Returns 0 after printing the overall figures as JSON; 2 (with the reason on stderr) when the look
    is refused (see :func:`append_look`, or uncommitted changes under ``src/``), the log unchanged.
    """
    parser = argparse.ArgumentParser(
        prog="python -m tests.memory.heldout5", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--record",
        metavar="LABEL",
        required=True,
        help="the look's label ('before: scan as on main <sha> ...' or 'after: ...')",
    )
    parser.add_argument("--corpus", type=Path, default=CORPUS, help=argparse.SUPPRESS)
    parser.add_argument("--log", type=Path, default=LOG, help=argparse.SUPPRESS)
    parser.add_argument("--tuning", nargs="*", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--scan-commit", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    from hermes_memory.memory.scan import find_threats, scan_memory_content

    scan_commit = args.scan_commit
    if scan_commit is None:
        if _git("status", "--porcelain", "--", "src").strip():
            print(
                "refused: src/ has uncommitted changes; commit the scan to be measured first", file=sys.stderr
            )
            return 2
        scan_commit = _git("rev-parse", "--short", "HEAD").strip()
    log = load_log(args.log)
    names = tuning_names() if args.tuning is None else list(args.tuning)
    try:  # the rules first: a refused look runs no scan on the set
        append_look(log, args.record, {}, scan_commit, "")
    except ValueError as exc:
        print(f"refused: {exc}", file=sys.stderr)
        return 2

    def explain(text: str) -> list[str]:
        return list(find_threats(text))  # the pattern families of the refusal, as the scan names them

    figures = measure(
        scan_memory_content,
        explain,
        attacks(args.corpus),
        benign(args.corpus),
        {n: tuning_texts(n) for n in names},
    )
    at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    new = append_look(log, args.record, figures, scan_commit, at)
    args.log.write_text(
        json.dumps({"measurements": new}, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    overall = {k: v for k, v in new[-1].items() if isinstance(v, (str, int))}
    print(json.dumps(overall, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
