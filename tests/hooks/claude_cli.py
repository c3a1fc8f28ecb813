"""The real Claude Code CLI from npm, installed once into a cache the tests manage.

``ensure_claude()`` returns the ``claude`` executable of ``@anthropic-ai/claude-code`` at
:data:`VERSION`, installing it with ``npm install --prefix ~/.cache/hermes-memory/npm/claude-code-<v>``
when missing (``.ci/run`` does the same up front). It declares Node 22 or later but runs on Node 20
through its native binary (``@anthropic-ai/claude-code-linux-x64``). When npm is missing or the
install fails, the test fails saying so: it is never skipped silently.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

VERSION = "2.1.328"
CACHE = Path(os.environ.get("HERMES_MEMORY_NPM_CACHE", "~/.cache/hermes-memory/npm")).expanduser()


def install_dir() -> Path:
    return CACHE / f"claude-code-{VERSION}"


def ensure_claude() -> str:
    """Path of a working ``claude`` (``claude --version`` reports :data:`VERSION`)."""
    folder = install_dir()
    exe = folder / "node_modules" / ".bin" / "claude"
    if not exe.exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail("npm is not installed: the Claude Code CLI test needs Node.js and npm "
                        "(apt-get install nodejs npm; .ci/run installs them)")
        folder.mkdir(parents=True, exist_ok=True)
        r = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(folder),
                            f"@anthropic-ai/claude-code@{VERSION}"], capture_output=True, text=True, timeout=600)
        if r.returncode != 0 or not exe.exists():
            pytest.fail(f"npm install @anthropic-ai/claude-code@{VERSION} failed (rc {r.returncode}): "
                        f"{(r.stderr or r.stdout)[-1500:]}")
    r = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=120)
    if r.returncode != 0 or VERSION not in r.stdout:
        pytest.fail(f"{exe} --version did not report {VERSION} (rc {r.returncode}): {r.stdout} {r.stderr}"[-1500:])
    return str(exe)


if __name__ == "__main__":  # `python -m tests.hooks.claude_cli` installs it (used by .ci/run)
    print(ensure_claude())
