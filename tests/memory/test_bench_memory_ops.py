"""bench/memory_ops.py runs end to end (a bench nobody runs breaks unnoticed): tiny rounds, one folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_memory_ops_bench_prints_every_figure_for_each_folder_and_the_reference(tmp_path: Path) -> None:
    from tests import backends

    backends.ensure("hermes-agent")  # the bench runs the reference MemoryStore beside ours
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "memory_ops.py"), "--rounds", "3", "--dir", str(tmp_path)],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    data = json.loads(out.stdout)
    (run,) = data["runs"]
    assert run["dir"] == str(tmp_path) and run["rounds"] == 3 and run["fs"] != "unknown"
    assert set(run["median_us"]) == {"add", "replace", "remove", "bare"}
    assert set(run["breakdown_us"]) == {"lock", "critical_section", "read_miss", "scan", "scan_regex", "scan_learned_features",
                                     "scan_learned_score", "write", "fixed_cpu"}
    assert set(run["scan_in_op"]) == {"scan_us", "op_cost_us", "share", "back_to_back_us", "cold_factor", "rounds"}
    assert set(run["headroom_us"]) == {"add", "replace", "remove"}
    cache = run["read_cache"]
    assert cache["hits"] + cache["misses"] == 9
    if cache["mode"] == "multigrain":  # multigrain ctime: no op had to re-read its own last write
        assert cache["hits"] == 9
    ref = run["reference"]
    assert "error" not in ref and set(ref["median_us"]) == {"add", "replace", "remove", "bare"}
    assert ref["ratio_all_ops"] > 0
