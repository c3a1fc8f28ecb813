"""Real client CLIs from npm, installed once into a cache the tests manage.

``ensure_claude()`` / ``ensure_gemini()`` return the executable of ``@anthropic-ai/claude-code``
(:data:`CLAUDE_VERSION`) / ``@google/gemini-cli`` (:data:`GEMINI_VERSION`), installing the package
with ``npm install --prefix ~/.cache/hermes-memory/npm/<name>-<version>`` when missing (``.ci/run``
does the same up front: ``python -m tests.hooks.npm_cli``). Claude Code declares Node 22 or later
but runs on Node 20 through its native binary. When npm is missing or an install fails, the test
fails saying so: it is never skipped silently.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

CLAUDE_VERSION = "2.1.328"
GEMINI_VERSION = "0.61.0"
CACHE = Path(os.environ.get("HERMES_MEMORY_NPM_CACHE", "~/.cache/hermes-memory/npm")).expanduser()


def ensure(package: str, version: str, binary: str, folder_name: str) -> str:
    """Path of a working ``binary`` from ``package@version`` (``--version`` reports ``version``)."""
    folder = CACHE / f"{folder_name}-{version}"
    exe = folder / "node_modules" / ".bin" / binary
    if not exe.exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail(f"npm is not installed: the {package} test needs Node.js and npm "
                        "(apt-get install nodejs npm; .ci/run installs them)")
        folder.mkdir(parents=True, exist_ok=True)
        r = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(folder), f"{package}@{version}"],
                           capture_output=True, text=True, timeout=900)
        if r.returncode != 0 or not exe.exists():
            pytest.fail(f"npm install {package}@{version} failed (rc {r.returncode}): {(r.stderr or r.stdout)[-1500:]}")
    r = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "GEMINI_CLI_TRUST_WORKSPACE": "true"})
    if r.returncode != 0 or version not in r.stdout:
        pytest.fail(f"{exe} --version did not report {version} (rc {r.returncode}): {r.stdout} {r.stderr}"[-1500:])
    return str(exe)


def ensure_claude() -> str:
    """The Claude Code CLI (``claude``)."""
    return ensure("@anthropic-ai/claude-code", CLAUDE_VERSION, "claude", "claude-code")


def ensure_gemini() -> str:
    """The Gemini CLI (``gemini``)."""
    return ensure("@google/gemini-cli", GEMINI_VERSION, "gemini", "gemini-cli")


if __name__ == "__main__":  # `python -m tests.hooks.npm_cli` installs both (used by .ci/run)
    print(ensure_claude())
    print(ensure_gemini())
