"""A healthy state.db on a full disk or a read-only mount is never called damaged: the message names
the cause and the fix and never says to move the file aside (that would hide the whole history),
the commands that only read work on a read-only mount, and an import that runs out of space stops
with a clean message saying what it kept. Real tmpfs mounts, made in a user and mount namespace
(``unshare -rm``, open to an unprivileged user), and real ``hermes-memory`` processes."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.sqlite_env import DAMAGED, FULL, READ_ONLY, UNREACHABLE, sqlite_cause

HM = f"{sys.executable} -m hermes_memory --home $M/home"


def _seed(folder: Path, *, keep_wal: bool) -> Path:
    """A healthy state.db (one session, "deploy the shop") in ``folder``; with ``keep_wal`` its
    -wal and -shm are copied too, as a running agent leaves them."""
    src = folder / "src"
    db = SessionDB(src / "state.db")
    db.create_session("s1", source="cli")
    db.append_message("s1", "user", "deploy the shop")
    db.close()
    out = folder / "seed"
    out.mkdir()
    if keep_wal:
        conn = sqlite3.connect(src / "state.db")
        conn.execute("PRAGMA wal_autocheckpoint=0")
        conn.execute("UPDATE sessions SET title = 'shop deploy' WHERE id = 's1'")
        conn.commit()
        for suffix in ("", "-wal", "-shm"):
            shutil.copy(str(src / "state.db") + suffix, str(out / "state.db") + suffix)
        conn.close()
    else:
        shutil.copy(src / "state.db", out / "state.db")
    return out


def _in_namespace(tmp_path: Path, seed: Path, script: str) -> str:
    """Run ``script`` (bash) with a fresh 2 MiB tmpfs at ``$M`` holding ``$M/home`` (a copy of
    ``seed``); returns stdout and stderr together. Fails, never skips, where user namespaces are off."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    head = (f"exec 2>&1; set -u; M={mnt}; mount -t tmpfs -o size=2m tmpfs $M && mkdir $M/home && cp {seed}/state.db* $M/home/ "
            "|| exit 99\n")
    res = subprocess.run(["unshare", "-rm", "bash", "-c", head + script], capture_output=True, text=True,
                         timeout=300, cwd=Path(__file__).resolve().parents[2])
    assert res.returncode != 99, f"cannot mount a tmpfs in a user namespace (unshare -rm): {res.stderr}"
    return " ".join((res.stdout + res.stderr).split())


@pytest.mark.slow
def test_C26_on_a_full_disk_reads_name_the_full_disk_and_never_say_move_it_aside(tmp_path: Path) -> None:
    out = _in_namespace(tmp_path, _seed(tmp_path, keep_wal=False), f"""
dd if=/dev/zero of=$M/fill bs=64k 2>/dev/null
echo "@list"; {HM} sessions list; echo "rc=$?"
echo "@search"; {HM} sessions search deploy; echo "rc=$?"
echo "@status"; {HM} status
""")
    assert "Move it aside" not in out and "not a usable session database" not in out, out
    for part in out.split("@")[1:]:
        assert "is full: free space there" in part and "do not move it aside" in part, part
    assert out.count("rc=1") == 2, out


@pytest.mark.slow
def test_an_import_that_fills_the_disk_stops_cleanly_and_keeps_the_history(tmp_path: Path) -> None:
    big = tmp_path / "big.jsonl"
    big.write_text("\n".join(json.dumps({"id": f"c{i}", "messages": [
        {"role": "user", "content": f"wombat {i} " + "filler words " * 200}]}) for i in range(3000)) + "\n")
    out = _in_namespace(tmp_path, _seed(tmp_path, keep_wal=False), f"""
{HM} sessions import {big} --format openai; echo "rc=$?"
rm -f $M/fill; {HM} sessions search deploy --json
""")
    assert "Traceback" not in out and "OperationalError" not in out, out
    assert "import stopped:" in out and "is full: free space there" in out and "Imported before it stopped:" in out, out
    assert "rc=1" in out and '"session_id": "s1"' in out, out


@pytest.mark.slow
@pytest.mark.parametrize("keep_wal", [False, True], ids=["checkpointed", "with-wal-and-shm"])
def test_on_a_read_only_mount_the_read_only_commands_read(tmp_path: Path, keep_wal: bool) -> None:
    out = _in_namespace(tmp_path, _seed(tmp_path, keep_wal=keep_wal), f"""
mount -o remount,ro $M || exit 99
{HM} sessions list --json && {HM} sessions search deploy --json && {HM} sessions show s1 --json \\
  && {HM} sessions export && {HM} status --json && echo ALL-READ
{HM} sessions import /dev/null --format openai; echo "import-rc=$?"
""")
    assert "ALL-READ" in out and "Move it aside" not in out, out
    assert '"error": null' in out and "deploy the shop" in out, out


def test_sqlite_errors_are_classified_by_cause(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database at all, not a single page of one" * 100)
    with pytest.raises(sqlite3.DatabaseError) as damaged:
        sqlite3.connect(junk).execute("SELECT * FROM sqlite_master").fetchall()
    assert sqlite_cause(damaged.value) == DAMAGED
    with pytest.raises(sqlite3.OperationalError) as cannot_open:
        sqlite3.connect(f"file:{tmp_path}/missing/x.db?mode=ro", uri=True)
    assert sqlite_cause(cannot_open.value) == UNREACHABLE
    assert sqlite_cause(sqlite3.OperationalError("database or disk is full")) == FULL
    assert sqlite_cause(sqlite3.OperationalError("attempt to write a readonly database")) == READ_ONLY
    assert sqlite_cause(sqlite3.OperationalError("disk I/O error")) == UNREACHABLE
