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


@pytest.mark.parametrize("config", ["memory:\n  provider: holographc\n", "memory:\n  provider: retaindb\n"])
def test_home_status_flags_a_provider_that_cannot_be_used(tmp_path: Path, config: str) -> None:
    """`status` showed a misspelt or unconfigured provider as if it were fine (exit 0, no word);
    it now says why it cannot be used, once, and ``--json`` carries it as ``provider_error``."""
    import json

    home = tmp_path / "h"
    home.mkdir()
    (home / "config.yaml").write_text(config)
    env = {k: v for k, v in os.environ.items() if k not in ("RETAINDB_API_KEY", "HERMES_HOME")}
    argv = [sys.executable, "-m", "hermes_memory", "--home", str(home), "status"]
    r = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("cannot be used:") == 1 and "ERROR" not in r.stdout + r.stderr
    j = subprocess.run([*argv, "--json"], capture_output=True, text=True, env=env, timeout=120)
    report = json.loads(j.stdout)
    assert report["provider_error"] and report["provider_error"] in " ".join(r.stdout.split())


def test_home_status_has_no_provider_error_with_built_in_memory(tmp_path: Path) -> None:
    home = tmp_path / "h"
    home.mkdir()
    r = subprocess.run([sys.executable, "-m", "hermes_memory", "--home", str(home), "status", "--json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and '"provider_error": null' in r.stdout
