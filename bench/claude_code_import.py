"""Import time of a Claude Code projects folder (default 100 sessions x 500 messages = 50,000), and
the cost of the Stop hook's incremental import of one more turn into a long session.

Transcripts are realistic: user prompts, assistant text with usage, tool calls and tool results,
``cwd``/``gitBranch`` on every record. Printed JSON: ``full_import_s`` (median of ``--reps`` runs
into a fresh state.db), ``messages_per_s``, ``incremental_turn_s`` (median over 20 turns appended to
a 5,000-message session, each imported with ``import_incremental``) and ``full_reimport_turn_s``
(the same turn through a whole-file import, for comparison).

Usage: ``python bench/claude_code_import.py [--sessions 100] [--messages 500] [--reps 3]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))


def make_folder(root: Path, sessions: int = 100, messages_per_session: int = 500) -> Path:
    """Write ``sessions`` transcripts of ``messages_per_session`` stored messages each under ``root``."""
    from tests.hooks.helpers import Transcript

    for s in range(sessions):
        t = Transcript(root / f"-home-dev-proj{s % 7}" / f"sess-{s:04d}.jsonl", f"sess-{s:04d}",
                       cwd=f"/home/dev/proj{s % 7}")
        records = []
        for i in range(messages_per_session // 4):  # 4 stored messages per exchange
            tid = f"toolu_{s}_{i}"
            records += [t.user(f"step {i}: check the parser for case {s}-{i}"),
                        t.tool_use(tid, "Bash", {"command": f"grep -n case{i} src/parser.py"}),
                        t.tool_result(tid, f"src/parser.py:{i}: def case{i}(): ..."),
                        t.assistant_text(f"Case {s}-{i} is handled on line {i}.")]
        t.write(*records)
    return root


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=100)
    ap.add_argument("--messages", type=int, default=500)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    from tests.hooks.helpers import Transcript

    from hermes_memory.sessions.db import SessionDB
    from hermes_memory.sessions.importers import import_path
    from hermes_memory.sessions.importers.claude_code import import_incremental

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        folder = make_folder(base / "projects", args.sessions, args.messages)
        runs: list[float] = []
        imported = 0
        ticks: list[int] = []
        for rep in range(args.reps):
            ticks.clear()
            with SessionDB(base / f"state-{rep}.db") as db:
                start = time.perf_counter()
                report = import_path(db, folder, "claude_code", progress=lambda d, t: ticks.append(d))
                runs.append(time.perf_counter() - start)
            imported = report.messages_imported
        t = Transcript(base / "long.jsonl", "long")
        t.write(*[r for i in range(2500) for r in (t.user(f"q{i}"), t.assistant_text(f"a{i}"))])
        inc, full = [], []
        with SessionDB(base / "long.db") as db:
            _, state = import_incremental(db, t.path, None)
            for i in range(20):
                t.turn(f"more {i}", f"reply {i}")
                start = time.perf_counter()
                _, state = import_incremental(db, t.path, state)
                inc.append(time.perf_counter() - start)
        with SessionDB(base / "long-full.db") as db:
            import_path(db, t.path, "claude_code")
            for i in range(5):
                t.turn(f"again {i}", f"reply {i}")
                start = time.perf_counter()
                import_path(db, t.path, "claude_code")
                full.append(time.perf_counter() - start)
    med = statistics.median(runs)
    print(json.dumps({"sessions": args.sessions, "messages": imported, "full_import_s": round(med, 3),
                      "messages_per_s": round(imported / med), "progress_ticks": len(ticks),
                      "incremental_turn_s": round(statistics.median(inc), 4),
                      "full_reimport_turn_s": round(statistics.median(full), 4)}, indent=2))


if __name__ == "__main__":
    main()
