"""A REAL second process holding a write transaction on a SQLite file, as the Hermes Agent (or an
import) does during a long write: ``with foreign_write_lock(path, "EXCLUSIVE"): ...``.

The process first commits one message row (so the WAL holds frames an open could checkpoint), then
runs ``BEGIN IMMEDIATE`` or ``BEGIN EXCLUSIVE`` plus one uncommitted insert, says so on stdout and
holds the transaction until told to stop (its stdin closes), then rolls it back.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

_HOLDER = textwrap.dedent("""
    import sqlite3, sys
    path, mode = sys.argv[1], sys.argv[2]
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("INSERT INTO messages(session_id, role, content, timestamp) "
                 "VALUES ('s1', 'assistant', 'committed by the agent before its long write', 3)")
    conn.execute("BEGIN " + mode)
    conn.execute("INSERT INTO sessions(id, source, started_at) VALUES ('uncommitted', 'cli', 9)")
    print("locked", flush=True)
    sys.stdin.read()  # held until the test closes our stdin
    conn.execute("ROLLBACK")
    conn.close()
""")

COMMITTED_TEXT = "committed by the agent before its long write"
"""Content of the message the holder commits before it takes the lock (session ``s1``)."""


@contextlib.contextmanager
def foreign_write_lock(path: Path, mode: str) -> Iterator[subprocess.Popen[str]]:
    """Hold ``BEGIN <mode>`` (``"IMMEDIATE"`` or ``"EXCLUSIVE"``) on ``path`` in another process for
    the ``with`` block. The file must hold a session ``s1``. Raises AssertionError when the holder
    did not get its lock."""
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(path), mode], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "locked", proc.stderr
        yield proc
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=30)


def file_bytes(path: Path) -> dict[str, bytes]:
    """The bytes of ``path`` and its ``-wal`` (present ones): what a read must leave unchanged.
    (``-shm`` is SQLite's shared-memory index, which every reader maps and marks.)"""
    out = {}
    for suffix in ("", "-wal"):
        p = Path(str(path) + suffix)
        if p.exists():
            out[suffix] = p.read_bytes()
    return out
