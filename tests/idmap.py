"""The map of the test regrouping of issue 18: which file each moved test function went to.

``docs/test-map.md`` lists, per old file, every test function that moved, the file it is in now and how
many collected test ids it has (parametrised ids and both storage engines count one each). This module
writes that page from two ``pytest --collect-only -q`` listings and checks it against the tree::

    python -m tests.idmap check                    # collects now (about a minute), checks the page
    python -m tests.idmap check --after ids.txt    # checks against a listing collected earlier
    python -m tests.idmap write BEFORE AFTER       # rewrites docs/test-map.md from two listings

``check`` exits 1, naming each problem, when a mapped function is collected with another number of ids
than before, is still collected from its old file, is defined in more than one file, or when fewer test
ids are collected in all than before the regrouping. It prints a one-line summary otherwise.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "test-map.md"
ROW = re.compile(r"^\| `(?P<old>tests/[^`]+)` \| `(?P<func>\w+)` \| `(?P<new>tests/[^`]+)` \| (?P<ids>\d+) \|$")
TOTAL = re.compile(r"^Collected before the regrouping: (?P<before>\d+) test ids", re.MULTILINE)


def read_ids(text: str) -> list[str]:
    """The test ids (``path::name[params]``) of a ``pytest --collect-only -q`` listing, in order."""
    return [line.strip() for line in text.splitlines() if "::" in line and not line.startswith(" ")]


def split_id(test_id: str) -> tuple[str, str]:
    """``tests/a/test_b.py::test_c[x-y]`` -> (``tests/a/test_b.py``, ``test_c``); a class method keeps its class."""
    path, rest = test_id.split("::", 1)
    return path, rest.split("[", 1)[0]


def collect() -> list[str]:
    """Collect the whole suite now (``pytest --collect-only -q``); raise ``RuntimeError`` if collection fails."""
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"pytest --collect-only failed ({proc.returncode}):\n{proc.stdout[-3000:]}{proc.stderr[-2000:]}")
    return read_ids(proc.stdout)


def moves(before: list[str], after: list[str]) -> list[tuple[str, str, str, int]]:
    """(old file, function, new file, number of ids) for every function whose ids left their file.

    An id that is gone is matched to the id that is new with the same name and parameters; raises
    ``ValueError`` when one is missing or ambiguous (a test lost, renamed or duplicated).
    """
    before_set, after_set = set(before), set(after)
    gone = [i for i in before if i not in after_set]
    new = [i for i in after if i not in before_set]
    by_rest: dict[str, list[str]] = defaultdict(list)
    for i in new:
        by_rest[i.split("::", 1)[1]].append(i)
    out: Counter[tuple[str, str, str]] = Counter()
    for i in gone:
        rest = i.split("::", 1)[1]
        match = by_rest.get(rest, [])
        if len(match) != 1:
            raise ValueError(f"{i}: {len(match)} new ids with the same name and parameters: {match}")
        old_path, func = split_id(i)
        out[(old_path, func, split_id(match[0])[0])] += 1
    return [(o, f, n, k) for (o, f, n), k in sorted(out.items())]


def write(before: list[str], after: list[str]) -> str:
    """The text of docs/test-map.md for these two listings."""
    rows = moves(before, after)
    per_old: dict[str, Counter[str]] = defaultdict(Counter)
    for old, _func, new, k in rows:
        per_old[old][new] += k
    before_set, after_set = set(before), set(after)
    gone_rests = {i.split("::", 1)[1] for i in before if i not in after_set}
    added = Counter(split_id(i)[0] for i in after if i not in before_set and i.split("::", 1)[1] not in gone_rests)
    lost = len([i for i in before if i not in after_set]) - sum(k for *_, k in rows)
    lines = [
        "# Where the regrouped tests went (issue 18)",
        "",
        "Issue 18 regrouped the test files named for when or how they were written (`*_hardening`,",
        "`*_failure_cases`, `*_edge_cases`, `*_reference_behaviours`, property files, the top-level",
        "`test_docs_citations.py`) into files named for the behaviour they protect. Every function moved",
        "verbatim and kept its name (and its failure-case id, `test_B29_...`); only its file changed.",
        "`python -m tests.idmap check` checks this page against the tree (module docstring of",
        "`tests/idmap.py`).",
        "",
        f"Collected before the regrouping: {len(before)} test ids; after: {len(after)} test ids. "
        f"{sum(k for *_, k in rows)} ids of {len(rows)} functions changed file; each maps to exactly one new id"
        f" ({lost} lost). New ids that are not moved ones: {sum(added.values())}"
        + (" (" + ", ".join(f"`{f}` {k}" for f, k in sorted(added.items())) + ")." if added else "."),
        "",
        "## Per old file",
        "",
        "| Old file | New file | Ids |",
        "|---|---|---|",
    ]
    for old in sorted(per_old):
        for new, k in sorted(per_old[old].items()):
            lines.append(f"| `{old}` | `{new}` | {k} |")
    lines += ["", "## Per function", "", "| Old file | Function | New file | Ids |", "|---|---|---|---|"]
    lines += [f"| `{old}` | `{func}` | `{new}` | {k} |" for old, func, new, k in rows]
    return "\n".join(lines) + "\n"


def check(page: str, after: list[str]) -> list[str]:
    """Problems of the map ``page`` against the collected ids ``after``; empty when it holds."""
    problems = []
    total = TOTAL.search(page)
    if total is None:
        return ["the page has no 'Collected before the regrouping: N test ids' line"]
    if len(after) < int(total["before"]):
        problems.append(f"{len(after)} test ids collected now, {total['before']} before the regrouping")
    counts = Counter(split_id(i) for i in after)
    files_of: dict[str, set[str]] = defaultdict(set)
    for path, func in counts:
        files_of[func].add(path)
    rows = [m for m in map(ROW.match, page.splitlines()) if m]
    if not rows:
        problems.append("the page lists no moved function")
    for m in rows:
        old, func, new, ids = m["old"], m["func"], m["new"], int(m["ids"])
        if counts.get((new, func), 0) != ids:
            problems.append(f"{new}::{func}: {counts.get((new, func), 0)} ids collected, {ids} before in {old}")
        if (old, func) in counts:
            problems.append(f"{old}::{func} is still collected from its old file")
        if len(files_of.get(func, set())) > 1:
            problems.append(f"{func} is defined in {sorted(files_of[func])}")
    return problems


def main(argv: list[str]) -> int:
    if argv[:1] == ["write"] and len(argv) == 3:
        PAGE.write_text(write(read_ids(Path(argv[1]).read_text()), read_ids(Path(argv[2]).read_text())))
        print(f"wrote {PAGE.relative_to(ROOT)}")
        return 0
    if argv[:1] == ["check"]:
        after = read_ids(Path(argv[2]).read_text()) if argv[1:2] == ["--after"] else collect()
        page = PAGE.read_text()
        problems = check(page, after)
        for p in problems:
            print(f"test map: {p}", file=sys.stderr)
        if problems:
            return 1
        rows = sum(1 for line in page.splitlines() if ROW.match(line))
        print(f"test map holds: {rows} moved functions each collected from their one new file with their "
              f"ids; {len(after)} test ids collected now")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
