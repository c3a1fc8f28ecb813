"""Every command's ``--help`` at 80 columns reads as wrapped paragraphs: no line broken before a
word that fit on it (a hard-wrapped docstring line kept as a line break), and nothing cut to "…"."""

from __future__ import annotations

import re

import pytest
import typer
from typer.testing import CliRunner

from hermes_memory.cli.main import app
from tests.cli.test_cli_reference import _commands

runner = CliRunner()
WIDTH = 80
COMMANDS = list(_commands(typer.main.get_command(app)))
GROUPS = sorted({" ".join(c.split()[:i]) for c in COMMANDS for i in range(1, len(c.split()))})


def _last_cell_start(line: str, end: int) -> int:
    """Column where the text of ``line``'s last cell begins (after the last gap of 2+ spaces or a border)."""
    starts = [m.end() for m in re.finditer(r"(?:  +|│ ?)", line[:end])]
    return starts[-1] if starts else len(line) - len(line.lstrip())


def broken_lines(text: str) -> list[tuple[str, str]]:
    """Pairs of consecutive lines where the second's first word would have fit on the first, in the same cell."""
    out = []
    lines = text.splitlines()
    for a, b in zip(lines, lines[1:], strict=False):
        edge = a.rfind("│") - 1 if a.rstrip().endswith("│") and a.rstrip().count("│") >= 2 else WIDTH - 1
        body = a[:edge + 1] if a.rstrip().endswith("│") else a
        end = len(body.rstrip())
        if end == 0 or not b.strip(" │"):
            continue
        start = _last_cell_start(body, end)
        word = re.match(r" *(\S+)", b[start:]) if len(b) > start and b[start] != " " and b[start - 1] in " │" else None
        if word is None or b[:start].strip(" │") or word.group(1).startswith("["):
            # another cell, a new row (its first cells are filled), or rich's own "[default: ...]" line
            continue
        if end + 1 + len(word.group(1)) <= edge:
            out.append((a.rstrip(), b.rstrip()))
    return out


def test_the_checker_finds_a_hard_wrapped_line() -> None:
    bad = ("│ status     Show this home: config file, storage backend and database (never  │\n"
           "│            its password), how many                                           │\n"
           "│            sessions and messages it holds, memory usage, the external        │\n")
    assert broken_lines(bad) == [(bad.splitlines()[1].rstrip(), bad.splitlines()[2].rstrip())]
    good = ("│ status     Show this home: config file, storage backend and database (never  │\n"
            "│            its password), how many sessions and messages it holds, memory    │\n"
            "│ --json     Print JSON.                                                       │\n"
            "│ --help     Show this message and exit.                                       │\n")
    assert broken_lines(good) == []


@pytest.mark.parametrize("command", ["", *GROUPS, *COMMANDS])
def test_help_at_80_columns_has_no_broken_sentence_or_cut_word(command: str) -> None:
    r = runner.invoke(app, [*command.split(), "--help"], env={"COLUMNS": str(WIDTH), "TERMINAL_WIDTH": str(WIDTH)},
                      terminal_width=WIDTH)
    assert r.exit_code == 0, r.output
    assert max(len(ln) for ln in r.output.splitlines()) <= WIDTH
    assert broken_lines(r.output) == []
    assert "…" not in r.output
