"""A PostgreSQL memory store whose server refuses the connection: the CLI fails at once with one message.

Real processes (our CLI in a subprocess) against a closed port on 127.0.0.1. Before, ``get_pool``
waited in ``pool.open(wait=True)`` for 30 s while the pool's worker logged a ``psycopg.pool``
warning per retry, then said "pool initialization incomplete"."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.http import free_port

HANG_GUARD_S = 120
"""Bounds each subprocess (a hang fails the test); never a timing claim."""


def _files(home: Path) -> dict[str, bytes]:
    return {str(p.relative_to(home)): p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("args", [["memory", "show"], ["memory", "add", "a note that must not be written"],
                                  ["memory", "add", "--target", "user", "Prefers tea"]])
def test_a_refused_connection_is_one_clear_error_and_the_process_exits(args: list[str], tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "memories").mkdir()
    (home / "memories" / "MEMORY.md").write_text("a local file that is not the database", encoding="utf-8")
    before = _files(home)
    url = f"postgresql://sam:hunter2secret@127.0.0.1:{free_port()}/nowhere"
    env = {**os.environ, "HERMES_DATABASE_URL": url}
    proc = subprocess.run([sys.executable, "-m", "hermes_memory", "--home", str(home), *args], env=env,
                          capture_output=True, text=True, timeout=HANG_GUARD_S, check=False)
    out = " ".join((proc.stdout + proc.stderr).split())  # the CLI wraps long lines
    assert proc.returncode == 1, out
    assert "cannot open the memory database postgresql://sam:***@127.0.0.1:" in out
    assert "Connection refused" in out
    assert "HERMES_DATABASE_URL" in out  # says what to fix
    assert "hunter2secret" not in out
    assert "psycopg.pool" not in out and "pool initialization incomplete" not in out
    assert out.count("cannot open the memory database") == 1
    assert _files(home) == before  # nothing written
