"""Crash-safe file replacement, shared by every writer of small text files in a home.

Foundation module: no internal imports, so ``config`` and the top layers can all use it.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write_text(path: Path, text: str, mode: int) -> None:
    """Replace ``path`` with ``text`` (UTF-8, written exactly: no newline translation) so that a
    crash at any moment leaves either the old file or the new one, never a torn one.

    The text goes to a temporary file in the same folder (created if missing), is fsynced, given
    ``mode`` (permission bits, e.g. ``0o600``) and renamed over ``path``; the folder is then
    fsynced so the rename itself survives a power cut (best effort: some filesystems refuse).
    ``path`` itself is replaced: callers that want to write through a symlink resolve it first.
    Raises ``OSError``; the temporary file is removed on any failure.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass
