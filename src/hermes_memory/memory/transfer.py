"""Moving curated memory between Markdown files and a store (``hermes-memory memory export|import``).

The Markdown side is a memories folder as the file backend writes it: ``MEMORY.md``, ``USER.md``
and ``users/<user_id>/USER.md`` (gateway users), entries joined by ``"\\n§\\n"``. The store side is
any :class:`~hermes_memory.memory.store.MemoryStore` (files of a home, or PostgreSQL rows).

:func:`import_entries` is all-or-nothing per target: every entry is validated and threat-scanned
as a write would be, the limit is checked on the final state, and the target is written once
inside the backend's critical section, or not at all. Importing the same files twice adds nothing
(entries already present are kept, not duplicated).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_memory.fsutil import exists_refusal, protected_file
from hermes_memory.memory.backend import Stored
from hermes_memory.memory.entries import (
    ENTRY_DELIMITER,
    FILE_NAMES,
    drift_reason,
    joined_len,
    usage_text,
    validate_user_id,
)
from hermes_memory.memory.filebackend import FileBackend, real_path
from hermes_memory.memory.ops import clean_content
from hermes_memory.memory.store import MemoryStore
from hermes_memory.wording import count as counted


@dataclass
class MarkdownTarget:
    """One Markdown file of a memories folder: which target and user it holds, and what it read as."""

    target: str
    user_id: str | None
    path: Path
    entries: list[str]
    error: str | None = None

    @property
    def label(self) -> str:
        """``MEMORY.md``, ``USER.md`` or ``users/<id>/USER.md`` (how messages name it)."""
        return f"users/{self.user_id}/USER.md" if self.user_id else FILE_NAMES[self.target]


def read_markdown_dir(folder: str | Path) -> tuple[list[MarkdownTarget], list[str]]:
    """The memory files found in ``folder`` and the problems met (unsafe user folder names).

    Files that do not exist are left out; a file that cannot be read (not UTF-8, no rights) is
    listed with ``error`` set so the caller refuses it instead of importing nothing silently.
    """
    root = Path(folder)
    found: list[MarkdownTarget] = []
    problems: list[str] = []
    shared = FileBackend(root)
    for target in ("memory", "user"):
        path = shared.path_for(target)
        if path.is_file():
            got = shared.read(target)
            found.append(MarkdownTarget(target, None, path, got.entries, got.error))
    users = root / "users"
    if users.is_dir():
        for sub in sorted(users.iterdir()):
            if not (sub / "USER.md").is_file():
                continue
            try:
                uid = validate_user_id(sub.name)
            except ValueError as exc:
                problems.append(f"users/{sub.name}/USER.md skipped: {exc}")
                continue
            got = FileBackend(root, uid).read("user")
            found.append(MarkdownTarget("user", uid, sub / "USER.md", got.entries, got.error))
    return found, problems


def import_entries(store: MemoryStore, target: str, entries: Sequence[str], *, replace: bool = False) -> dict[str, Any]:
    """Put ``entries`` into ``store``'s ``target``, all or nothing.

    Merge (default): entries not yet stored are appended in order; stored ones stay. ``replace``:
    the target becomes exactly ``entries`` (and a target stored outside the delimiter form may be
    overwritten; a merge refuses it like a batch would, keeping a backup). Returns
    ``{"success": True, "target", "added", "already_present", "removed", "entry_count", "usage"}`` or
    ``{"success": False, "error"}`` naming every refused entry (1-based) or the size over the limit;
    a refusal writes nothing. Raises what the backend raises when the storage cannot be reached.
    """
    name = store.file_name(target)
    limit = store.limits[target]
    cleaned: list[str] = []
    refused: list[str] = []
    for i, raw in enumerate(entries, 1):
        text, err = clean_content(raw, "the entry is empty")
        if err:
            refused.append(f"entry {i} ({_short(raw)}): {err}")
        elif text not in cleaned:
            cleaned.append(text)
    if refused:
        return {"success": False, "target": target, "error": (
            f"{name}: {len(refused)} of {counted(len(entries), 'entry')} refused, so nothing was imported into it. "
            + " ".join(refused) + " Edit those entries in the file and import again."
        )}
    # decided first on an unlocked read: a refusal or an import that adds nothing takes no lock, so
    # it creates no home, folder or .lock file; a write decides again under the lock
    stored = store.backend.read(target)
    refusal, final, chars = _decide(store, target, stored, cleaned, replace)
    if refusal is not None:
        return refusal
    if final != stored.entries:
        with store.backend.mutation(target) as txn:
            stored = txn.stored
            refusal, final, chars = _decide(store, target, stored, cleaned, replace)
            if refusal is not None:
                return refusal
            if final != stored.entries:
                txn.save(final)
    present = [e for e in cleaned if e in stored.entries]
    return {
        "success": True,
        "target": target,
        "added": len([e for e in final if e not in stored.entries]),
        "already_present": len(present),
        "removed": len([e for e in stored.entries if e not in final]),
        "entry_count": len(final),
        "usage": usage_text(chars, limit),
    }


def _decide(store: MemoryStore, target: str, stored: Stored, cleaned: list[str],
            replace: bool) -> tuple[dict[str, Any] | None, list[str], int]:
    """``(refusal or None, final entries, their joined chars)`` of importing ``cleaned`` over ``stored``."""
    name, limit = store.file_name(target), store.limits[target]
    if stored.error:
        return {"success": False, "target": target,
                "error": f"{name} in the store could not be read ({stored.error}); nothing was imported."}, [], 0
    if not replace and drift_reason(stored.text, stored.entries, limit):
        return {"success": False, "target": target, "error": (
            f"{name} in the store ({store.location(target)}) is not in the form this tool writes (hand-edited); "
            "nothing was imported. Fix it first, or import with --replace to overwrite it with the file."
        )}, [], 0
    final = list(cleaned) if replace else stored.entries + [e for e in cleaned if e not in stored.entries]
    chars = joined_len(final)
    if chars > limit:
        return {"success": False, "target": target, "error": (
            f"{name} would hold {chars:,} chars with these entries, over its limit of {limit:,} by "
            f"{chars - limit:,} (limits count characters, the 3-char delimiters included); nothing was "
            "imported. Shorten or remove entries in the file, or raise the limit in config.yaml "
            f"(memory.{'memory' if target == 'memory' else 'user'}_char_limit)."
        )}, [], 0
    return None, final, chars


def export_target(entries: Sequence[str], folder: Path, target: str, user_id: str | None, *, force: bool,
                  protected: Sequence[tuple[Path, str]] = ()) -> dict[str, Any]:
    """Write ``entries`` as the Markdown file of ``target`` (and user) under ``folder``.

    Written like the file store writes (temp file, fsync, atomic replace, mode 0600, private
    folders), but without leaving a ``.lock`` file in an export folder: the sidecar lock is taken
    only when the file already has one (the folder is a live memory store that other writers lock).
    An existing file with other content is left alone and reported unless ``force``; the same
    content is not rewritten (so exporting twice changes nothing). A file that is one of
    ``protected`` (``(path, what it is)``: the home's own MEMORY.md/USER.md, which the Hermes Agent
    reads and writes; compared after resolving symlinks and as the same inode) is left alone even
    with ``force`` when its content differs. Returns ``{"path", "entries", "chars", "written": bool,
    "error"?}``.
    """
    backend = FileBackend(folder, user_id)
    path = backend.path_for(target)
    text = ENTRY_DELIMITER.join(entries)
    out: dict[str, Any] = {"path": str(path), "entries": len(entries), "chars": len(text), "written": False}
    live = protected_file(path, protected)
    if live is not None:
        force = False  # never replace the home's own memory file with other content
    if os.path.lexists(f"{real_path(path)}.lock"):  # a live store: write under its writers' lock
        with backend.mutation(target) as txn:
            if _keep(path, txn.stored, text, force, out, live):
                return out
            txn.save(list(entries))
    else:
        if _keep(path, backend.read(target), text, force, out, live):
            return out
        backend.write(path, text)
    out["written"] = True
    return out


def _keep(path: Path, old: Any, text: str, force: bool, out: dict[str, Any],
          live: tuple[Path, str] | None = None) -> bool:
    """True when ``path`` is left as it is: it already holds ``text``, or other content without ``force``
    or when it is the home's ``live`` memory file (then ``out["error"]`` says so)."""
    if path.exists() and old.error is None and old.text == text:
        return True
    if path.exists() and live is not None:
        out["error"] = (
            f"refusing to overwrite {path}: it is {live[1]} ({live[0]}), which the Hermes Agent reads and writes, "
            "even with --force; it was left as it is. Export to another folder (--to ./memories-backup); to make "
            "this home's files hold the store's entries, run `hermes-memory memory import --from ./memories-backup` "
            "with this home on file storage, which merges them through the memory lock and the threat scan.")
        return True
    if path.exists() and not force:
        out["error"] = exists_refusal(path, other_content=True)
        return True
    return False


def export_store(open_store: Callable[[str | None], MemoryStore], user_ids: Sequence[str], folder: str | Path,
                 *, force: bool = False, protected: Sequence[tuple[Path, str]] = ()) -> list[dict[str, Any]]:
    """Export MEMORY.md, USER.md and every user's USER.md of a store into ``folder``.

    ``open_store(user_id)`` opens the store for one user (``None``: no user). Targets with no
    entries write no file. ``protected``: files never replaced with other content, even with
    ``force`` (:func:`export_target`). Returns one :func:`export_target` result per file written or
    compared.
    """
    root = Path(folder)
    results = []
    base = open_store(None)
    for target in ("memory", "user"):
        ents = base.entries(target)
        if ents:
            results.append(export_target(ents, root, target, None, force=force, protected=protected))
    for uid in user_ids:
        ents = open_store(uid).entries("user")
        if ents:
            results.append(export_target(ents, root, "user", uid, force=force, protected=protected))
    return results


def _short(text: Any, width: int = 40) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[:width] + "..."
