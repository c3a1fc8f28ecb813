"""``MemoryStore``: the bounded, curated memory files ``MEMORY.md`` and ``USER.md`` (Layer 1).

Behaviour follows docs/reference.md §1 and §11 (NEWEST where versions differ):

* A file holds entries joined by :data:`ENTRY_DELIMITER` (``"\\n§\\n"``), no trailing newline; an
  empty store is an empty file. Limits are characters (not bytes) of that joined string, the
  3-char delimiters included: 2,200 for ``memory`` and 1,375 for ``user`` by default.
* Reads accept a UTF-8 BOM and CRLF / lone CR line ends; writes are always UTF-8, LF, no BOM.
  A file that cannot be read (OSError, invalid UTF-8) is *not* treated as empty: every mutation of
  it is refused and the bytes stay as they are.
* Every mutation takes the sidecar lock ``<file>.lock`` (:class:`.lock.SidecarLock`: ``flock`` plus a thread lock, mode 0600,
  a symlinked lock is refused), re-reads the file under the lock (so concurrent writers and hand edits merge),
  then writes a temp file in the same directory, fsyncs it and ``os.replace``-s it over the file.
  A symlinked ``MEMORY.md`` stays a symlink: the lock and the temp file go next to the resolved
  target, so homes whose files link to one shared file serialise on one lock.
* The frozen snapshot: :meth:`MemoryStore.load_from_disk` renders each block once;
  :meth:`MemoryStore.format_for_system_prompt` returns that text for the whole session while the
  results of mutations report the live state.

Results are plain dicts shaped like the ``memory`` tool's JSON (see :mod:`.tool`):
success ``{"success": True, "done": True, "target", "usage", "entry_count", "message", "note"}``,
failure ``{"success": False, "error", ...}`` (plus ``current_entries``/``usage`` where the caller
can fix the call). A refused call never changes the file.
"""

from __future__ import annotations

import errno
import glob
import logging
import os
import re
import time
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_memory.errors import MemoryStoreError
from hermes_memory.memory.lock import LockSymlinkError, LockTimeout, SidecarLock
from hermes_memory.memory.scan import MAX_SCAN_CHARS, find_threats, scan_memory_content

logger = logging.getLogger(__name__)

ENTRY_DELIMITER = "\n§\n"
DEFAULT_MEMORY_CHAR_LIMIT = 2200
DEFAULT_USER_CHAR_LIMIT = 1375
#: Reference NEWEST ``_MAX_CONSOLIDATION_FAILURES_PER_TURN``.
MAX_CONSOLIDATION_FAILURES_PER_TURN = 3
#: Seconds a mutation waits for the sidecar lock (a write holds it for milliseconds; ours, not the reference's).
LOCK_TIMEOUT_S = 30.0
TARGETS = ("memory", "user")
FILE_NAMES = {"memory": "MEMORY.md", "user": "USER.md"}
SUCCESS_NOTE = "Write saved. This update is complete — do not repeat it."
BLOCKED_PREFIX = "[BLOCKED:"
ORIGINS = ("foreground", "background_review")
_RULE = "═" * 46
_HEADERS = {"memory": "MEMORY (your personal notes)", "user": "USER PROFILE (who the user is)"}
_LABELS = {"memory": "Memory", "user": "User profile"}
_SAFE_USER_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$")
_DELIM_LINE = re.compile(r"(?m)^§$")
_RETRY_HINT = (
    "Consolidate now: merge or shorten related entries with replace, or remove stale ones, then retry "
    "— all in this turn (one call with an `operations` batch works best)."
)


class LockFileError(MemoryStoreError, OSError):
    """The sidecar lock file is unsafe (a symlink) or cannot be created, opened or locked. Nothing was written."""


@dataclass
class _Disk:
    """One read of a memory file: parsed entries, or why it could not be read."""

    entries: list[str]
    text: str = ""  # newline-normalised text without BOM
    error: str | None = None


def validate_user_id(user_id: str | None) -> str | None:
    """Return ``user_id`` if it is a safe single path component, else raise ``ValueError``.

    Allowed: 1-128 chars of letters, digits, ``.``, ``_``, ``@``, ``-``, starting with a letter or
    digit (so no ``..``, ``/``, hidden names or empty strings).
    """
    if user_id is None:
        return None
    if not isinstance(user_id, str) or not _SAFE_USER_ID.fullmatch(user_id):  # fullmatch: "$" allows a final \n
        raise ValueError(
            f"unsafe user_id {user_id!r}: it becomes a folder name under memories/users/, so use 1-128 "
            "letters, digits, '.', '_', '@' or '-', starting with a letter or digit (no '/', no '..')."
        )
    return user_id


