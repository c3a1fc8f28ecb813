"""``memory status`` / ``providers status`` report an unusable provider exactly once (as a real
process, so the logging set up by the CLI is the one a user sees)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize("command", [["memory", "status"], ["providers", "status"]])
def test_unavailable_provider_reason_is_printed_once(tmp_path: Path, command: list[str]) -> None:
    home = tmp_path / "h"
    home.mkdir()
    (home / "config.yaml").write_text("memory:\n  provider: retaindb\n")
    env = {k: v for k, v in os.environ.items() if k not in ("RETAINDB_API_KEY", "HERMES_HOME")}
    r = subprocess.run([sys.executable, "-m", "hermes_memory", "--home", str(home), *command],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr
    out = r.stdout + r.stderr
    assert out.count("RETAINDB_API_KEY is not set") == 1, out
    assert out.count("memory setup --provider retaindb") == 1, out
    assert "ERROR" not in out
