"""Every design citation in the code leads somewhere a contributor can read (issue 18).

Code, tests and benches cite the design docs as ``docs/<page>.md §N`` (or ``docs/<page>.md
"Heading"``) and failure cases by id (``B29``, ``C14``). These tests fail when a file under
``src/``, ``tests/`` or ``bench/`` (or ``pyproject.toml``) cites a design note that lives outside
the repository (the old ``reference-behaviour.md``, ``failure-cases-2.md``, ``../shared/spec/...``),
names a docs/ page, section or heading that does not exist, cites a failure-case id that
docs/failure-cases.md does not list, or writes a bare ``§N`` in a comment or docstring without
saying which page it is in. ``make lint`` runs the first check as a grep as well.

Evaluation data read at run time from ``../shared/data/`` (LoCoMo) is not a citation and is allowed.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SCANNED_DIRS = ("src", "tests", "bench")
SCANNED_FILES = ("pyproject.toml",)
THIS_FILE = Path(__file__).resolve()

#: Design notes that were never in the repository, in any spelling the code has used. A bare page
#: name (``providers.md``) is outside too: inside the repository it is ``docs/providers.md``.
OUTSIDE = re.compile(
    r"reference-behaviou?r"
    r"|failure-cases-2"
    r"|house-style\.md|splits\.md|landscape\.md"
    r"|shared/(?:spec|cases)/"
    r"|(?:\.\./|/work/)shared/(?!data/)"
    r"|(?<![\w/.-])(?:architecture|reference|providers|failure-cases|security|benchmarks|style)\.md"
    r"|\breference §",
    re.IGNORECASE,
)

#: ``docs/<page>.md`` followed by its sections: ``§6``, ``§9, §11``, ``§1.2``, ``§10 and §12``.
DOCS_CITATION = re.compile(r"(?<![\w/.-])docs/(?P<page>[\w-]+\.md)(?P<sections>(?:(?:\s*[,;]\s*|\s+and\s+|\s+)§\d+(?:\.\d+)*)*)")
#: ``docs/<page>.md "Heading"``.
DOCS_HEADING = re.compile(r'(?<![\w/.-])docs/(?P<page>[\w-]+\.md) "(?P<heading>[^"\n]+)"')
SECTION = re.compile(r"§(\d+(?:\.\d+)*)")
#: A section sign together with the document it belongs to: a docs/ page, an RFC or an issue.
OWNED_SECTIONS = re.compile(
    r"(?:docs/[\w-]+\.md|RFC \d+|[Ii]ssues? \d+)(?:(?:\s*[,;]\s*|\s+and\s+|\s+)§\d+(?:\.\d+)*)+"
)
BARE_SECTION = re.compile(r"§\d")
CASE_ID = re.compile(r"\b[BC]\d{2}\b")


def _scanned_paths() -> list[Path]:
    paths = [ROOT / name for name in SCANNED_FILES]
    for folder in SCANNED_DIRS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.resolve() != THIS_FILE:
                paths.append(path)
    return paths


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:  # a binary fixture (an image, a SQLite file): nothing to cite
        return None


def _sources() -> list[tuple[Path, str]]:
    return [(p, t) for p in _scanned_paths() if (t := _text(p)) is not None]


def _python_sources() -> list[tuple[Path, str]]:
    return [(p, t) for p, t in _sources() if p.suffix == ".py"]


def _code_sources() -> list[tuple[Path, str]]:
    """Python files and pyproject.toml: where citations are written (data files are test input)."""
    return [(p, t) for p, t in _sources() if p.suffix in (".py", ".toml")]


def _where(path: Path, text: str, offset: int) -> str:
    return f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, offset) + 1}"


def outside_citations(text: str) -> list[str]:
    """The citations of out-of-repository design notes in ``text`` (matched text, in order)."""
    return [m.group(0) for m in OUTSIDE.finditer(text)]


def _headings(page: str) -> list[str]:
    return [line.lstrip("#").strip() for line in (DOCS / page).read_text(encoding="utf-8").splitlines()
            if line.startswith("#")]


def _section_numbers(page: str) -> set[str]:
    """Numbers of the page's numbered headings: ``## §6 SessionDB`` -> 6, ``## 1. Threat scan`` -> 1."""
    found = set()
    for heading in _headings(page):
        m = re.match(r"§?(\d+(?:\.\d+)*)\.?(?:\s|$)", heading)
        if m:
            found.add(m.group(1))
    return found


def broken_docs_citations(text: str) -> list[str]:
    """Citations in ``text`` of a docs/ page, section or heading that does not exist."""
    broken = []
    for m in DOCS_CITATION.finditer(text):
        page = m.group("page")
        if not (DOCS / page).is_file():
            broken.append(f"docs/{page} (no such page)")
            continue
        numbers = _section_numbers(page)
        broken += [f"docs/{page} §{n} (no such section)" for n in SECTION.findall(m.group("sections"))
                   if n not in numbers]
    for m in DOCS_HEADING.finditer(text):
        page, heading = m.group("page"), m.group("heading")
        if (DOCS / page).is_file() and heading not in _headings(page):
            broken.append(f'docs/{page} "{heading}" (no such heading)')
    return broken


