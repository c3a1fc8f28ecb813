"""bench/pg_search_ab.py runs end to end on a tiny corpus: both workers answer every query of every
kind, and the same code on both copies of the database answers identically (the check the bench
reports for two versions)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
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


def test_the_pg_ab_bench_loads_the_natural_corpus_in_bulk_once_and_reuses_a_kept_cluster() -> None:
    # the bulk load checks each sampled row's previous-turn vector against the trigger's function
    # (a difference fails the run); a second run on the kept cluster copies the loaded corpus.
    # The cluster folder is under /tmp: the server's user (postgres, when run as root) must reach it.
    tmp_path = Path(tempfile.mkdtemp(prefix="hermes-pg-bench-", dir="/tmp"))
    tmp_path.chmod(0o755)
    cmd = [sys.executable, str(ROOT / "bench" / "pg_search_ab.py"), "--corpus", "natural", "--size", "400",
           "--queries", "12", "--base-src", str(ROOT / "src"), "--cluster", str(tmp_path / "cluster")]
    runs = []
    try:
        for _ in range(2):
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
            assert proc.returncode == 0, proc.stderr[-3000:]
            runs.append(json.loads(proc.stdout))
        assert (tmp_path / "cluster" / "data" / "PG_VERSION").exists()
    finally:
        shutil.rmtree(tmp_path, ignore_errors=True)
    first, second = runs
    assert first["load"]["messages"] == 400 and "reused" not in first["load"]
    assert second["load"]["reused"] is True and second["load"]["messages"] == 400
    for out in runs:
        assert out["corpus"] == "natural"
        for kind, row in out["results"].items():
            assert row["identical_answers"] == "12/12", (kind, row)
            assert row["branch"]["server_exec_ms"]["max"] > 0, (kind, row)


def test_the_pg_ab_bench_times_one_index_alone_on_copies_that_differ_only_by_it() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "pg_search_ab.py"), "--corpus", "natural", "--size", "400",
         "--queries", "12", "--drop-on-base", "hm_messages_recent"],
        capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert out["base"] == "this checkout without index hm_messages_recent"
    for kind, row in out["results"].items():
        assert row["identical_answers"] == "12/12", (kind, row)
