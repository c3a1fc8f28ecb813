"""Crash-safe file replacement, shared by every writer of small text files in a home.

Foundation module: no internal imports, so ``config`` and the top layers can all use it.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path


def atomic_write_text(path: Path, text: str, mode: int, *, exclusive: bool = False) -> None:
    """Replace ``path`` with ``text`` (UTF-8, written exactly: no newline translation) so that a
    crash at any moment leaves either the old file or the new one, never a torn one.

    The text goes to a temporary file in the same folder (created if missing), is fsynced, given
    ``mode`` (permission bits, e.g. ``0o600``) and renamed over ``path``; the folder is then
    fsynced so the rename itself survives a power cut (best effort: some filesystems refuse).
    ``path`` itself is replaced: callers that want to write through a symlink resolve it first.
    ``exclusive``: never replace an existing ``path`` (the finished file is hard-linked into place,
    so a file created meanwhile is not overwritten): raises ``FileExistsError`` instead.
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
        if exclusive:
            _link_into_place(tmp, path)
        else:
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


def _link_into_place(tmp: str, path: Path) -> None:
    """Put the finished ``tmp`` at ``path`` only if nothing is there (``FileExistsError`` otherwise);
    ``tmp`` is removed. A filesystem without hard links gets a check then a rename."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise
    except OSError:
        if os.path.lexists(path):
            raise FileExistsError(17, "File exists", os.fspath(path)) from None
        os.replace(tmp, path)
        return
    os.unlink(tmp)


#: The first 16 bytes of every SQLite 3 database file (https://www.sqlite.org/fileformat.html, 1.3).
SQLITE_HEADER = b"SQLite format 3\x00"


def is_sqlite_file(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` is a regular file that begins with :data:`SQLITE_HEADER` (unreadable: False)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False


def exists_refusal(path: str | os.PathLike[str], *, other_content: bool = False) -> str:
    """The refusal for an existing output file written without ``--force`` (every CLI command that
    writes a file the user names words it so: ``memory export``, ``sessions export -o``)."""
    what = " with other content" if other_content else ""
    return f"{os.fspath(path)} already exists{what}; left as it is (use --force to overwrite)."


def protected_file(path: Path, protected: Sequence[tuple[Path, str]]) -> tuple[Path, str] | None:
    """The ``(path, what it is)`` of ``protected`` that ``path`` is, compared after resolving symlinks
    and as the same inode when both exist; ``None`` when it is none of them."""
    real = path.resolve()
    for other, what in protected:
        if real == other.resolve() or (real.exists() and other.exists() and os.path.samefile(real, other)):
            return other, what
    return None


class OutputRefused(Exception):
    """:func:`write_output_file` left the path alone; ``str(exc)`` says why and how to go on."""


def write_output_file(path: Path, text: str, *, force: bool = False,
                      protected: Sequence[tuple[Path, str]] = ()) -> Path:
    """Write ``text`` (UTF-8) to the user's output file ``path`` atomically; return the file written.

    Refused with :class:`OutputRefused` (the file left byte-identical): a folder; one of
    ``protected`` (``(path, what it is)`` pairs: a data home's own files, compared after resolving
    symlinks, and as the same inode when both exist); any SQLite database (:func:`is_sqlite_file`);
    these three even with ``force``. Without ``force`` an existing file is refused too
    (:func:`exists_refusal`), also one created while writing. A symlink is written through (its
    target is replaced). The text goes to a temporary file in the same folder, is fsynced and renamed
    into place (:func:`atomic_write_text`), so a crash leaves the old file or the whole new one. A
    new file gets mode 0600 (exports hold conversations); a replaced one keeps its mode. Raises
    ``OSError`` when the folder is missing or not writable.
    """
    real = path.resolve()
    if real.is_dir():
        raise OutputRefused(f"{path} is a folder; give a file name, e.g. -o {path / 'export.json'}.")
    hit = protected_file(real, protected)
    if hit is not None:
        other, what = hit
        raise OutputRefused(
            f"refusing to write {path}: it is {what} ({other}), which this would destroy, even with --force; "
            "nothing was written. Write the export to another file, e.g. -o sessions.json.")
    if is_sqlite_file(real):
        raise OutputRefused(
            f"refusing to write {path}: it is an SQLite database, which this would destroy, even with --force; "
            "nothing was written. Write the export to another file, e.g. -o sessions.json.")
    exists = os.path.lexists(real)
    if exists and not force:
        raise OutputRefused(exists_refusal(path))
    if not real.parent.is_dir():
        raise FileNotFoundError(2, "no such folder", os.fspath(real.parent))
    mode = 0o600
    if exists:
        mode = os.stat(real).st_mode & 0o7777
    try:
        atomic_write_text(real, text, mode, exclusive=not force)
    except FileExistsError:
        raise OutputRefused(exists_refusal(path)) from None
    return real