def normalise_newlines(text: str) -> str:
    """CRLF and lone CR become LF."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


#: Typographic variants folded by :func:`match_key`: dashes to "-", quotes to ' and ".
_TYPO = str.maketrans({
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2e3a\u2e3b\ufe58\ufe63\uff0d", "-"),
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u2035\u0060\u00b4\uff07", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u2036\u00ab\u00bb\uff02", '"'),
    **dict.fromkeys("\u00ad\u200b\u200c\u2060\ufeff", None),
})
_DASH_RUN = re.compile(r"-{2,}")
_SPACE_RUN = re.compile(r"\s+")


def match_key(text: str) -> str:
    """The form ``old_text`` and entries are compared in when the text as typed matches nothing.

    NFKC (full-width letters, ligatures, no-break spaces), every dash and ``--`` / ``---`` folded
    to ``-``, curly and angle quotes folded to straight ones, soft hyphens and zero-width spaces
    dropped, runs of whitespace (line ends included) collapsed to one space, ends stripped; case is
    kept. Used for matching only: the stored text is never rewritten.
    """
    text = unicodedata.normalize("NFKC", text).translate(_TYPO)
    return _SPACE_RUN.sub(" ", _DASH_RUN.sub("-", text)).strip()


def parse_entries(text: str) -> list[str]:
    """Split file text into entries: split on the full delimiter, strip, drop empties, dedupe (first kept)."""
    seen: set[str] = set()
    out: list[str] = []
    for piece in normalise_newlines(text).split(ENTRY_DELIMITER):
        piece = piece.strip()
        if piece and piece not in seen:
            seen.add(piece)
            out.append(piece)
    return out


def joined_len(entries: Sequence[str]) -> int:
    """Characters of ``"\\n§\\n".join(entries)`` without building the string."""
    if not entries:
        return 0
    return sum(len(e) for e in entries) + len(ENTRY_DELIMITER) * (len(entries) - 1)


def _preview(entry: str, width: int = 80) -> str:
    flat = " ".join(entry.split())
    return flat if len(flat) <= width else flat[:width] + "..."


def sanitise_entry(entry: str, file_name: str) -> str:
    """The text of ``entry`` fit for a prompt or an error echo.

    Every entry is scanned whatever its prefix (failure case B12); a hit becomes a placeholder made
    here, naming the threat ids but not the payload. Entries over 65,536 chars are not scanned and
    are replaced by a "too large to scan" placeholder.
    """
    if len(entry) > MAX_SCAN_CHARS:
        return (
            f"[BLOCKED: {file_name} entry is too large to scan ({len(entry):,} chars). Removed from system "
            "prompt; shorten it with memory(action=replace) or delete it with memory(action=remove).]"
        )
    hits = find_threats(entry)
    if not hits:
        return entry
    return (
        f"[BLOCKED: {file_name} entry contained threat pattern(s): {', '.join(hits)}. Removed from system "
        "prompt; use memory(action=remove) with old_text from this entry to delete it.]"
    )


def _read_all(path: Path) -> bytes:
    """The bytes of ``path`` (``os.open`` + ``os.read``: fewer layers than ``Path.read_bytes``)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _mkdir_private(folder: Path) -> None:
    """Create ``folder`` and every missing parent with mode 0700 (existing folders are left as they are).

    ``Path.mkdir(parents=True, mode=...)`` applies the mode to the last folder only, so ``users/``
    (whose entries name every user) and a fresh home root came out world-readable.
    """
    missing = []
    p = Path(folder)
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        d.mkdir(mode=0o700, exist_ok=True)


