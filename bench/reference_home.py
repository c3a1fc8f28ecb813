"""Opening a large state.db that the reference Hermes Agent built: first open, and after it wrote more.

Prints JSON. Steps, on a database the real reference (0.19.0, from its own venv) filled with
``--messages`` messages:

1. ``first_open``: our first open builds our ``hm_*`` index from every message (once per home), in
   chunks of ``BUILD_CHUNK`` rows, one write transaction each.
2. ``reopen``: nothing happened meanwhile -> O(1).
3. ``after_reference_appended_triggers_present``: the reference appended ``--added`` rows with its
   own ``append_message``; our triggers ran inside its transactions, so nothing is left to do.
4. ``after_reference_rebuilt_messages`` (then ``verification_opens_after_rebuild``: the following
   opens, each comparing at most ``VERIFY_BATCH`` rows' stored copy with ``messages``): the reference's ``messages`` table was rebuilt (as a
   schema migration does, dropping every trigger on it, ours included), then the reference
   appended ``--added`` rows and deleted sessions: our open catches up from the high-water mark and
   repairs the deleted rows one by one. ``scan_seconds`` is the untokenised pass over ids and
   stored text; ``index_seconds`` is the tokenising work, which scales with the rows added/changed.
5. ``scaling``: the same catch-up for 100 and 10x ``--added`` rows on the same database.

Usage: ``.venv/bin/python bench/reference_home.py [--messages 100000] [--added 1000]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests import backends  # noqa: E402

from hermes_memory.sessions.db import SessionDB  # noqa: E402

HELPER = ROOT / "tests" / "compat" / "ref_agent.py"


def ref(python: Path, home: Path, command: str, arg: dict | None = None) -> dict:
    proc = subprocess.run([str(python), str(HELPER), command, str(home), json.dumps(arg or {})],
                          capture_output=True, text=True, timeout=1800, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"reference {command} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout)


def our_open(home: Path) -> dict:
    t0 = time.perf_counter()
    db = SessionDB(home / "state.db")
    seconds = time.perf_counter() - t0
    report = dict(db.migration["index"])
    meta = dict(db.conn.execute("SELECT key, value FROM hm_meta").fetchall())
    db.close()
    return {"open_seconds": round(seconds, 4), "index": report, "full_builds_total": int(meta.get("full_builds", 0))}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--added", type=int, default=1000)
    args = parser.parse_args()
    python = backends.ensure("hermes-agent")
    work = Path(tempfile.mkdtemp(prefix="hm-bench-refhome-"))
    try:
        home = work / "home"
        per = 50
        built = ref(python, home, "bulk", {"sessions": args.messages // per, "per": per})
        out: dict[str, object] = {"messages": built["messages"], "reference_bulk_write_seconds": built["seconds"]}
        out["first_open"] = our_open(home)
        out["reopen"] = our_open(home)
        ref(python, home, "append", {"n": args.added})
        out["after_reference_appended_triggers_present"] = our_open(home)
        rb = ref(python, home, "rebuild_messages", {"delete": ["bulk-000001", "bulk-000002"]})
        ref(python, home, "append", {"n": args.added})
        out["reference_rebuild_left_triggers"] = rb["triggers_left_after_rebuild"]
        out["after_reference_rebuilt_messages"] = our_open(home)
        verify = []
        while True:  # rows changed while our triggers were absent: verified in bounded batches per open
            step = our_open(home)
            verify.append({"open_seconds": step["open_seconds"], "verified": step["index"]["verified"],
                           "changed": step["index"]["changed"]})
            if not step["index"]["verify_pending"] or len(verify) > 20:
                break
        out["verification_opens_after_rebuild"] = verify
        scaling = {}
        for n in (100, args.added * 10):
            ref(python, home, "rebuild_messages", {})
            ref(python, home, "append", {"n": n})
            scaling[str(n)] = our_open(home)
        out["scaling"] = scaling
        check = ref(python, home, "check")
        out["reference_check"] = {"integrity": check["integrity"], "fts": check["fts"]}
        print(json.dumps(out, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
