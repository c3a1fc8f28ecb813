"""Read-only commands (``sessions list|show|search|export``, ``memory show|export``, ``status``) on a
home that does not exist create nothing and say there is no home at PATH and how to start one; on
a home without state.db they answer as for an empty store and still create no state.db."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hermes_memory.cli.main import app

runner = CliRunner()

READ_ONLY = [
    ("sessions", "list"),
    ("sessions", "list", "--json"),
    ("sessions", "search", "nginx"),
    ("sessions", "search", ""),
    ("sessions", "show", "abc"),
    ("sessions", "export"),
    ("memory", "show"),
    ("sessions", "reindex", "--status"),
]


def _tree(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


@pytest.mark.parametrize("args", READ_ONLY, ids=" ".join)
def test_a_read_only_command_on_a_missing_home_creates_nothing_and_says_how_to_start(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...]) -> None:
    monkeypatch.delenv("HERMES_DATABASE_URL", raising=False)
    home = tmp_path / "no-such-home"
    r = runner.invoke(app, ["--home", str(home), *args])
    assert r.exit_code == 1, r.output
    assert f"there is no data home at {home}" in r.output.replace("\n", "")
    assert "hermes-memory chat" in r.output
    assert not home.exists(), f"{' '.join(args)} created {home}"


def test_memory_export_of_a_missing_home_creates_neither_the_home_nor_the_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HERMES_DATABASE_URL", raising=False)
    home, out = tmp_path / "missing", tmp_path / "out"
    r = runner.invoke(app, ["--home", str(home), "memory", "export", "--to", str(out)])
    assert r.exit_code == 1 and "there is no data home" in r.output
    assert not home.exists() and not out.exists()


def test_status_of_a_missing_home_says_so_and_creates_nothing(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HERMES_DATABASE_URL", raising=False)
    home = tmp_path / "missing"
    r = runner.invoke(app, ["--home", str(home), "status"])
    assert r.exit_code == 0 and "there is no data home at" in r.output
    r = runner.invoke(app, ["--home", str(home), "status", "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["home_exists"] is False
    assert not home.exists()


def test_a_home_without_state_db_lists_nothing_and_creates_no_database(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HERMES_DATABASE_URL", raising=False)
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("memory:\n  memory_char_limit: 3000\n")
    before = _tree(home)
    r = runner.invoke(app, ["--home", str(home), "sessions", "list", "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout) == {"total": 0, "sessions": []}
    r = runner.invoke(app, ["--home", str(home), "sessions", "search", "nginx"])
    assert r.exit_code == 0 and "no matches" in r.output
    r = runner.invoke(app, ["--home", str(home), "sessions", "export"])
    assert r.exit_code == 0 and json.loads(r.stdout) == []
    r = runner.invoke(app, ["--home", str(home), "sessions", "show", "abc"])
    assert r.exit_code == 1 and "does not exist yet" in r.output
    r = runner.invoke(app, ["--home", str(home), "sessions", "prune", "--yes"])
    assert r.exit_code == 0 and "pruned nothing" in r.output
    r = runner.invoke(app, ["--home", str(home), "memory", "show"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["--home", str(home), "sessions", "reindex", "--status", "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["indexed"] == 0
    assert _tree(home) == before, "a read-only command created files in the home"


@pytest.mark.parametrize("args", [*READ_ONLY, ("status",), ("status", "--json")], ids=" ".join)
def test_a_read_only_command_writes_nothing_into_an_empty_state_db(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...]) -> None:
    # a 0-byte state.db (the agent stopped right after creating it, or `touch`): no database yet, as a
    # missing one; a read must not write a schema into another program's file
    monkeypatch.delenv("HERMES_DATABASE_URL", raising=False)
    home = tmp_path / "home"
    home.mkdir()
    (home / "state.db").write_bytes(b"")
    before = _tree(home)
    r = runner.invoke(app, ["--home", str(home), *args])
    assert r.exit_code in (0, 1), r.output
    assert (home / "state.db").stat().st_size == 0, f"{' '.join(args)} wrote into the empty state.db"
    assert _tree(home) == before


REFUSED_EDITS = [
    ("memory", "remove", "x"),
    ("memory", "replace", "x", "y"),
    ("memory", "remove", "--target", "user", "x"),
    ("memory", "add", "y" * 2300),  # longer than the whole 2,200-char limit
]


@pytest.mark.parametrize("args", REFUSED_EDITS, ids=lambda a: " ".join(a)[:30])
def test_a_refused_memory_edit_on_a_missing_home_creates_neither_the_home_nor_a_lock(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...]) -> None:
    monkeypatch.delenv("HERMES_DATABASE_URL", raising=False)
    home = tmp_path / "nohome"
    r = runner.invoke(app, ["--home", str(home), *args])
    assert r.exit_code == 1, r.output
    assert not home.exists(), f"{' '.join(args)[:40]} created {_tree(tmp_path)}"


def test_a_refused_memory_edit_in_a_home_creates_no_lock_file_and_a_real_one_still_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HERMES_DATABASE_URL", raising=False)
    home = tmp_path / "home"
    (home / "memories").mkdir(parents=True)
    (home / "memories" / "MEMORY.md").write_text("deploys go through the staging cluster first")
    before = _tree(home)
    for args in (("remove", "no such entry"), ("replace", "no such entry", "new"), ("add", "z" * 2300),
                 ("add", "deploys go through the staging cluster first")):  # a duplicate writes nothing
        r = runner.invoke(app, ["--home", str(home), "memory", *args])
        assert r.exit_code in (0, 1), r.output
        assert _tree(home) == before, f"memory {args[0]} created {set(_tree(home)) - set(before)}"
    r = runner.invoke(app, ["--home", str(home), "memory", "replace", "staging", "deploys go through staging"])
    assert r.exit_code == 0, r.output
    assert (home / "memories" / "MEMORY.md").read_text() == "deploys go through staging"


def test_a_refused_or_empty_memory_import_into_a_missing_home_creates_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HERMES_DATABASE_URL", raising=False)
    home, src = tmp_path / "nohome", tmp_path / "src"
    src.mkdir()
    (src / "MEMORY.md").write_text("a" * 2000 + "\n§\n" + "b" * 1000)  # over the 2,200-char limit
    r = runner.invoke(app, ["--home", str(home), "memory", "import", "--from", str(src)])
    assert r.exit_code == 1 and "over its limit" in r.output
    assert not home.exists(), _tree(tmp_path)
    (src / "MEMORY.md").write_text("deploys go through staging")
    r = runner.invoke(app, ["--home", str(home), "memory", "import", "--from", str(src)])
    assert r.exit_code == 0 and (home / "memories" / "MEMORY.md").read_text() == "deploys go through staging"
    lock = home / "memories" / "MEMORY.md.lock"
    lock.unlink()
    r = runner.invoke(app, ["--home", str(home), "memory", "import", "--from", str(src)])  # adds nothing
    assert r.exit_code == 0 and "0 added, 1 already present" in r.output and not lock.exists()
