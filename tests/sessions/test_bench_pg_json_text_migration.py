"""bench/pg_json_text_migration.py runs end to end on a small database: the upgrade from schema 10
applies every later migration, recomputes every row holding a backslash, changes no stored value,
and every probe (append, edit of an old row, search, a second open) completes without a failure."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hermes_memory.sessions.pg import schema

ROOT = Path(__file__).resolve().parents[2]


def test_the_upgrade_bench_recomputes_every_escaped_row_and_no_probe_fails() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "pg_json_text_migration.py"), "--messages", "600"],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert out["load"]["messages"] == 600 and out["load"]["with_backslash"] > 200
    assert out["migration"]["applied"] == list(range(11, schema.SCHEMA_VERSION + 1))
    assert out["migration"]["json_text_recomputed"] == out["load"]["with_backslash"]
    assert out["stored_values_unchanged"] is True
    for name in ("append", "update_old_row", "search"):
        assert out["probes"][name]["calls"] > 0 and out["probes"][name]["failed"] == 0, (name, out["probes"][name])
    assert out["probes"]["open"]["open_ms"] > 0
    assert out["recomputed_s"] >= out["upgrade_s"]
