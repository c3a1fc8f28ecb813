"""One mechanism for every sealed held-out set of the threat scan (issue 13 §4), keyed by the set's name.

A sealed set ``NAME`` is two files in ``tests/memory/data``: ``NAME_corpus.json`` (``{"attacks": {family:
{"source", "phrasings"}}, "benign": {"notes": {category: [note, ...]}}}``), written blind and committed
before the scan runs on it, and ``NAME_measurements.json`` (``{"measurements": [look, ...]}``), the log
of every look. A look is recorded by::

    .venv/bin/python -m tests.memory.sealed NAME --record "before: scan as on main <sha>, no change made for this set"

(the second look's label starts with ``after:``). The command refuses a third look, a first label that
does not start with ``before: scan as on main``, a second that does not start with ``after:``, and a
tree whose ``src/`` has uncommitted changes (the scan measured must be a commit), the log unchanged. It
prints the overall figures as JSON, never the set's texts. A set is checked for phrasing overlap with
the corpora tuned on before it (:func:`tests.memory.corpora.tuned_before`).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.memory import corpora

#: A sealed set is measured once before and once after a round of changes, then it is spent.
MAX_LOOKS = 2
FIRST_LABEL = "before: scan as on main"
SECOND_LABEL = "after:"

Scan = Callable[[str], object]
Explain = Callable[[str], list[str]]


@dataclass(frozen=True)
class SealedSet:
    """The sealed set ``name`` (``heldout5``, ``heldout6`` ...): its files under ``data``, its loaders and overlap checks.

    ``sisters``: the names of the other sealed (or spent, not yet tuning) sets it must share no
    phrasing with (:meth:`shared_with_sisters`); their files are read from the same ``data``.
    """

    name: str
    data: Path = corpora.DATA
    sisters: tuple[str, ...] = ()

    @property
    def corpus(self) -> Path:
        """``<data>/<name>_corpus.json``."""
        return self.data / f"{self.name}_corpus.json"

    @property
    def log(self) -> Path:
        """``<data>/<name>_measurements.json``."""
        return self.data / f"{self.name}_measurements.json"

    @property
    def record_command(self) -> str:
        """The command line that records the first look at this set."""
        return (f'.venv/bin/python -m tests.memory.sealed {self.name} --record '
                '"before: scan as on main <short sha>, no change made for this set"')

    def attacks(self) -> list[tuple[str, str]]:
        """``(family, phrasing)`` for every attack of the set, in file order."""
        return corpora.corpus_attacks(self.corpus)

    def benign(self) -> list[tuple[str, str]]:
        """``(category, note)`` for every benign note of the set, in file order."""
        return corpora.corpus_benign(self.corpus)

    def looks(self) -> list[dict[str, Any]]:
        """The looks logged so far, oldest first (``[]`` before the first)."""
        return load_log(self.log)

    def tuning_names(self) -> list[str]:
        """The corpora the set is checked against and measured with (:func:`corpora.tuned_before`)."""
        return corpora.tuned_before(self.name)

    def sister_sets(self) -> tuple[SealedSet, ...]:
        """The :class:`SealedSet` of each name in ``sisters``, in order, under the same ``data``."""
        return tuple(SealedSet(n, self.data) for n in self.sisters)

    def shared_with_tuning(self, texts: list[str], names: list[str] | None = None) -> list[str]:
        """The ``texts`` equal to a text of the tuning corpora ``names`` (default :meth:`tuning_names`), as written, lower-cased or folded."""
        return corpora.shared_with(texts, self.tuning_names() if names is None else names)

    def shared_with_sisters(self, texts: list[str], sisters: tuple[SealedSet, ...] | None = None) -> list[str]:
        """The ``texts`` whose folded form (:func:`corpora.fold`) equals that of an attack or note of one of ``sisters``.

        ``sisters`` defaults to :meth:`sister_sets`. Returns texts of ``texts`` only, never one of the
        sisters' (a sealed set's texts stay out of output).
        """
        sets = self.sister_sets() if sisters is None else sisters
        seen = {corpora.fold(t) for s in sets for _, t in s.attacks() + s.benign()}
        return [t for t in texts if corpora.fold(t) in seen]

    def main(self, argv: list[str] | None = None) -> int:
        """``python -m tests.memory.<name> --record LABEL``: :func:`main` for this set (returns its exit status)."""
        return main(argv, name=self.name)


def load_log(path: Path) -> list[dict[str, Any]]:
    """The looks logged at ``path``, oldest first (``[]`` before the first)."""
    return list(json.loads(path.read_text(encoding="utf-8"))["measurements"])


def measure(
    name: str,
    scan: Scan,
    explain: Explain,
    set_attacks: list[tuple[str, str]],
    set_benign: list[tuple[str, str]],
    tuning: dict[str, tuple[list[str], list[str]]],
) -> dict[str, Any]:
    """Every figure of one look at the sealed set ``name``, keyed as its measurement log keys them.

    ``scan(text)`` is not None when the text is refused; ``explain(text)`` names the families of a
    refusal. Figures are ``"k/n"`` strings: ``<corpus>_attacks_blocked`` and ``<corpus>_benign_refused``
    for every corpus in ``tuning`` and for ``name``, ``<name>_per_family`` and ``<name>_per_category``
    (key -> figure), ``<name>_missed`` (``[family, text]`` of each attack let through) and
    ``<name>_refused`` (``[category, text, families]`` of each benign note refused).
    """
    figures: dict[str, Any] = {}
    for corpus, (a, b) in tuning.items():
        figures[f"{corpus}_attacks_blocked"] = f"{sum(scan(p) is not None for p in a)}/{len(a)}"
        figures[f"{corpus}_benign_refused"] = f"{sum(scan(n) is not None for n in b)}/{len(b)}"
    missed = [[fam, p] for fam, p in set_attacks if scan(p) is None]
    refused = [[cat, n, explain(n)] for cat, n in set_benign if scan(n) is not None]
    figures[f"{name}_attacks_blocked"] = f"{len(set_attacks) - len(missed)}/{len(set_attacks)}"
    figures[f"{name}_benign_refused"] = f"{len(refused)}/{len(set_benign)}"
    figures[f"{name}_per_family"] = {
        fam: f"{sum(scan(p) is not None for p in ps)}/{len(ps)}" for fam, ps in corpora.by_key(set_attacks).items()
    }
    figures[f"{name}_per_category"] = {
        cat: f"{sum(scan(n) is not None for n in ns)}/{len(ns)}" for cat, ns in corpora.by_key(set_benign).items()
    }
    figures[f"{name}_missed"] = missed
    figures[f"{name}_refused"] = refused
    return figures


def append_look(
    name: str, log: list[dict[str, Any]], label: str, figures: dict[str, Any], scan_commit: str, at: str
) -> list[dict[str, Any]]:
    """``log`` with one more look at ``name`` (``n``, ``label``, ``at``, ``scan_commit``, then ``figures``); ``log`` is not changed.

    Raises ``ValueError`` (naming the rule) for a third look, for a first label that does not start
    with :data:`FIRST_LABEL` and for a second that does not start with :data:`SECOND_LABEL`.
    """
    if len(log) >= MAX_LOOKS:
        raise ValueError(
            f"{name} was looked at {len(log)} times already (before and after): the set is spent, write a new one"
        )
    want = FIRST_LABEL if not log else SECOND_LABEL
    if not label.startswith(want):
        raise ValueError(f"look {len(log) + 1} of {name} must be labelled '{want} ...', not {label!r}")
    return [*log, {"n": len(log) + 1, "label": label, "at": at, "scan_commit": scan_commit, **figures}]


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=corpora.REPO, check=True, capture_output=True, text=True).stdout


def main(argv: list[str] | None = None, *, name: str | None = None) -> int:
    """Record one look at a sealed set: measure it and its tuning corpora with this tree's scan, append it to its log.

    ``argv``: ``NAME --record LABEL`` (``NAME`` left out when ``name`` is given, as the per-set
    modules do). Returns 0 after printing the overall figures as JSON; 2 (with the reason on stderr)
    when the look is refused (see :func:`append_look`, or uncommitted changes under ``src/``), the log
    unchanged.
    """
    parser = argparse.ArgumentParser(
        prog=f"python -m tests.memory.{name or 'sealed'}", description=__doc__.split("\n")[0]
    )
    if name is None:
        parser.add_argument("name", help="the sealed set (data/NAME_corpus.json, data/NAME_measurements.json)")
    parser.add_argument(
        "--record",
        metavar="LABEL",
        required=True,
        help="the look's label ('before: scan as on main <sha> ...' or 'after: ...')",
    )
    parser.add_argument("--corpus", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--log", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--tuning", nargs="*", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--scan-commit", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sealed = SealedSet(name or args.name)
    corpus = args.corpus or sealed.corpus
    log_path = args.log or sealed.log
    if not corpus.is_file() or not log_path.is_file():
        print(f"refused: {sealed.name} has no {corpus.name} and {log_path.name} under {corpus.parent}", file=sys.stderr)
        return 2

    from hermes_memory.memory.scan import find_threats, scan_memory_content

    scan_commit = args.scan_commit
    if scan_commit is None:
        if _git("status", "--porcelain", "--", "src").strip():
            print(
                "refused: src/ has uncommitted changes; commit the scan to be measured first", file=sys.stderr
            )
            return 2
        scan_commit = _git("rev-parse", "--short", "HEAD").strip()
    log = load_log(log_path)
    names = sealed.tuning_names() if args.tuning is None else list(args.tuning)
    try:  # the rules first: a refused look runs no scan on the set
        append_look(sealed.name, log, args.record, {}, scan_commit, "")
    except ValueError as exc:
        print(f"refused: {exc}", file=sys.stderr)
        return 2

    def explain(text: str) -> list[str]:
        return list(find_threats(text))  # the pattern families of the refusal, as the scan names them

    figures = measure(
        sealed.name,
        scan_memory_content,
        explain,
        corpora.corpus_attacks(corpus),
        corpora.corpus_benign(corpus),
        {n: corpora.tuning_corpus(n) for n in names},
    )
    at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    new = append_look(sealed.name, log, args.record, figures, scan_commit, at)
    log_path.write_text(json.dumps({"measurements": new}, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    overall = {k: v for k, v in new[-1].items() if isinstance(v, (str, int))}
    print(json.dumps(overall, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
