"""Location of the data home (``$HERMES_HOME``, default ``~/.hermes``) and the paths inside it.

The layout matches the reference Hermes agent, so an existing home works as is::

    $HERMES_HOME/
      config.yaml          memory:, compression:, prompt_caching:, model: sections
      .env                 provider secrets (mode 0600)
      state.db             SessionDB (SQLite, WAL)
      memories/MEMORY.md   agent notes        (2,200 chars by default)
      memories/USER.md     user profile       (1,375 chars by default)
      memories/users/<user_id>/USER.md        per-user profile in gateway mode
      plugins/<name>/      user-installed memory providers

Each profile is its own home; nothing is shared between homes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from hermes_memory.errors import HomeError

ENV_VAR = "HERMES_HOME"
DEFAULT_HOME = Path("~/.hermes")


def resolve_home(explicit: str | os.PathLike[str] | None = None) -> Path:
    """Return the data home as an absolute path (not created).

    Precedence: ``explicit`` (the CLI's ``--home``) > ``$HERMES_HOME`` > ``~/.hermes``.
    ``~`` is expanded. Raises :class:`HomeError` if the path exists and is not a directory.
    """
    raw = explicit if explicit not in (None, "") else os.environ.get(ENV_VAR) or DEFAULT_HOME
    path = Path(raw).expanduser().resolve()
    if path.exists() and not path.is_dir():
        raise HomeError(f"HERMES_HOME {path} exists but is not a directory; pass --home DIR or set {ENV_VAR}.")
    return path


@dataclass(frozen=True)
class HermesHome:
    """Paths inside one data home. Pure path arithmetic; :meth:`ensure` creates the folders."""

    root: Path

    @classmethod
    def resolve(cls, explicit: str | os.PathLike[str] | None = None) -> HermesHome:
        """Build from ``--home`` / ``$HERMES_HOME`` / ``~/.hermes`` (see :func:`resolve_home`)."""
        return cls(resolve_home(explicit))

    @property
    def config_path(self) -> Path:
        return self.root / "config.yaml"

    @property
    def env_path(self) -> Path:
        return self.root / ".env"

    @property
    def state_db(self) -> Path:
        return self.root / "state.db"

    def has_state_db(self) -> bool:
        """True when ``state.db`` exists and holds a database: a 0-byte file (created and never
        written, its WAL empty or absent) is no database yet, and read-only commands treat it as a
        missing one instead of writing a schema into it."""
        db = self.state_db
        try:
            if db.stat().st_size > 0:
                return True
        except OSError:
            return db.exists()  # a folder or an unreadable path: opening it says what is wrong
        wal = db.with_name(db.name + "-wal")
        return wal.exists() and wal.stat().st_size > 0

    @property
    def memories_dir(self) -> Path:
        return self.root / "memories"

    def live_files(self) -> list[tuple[Path, str]]:
        """The files of this home that other programs (the Hermes Agent) read and write, as
        ``(path, what it is)``: state.db with its -wal/-shm/-journal, config.yaml, .env and every
        MEMORY.md/USER.md. A command writing a file the user names never replaces one of them."""
        db = self.state_db
        out = [(db, "the session database of this home")]
        out += [(db.with_name(db.name + s), f"the session database's {s[1:]} file") for s in ("-wal", "-shm", "-journal")]
        out += [(self.config_path, "this home's config.yaml"), (self.env_path, "this home's .env")]
        mem = self.memories_dir
        out += [(mem / "MEMORY.md", "this home's MEMORY.md"), (mem / "USER.md", "this home's USER.md")]
        try:
            out += [(p, "a USER.md of this home") for p in sorted((mem / "users").glob("*/USER.md"))]
        except OSError:
            pass
        return out

    @property
    def plugins_dir(self) -> Path:
        return self.root / "plugins"

    def ensure(self) -> HermesHome:
        """Create the home and its ``memories/`` folder (mode 0700 for new folders); return self."""
        try:
            self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
            self.memories_dir.mkdir(exist_ok=True, mode=0o700)
        except OSError as exc:
            raise HomeError(f"cannot create HERMES_HOME {self.root}: {exc}. Pass --home DIR to use another folder.") from exc
        return self
