"""Drive ``memory setup`` and ``providers list`` in process (typer's CliRunner), for the wizard tests."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from hermes_memory.cli.main import app


def wizard(home: Path, provider: str, *sets: str) -> dict[str, Any]:
    """Run ``memory setup --provider NAME --set K=V ... --yes --json``; return its JSON output.

    Also checks the secrets file is private (mode 0600) when one was written.
    """
    args = ["--home", str(home), "memory", "setup", "--provider", provider, "--yes", "--json"]
    for item in sets:
        args += ["--set", item]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    if out["env"]:
        assert stat.S_IMODE((home / ".env").stat().st_mode) == 0o600
    return out


def listed(home: Path, provider: str) -> dict[str, Any]:
    """``providers list --json`` entry for ``provider``: ``{available, active, reason}``."""
    result = CliRunner().invoke(app, ["--home", str(home), "providers", "list", "--json"])
    assert result.exit_code == 0, result.output
    entry = next(i for i in json.loads(result.stdout) if i["name"] == provider)
    return {"available": entry["available"], "active": entry["active"], "reason": entry["reason"]}
