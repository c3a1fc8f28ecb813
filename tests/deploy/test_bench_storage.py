"""bench/storage.py runs end to end on a tiny corpus: both engines measured, every figure present.

The bench imports bench/sessions.py's corpus and growth helpers; a change there once broke it
silently (it is not run by anything else), so a real run at a few hundred messages guards it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_storage_bench_measures_both_engines_on_a_tiny_corpus(pg_url: str) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "storage.py"), "--sizes", "300", "--queries", "12",
         "--append-per-writer", "20", "--memory-rounds", "5", "--pg-url", pg_url],
        capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    for kind in ("sqlite", "postgres"):
        (row,) = out["search"][kind]
        assert row["messages"] == 300
        assert row["two_word"]["queries"] == row["natural_language"]["queries"] == 12
    assert out["ratios_postgres_over_sqlite"]["search_natural_language_p95_at_largest"] > 0
    assert set(out["append"]) and set(out["memory"])
