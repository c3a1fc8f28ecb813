"""``memory export --to DIR`` writes MEMORY.md, USER.md and users/<id>/USER.md and nothing else: no
``.lock`` sidecar files, no temp files. Into a folder that is a live store (its files already have
locks) it writes under those locks, and the lock files stay as they were."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from hermes_memory.cli.main import app

runner = CliRunner()


def _cli(home: Path, *args: str) -> str:
    r = runner.invoke(app, ["--home", str(home), *args])
    assert r.exit_code == 0, r.output
    return r.output


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_export_writes_only_the_markdown_files(tmp_path: Path) -> None:
    home, out = tmp_path / "home", tmp_path / "export"
    _cli(home, "memory", "add", "deploys go through the staging cluster first")
    _cli(home, "memory", "add", "--target", "user", "prefers short answers")
    _cli(home, "memory", "add", "--target", "user", "--user-id", "alice", "alice works nights")
    _cli(home, "memory", "export", "--to", str(out))
    assert _files(out) == ["MEMORY.md", "USER.md", "users/alice/USER.md"]
    assert (out / "MEMORY.md").read_text() == "deploys go through the staging cluster first"
    _cli(home, "memory", "export", "--to", str(out))  # again: unchanged, still no lock files
    assert _files(out) == ["MEMORY.md", "USER.md", "users/alice/USER.md"]
    _cli(home, "memory", "add", "the on-call rota is in the wiki")
    _cli(home, "memory", "export", "--to", str(out), "--force")
    assert _files(out) == ["MEMORY.md", "USER.md", "users/alice/USER.md"]
    assert "on-call rota" in (out / "MEMORY.md").read_text()


def test_export_into_a_live_store_keeps_its_lock_files(tmp_path: Path) -> None:
    src, live = tmp_path / "src", tmp_path / "live"
    _cli(src, "memory", "add", "from the source home")
    _cli(live, "memory", "add", "x")  # the live home's MEMORY.md has its sidecar lock now
    _cli(live, "memory", "remove", "x")
    lock = live / "memories" / "MEMORY.md.lock"
    assert lock.exists()
    _cli(src, "memory", "export", "--to", str(live / "memories"), "--force")
    assert lock.exists() and (live / "memories" / "MEMORY.md").read_text() == "from the source home"
