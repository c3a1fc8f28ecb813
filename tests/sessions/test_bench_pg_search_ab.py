"""bench/pg_search_ab.py runs end to end on a tiny corpus: both workers answer every query of every
kind, and the same code on both copies of the database answers identically (the check the bench
reports for two versions)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_pg_ab_bench_times_both_versions_and_finds_the_same_code_answers_the_same() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "pg_search_ab.py"), "--size", "400", "--queries", "12",
         "--base-src", str(ROOT / "src")],
        capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert out["load"]["messages"] == 400
    assert set(out["results"]) == {"two_word", "question", "tool", "tool_role_user"}
    for kind, row in out["results"].items():
        assert row["identical_answers"] == "12/12", (kind, row)
        for name in ("base", "branch"):
            assert 0 < row[name]["wall_ms"]["p50"] <= row[name]["wall_ms"]["max"], (kind, name, row)
    assert set(out["pending_pages_end"]["branch"]) >= {"hm_messages_search", "hm_messages_context"}
