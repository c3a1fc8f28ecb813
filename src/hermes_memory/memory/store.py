"""``MemoryStore``: the bounded, curated memory ``MEMORY.md`` and ``USER.md`` (Layer 1).

Behaviour follows docs/reference.md §1 and §11 (NEWEST where versions differ):

* A target holds entries joined by :data:`ENTRY_DELIMITER` (``"\\n§\\n"``); limits are characters
  (not bytes) of that joined string, the 3-char delimiters included: 2,200 for ``memory`` and 1,375
  for ``user`` by default (:mod:`.entries`).
* Storage is a backend (:mod:`.backend`): files by default (:mod:`.filebackend`: sidecar lock,
  atomic replace, symlinks kept), or rows in PostgreSQL (:class:`~hermes_memory.memory.pg.PgMemoryStore`).
  Every mutation runs read-modify-write inside the backend's exclusive critical section, so
  concurrent writers and hand edits merge; a target that cannot be read is *not* treated as
  empty: every mutation of it is refused.
* The frozen snapshot: :meth:`MemoryStore.load_from_disk` renders each block once;
  :meth:`MemoryStore.format_for_system_prompt` returns that text for the whole session while the
  results of mutations report the live state.

Results are plain dicts shaped like the ``memory`` tool's JSON (see :mod:`.tool`):
success ``{"success": True, "done": True, "target", "usage", "entry_count", "message", "note"}``,
failure ``{"success": False, "error", ...}`` (plus ``current_entries``/``usage`` where the caller
can fix the call). A refused call never changes what is stored.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hermes_memory.memory.backend import EntriesBackend, Stored
from hermes_memory.memory.entries import (
    BLOCKED_PREFIX,
    DEFAULT_MEMORY_CHAR_LIMIT,
    DEFAULT_USER_CHAR_LIMIT,
    ENTRY_DELIMITER,
    FILE_NAMES,
    TARGETS,
    drift_reason,
    joined_len,
    match_key,
    normalise_newlines,
    parse_entries,
    render_block,
    sanitise_entry,
    usage_text,
    validate_user_id,
)
from hermes_memory.memory.filebackend import LOCK_TIMEOUT_S, FileBackend, LockFileError
from hermes_memory.memory.ops import clean_content, match_entry, normalise_op
from hermes_memory.memory.wording import MERGED_MESSAGE, batch_message, counted, plural

logger = logging.getLogger(__name__)

__all__ = [
    "BLOCKED_PREFIX", "DEFAULT_MEMORY_CHAR_LIMIT", "DEFAULT_USER_CHAR_LIMIT", "ENTRY_DELIMITER", "FILE_NAMES",
    "LOCK_TIMEOUT_S", "MAX_CONSOLIDATION_FAILURES_PER_TURN", "ORIGINS", "SUCCESS_NOTE", "TARGETS", "LockFileError",
    "MemoryStore", "joined_len", "match_key", "normalise_newlines", "parse_entries", "sanitise_entry",
    "validate_user_id",
]

#: Reference NEWEST ``_MAX_CONSOLIDATION_FAILURES_PER_TURN``.
MAX_CONSOLIDATION_FAILURES_PER_TURN = 3
SUCCESS_NOTE = "Write saved. This update is complete — do not repeat it."
ORIGINS = ("foreground", "background_review")
_LABELS = {"memory": "Memory", "user": "User profile"}
_RETRY_HINT = (
    "Consolidate now: merge or shorten related entries with replace, or remove stale ones, then retry "
    "— all in this turn (one call with an `operations` batch works best)."
)


class MemoryStore:
    """The two curated memory targets (MEMORY.md, USER.md) of one data home.

    ``memory_dir`` defaults to ``HermesHome.resolve().memories_dir`` (``$HERMES_HOME/memories``);
    ``backend`` replaces the files with another :class:`~hermes_memory.memory.backend.EntriesBackend`
    (:class:`~hermes_memory.memory.pg.PgMemoryStore` passes the PostgreSQL one).
    Limits are characters including delimiters; string values are ``int()``-cast. With ``user_id``
    (gateway mode) ``USER.md`` lives in ``memories/users/<user_id>/`` while ``MEMORY.md`` stays
    shared; an unsafe ``user_id`` raises ``ValueError``. On PostgreSQL the lock and storage errors
    are :class:`~hermes_memory.errors.MemoryDatabaseError` (a :class:`MemoryStoreError`).

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
        *,
        backend: EntriesBackend | None = None,
    ) -> None:
        self.user_id = validate_user_id(user_id)
        self.limits = {"memory": int(memory_char_limit), "user": int(user_char_limit)}
        for t, lim in self.limits.items():
            if lim <= 0:
                raise ValueError(f"{t} char limit must be a positive number of characters, got {lim}")
        if backend is None:
            if memory_dir is None:
                from hermes_memory.home import HermesHome

                memory_dir = HermesHome.resolve().memories_dir
            backend = FileBackend(memory_dir, self.user_id)
        elif memory_dir is not None:
            raise ValueError("pass either memory_dir (the file backend) or backend, not both")
        #: Where the entries live (:class:`~hermes_memory.memory.backend.EntriesBackend`).
        self.backend: EntriesBackend = backend
        #: The memories folder of the file backend; ``None`` for other backends.
        self.memory_dir: Path | None = getattr(backend, "memory_dir", None)
        self._entries: dict[str, list[str]] = {"memory": [], "user": []}
        self._read_errors: dict[str, str | None] = {"memory": None, "user": None}
        self._snapshot: dict[str, str] = {"memory": "", "user": ""}
        self._loaded = False
        self._failures = 0

    # ------------------------------------------------------------------ paths and properties
    @property
    def memory_char_limit(self) -> int:
        """Limit of MEMORY.md in characters, delimiters included."""
        return self.limits["memory"]

    @property
    def user_char_limit(self) -> int:
        """Limit of USER.md in characters, delimiters included."""
        return self.limits["user"]

    @property
    def lock_timeout_s(self) -> float:
        """Seconds a mutation waits for the target's lock before giving up (:class:`LockFileError` for files)."""
        return self.backend.lock_timeout_s

    @lock_timeout_s.setter
    def lock_timeout_s(self, seconds: float) -> None:
        self.backend.lock_timeout_s = float(seconds)

    @property
    def backend_kind(self) -> str:
        """``"file"`` or ``"postgres"``."""
        return self.backend.kind

    def path_for(self, target: str) -> Path:
        """The file of ``target`` (``"user"`` -> USER.md, per user in gateway mode; else MEMORY.md).

        File backend only: raises :class:`~hermes_memory.errors.MemoryStoreError` for a store whose
        entries are rows in a database (use :meth:`location` to name where they are).
        """
        path_for = getattr(self.backend, "path_for", None)
        if path_for is None:
            from hermes_memory.errors import MemoryStoreError

            raise MemoryStoreError(
                f"{FILE_NAMES[self._check_target(target)]} has no file: this store keeps its entries in "
                f"{self.backend.kind} ({self.backend.location(target)}). Use `hermes-memory memory export` for files."
            )
        return path_for(target)

    def location(self, target: str) -> str:
        """Where ``target`` is stored, for people: a file path or the database and key (never a password)."""
        return self.backend.location(self._check_target(target))

    def file_name(self, target: str) -> str:
        """``"MEMORY.md"`` or ``"USER.md"``: the name messages and placeholders use, whatever the backend."""
        return FILE_NAMES[self._check_target(target)]

    def render_file(self, target: str) -> str:
        """The live entries of ``target`` as the Markdown file holds them (joined by the delimiter, no BOM)."""
        return ENTRY_DELIMITER.join(self.entries(target))

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
            "text": usage_text(chars, limit),
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
            disk = self.backend.read(target)
            self._entries[target] = disk.entries
            self._read_errors[target] = disk.error
            path = self.backend.location(target)
            if disk.error:
                logger.warning("%s could not be read (%s); memory writes to it are refused until fixed", path, disk.error)
            chars, limit = joined_len(disk.entries), self.limits[target]
            if chars > limit:
                logger.warning(
                    "%s exceeds its limit: %s/%s chars. It is kept whole and shown as over budget; "
                    "remove or shorten entries.", path, f"{chars:,}", f"{limit:,}",
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
        return render_block(target, entries, self.limits[target])

    # ------------------------------------------------------------------ public mutations
    def add(self, target: str, content: str | None, *, origin: str = "foreground") -> dict[str, Any]:
        """Add one entry. An exact duplicate succeeds without writing.

        Refused (file untouched): empty content, the reserved delimiter line, the ``[BLOCKED:``
        marker, a threat-scan hit, an unreadable file, or a result over the char limit.
        """
        target_err = self._target_error(target)
        if target_err:
            return target_err
        content, err = clean_content(content, "Content cannot be empty.")
        if err:
            return _fail(err)
        return self._mutate(target, [{"action": "add", "content": content}], single=True, origin=origin)

    def replace(
        self, target: str, old_text: str | None, new_content: str | None, *, origin: str = "foreground", exact: bool = False
    ) -> dict[str, Any]:
        """Replace the whole entry matched by ``old_text`` with ``new_content``.

        Matching: an entry equal to ``old_text`` (stripped) wins; else the entries containing it
        (case-sensitive); when nothing matches as typed, the same two steps run on the
        :func:`match_key` forms (dashes, quotes, Unicode forms and spacing folded, case kept);
        several distinct matches -> ambiguity error with 80-char previews. ``exact``: only an entry
        equal to ``old_text`` is replaced (the dashboard's forms: the entry as the page showed it).
        The result carries ``replaced_entry`` (the full old text); a new text equal to another entry leaves one entry, saying so (``merged_with``). A replace that grows the store
        past its limit is refused; one that does not grow it is allowed even over budget.
        """
        target_err = self._target_error(target)
        if target_err:
            return target_err
        if old_text is None or not str(old_text).strip():
            return _fail("old_text cannot be empty: old_text must be non-empty text taken from the entry to change.")
        new_content, err = clean_content(
            new_content, "new_content cannot be empty. Use 'remove' to delete entries."
        )
        if err:
            return _fail(err)
        op = {"action": "replace", "old_text": str(old_text), "content": new_content, "exact": exact}
        return self._mutate(target, [op], single=True, origin=origin)

    def remove(self, target: str, old_text: str | None, *, origin: str = "foreground", exact: bool = False) -> dict[str, Any]:
        """Remove the entry matched by ``old_text`` (same matching as :meth:`replace`, ``exact`` too).

        Removing the last entry with a single op is allowed. The result carries ``removed_entry``.
        """
        target_err = self._target_error(target)
        if target_err:
            return target_err
        if old_text is None or not str(old_text).strip():
            return _fail("old_text cannot be empty: old_text must be non-empty text taken from the entry to remove.")
        return self._mutate(target, [{"action": "remove", "old_text": str(old_text), "exact": exact}], single=True, origin=origin)

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
            op, err = normalise_op(raw)
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

    # ------------------------------------------------------------------ internals: the mutation
    def _mutate(self, target: str, ops: list[dict[str, Any]], *, single: bool, origin: str) -> dict[str, Any]:
        if origin != "foreground" and origin not in ORIGINS:
            return _fail(f"Unknown origin '{origin}'. Use 'foreground' or 'background_review'.")
        rewrites = not single or ops[0]["action"] != "add"  # anything but one add rewrites what is there
        if origin == "background_review" and any(op["action"] != "add" for op in ops):
            return _fail(
                "Background memory review may only add entries; replace and remove need the foreground "
                "agent (or the user via `hermes-memory memory replace|remove`). Nothing was changed.",
                origin=origin,
            )
        name = FILE_NAMES[target]
        limit = self.limits[target]
        label = _LABELS[target]
        with self.backend.mutation(target) as txn:
            disk = txn.stored
            if disk.error:
                self._read_errors[target] = disk.error
                return _fail(
                    f"{name} could not be read ({disk.error}); nothing was changed. Fix or restore the file "
                    "(it must be UTF-8 text), then retry."
                )
            self._read_errors[target] = None
            self._entries[target] = disk.entries
            before = disk.entries
            if rewrites:
                drift = self._drift_check(target, txn)
                if drift:
                    return drift
            work = list(before)
            replaced: dict[int, str] = {}
            removed: dict[int, str] = {}
            merged: dict[int, str] = {}  # op -> the entry its new text already was (now one entry)
            skipped = 0
            for i, op in enumerate(ops, 1):
                act = op["action"]
                if act == "add":
                    if op["content"] in work:
                        skipped += 1
                        continue
                    work.append(op["content"])
                    continue
                idx, err = match_entry(work, op["old_text"], new_content=op.get("content"), name=name, exact=bool(op.get("exact")))
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
                        merged[i] = op["content"]
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
                    f"This batch would leave {name} empty (it holds {counted(len(before), 'entry')}). Keep at least "
                    "one entry, or remove the last one with a single remove call.",
                    len(ops),
                )
            if work != before:
                saved = txn.save(work, canonical=True)  # parsed entries and cleaned fields, duplicates merged
                if saved is not work:  # the stored form reads back otherwise (a hand-edited entry hid a '§' line)
                    work, new_chars = saved, joined_len(saved)
            self._entries[target] = work
        self._failures = 0
        if single:
            act = ops[0]["action"]
            if act == "add":
                return self._success(target, "Entry added.", work, chars=new_chars)
            if act == "replace":
                return self._success(target, MERGED_MESSAGE if merged else "Entry replaced.", work, chars=new_chars,
                                     replaced_entry=replaced[1], **({"merged_with": merged[1]} if merged else {}))
            return self._success(target, "Entry removed.", work, chars=new_chars, removed_entry=removed[1])
        lists = {"replaced_entries": replaced, "removed_entries": removed, "merged_entries": merged}
        extra: dict[str, Any] = {key: value for key, value in lists.items() if value}
        return self._success(target, batch_message(len(ops), skipped, len(merged)), work, chars=new_chars, **extra)

    def _drift_check(self, target: str, txn: Any) -> dict[str, Any] | None:
        """Refuse to rewrite a target stored outside the delimiter form (a copy is kept first)."""
        limit = self.limits[target]
        disk: Stored = txn.stored
        found = drift_reason(disk.text, disk.entries, limit)
        if found is None:
            return None
        reason, size = found
        backup_name, backup_ref = txn.backup()
        # Pieces are compared stripped, so without an over-long entry the only possible difference
        # is whitespace around a delimiter line or an empty entry (typical of an editor).
        if reason == "too_big":
            why = f"an entry is longer than the whole {limit:,}-char limit ({size:,} chars)"
        else:
            why = "it has blank lines or spaces around a '§' line, or an empty entry, which this store does not write"
        fix = self.backend.drift_fix(target, reason, limit, backup_name)
        return _fail(
            f"Refusing to write {FILE_NAMES[target]}: it was changed outside the memory tool ({why}). A copy was saved "
            f"to {backup_name}; {self.backend.untouched}.",
            drift_backup=backup_ref,
            # An entry over the whole limit refuses every add too; blank lines and spaces do not.
            remediation=fix if reason == "too_big" else f"{fix} Adding entries still works meanwhile.",
        )

    # ------------------------------------------------------------------ internals: results
    def _echo(self, target: str, entries: Sequence[str] | None = None) -> list[str]:
        ents = self._entries[target] if entries is None else entries
        return [sanitise_entry(e, FILE_NAMES[target]) for e in ents]

    def _usage_cl(self, target: str, entries: Sequence[str] | None = None) -> str:
        ents = self._entries[target] if entries is None else entries
        return f"{joined_len(ents):,}/{self.limits[target]:,}"

    def _success(self, target: str, message: str, entries: Sequence[str], *, chars: int | None = None,
                 **extra: Any) -> dict[str, Any]:
        """The success result; ``chars``: ``joined_len(entries)`` when the caller already knows it."""
        chars = joined_len(entries) if chars is None else chars
        return {
            "success": True,
            "done": True,
            "target": target,
            "usage": usage_text(chars, self.limits[target]),
            "entry_count": len(entries),
            "message": message,
            "note": SUCCESS_NOTE,
            **extra,
        }

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
            disk = self.backend.read(target)
            if not disk.error:
                self._entries[target] = disk.entries
        text = (
            f"{message} The whole batch was rejected: 0 of {counted(n_ops, 'operation')} {plural('was', n_ops)} applied "
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
                f"{label} at {old_chars:,}/{limit:,} chars. Adding this entry ({counted(len(ops[0]['content']), 'char')}) "
                f"would exceed the limit. {_RETRY_HINT}"
            )
        elif single:
            msg = (
                f"Replacement would put {label.lower()} at {new_chars:,}/{limit:,} chars (now {old_chars:,}/{limit:,}), "
                f"which would exceed the limit. Shorten the new text, or {_RETRY_HINT[0].lower()}{_RETRY_HINT[1:]}"
            )
        else:
            return self._batch_fail(
                target,
                f"The final state would be {new_chars:,}/{limit:,} chars (now {old_chars:,}/{limit:,}), over the limit.",
                len(ops),
            )
        return self._counted_fail(target, {"error": msg})

    # ------------------------------------------------------------------ file-backend hooks for bench/memory_ops.py
    def _read(self, target: str) -> Stored:
        """One unlocked read of ``target`` (the ``read`` part of bench/memory_ops.py's breakdown)."""
        return self.backend.read(target)

    def _locked(self, path: Path, *, resolved: bool = False) -> Any:
        """The file backend's sidecar-lock context manager for ``path`` (the bench's ``lock`` part)."""
        return self._file_backend().locked(path, resolved=resolved)

    def _write(self, path: Path, text: str, *, resolved: bool = False) -> None:
        """The file backend's atomic write of ``text`` to ``path`` (the bench's ``write`` part)."""
        self._file_backend().write(path, text, resolved=resolved)

    def _file_backend(self) -> FileBackend:
        if not isinstance(self.backend, FileBackend):
            raise TypeError(f"this store keeps its entries in {self.backend.kind}, not in files")
        return self.backend


def _fail(error: str, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"success": False, "error": error}
    out.update(extra)
    return out