class MemoryStore:
    """The two curated memory files of one data home.

    ``memory_dir`` defaults to ``HermesHome.resolve().memories_dir`` (``$HERMES_HOME/memories``).
    Limits are characters including delimiters; string values are ``int()``-cast. With ``user_id``
    (gateway mode) ``USER.md`` lives in ``memories/users/<user_id>/`` while ``MEMORY.md`` stays
    shared; an unsafe ``user_id`` raises ``ValueError``.

    Entries load lazily on first access; call :meth:`load_from_disk` at session start to take the
    frozen snapshot. Mutations (:meth:`add`, :meth:`replace`, :meth:`remove`, :meth:`apply_batch`)
    return result dicts and never raise for bad input; :class:`LockFileError` (an ``OSError``) is
    raised when the sidecar lock is a symlink or cannot be created or locked (e.g. the folder is not
    writable, or another process held it for more than ``lock_timeout_s`` seconds), :class:`MemoryStoreError` when the write itself fails.
    """

    def __init__(
        self,
        memory_dir: str | os.PathLike[str] | None = None,
        memory_char_limit: int | str = DEFAULT_MEMORY_CHAR_LIMIT,
        user_char_limit: int | str = DEFAULT_USER_CHAR_LIMIT,
        user_id: str | None = None,
    ) -> None:
        if memory_dir is None:
            from hermes_memory.home import HermesHome

            memory_dir = HermesHome.resolve().memories_dir
        self.memory_dir = Path(memory_dir)
        self.user_id = validate_user_id(user_id)
        self.limits = {"memory": int(memory_char_limit), "user": int(user_char_limit)}
        for t, lim in self.limits.items():
            if lim <= 0:
                raise ValueError(f"{t} char limit must be a positive number of characters, got {lim}")
        self._entries: dict[str, list[str]] = {"memory": [], "user": []}
        self._read_errors: dict[str, str | None] = {"memory": None, "user": None}
        self._snapshot: dict[str, str] = {"memory": "", "user": ""}
        self._loaded = False
        self._failures = 0
        self._locks: dict[str, SidecarLock] = {}
        #: Seconds a mutation waits for the sidecar lock before giving up with LockFileError.
        self.lock_timeout_s: float = LOCK_TIMEOUT_S
        self._swept: set[str] = set()
        self._tmp_seq = 0

    # ------------------------------------------------------------------ paths and properties
    @property
    def memory_char_limit(self) -> int:
        """Limit of MEMORY.md in characters, delimiters included."""
        return self.limits["memory"]

    @property
    def user_char_limit(self) -> int:
        """Limit of USER.md in characters, delimiters included."""
        return self.limits["user"]

    def path_for(self, target: str) -> Path:
        """The file of ``target`` (``"user"`` -> USER.md, per user in gateway mode; else MEMORY.md)."""
        if target == "user":
            if self.user_id is not None:
                return self.memory_dir / "users" / self.user_id / "USER.md"
            return self.memory_dir / "USER.md"
        return self.memory_dir / "MEMORY.md"

    @property
    def memory_entries(self) -> list[str]:
        """Live entries of MEMORY.md (a copy)."""
        return self.entries("memory")

    @property
    def user_entries(self) -> list[str]:
        """Live entries of USER.md (a copy)."""
        return self.entries("user")

    def entries(self, target: str) -> list[str]:
        """Live entries of ``target`` (a copy; loads from disk on first use). ``ValueError`` for an unknown target."""
        self._ensure_loaded()
        return list(self._entries[self._check_target(target)])

    def current_entries(self, target: str) -> list[str]:
        """Live entries of ``target`` as shown to a model: poisoned ones replaced by ``[BLOCKED: ...]``.

        Raises ``ValueError`` for an unknown target.
        """
        self._ensure_loaded()
        return self._echo(self._check_target(target))

    def usage(self, target: str) -> dict[str, Any]:
        """Live usage of ``target``: ``{"chars", "limit", "percent", "entry_count", "over_budget", "text"}``.

        ``chars`` is ``len("\\n§\\n".join(entries))``; ``percent`` is ``min(100, int(chars/limit*100))``;
        ``text`` is ``"P% — C/L chars"``; ``read_error`` is why the file could not be read, else
        ``None``. Raises ``ValueError`` for an unknown target.
        """
        self._ensure_loaded()
        target = self._check_target(target)
        ents = self._entries[target]
        chars, limit = joined_len(ents), self.limits[target]
        pct = min(100, int(chars / limit * 100))
        return {
            "chars": chars,
            "limit": limit,
            "percent": pct,
            "entry_count": len(ents),
            "over_budget": chars > limit,
            "text": f"{pct}% — {chars:,}/{limit:,} chars",
            "read_error": self._read_errors[target],
        }

    def reset_consolidation_failures(self) -> None:
        """Reset the per-turn failure counter (the agent loop calls this at every turn start)."""
        self._failures = 0

    @property
    def consolidation_failures(self) -> int:
        """Counted failures since the last success or reset."""
        return self._failures

    # ------------------------------------------------------------------ load and snapshot
    def load_from_disk(self) -> None:
        """Read both files and take the frozen system-prompt snapshot.

        An unreadable file loads as no entries and is remembered as unreadable (logged); a file over
        its limit loads whole with one warning naming the file and ``chars/limit``.
        """
        for target in TARGETS:
            disk = self._read(target)
            self._entries[target] = disk.entries
            self._read_errors[target] = disk.error
            path = self.path_for(target)
            if disk.error:
                logger.warning("%s could not be read (%s); memory writes to it are refused until fixed", path, disk.error)
            chars, limit = joined_len(disk.entries), self.limits[target]
            if chars > limit:
                logger.warning(
                    "%s exceeds its limit: %d/%d chars. It is kept whole and shown as over budget; "
                    "remove or shorten entries.", path, chars, limit,
                )
            self._snapshot[target] = self._render_block(target, disk.entries)
        self._loaded = True

    def format_for_system_prompt(self, target: str) -> str | None:
        """The frozen block of ``target`` taken by :meth:`load_from_disk`, or ``None`` when it was empty.

        Mid-session writes never change it (prefix-cache stability); poisoned entries appear as
        ``[BLOCKED: ...]`` placeholders. Loads from disk on first use if :meth:`load_from_disk` was
        not called. Raises ``ValueError`` for a target other than ``"memory"`` / ``"user"``.
        """
        self._ensure_loaded()
        block = self._snapshot[self._check_target(target)]
        return block or None

    def _ensure_loaded(self) -> None:
        if not self._loaded:
            self.load_from_disk()

    def _render_block(self, target: str, entries: Sequence[str]) -> str:
        if not entries:
            return ""
        limit = self.limits[target]
        chars = joined_len(entries)
        pct = min(100, int(chars / limit * 100))
        header = f"{_HEADERS[target]} [{pct}% — {chars:,}/{limit:,} chars]"
        if chars > limit:
            header += " ⚠ OVER BUDGET"
        name = self.path_for(target).name
        body = ENTRY_DELIMITER.join(sanitise_entry(e, name) for e in entries)
        cap = max(2 * limit, 4000)
        if len(body) > cap:
            head, tail = body[: int(cap * 0.7)], body[-int(cap * 0.2):]
            body = (
                f"{head}\n[... {len(body) - len(head) - len(tail):,} chars truncated from the middle; "
                f"{name} is over budget, consolidate it ...]\n{tail}"
            )
        return f"{_RULE}\n{header}\n{_RULE}\n{body}"

    # ------------------------------------------------------------------ public mutations
    def add(self, target: str, content: str | None, *, origin: str = "foreground") -> dict[str, Any]:
        """Add one entry. An exact duplicate succeeds without writing.

        Refused (file untouched): empty content, the reserved delimiter line, the ``[BLOCKED:``
        marker, a threat-scan hit, an unreadable file, or a result over the char limit.
        """
        target_err = self._target_error(target)
        if target_err:
            return target_err
        content, err = self._clean_content(content, "Content cannot be empty.")
        if err:
            return _fail(err)
        return self._mutate(target, [{"action": "add", "content": content}], single=True, origin=origin)

    def replace(
        self, target: str, old_text: str | None, new_content: str | None, *, origin: str = "foreground"
    ) -> dict[str, Any]:
        """Replace the whole entry matched by ``old_text`` with ``new_content``.

        Matching: an entry equal to ``old_text`` (stripped) wins; else the entries containing it
        (case-sensitive); when nothing matches as typed, the same two steps run on the
        :func:`match_key` forms (dashes, quotes, Unicode forms and spacing folded, case kept);
        several distinct matches -> ambiguity error with 80-char previews.
        The result carries ``replaced_entry`` (the full old text). A replace that grows the store
        past its limit is refused; one that does not grow it is allowed even over budget.
        """
        target_err = self._target_error(target)
        if target_err:
            return target_err
        if old_text is None or not str(old_text).strip():
            return _fail("old_text cannot be empty: old_text must be non-empty text taken from the entry to change.")
        new_content, err = self._clean_content(
            new_content, "new_content cannot be empty. Use 'remove' to delete entries."
        )
        if err:
            return _fail(err)
        op = {"action": "replace", "old_text": str(old_text), "content": new_content}
        return self._mutate(target, [op], single=True, origin=origin)

    def remove(self, target: str, old_text: str | None, *, origin: str = "foreground") -> dict[str, Any]:
        """Remove the entry matched by ``old_text`` (same matching as :meth:`replace`).

        Removing the last entry with a single op is allowed. The result carries ``removed_entry``.
        """
        target_err = self._target_error(target)
        if target_err:
            return target_err
        if old_text is None or not str(old_text).strip():
            return _fail("old_text cannot be empty: old_text must be non-empty text taken from the entry to remove.")
        return self._mutate(target, [{"action": "remove", "old_text": str(old_text)}], single=True, origin=origin)

    def apply_batch(
        self, target: str, operations: Sequence[Mapping[str, Any]] | None, *, origin: str = "foreground"
    ) -> dict[str, Any]:
        """Apply ``operations`` (``[{"action": "add"|"replace"|"remove", "content"?, "old_text"?}]``) all or nothing.

        ``new_text`` is accepted as an alias of ``content`` (``content`` wins); each op is normalised
        once and that exact string is scanned and written (B13). Ops run in order on a copy; a
        duplicate add is skipped; the budget is checked on the final state only; a batch may not
        leave a previously non-empty store empty. Success carries ``replaced_entries`` /
        ``removed_entries`` keyed by 1-based op index. Any error writes nothing and says so.
        """
        target_err = self._target_error(target)
        if target_err:
            return target_err
        if not operations:
            return _fail("operations list is empty. Pass at least one {action, content, old_text} object.")
        if isinstance(operations, (str, bytes, Mapping)) or not isinstance(operations, Iterable):
            return _fail("operations must be a list of {action, content, old_text} objects.")
        operations = list(operations)
        ops: list[dict[str, Any]] = []
        n = len(operations)
        for i, raw in enumerate(operations, 1):
            op, err = self._normalise_op(raw)
            if err:
                return self._batch_fail(target, f"Operation {i}: {err}", n, count=not err.startswith("Blocked"),
                                        reread=True)
            ops.append(op)
        return self._mutate(target, ops, single=False, origin=origin)

    # ------------------------------------------------------------------ internals: validation
    @staticmethod
    def _check_target(target: str) -> str:
        if target not in TARGETS:
            raise ValueError(f"Invalid target '{target}'. Use 'memory' or 'user'.")
        return target

    @staticmethod
    def _target_error(target: Any) -> dict[str, Any] | None:
        if target not in TARGETS:
            return _fail(f"Invalid target '{target}'. Use 'memory' or 'user'.")
        return None

    @staticmethod
    def _clean_content(content: Any, empty_message: str) -> tuple[str, str | None]:
        """Normalise one written field once: str, LF line ends, stripped; then validate and scan it."""
        if content is None:
            return "", empty_message
        text = normalise_newlines(str(content)).strip()
        if not text:
            return "", empty_message
        if _DELIM_LINE.search(text):
            return "", (
                "Content contains the reserved entry delimiter (a line holding only '§'; entries are "
                "separated by '\\n§\\n'). Keep § on a line with other text, or save the parts as "
                "separate entries."
            )
        if text.startswith(BLOCKED_PREFIX):
            return "", "Content may not start with '[BLOCKED:', a marker reserved for the system. Rephrase the note."
        blocked = scan_memory_content(text)
        if blocked:
            return "", blocked
        return text, None

    def _normalise_op(self, raw: Any) -> tuple[dict[str, Any], str | None]:
        if not isinstance(raw, Mapping):
            return {}, "each operation must be an object like {\"action\": \"add\", \"content\": \"...\"}."
        action = raw.get("action")
        if action not in ("add", "replace", "remove"):
            return {}, f"Unknown action '{action}'. Use: add, replace, remove"
        content = raw.get("content")
        if content is None or (isinstance(content, str) and not content.strip()):
            content = raw.get("new_text") if raw.get("new_text") is not None else content
        op: dict[str, Any] = {"action": action}
        if action in ("replace", "remove"):
            old = raw.get("old_text")
            if old is None or not str(old).strip():
                return {}, f"old_text is required for '{action}' and must be non-empty."
            op["old_text"] = str(old)
        if action in ("add", "replace"):
            msg = "content is required for 'add'." if action == "add" else "content is required for 'replace' (use 'remove' to delete)."
            text, err = self._clean_content(content, msg)
            if err:
                return {}, err
            op["content"] = text
        return op, None

    # ------------------------------------------------------------------ internals: the mutation
    def _mutate(self, target: str, ops: list[dict[str, Any]], *, single: bool, origin: str) -> dict[str, Any]:
        if origin not in ORIGINS:
            return _fail(f"Unknown origin '{origin}'. Use 'foreground' or 'background_review'.")
        if origin == "background_review" and any(op["action"] != "add" for op in ops):
            return _fail(
                "Background memory review may only add entries; replace and remove need the foreground "
                "agent (or the user via `hermes-memory memory replace|remove`). Nothing was changed.",
                origin=origin,
            )
        path = self.path_for(target)
        limit = self.limits[target]
        label = _LABELS[target]
        real = self._real(path)
        with self._locked(real, resolved=True):
            self._sweep_temp_files(real, resolved=True)
            disk = self._read(target)
            if disk.error:
                self._read_errors[target] = disk.error
                return _fail(
                    f"{path.name} could not be read ({disk.error}); nothing was changed. Fix or restore the file "
                    "(it must be UTF-8 text), then retry."
                )
            self._read_errors[target] = None
            self._entries[target] = disk.entries
            before = disk.entries
            if any(op["action"] != "add" for op in ops) or not single:
                drift = self._drift_check(target, path, disk)
                if drift:
                    return drift
            work = list(before)
            replaced: dict[int, str] = {}
            removed: dict[int, str] = {}
            skipped = 0
            for i, op in enumerate(ops, 1):
                act = op["action"]
                if act == "add":
                    if op["content"] in work:
                        skipped += 1
                        continue
                    work.append(op["content"])
                    continue
                idx, err = self._match(work, op["old_text"], new_content=op.get("content"), name=path.name)
                if err is not None:
                    if single:
                        return self._counted_fail(target, err)
                    out = self._batch_fail(target, f"Operation {i}: {err['error']}", len(ops))
                    if "matches" in err and not out.get("done"):
                        out["matches"] = err["matches"]
                    return out
                if act == "replace":
                    replaced[i] = work[idx]
                    if op["content"] in work and work.index(op["content"]) != idx:
                        del work[idx]  # the new text already exists elsewhere: merge, no duplicate
                    else:
                        work[idx] = op["content"]
                else:
                    removed[i] = work.pop(idx)
            if single and ops[0]["action"] == "add" and skipped:
                self._failures = 0
                return self._success(target, "Entry already exists (no duplicate added).", work)
            old_chars, new_chars = joined_len(before), joined_len(work)
            if new_chars > limit and new_chars > old_chars:
                return self._over_budget(target, ops, single, old_chars, new_chars, label, limit)
            if not single and before and not work:
                return self._batch_fail(
                    target,
                    f"This batch would leave {path.name} empty (it holds {len(before)} entries). Keep at least "
                    "one entry, or remove the last one with a single remove call.",
                    len(ops),
                )
            if work != before:
                self._write(real, ENTRY_DELIMITER.join(work), resolved=True)
            self._entries[target] = work
        self._failures = 0
        if single:
            act = ops[0]["action"]
            if act == "add":
                return self._success(target, "Entry added.", work)
            if act == "replace":
                return self._success(target, "Entry replaced.", work, replaced_entry=replaced[1])
            return self._success(target, "Entry removed.", work, removed_entry=removed[1])
        extra: dict[str, Any] = {}
        if replaced:
            extra["replaced_entries"] = replaced
        if removed:
            extra["removed_entries"] = removed
        msg = f"Applied {len(ops)} operation(s)."
        if skipped:
            msg += f" {skipped} duplicate add(s) were already present and skipped."
        return self._success(target, msg, work, **extra)

    def _match(
        self, entries: list[str], old_text: str, *, new_content: str | None, name: str
    ) -> tuple[int, dict[str, Any] | None]:
        """Index of the entry addressed by ``old_text`` or a failure dict (no match / ambiguous).

        A model only ever sees a poisoned entry as its ``[BLOCKED: ...]`` placeholder, so that exact
        placeholder text also addresses it (the first such entry). Previews in an ambiguity error are
        an echo and use the same sanitiser (``name`` is the file name shown in placeholders).
        """
        needle = normalise_newlines(old_text).strip()
        for i, e in enumerate(entries):
            if e == needle:
                return i, None
        hits = [i for i, e in enumerate(entries) if needle in e]
        if not hits:  # the typed form (issue 13 §2): only when nothing matches as written
            key = match_key(needle)
            keys = [match_key(e) for e in entries]
            same = [i for i, k in enumerate(keys) if k == key]
            if len(same) == 1:
                return same[0], None
            hits = same or [i for i, k in enumerate(keys) if key and key in k]
        if not hits and needle.startswith(BLOCKED_PREFIX):
            for i, e in enumerate(entries):
                if sanitise_entry(e, name) == needle:
                    return i, None
        if not hits:
            return -1, {"error": f"No entry matched '{_preview(needle)}'.", "kind": "no_match"}
        distinct = {entries[i] for i in hits}
        if len(distinct) == 1:
            return hits[0], None
        matches = [{"index": i + 1, "preview": _preview(sanitise_entry(entries[i], name))} for i in hits]
        msg = (
            f"Multiple entries matched '{_preview(needle)}'. Be more specific: use old_text copied from exactly "
            "one entry (the whole entry text always works). Matching entries: "
            + "; ".join(f"#{m['index']}: {m['preview']}" for m in matches)
        )
        if new_content is not None and new_content in distinct:
            msg += " Note: your new content already exists verbatim as one of these entries — no change is needed."
        return -1, {"error": msg, "kind": "ambiguous", "matches": matches}

    def _drift_check(self, target: str, path: Path, disk: _Disk) -> dict[str, Any] | None:
        """Refuse to rewrite a file that was changed outside the delimiter format (backup kept)."""
        limit = self.limits[target]
        pieces = [p.strip() for p in disk.text.split(ENTRY_DELIMITER)]
        canonical = ENTRY_DELIMITER.join(p for p in pieces if p)
        too_big = [e for e in disk.entries if len(e) > limit]
        if canonical == disk.text.strip() and not too_big:
            return None
        backup = self._backup(path)
        # Pieces are compared stripped, so without an over-long entry the only possible difference
        # is whitespace around a delimiter line or an empty entry (typical of an editor).
        if too_big:
            why = f"an entry is longer than the whole {limit}-char limit ({len(too_big[0])} chars)"
            fix = (
                f"Open {path} and split the added text into entries separated by a line holding only '§' "
                f"(each entry under {limit} chars), or restore it from {backup.name}; then retry."
            )
        else:
            why = "it has blank lines or spaces around a '§' line, or an empty entry, which this store does not write"
            fix = (
                f"Open {path} and delete the blank lines, trailing spaces and empty entries around the lines "
                f"holding only '§', or restore it from {backup.name}; then retry."
            )
        return _fail(
            f"Refusing to write {path.name}: it was changed outside the memory tool ({why}). A copy was saved "
            f"to {backup.name}; the file was left untouched.",
            drift_backup=str(backup),
            remediation=f"{fix} Adding entries still works meanwhile.",
        )

    @staticmethod
    def _backup(path: Path) -> Path:
        """Copy ``path`` to ``<name>.bak.<unix_ts>`` (mode 0600 from the start) and return the copy.

        An existing backup with the same bytes is reused, so a model retrying against one drifted
        file does not pile up identical copies. Raises :class:`MemoryStoreError` if it cannot copy.
        """
        try:
            data = path.read_bytes()
            for old in sorted(path.parent.glob(f"{glob.escape(path.name)}.bak.*")):
                try:
                    if old.is_file() and not old.is_symlink() and old.read_bytes() == data:
                        return old
                except OSError:
                    continue
            stamp, n = int(time.time()), 0
            while True:
                backup = path.with_name(f"{path.name}.bak.{stamp}" + (f".{n}" if n else ""))
                try:
                    fd = os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
                    break
                except FileExistsError:
                    n += 1
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
            return backup
        except OSError as exc:  # pragma: no cover - depends on the filesystem
            raise MemoryStoreError(f"could not back up drifted {path}: {exc}") from exc

    # ------------------------------------------------------------------ internals: results
    def _echo(self, target: str, entries: Sequence[str] | None = None) -> list[str]:
        ents = self._entries[target] if entries is None else entries
        name = self.path_for(target).name
        return [sanitise_entry(e, name) for e in ents]

    def _usage_cl(self, target: str, entries: Sequence[str] | None = None) -> str:
        ents = self._entries[target] if entries is None else entries
        return f"{joined_len(ents)}/{self.limits[target]}"

    def _success(self, target: str, message: str, entries: Sequence[str], **extra: Any) -> dict[str, Any]:
        limit = self.limits[target]
        chars = joined_len(entries)
        pct = min(100, int(chars / limit * 100))
        out = {
            "success": True,
            "done": True,
            "target": target,
            "usage": f"{pct}% — {chars:,}/{limit:,} chars",
            "entry_count": len(entries),
            "message": message,
            "note": SUCCESS_NOTE,
        }
        out.update(extra)
        return out

    def _terminal(self) -> dict[str, Any] | None:
        if self._failures > MAX_CONSOLIDATION_FAILURES_PER_TURN:
            return {
                "success": False,
                "done": True,
                "error": (
                    f"Memory update failed {self._failures} times this turn. Stop retrying memory changes now; "
                    "carry on with the user's request and revisit memory next turn."
                ),
            }
        return None

    def _counted_fail(self, target: str, err: dict[str, Any]) -> dict[str, Any]:
        self._failures += 1
        terminal = self._terminal()
        if terminal:
            return terminal
        out = _fail(err["error"], current_entries=self._echo(target), usage=self._usage_cl(target))
        if "matches" in err:
            out["matches"] = err["matches"]
        return out

    def _batch_fail(self, target: str, message: str, n_ops: int, *, count: bool = True, reread: bool = False) -> dict[str, Any]:
        """The all-or-nothing refusal of a batch: says nothing was applied and echoes the live store.

        Like a refused single op (and the reference's batch error), it carries ``current_entries``
        (sanitised) and ``usage`` so the model can correct its ``old_text`` in the same turn.
        ``reread`` re-reads the file first (readers need no lock) when the refusal happened before
        the lock was taken, so the echo shows what is really stored.
        """
        if count:
            self._failures += 1
            terminal = self._terminal()
            if terminal:
                return terminal
        self._ensure_loaded()
        if reread:
            disk = self._read(target)
            if not disk.error:
                self._entries[target] = disk.entries
        text = (
            f"{message} The whole batch was rejected: 0 of {n_ops} operation(s) were applied "
            "(batch is all-or-nothing). Fix that operation (see current_entries) and resend the whole batch."
        )
        return _fail(
            text,
            current_entries=self._echo(target),
            usage=self._usage_cl(target),
            entry_count=len(self._entries[target]),
            applied=0,
        )

    def _over_budget(
        self, target: str, ops: list[dict[str, Any]], single: bool, old_chars: int, new_chars: int, label: str, limit: int
    ) -> dict[str, Any]:
        if single and ops[0]["action"] == "add":
            msg = (
                f"{label} at {old_chars}/{limit} chars. Adding this entry ({len(ops[0]['content'])} chars) "
                f"would exceed the limit. {_RETRY_HINT}"
            )
        elif single:
            msg = (
                f"Replacement would put {label.lower()} at {new_chars}/{limit} chars (now {old_chars}/{limit}), "
                f"which would exceed the limit. Shorten the new text, or {_RETRY_HINT[0].lower()}{_RETRY_HINT[1:]}"
            )
        else:
            return self._batch_fail(
                target,
                f"The final state would be {new_chars}/{limit} chars (now {old_chars}/{limit}), over the limit.",
                len(ops),
            )
        return self._counted_fail(target, {"error": msg})

    # ------------------------------------------------------------------ internals: disk
    def _read(self, target: str) -> _Disk:
        path = self.path_for(target)
        try:
            data = _read_all(path)
        except FileNotFoundError:
            return _Disk([])
        except OSError as exc:
            return _Disk([], error=f"{type(exc).__name__}: {exc.strerror or exc}")
        try:
            text = normalise_newlines(data.decode("utf-8-sig"))
        except UnicodeDecodeError as exc:
            return _Disk([], error=f"not valid UTF-8 at byte {exc.start}")
        return _Disk(parse_entries(text), text=text)

    @staticmethod
    def _real(path: Path) -> Path:
        """The file that is really written: the resolved target when ``path`` is a symlink."""
        return Path(os.path.realpath(path)) if path.is_symlink() else path

    def _lock_for(self, path: Path) -> SidecarLock:
        key = str(path)
        lock = self._locks.get(key)
        if lock is None:
            lock = SidecarLock(f"{path}.lock", mode=0o600)
            self._locks[key] = lock
        return lock

    @contextmanager
    def _locked(self, path: Path, *, resolved: bool = False):
        # The sidecar sits next to the file really written, so two homes whose MEMORY.md links to
        # one shared file serialise on one lock (a lock per link lost updates, and one writer's
        # temp sweep deleted the other's live temp file). ``resolved``: ``path`` is already real.
        path = path if resolved else self._real(path)
        lock_path = f"{path}.lock"
        lock = self._lock_for(path)
        try:
            try:
                lock.acquire(timeout=self.lock_timeout_s)
            except FileNotFoundError:  # first write into a new home: create the folder, then retry
                _mkdir_private(path.parent)
                lock.acquire(timeout=self.lock_timeout_s)
        except LockSymlinkError as exc:
            raise LockFileError(
                errno.ELOOP,
                f"refusing to use lock file {lock_path}: it is a symlink. Delete it (the store recreates it) and retry.",
            ) from exc
        except LockTimeout as exc:  # a writer stopped mid-write (Ctrl-Z, a hung disk) must not hang every turn
            raise LockFileError(
                errno.EAGAIN,
                f"another process has held {lock_path} for more than {self.lock_timeout_s:g} s; nothing was "
                "written. Retry later, or find and resume/stop the stuck hermes-memory process.",
            ) from exc
        except OSError as exc:  # a broken home: the folder is a file, read-only, missing rights...
            raise LockFileError(
                exc.errno or errno.EIO,
                f"cannot use lock file {lock_path}: {exc.strerror or exc}. Nothing was written; make "
                f"{path.parent} a writable folder and retry.",
            ) from exc
        try:
            yield
        finally:
            lock.release()

    @staticmethod
    def _temp_prefix(path: Path) -> str:
        return f".mem_{path.name}."

    def _sweep_temp_files(self, path: Path, *, resolved: bool = False) -> None:
        """Delete temp files left by a writer of ``path`` that crashed (once per store and file).

        Runs under the file's lock: every writer holds that lock while its temp file exists, so any
        temp file with this file's prefix found now belongs to a dead writer.
        """
        real = path if resolved else self._real(path)
        key = str(real)
        if key in self._swept:
            return
        self._swept.add(key)
        prefix = self._temp_prefix(real)
        try:
            with os.scandir(real.parent) as it:
                stale = [e.path for e in it if e.name.startswith(prefix) and e.name.endswith(".tmp")]
        except OSError:
            return
        for p in stale:
            try:
                os.unlink(p)
            except OSError:
                pass

    def _write(self, path: Path, text: str, *, resolved: bool = False) -> None:
        """Write ``text`` (UTF-8, LF) to ``path`` atomically: temp in the real target's folder, fsync, replace.

        The temp file is ``.mem_<name>.<pid>.<n>.tmp``, created exclusively with mode 0600 and
        ``O_NOFOLLOW`` (the lock is held, so only a crashed writer's leftovers can share the prefix,
        and those are swept). ``resolved``: ``path`` is already the real file.
        """
        real = path if resolved else self._real(path)
        data = text.encode("utf-8")
        tmp = None
        try:
            fd, tmp = self._open_temp(real)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, real)
            tmp = None
        except OSError as exc:
            raise MemoryStoreError(f"Failed to write memory file {path}: {exc}. The old file is unchanged.") from exc
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass

    def _open_temp(self, real: Path) -> tuple[int, str]:
        """Create and open a fresh temp file next to ``real`` (its folder is made on first use)."""
        prefix = os.path.join(os.fspath(real.parent), self._temp_prefix(real))
        for attempt in range(100):
            self._tmp_seq += 1
            name = f"{prefix}{os.getpid()}.{self._tmp_seq}.tmp"
            try:
                return os.open(name, _TEMP_FLAGS, 0o600), name
            except FileExistsError:
                continue
            except FileNotFoundError:
                if attempt:
                    raise
                _mkdir_private(real.parent)
        raise FileExistsError(errno.EEXIST, f"no free temp file name next to {real}")


_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _fail(error: str, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"success": False, "error": error}
    out.update(extra)
    return out
