"""Cost of opening a ``state.db`` whose schema and index are current: the read-only check of this
version against the write-transaction sync every open ran before (same file, alternating, one run).

Prints JSON: per variant the median and p90 wall time of one open+close (ms), the write
transactions one open started (``BEGIN IMMEDIATE`` counted by a trace callback), SQLite's
``total_changes`` of the open, and whether the ``state.db``/``-wal`` bytes changed; then the
``before/after`` ratio of the medians. ``under_lock``: one open while a second process holds
``BEGIN EXCLUSIVE`` (the new path only; the old one waits out its 15 retries, about 20 s).

Usage: ``.venv/bin/python bench/open_cost.py [--messages 20000] [--rounds 30]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.helpers.foreign_lock import file_bytes, foreign_write_lock  # noqa: E402

from hermes_memory.sessions import hmindex, hmrelayout  # noqa: E402
from hermes_memory.sessions.db import SessionDB  # noqa: E402
from hermes_memory.sessions.migrations import migrate  # noqa: E402


class OldOpen(SessionDB):
    """The open of the previous version: migrate, backfill and a relayout step, each in its own
    write transaction, on every open."""

    def _open_schema(self) -> dict[str, Any]:
        report = self._execute_write(migrate)
        hmindex.finish_backfill(self._execute_write, report["index"], hmrelayout.BUDGET_S)
        self._schema_cookie = self._conn.execute("PRAGMA schema_version").fetchone()[0]
        return report


_begins = 0


def _trace(sql: str) -> None:
    global _begins
    if sql.strip().upper().startswith("BEGIN IMMEDIATE"):
        _begins += 1


class Traced:
    """Counts the ``BEGIN IMMEDIATE`` statements of one open by wrapping ``sqlite3.connect``."""

    def __init__(self) -> None:
        import sqlite3

        self.sqlite3 = sqlite3
        self.real = sqlite3.connect

    def __enter__(self) -> Traced:
        real = self.real

        def connect(*a: Any, **k: Any) -> Any:
            conn = real(*a, **k)
            conn.set_trace_callback(_trace)
            return conn

        self.sqlite3.connect = connect  # type: ignore[assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        self.sqlite3.connect = self.real  # type: ignore[assignment]


def _open_once(cls: type[SessionDB], path: Path) -> tuple[float, int, int]:
    global _begins
    _begins = 0
    t0 = time.perf_counter()
    db = cls(path)
    changes = db.conn.total_changes
    db.close()
    return (time.perf_counter() - t0) * 1000, _begins, changes


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=30)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "state.db"
        with SessionDB(path) as db:
            db.create_session("s1")
            with db.batch():
                for i in range(args.messages):
                    db.append_message("s1", "user" if i % 2 else "assistant", f"message {i} about otters and kelp")
        keeper = SessionDB(path)  # another connection stays open, as a running agent's would
        out: dict[str, Any] = {"messages": args.messages, "rounds": args.rounds}
        times: dict[str, list[float]] = {"before": [], "after": []}
        with Traced():
            for _ in range(args.rounds):
                for name, cls in (("before", OldOpen), ("after", SessionDB)):
                    snap = file_bytes(path)
                    ms, begins, changes = _open_once(cls, path)
                    times[name].append(ms)
                    out.setdefault(name, {})
                    out[name].update(write_transactions_per_open=begins, total_changes_per_open=changes,
                                     file_changed=file_bytes(path) != snap)
        for name, ms in times.items():
            ms.sort()
            out[name].update(median_ms=round(statistics.median(ms), 3), p90_ms=round(ms[int(len(ms) * 0.9) - 1], 3))
        out["ratio_before_over_after"] = round(out["before"]["median_ms"] / out["after"]["median_ms"], 2)
        keeper.close()
        with foreign_write_lock(path, "EXCLUSIVE"):
            t0 = time.perf_counter()
            with SessionDB(path) as db:
                n = len(db.get_messages("s1"))
            out["under_lock"] = {"after_open_and_read_ms": round((time.perf_counter() - t0) * 1000, 3),
                                 "messages_read": n}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
