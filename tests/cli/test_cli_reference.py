"""Every CLI command a user can run is named in the README's CLI reference section."""

from __future__ import annotations

import re
from pathlib import Path

import typer

from hermes_memory.cli.main import app

README = Path(__file__).resolve().parents[2] / "README.md"


def _commands(command, prefix=()):
    subcommands = getattr(command, "commands", None)
    if subcommands is None:
        yield " ".join(prefix)
        return
    for name, sub in subcommands.items():
        if not getattr(sub, "hidden", False):
            yield from _commands(sub, (*prefix, name))


def _reference_section() -> str:
    text = README.read_text(encoding="utf-8")
    match = re.search(r"^## CLI reference\n(.*?)(?=^## )", text, re.S | re.M)
    assert match, "README.md has no '## CLI reference' section"
    return match.group(1)


def test_every_cli_command_is_in_the_readme_cli_reference():
    commands = list(_commands(typer.main.get_command(app)))
    assert "sessions search" in commands and "hooks install" in commands  # the walk reaches subgroups
    section = _reference_section()
    missing = [c for c in commands if f"`hermes-memory {c}`" not in section]
    assert missing == [], f"add a row for each to README.md's CLI reference: {missing}"


def test_the_cli_reference_names_no_command_that_does_not_exist():
    commands = set(_commands(typer.main.get_command(app)))
    named = set(re.findall(r"`hermes-memory ([a-z][a-z -]*?)`", _reference_section()))
    assert named - commands == set()