def _comments_and_docstrings(source: str) -> list[tuple[int, str]]:
    """(line, text) of every comment and every string statement (docstrings, attribute notes)."""
    found = [(tok.start[0], tok.string) for tok in tokenize.generate_tokens(io.StringIO(source).readline)
             if tok.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            found.append((node.lineno, node.value.value))
    return found


def unowned_sections(text: str) -> list[str]:
    """``§N`` signs in ``text`` that do not follow the page, RFC or issue they belong to."""
    owned = OWNED_SECTIONS.sub("", text)
    return [owned[max(0, m.start() - 30):m.end() + 10].strip() for m in BARE_SECTION.finditer(owned)]


def _listed_case_ids() -> set[str]:
    return set(re.findall(r"^\| ([BC]\d{2}) \|", (DOCS / "failure-cases.md").read_text(encoding="utf-8"), re.M))


# --------------------------------------------------------------------------- the checks themselves
@pytest.mark.parametrize("line", [
    "Behaviour follows reference-behaviour.md §4 (NEWEST where it differs)",
    "Reference-behaviour.md §3. It contributes the frozen snapshots",
    "Behaviour follows the reference plugin (providers.md §7).",
    "Failure cases B01-B15 of shared/cases/failure-cases.md, one test per case",
    "see ../shared/spec/house-style.md",
    "the scanner scenarios (reference §12)",
    "failure-cases-2.md C14",
    "see architecture.md",
])
def test_outside_citation_check_catches_every_old_spelling(line: str) -> None:
    assert outside_citations(line), line


@pytest.mark.parametrize("line", [
    "Behaviour follows docs/reference.md §4 (NEWEST where it differs)",
    "read at run time from ``../shared/data/locomo/locomo-dev.json`` (evaluation data)",
    "the user's ``memories/profile.md`` and ``SOUL.md``",
    "see docs/architecture.md and README.md",
])
def test_outside_citation_check_passes_docs_pages_and_evaluation_data(line: str) -> None:
    assert outside_citations(line) == [], line


def test_docs_citation_check_catches_a_missing_page_section_or_heading() -> None:
    assert broken_docs_citations("see docs/reference.md §6") == []
    assert broken_docs_citations("see docs/reference.md §9, §11 item 20") == []
    assert broken_docs_citations("(docs/security.md §1; docs/providers.md §4.4)") == []
    assert broken_docs_citations("see docs/reference-behaviour.md §6") == ["docs/reference-behaviour.md (no such page)"]
    assert broken_docs_citations("(docs/reference.md §6, §99)") == ["docs/reference.md §99 (no such section)"]
    assert broken_docs_citations("docs/providers.md §4.9") == ["docs/providers.md §4.9 (no such section)"]
    assert broken_docs_citations('"uri": "viking://resources/docs/intro.md"') == []
    assert broken_docs_citations('docs/architecture.md "What flows where"') == [
        'docs/architecture.md "What flows where" (no such heading)']


def test_bare_section_check_wants_the_page_rfc_or_issue_next_to_the_sign() -> None:
    assert unowned_sections("(docs/reference.md §9, §11 item 20; failure case B34)") == []
    assert unowned_sections("RFC 9110 §11.1 and issue 13\n§5") == []
    assert unowned_sections("call ids refer to it (§5).") != []
    assert unowned_sections("a memory folder with the §12 test limits") != []


# --------------------------------------------------------------------------- the repository
def test_no_file_cites_a_design_note_outside_the_repository() -> None:
    hits = [f"{_where(p, t, m.start())}: {m.group(0)}" for p, t in _sources() for m in OUTSIDE.finditer(t)]
    assert hits == [], "cite docs/<page>.md §N instead (see docs/README.md):\n" + "\n".join(hits)


def test_every_docs_citation_names_a_page_section_and_heading_that_exist() -> None:
    broken = [f"{p.relative_to(ROOT)}: {b}" for p, t in _code_sources() for b in broken_docs_citations(t)]
    assert broken == [], "\n".join(broken)


def test_every_section_sign_in_comments_and_docstrings_names_its_page() -> None:
    bare = [f"{p.relative_to(ROOT)}:{line}: {s!r}" for p, t in _python_sources()
            for line, text in _comments_and_docstrings(t) for s in unowned_sections(text)]
    assert bare == [], "write docs/<page>.md §N, not a bare §N:\n" + "\n".join(bare)


def test_every_failure_case_id_in_the_code_is_listed_in_docs_failure_cases() -> None:
    listed = _listed_case_ids()
    assert len(listed) > 30  # the table parsed at all
    missing = sorted({f"{cid} ({p.relative_to(ROOT)})" for p, t in _python_sources()
                      for cid in CASE_ID.findall(t) if cid not in listed})
    assert missing == [], "add these ids to docs/failure-cases.md or drop them:\n" + "\n".join(missing)
