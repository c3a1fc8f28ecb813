"""The MCP Inspector's CLI (a second real client, from npm) against ``serve --transport stdio``.

The Inspector is installed once into ``~/.cache/hermes-memory/npm/mcp-inspector`` (``.ci/run``
does it up front; the fixture does it on first use). Without npm or the package the tests fail
and say why: they never skip.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.mcp.resources import TEMPLATE_SESSION, TEMPLATE_SESSION_MESSAGES, TEMPLATE_USER_PROFILE
from hermes_memory.sessions.db import SessionDB

INSPECTOR_PACKAGE = "@modelcontextprotocol/inspector@2.12.0"
INSPECTOR_DIR = Path.home() / ".cache" / "hermes-memory" / "npm" / "mcp-inspector"


def ensure_inspector() -> Path:
    """The ``mcp-inspector`` executable, installed with npm into :data:`INSPECTOR_DIR` if missing."""
    exe = INSPECTOR_DIR / "node_modules" / ".bin" / "mcp-inspector"
    if exe.exists():
        return exe
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("npm is not installed: the MCP Inspector CLI test needs Node.js and npm (.ci/run installs them)")
    INSPECTOR_DIR.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--loglevel=error", INSPECTOR_PACKAGE],
                          cwd=INSPECTOR_DIR, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0 or not exe.exists():
        pytest.fail(f"could not install {INSPECTOR_PACKAGE} into {INSPECTOR_DIR}: {proc.stderr[-2000:]}")
    return exe


@pytest.fixture(scope="module")
def inspector() -> Path:
    return ensure_inspector()


def run_inspector(exe: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # the Inspector gives a server 15 s to start by default; a loaded machine takes longer to import
    # Python (the baseline failed "Connection timed out after 15000 ms" under load): 120 s is a hang
    # detector, not a speed requirement
    argv = [str(exe), "--cli", "--connect-timeout", "120000", sys.executable, "-m", "hermes_memory", "--home",
            str(home), "serve", "--transport", "stdio", *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=180, env=dict(os.environ))


def ok_json(proc: subprocess.CompletedProcess[str]) -> Any:
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def test_inspector_lists_annotated_tools_with_portable_output_schemas(inspector: Path, hermes_home: Path) -> None:
    (hermes_home / "config.yaml").write_text("memory:\n  provider: holographic\n", encoding="utf-8")
    proc = run_inspector(inspector, hermes_home, "--strict", "--method", "tools/list")
    tools = {t["name"]: t for t in ok_json(proc)["tools"]}
    assert set(tools) == {"memory", "session_search", "fact_store", "fact_feedback"}
    for name, tool in tools.items():
        assert {"readOnlyHint", "destructiveHint", "idempotentHint"} <= set(tool["annotations"]), name
        assert tool["outputSchema"]["type"] == "object", name
    assert "Warning" not in proc.stderr, proc.stderr  # the Inspector's schema portability check


def test_inspector_reads_memory_through_the_read_action(inspector: Path, hermes_home: Path) -> None:
    (hermes_home / "memories").mkdir()
    (hermes_home / "memories" / "MEMORY.md").write_text("Project uses Python 3.12", encoding="utf-8")
    result = ok_json(run_inspector(inspector, hermes_home, "--method", "tools/call", "--tool-name", "memory",
                                   "--tool-arg", "action=read"))
    assert result["isError"] is False
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    assert result["structuredContent"]["memory"]["entries"] == ["Project uses Python 3.12"]
    assert "Project uses Python 3.12" in result["structuredContent"]["snapshot"]


def test_inspector_lists_resource_templates_and_reads_one(inspector: Path, hermes_home: Path) -> None:
    db = SessionDB(hermes_home / "state.db")
    db.create_session(session_id="20250101_abc", source="cli", title="Staging credentials")
    db.append_messages("20250101_abc", [{"role": "user", "content": "rotate the staging credentials"}])
    db.close()
    templates = ok_json(run_inspector(inspector, hermes_home, "--method", "resources/templates/list"))
    assert [t["uriTemplate"] for t in templates["resourceTemplates"]] == [
        TEMPLATE_USER_PROFILE, TEMPLATE_SESSION, TEMPLATE_SESSION_MESSAGES]
    read = ok_json(run_inspector(inspector, hermes_home, "--method", "resources/read",
                                 "--uri", "hermes-memory://sessions/20250101_abc"))
    transcript = json.loads(read["contents"][0]["text"])
    assert transcript["session"]["title"] == "Staging credentials"
    assert [m["content"] for m in transcript["messages"]] == ["rotate the staging credentials"]
    refused = run_inspector(inspector, hermes_home, "--method", "resources/read",
                            "--uri", "hermes-memory://sessions/..%2F..%2Fetc")
    assert refused.returncode != 0 and "invalid session_id" in refused.stdout + refused.stderr
