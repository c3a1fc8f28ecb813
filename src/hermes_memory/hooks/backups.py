"""Copies of a client's settings file as it was before we changed it.

Before :func:`hermes_memory.hooks.settings.install` or ``uninstall`` replaces a settings file, the
old bytes go to ``$HERMES_HOME/hooks/backups/<UTC time>-<path digest>-<file name>`` (mode 0600:
settings can hold API keys), so a user who dislikes the edit can put the file back with ``cp``.
The newest ``keep`` copies per settings file are kept; older ones are deleted.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

from hermes_memory.fsutil import atomic_write_text


def backup_dir(hm_root: Path) -> Path:
    """``$HERMES_HOME/hooks/backups``."""
    return hm_root / "hooks" / "backups"


def save_backup(hm_root: Path, path: Path, text: str, keep: int) -> Path:
    """Write ``text`` (the file at ``path`` before our change) to a new backup and return its
    path; prunes the copies of ``path`` beyond the newest ``keep``. Raises ``OSError``."""
    folder = backup_dir(hm_root)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    digest = hashlib.sha256(str(path).encode("utf-8")).hexdigest()[:10]
    now = time.time()
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f"{int(now * 1e6) % 1_000_000:06d}Z"
    target = folder / f"{stamp}-{digest}-{path.name}"
    atomic_write_text(target, text, 0o600)
    mine = sorted(p for p in folder.glob(f"*-{digest}-{path.name}") if p.is_file())
    for old in mine[:-keep] if keep > 0 else mine:
        try:
            old.unlink()
        except OSError:
            pass
    return target
