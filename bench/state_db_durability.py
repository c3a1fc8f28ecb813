"""Benchmark: the cost of ``synchronous=FULL`` (the default) against ``normal`` on state.db writes.

Three write paths, each on a fresh database per mode in the same folder:

* ``append_message``: one message per transaction (a live agent turn), per-call latency;
* ``append_messages``: a batch of messages in one transaction, per-batch latency;
* ``import``: many sessions through the importer inside :meth:`SessionDB.batch` (what
  ``sessions import`` does), total seconds, and the same without the batch (one commit per write).

Prints JSON with medians (milliseconds unless named ``_s``) and the FULL/NORMAL ratios.
Usage: ``python bench/state_db_durability.py [--rounds N] [--dir DIR]`` (DIR on the disk to measure).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from hermes_memory.sessions.db import SessionDB  # noqa: E402
from hermes_memory.sessions.importers import import_path  # noqa: E402
from hermes_memory.testing import write_openai_jsonl  # noqa: E402


def run(mode: str, folder: Path, rounds: int, source: Path) -> dict[str, float]:
    out: dict[str, float] = {}
    with SessionDB(folder / f"{mode}-single.db", synchronous=mode) as db:
        db.create_session("s")
        times = []
        for i in range(rounds):
            t = time.perf_counter()
            db.append_message("s", "user", f"message {i} about the deploy window")
            times.append((time.perf_counter() - t) * 1000)
        out["append_message_ms"] = statistics.median(times)
    with SessionDB(folder / f"{mode}-batch.db", synchronous=mode) as db:
        db.create_session("s")
        batch = [{"role": "user", "content": f"batched {j}"} for j in range(100)]
        times = []
        for _ in range(max(5, rounds // 10)):
            t = time.perf_counter()
            db.append_messages("s", batch)
            times.append((time.perf_counter() - t) * 1000)
        out["append_messages_100_ms"] = statistics.median(times)
    for batched in (True, False):
        with SessionDB(folder / f"{mode}-import-{batched}.db", synchronous=mode) as db:
            t = time.perf_counter()
            if batched:
                with db.batch():
                    import_path(db, source, "openai")
            else:
                import_path(db, source, "openai")
            out["import_batched_s" if batched else "import_per_write_s"] = time.perf_counter() - t
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--sessions", type=int, default=500)
    ap.add_argument("--dir", type=Path, default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        folder = Path(tmp)
        source = write_openai_jsonl(folder / "chats.jsonl", args.sessions, 6)
        full = run("full", folder, args.rounds, source)
        normal = run("normal", folder, args.rounds, source)
    print(json.dumps({
        "rounds": args.rounds,
        "import_sessions": args.sessions,
        "full": full,
        "normal": normal,
        "full_over_normal": {k: round(full[k] / normal[k], 2) if normal[k] else None for k in full},
    }, indent=2))


if __name__ == "__main__":
    main()
