"""On a home the real reference agent built, our commands never change the mode of its files.

The reference creates ``state.db`` (with ``-wal``/``-shm`` while open) and ``memories/*.lock`` under
its umask (0644); the developers' guide: we add beside what another program owns, never alter it
(docs/security.md §5). Files we create ourselves are 0600."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from hermes_memory.sessions.db import SessionDB
from tests.compat.helpers import REFERENCES, hm, ref


def _modes(home: Path) -> dict[str, int]:
    """Relative path -> permission bits of every file under ``home`` that is not a symlink."""
    return {str(p.relative_to(home)): stat.S_IMODE(p.lstat().st_mode)
            for p in sorted(home.rglob("*")) if p.is_file() and not p.is_symlink()}


@pytest.mark.parametrize("version", list(REFERENCES))
def test_our_commands_leave_the_mode_of_every_reference_file_alone(version: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    old = os.umask(0o022)
    try:
        ref(version, "build", home, {"config": False})
    finally:
        os.umask(old)
    before = _modes(home)
    assert before["state.db"] == 0o644
    assert before["memories/MEMORY.md.lock"] == 0o644
    hm(home, "status")
    hm(home, "memory", "add", "Our own note about the otter pipeline")
    hm(home, "memory", "add", "--target", "user", "Prefers short answers")
    hm(home, "sessions", "search", "walrus")
    after = _modes(home)
    assert {k: after[k] for k in before if k in after} == before
    new = {k: v for k, v in after.items() if k not in before}
    # Sidecars SQLite creates for the reference's database take its mode; anything else is ours: 0600.
    assert all(v == (0o644 if k.startswith("state.db-") else 0o600) for k, v in new.items()), new


def test_a_fresh_home_gets_0600_files(tmp_path: Path) -> None:
    home = tmp_path / "home"
    old = os.umask(0o022)
    try:
        hm(home, "memory", "add", "A first note")
        hm(home, "sessions", "search", "note")
        hm(home, "status")
        db = SessionDB(home / "state.db")  # what the agent loop opens; the CLI above only reads
        db.create_session("s1", "cli")
        modes = _modes(home)
        db.close()
    finally:
        os.umask(old)
    assert modes["state.db"] == 0o600
    assert modes["memories/MEMORY.md.lock"] == 0o600
    assert modes["memories/MEMORY.md"] == 0o600
    assert modes["state.db-wal"] == modes["state.db-shm"] == 0o600
