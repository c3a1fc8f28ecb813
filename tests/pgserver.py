"""A real, throwaway PostgreSQL server for the tests (issue 16).

The server is Debian's ``postgresql`` package (any major version under ``/usr/lib/postgresql``; 15 on
these machines, with ``postgresql-contrib`` for ``pg_trgm``). ``.ci/run`` installs it with apt, and
``ensure_installed()`` does the same on first use when running as root, so no manual step is needed.

One cluster per test session, in a temporary folder, listening on 127.0.0.1 at a free port and on a
Unix socket in that folder. Durability is switched off (``fsync=off``) because the cluster is thrown
away: the tests check our SQL and locking, not PostgreSQL's WAL. Each test gets a database of its own
(``PostgresServer.create_database``), so tests never see each other's rows.

When the server cannot be installed or started, the fixture raises with the reason: tests that need
PostgreSQL fail loudly, they never skip.

Run ``python -m tests.pgserver install`` to install the packages (``.ci/run`` does), or
``python -m tests.pgserver run`` to start a server by hand and print its URL.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

APT_PACKAGES = ["postgresql", "postgresql-contrib"]
START_TIMEOUT_S = 60.0


class PostgresUnavailable(RuntimeError):
    """PostgreSQL could not be installed or started; the message says why and how to fix it."""



def _runuser() -> str:
    """``runuser`` by its full path: it lives in /usr/sbin, which a minimal PATH (``env -i``, some
    CI shells) leaves out."""
    return shutil.which("runuser") or next(
        (p for p in ("/usr/sbin/runuser", "/sbin/runuser") if os.path.exists(p)), "runuser")

def find_bindir() -> Path | None:
    """The ``bin`` folder of the newest PostgreSQL under /usr/lib/postgresql, or None."""
    candidates = []
    for path in glob.glob("/usr/lib/postgresql/*/bin/initdb"):
        try:
            candidates.append((int(Path(path).parent.parent.name), Path(path).parent))
        except ValueError:
            continue
    if not candidates:
        return None
    return max(candidates)[1]


def ensure_installed() -> Path:
    """Return the server's bin folder, installing Debian's packages with apt first when missing.

    Raises PostgresUnavailable when the packages are missing and cannot be installed (not root, or
    apt failed); the message carries apt's output.
    """
    bindir = find_bindir()
    if bindir is not None and _has_trgm(bindir):
        return bindir
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise PostgresUnavailable(
            "PostgreSQL server binaries (with pg_trgm) were not found under /usr/lib/postgresql and this "
            "process cannot install them; run: sudo apt-get install -y " + " ".join(APT_PACKAGES))
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", *APT_PACKAGES]):
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise PostgresUnavailable(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    bindir = find_bindir()
    if bindir is None:
        raise PostgresUnavailable("apt installed postgresql but no /usr/lib/postgresql/*/bin/initdb exists")
    return bindir


def _has_trgm(bindir: Path) -> bool:
    version = bindir.parent.name
    return Path(f"/usr/share/postgresql/{version}/extension/pg_trgm.control").exists()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class PostgresServer:
    """A PostgreSQL cluster in a temporary folder, owned by this process.

    ``url`` is the DSN of the ``postgres`` database (user ``postgres``, trust authentication on
    loopback). ``create_database()`` returns the DSN of a fresh, empty database. ``stop()`` shuts the
    server down and deletes the folder; it is safe to call twice.

    ``root``: a folder to keep the cluster in instead of a new temporary one (the benchmarks reuse a
    loaded cluster: an existing cluster there is started, not initialised again), and then ``stop()``
    leaves it in place. ``settings``: extra server settings (name -> value, ``-c name=value``).
    """

    def __init__(self, *, max_connections: int = 300, root: Path | None = None,
                 settings: dict[str, str] | None = None) -> None:
        self.bindir = ensure_installed()
        self.keep = root is not None
        if root is not None:
            root.mkdir(parents=True, exist_ok=True)
            (root / "sock").mkdir(exist_ok=True)
        self.root = root if root is not None else Path(tempfile.mkdtemp(prefix="hermes-pg-", dir="/tmp"))
        self.settings = dict(settings or {})
        self.data = self.root / "data"
        self.sock_dir = self.root / "sock"
        self.sock_dir.mkdir(exist_ok=True)
        self.log = self.root / "server.log"
        self.port = _free_port()
        self.max_connections = max_connections
        self._as_root = os.geteuid() == 0
        self._proc: subprocess.Popen[bytes] | None = None
        if self._as_root:
            # initdb and postgres refuse to run as root: the cluster belongs to the postgres user.
            shutil.chown(self.root, "postgres", "postgres")
            shutil.chown(self.sock_dir, "postgres", "postgres")
            self.root.chmod(0o755)
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _cmd(self, args: list[str]) -> list[str]:
        return [_runuser(), "-u", "postgres", "--", *args] if self._as_root else args

    def start(self) -> PostgresServer:
        """initdb and start the server; wait until it accepts connections (at most 60 s).

        Raises PostgresUnavailable with the server log when it does not come up.
        """
        if not (self.data / "PG_VERSION").exists():
            init = subprocess.run(
                self._cmd([str(self.bindir / "initdb"), "-D", str(self.data), "-U", "postgres", "-A", "trust",
                           "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"]),
                capture_output=True, text=True)
            if init.returncode != 0:
                raise PostgresUnavailable(f"initdb failed ({init.returncode}):\n{init.stdout[-2000:]}{init.stderr[-2000:]}")
        log = open(self.log, "wb")
        if self._as_root:
            shutil.chown(self.log, "postgres", "postgres")
        self._proc = subprocess.Popen(
            self._cmd([str(self.bindir / "postgres"), "-D", str(self.data), "-p", str(self.port),
                       "-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={self.sock_dir}",
                       "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
                       "-c", f"max_connections={self.max_connections}", "-c", "shared_buffers=128MB",
                       *[a for k, v in self.settings.items() for a in ("-c", f"{k}={v}")]]),
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                break
            if self._ready():
                return self
            time.sleep(0.1)
        tail = self.log.read_text(errors="replace")[-3000:]
        self.stop()
        raise PostgresUnavailable(f"PostgreSQL did not start on 127.0.0.1:{self.port}:\n{tail}")

    def _ready(self) -> bool:
        proc = subprocess.run([str(self.bindir / "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port),
                               "-U", "postgres"], capture_output=True)
        return proc.returncode == 0

    def psql(self, sql: str, database: str = "postgres") -> str:
        """Run SQL with psql as the superuser; return stdout. Raises RuntimeError on failure."""
        proc = subprocess.run([str(self.bindir / "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U",
                               "postgres", "-d", database, "-v", "ON_ERROR_STOP=1", "-qAt", "-c", sql],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"psql failed: {proc.stderr.strip()}")
        return proc.stdout

    def create_database(self, name: str | None = None) -> str:
        """Create an empty database (``pg_trgm`` available to install) and return its DSN."""
        name = name or "t_" + uuid.uuid4().hex[:16]
        self.psql(f'CREATE DATABASE "{name}" TEMPLATE template0 ENCODING \'UTF8\'')
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        """Stop the server (fast shutdown) and delete its folder (kept when given as ``root``)."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._proc = None
        if not self.keep:
            shutil.rmtree(self.root, ignore_errors=True)


def main(argv: list[str]) -> int:
    if argv[:1] == ["install"]:
        print(ensure_installed())
        return 0
    if argv[:1] == ["run"]:
        server = PostgresServer().start()
        print(server.url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            server.stop()
        return 0
    print("usage: python -m tests.pgserver install|run", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
