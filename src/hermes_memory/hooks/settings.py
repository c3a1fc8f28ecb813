"""Install and remove our hook entries in a client's ``settings.json``, touching nothing else.

Ownership: every hook entry we write has a ``command`` ending in :data:`MARKER` (a shell comment,
so the command runs unchanged). Entries are found by that marker, so installing again replaces
ours (one per event, whatever command an earlier install wrote) and uninstalling removes only ours.

Byte for byte: edits go through :mod:`hermes_memory.hooks.jsonedit`, which changes only the text of
the members added or removed, and never a comment (Gemini CLI's settings may hold ``//`` and
``/* */`` comments: :attr:`ClientSpec.settings_comments`). Our group is appended at the end of the event's list (the event, or
``hooks`` itself, is created at the end of its object when missing); removing it is the exact
inverse, so install then uninstall leaves the file byte-identical (a file the install created is
deleted again; an empty or whitespace-only file is treated as ``{}`` and given back as it was).
Whether a container was empty before we filled it is remembered in
``$HERMES_HOME/hooks/installs.json`` so uninstall can put back exactly what it held.

Writes are atomic (temporary file in the same folder, ``fsync``, ``os.replace``; a symlinked
settings file is written through to its target, mode kept; a read-only one is refused), and the
file as it was is first copied to ``$HERMES_HOME/hooks/backups/`` (the last :data:`BACKUPS_KEPT`
per settings file). A file the client itself cannot read (not a JSON object; a comment where the
client allows none; a trailing comma or, for Gemini CLI, a byte-order mark), or whose ``hooks`` (or
an event in it) has the wrong type, is refused with :class:`HooksError` and left byte-identical. The file is read again just before the replace; if the client changed it in
the meantime the edit is redone on the new text.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_memory.errors import HermesMemoryError
from hermes_memory.fsutil import atomic_write_text
from hermes_memory.hooks import jsonedit
from hermes_memory.hooks.backups import save_backup
from hermes_memory.hooks.clients import ClientSpec

MARKER = "# hermes-memory:managed"
"""Trailing shell comment that marks a hook command as ours."""

DEFAULT_RECALL_BUDGET = 1.0
"""Seconds the prompt hook may spend on recall before it gives up and injects nothing."""

BACKUPS_KEPT = 5
"""Backups kept per settings file under ``$HERMES_HOME/hooks/backups/`` (older ones are deleted)."""

_BOM = "\ufeff"


class HooksError(HermesMemoryError):
    """A settings file we refuse to edit (not JSON, wrong shape, unwritable); it is left unchanged."""


@dataclass
class Change:
    """What an install or uninstall did to one settings file."""

    path: Path
    changed: bool
    created: bool = False
    deleted: bool = False
    events: list[str] = field(default_factory=list)
    before_sha256: str | None = None
    after_sha256: str | None = None
    backup: Path | None = None
    """Copy of the file as it was before this change (``None``: nothing written, or no file)."""

    def as_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "changed": self.changed, "created": self.created,
                "deleted": self.deleted, "events": list(self.events),
                "before_sha256": self.before_sha256, "after_sha256": self.after_sha256,
                "backup": None if self.backup is None else str(self.backup)}


def hook_command(client: ClientSpec, event: str, *, home: str | None = None,
                 budget: float | None = None, executable: str | None = None) -> str:
    """The shell command the client runs for ``event``:
    ``<python> -m hermes_memory [--home H] hooks run EVENT --client NAME [--budget S] # hermes-memory:managed``.

    ``executable`` defaults to this interpreter (so the hook uses the install's environment);
    ``home`` is written only when given (otherwise ``$HERMES_HOME``/``~/.hermes`` at run time);
    ``hooks install`` always gives it, so the hooks use the home they were installed for.
    """
    parts = [executable or sys.executable, "-m", "hermes_memory"]
    if home:
        parts += ["--home", str(home)]
    parts += ["hooks", "run", event, "--client", client.name]
    if budget is not None and client.action(event) == "recall":
        parts += ["--budget", f"{float(budget):g}"]
    return " ".join(shlex.quote(p) for p in parts) + " " + MARKER


def planned_groups(client: ClientSpec, *, home: str | None = None, budget: float | None = None,
                   executable: str | None = None) -> list[tuple[str, dict[str, Any]]]:
    """``[(event, matcher group)]`` we install: one group with one command hook per event.

    The timeout (:attr:`ClientSpec.timeouts`, in the client's unit) leaves room over the recall
    budget: ``max(event timeout, budget + 5 s)`` for the prompt event.
    """
    out = []
    for event, action in client.events:
        seconds = float(client.timeouts[event])
        if action == "recall" and budget is not None:
            seconds = max(seconds, float(budget) + 5.0)
        entry: dict[str, Any] = {"type": "command",
                                 "command": hook_command(client, event, home=home, budget=budget,
                                                         executable=executable),
                                 "timeout": int(seconds * client.timeout_unit)}
        if client.timeout_unit != 1:  # Gemini CLI shows a hook's name in its logs and /hooks panel
            entry["name"] = f"hermes-memory-{event}"
        out.append((event, {"hooks": [entry]}))
    return out


def is_ours(entry: Any) -> bool:
    """True for a hook entry (dict) whose ``command`` carries :data:`MARKER`."""
    return isinstance(entry, dict) and isinstance(entry.get("command"), str) and MARKER in entry["command"]


# ---------------------------------------------------------------------------------------- state
def _state_path(hm_root: Path) -> Path:
    return hm_root / "hooks" / "installs.json"


def _load_state(hm_root: Path) -> dict[str, Any]:
    try:
        data = json.loads(_state_path(hm_root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save_state(hm_root: Path, state: dict[str, Any]) -> None:
    path = _state_path(hm_root)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_atomic(path, json.dumps(state, indent=2, sort_keys=True) + "\n")


# ---------------------------------------------------------------------------------------- text
def _read(path: Path) -> str | None:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise HooksError(f"cannot read {path}: {exc}") from exc
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HooksError(f"{path} is not UTF-8 text ({exc}); fix it and run the command again.") from exc


def _parse(path: Path, text: str, client: ClientSpec | None = None) -> jsonedit.Node:
    """The span tree of a settings file's text, or :class:`HooksError` when ``client`` could not
    read the file either (the message names the place and says how to fix it)."""
    comments = client is not None and client.settings_comments
    title = client.title if client is not None else "the client"
    if text.startswith(_BOM) and comments:  # JSON.parse rejects U+FEFF: the client ignores the file
        raise HooksError(f"{path} starts with a byte-order mark, which {title} cannot read (its settings "
                         "loader rejects the whole file); nothing was changed. Save the file as UTF-8 "
                         "without a BOM and run the command again.")
    body = text[1:] if text.startswith(_BOM) else text
    try:
        root = jsonedit.parse(body, comments=comments)
    except ValueError as exc:
        kind = "JSON with comments" if comments else "plain JSON"
        hint = ""
        if "comment at" in str(exc):
            hint = (f" {title} reads settings.json as plain JSON and rejects a file with comments;"
                    " remove them (or keep the notes elsewhere).")
        elif "trailing comma" in str(exc):
            hint = f" {title} rejects trailing commas too; remove it."
        raise HooksError(f"{path} is not valid {kind} ({exc}); nothing was changed.{hint} Fix the file "
                         "and run the command again.") from exc
    if root.kind != "object":
        raise HooksError(f"{path} does not hold a JSON object; nothing was changed.")
    return root


def _string(text: str, node: jsonedit.Node | None) -> str | None:
    if node is None or node.kind != "string":
        return None
    return json.loads(text[node.start:node.end])


def _entry_is_ours(text: str, node: jsonedit.Node) -> bool:
    if node.kind != "object":
        return False
    cmd = _string(text, node.get("command"))
    return cmd is not None and MARKER in cmd


def _strip_bom(text: str) -> tuple[str, str]:
    return (_BOM, text[1:]) if text.startswith(_BOM) else ("", text)


def remove_ours(text: str, empty: dict[str, str] | None = None) -> tuple[str, list[str]]:
    """``text`` without any hook entry of ours, and the events they were under.

    A group holding only our entries is removed whole; an event left without groups is removed,
    and ``hooks`` too when left empty, unless ``empty`` (``{"hooks": inner, "hooks.<event>": inner}``)
    says the container existed, empty, before we filled it: then it is kept holding ``inner``.
    """
    bom, body = _strip_bom(text)
    empty = empty or {}
    events: list[str] = []
    while True:
        root = jsonedit.parse(body, comments=True)
        edit = _next_removal(body, root, empty)
        if edit is None:
            return bom + body, events
        body, event = edit
        if event not in events:
            events.append(event)


def _next_removal(text: str, root: jsonedit.Node, empty: dict[str, str]) -> tuple[str, str] | None:
    hooks_i = next((i for i, (k, _, _) in reversed(list(enumerate(root.children))) if k == "hooks"), None)
    if hooks_i is None or root.children[hooks_i][2].kind != "object":
        return None
    hooks = root.children[hooks_i][2]
    for ei in range(len(hooks.children) - 1, -1, -1):
        event, _, groups = hooks.children[ei]
        if groups.kind != "array":
            continue
        for gi in range(len(groups.children) - 1, -1, -1):
            group = groups.children[gi][2]
            inner = group.get("hooks") if group.kind == "object" else None
            if inner is None or inner.kind != "array":
                continue
            mine = [i for i, (_, _, e) in enumerate(inner.children) if _entry_is_ours(text, e)]
            if not mine:
                continue
            assert event is not None
            if len(mine) < len(inner.children):  # a group the user shares with us: drop our entry only
                return jsonedit.remove_child(text, inner, mine[-1]), event
            # a container left empty goes too, unless it was there before us or holds a comment
            if len(groups.children) > 1 or f"hooks.{event}" in empty or jsonedit.has_comments(text, groups):
                return jsonedit.remove_child(text, groups, gi, empty.get(f"hooks.{event}")), event
            if len(hooks.children) > 1 or "hooks" in empty or jsonedit.has_comments(text, hooks):
                return jsonedit.remove_child(text, hooks, ei, empty.get("hooks")), event
            return jsonedit.remove_child(text, root, hooks_i, empty.get("")), event
    return None


def add_groups(text: str, groups: list[tuple[str, dict[str, Any]]],
               path: Path) -> tuple[str, dict[str, str]]:
    """``text`` with each ``(event, group)`` appended; returns it and the containers that were
    empty before (JSON path -> their inner text), for :func:`remove_ours`. Raises :class:`HooksError`
    when ``hooks`` or an event has the wrong type."""
    bom, body = _strip_bom(text)
    style = jsonedit.detect_style(body)
    empty: dict[str, str] = {}
    for event, group in groups:
        root = jsonedit.parse(body, comments=True)
        hooks = root.get("hooks")
        if hooks is None:
            if not root.children:
                empty[""] = jsonedit.inner_text(body, root)
            body = jsonedit.append_member(body, root, "hooks", {event: [group]}, style)
            continue
        if hooks.kind != "object":
            raise HooksError(f"{path}: \"hooks\" is not an object; nothing was changed.")
        groups_node = hooks.get(event)
        if groups_node is None:
            if not hooks.children:
                empty["hooks"] = jsonedit.inner_text(body, hooks)
            body = jsonedit.append_member(body, hooks, event, [group], style)
        elif groups_node.kind != "array":
            raise HooksError(f"{path}: \"hooks.{event}\" is not a list; nothing was changed.")
        else:
            if not groups_node.children:
                empty[f"hooks.{event}"] = jsonedit.inner_text(body, groups_node)
            body = jsonedit.append_member(body, groups_node, None, group, style)
    return bom + body, empty


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8) atomically; a symlink is written through to its target
    and the file's mode is kept (0600 for a new file). Raises ``OSError`` (``PermissionError`` for a
    file without any write permission bit, which is left as it is)."""
    target = path.resolve() if path.is_symlink() else path
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o600
    else:
        if not mode & 0o222:  # nobody may write it: replacing it would override the owner's choice
            raise PermissionError(f"{target} is read-only")
    atomic_write_text(target, text, mode)


def _sha(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------------------------------- API
def _backup(hm_root: Path, path: Path, before: str | None, change: Change) -> None:
    if before is None:
        return
    try:
        change.backup = save_backup(hm_root, path, before, BACKUPS_KEPT)
    except OSError as exc:
        raise HooksError(f"cannot back up {path} before changing it ({exc}); nothing was changed.") from exc


def install(path: Path, groups: list[tuple[str, dict[str, Any]]], hm_root: Path, *,
            dry_run: bool = False, client: ClientSpec | None = None) -> tuple[Change, str | None, str]:
    """Put ``groups`` into the settings file ``path`` (replacing any entries of ours).

    ``client`` says which syntax the file may use (:attr:`ClientSpec.settings_comments`; ``None``:
    plain JSON). Returns ``(change, text before or None when the file did not exist, text after)``;
    ``change.backup`` is the copy of the old file. With ``dry_run`` nothing is written. Raises
    :class:`HooksError` (file left unchanged).
    """
    state = _load_state(hm_root)
    key = str(path)
    for _attempt in range(3):
        before = _read(path)
        blank = before is not None and not before.strip(_BOM + " \t\r\n")  # e.g. made by `touch`
        base = before if before is not None and not blank else "{}\n"
        _parse(path, base, client)
        record = dict(state.get(key) or {})
        stripped, _ = remove_ours(base, record.get("empty"))
        after, empty = add_groups(stripped, groups, path)
        change = Change(path, after != before, created=before is None, events=[e for e, _ in groups],
                        before_sha256=_sha(before), after_sha256=_sha(after))
        if dry_run or after == before:
            return change, before, after
        if _read(path) != before:  # the client wrote the file meanwhile: redo on the new text
            continue
        _backup(hm_root, path, before, change)
        try:
            write_atomic(path, after)
        except OSError as exc:
            raise HooksError(f"cannot write {path}: {exc}; nothing was changed.") from exc
        merged_empty = {**(record.get("empty") or {}), **empty}
        state[key] = {"created": bool(record.get("created")) or before is None, "empty": merged_empty}
        if blank or "blank" in record:  # uninstall gives back the file's original whitespace
            state[key]["blank"] = before if blank else record["blank"]
        _save_state(hm_root, state)
        return change, before, after
    raise HooksError(f"{path} kept changing while we edited it; run the command again.")


def uninstall(path: Path, hm_root: Path, *, dry_run: bool = False,
              client: ClientSpec | None = None) -> tuple[Change, str | None, str | None]:
    """Remove every entry of ours from ``path``; a file our install created and that now holds
    nothing else is deleted. Returns ``(change, before, after or None if deleted)``; the old file
    is backed up first (``change.backup``). ``client`` as for :func:`install`."""
    key = str(path)
    before = _read(path)
    if key not in _load_state(hm_root) and before is not None:
        # Installed for another home (its commands name it): that home holds the install record.
        hm_root = next((h for h in installed_homes(path) if key in _load_state(h)), hm_root)
    state = _load_state(hm_root)
    record = state.get(key) or {}
    for _attempt in range(3):
        before = _read(path)
        if before is None:
            return Change(path, False), None, None
        _parse(path, before, client)
        after, events = remove_ours(before, record.get("empty"))
        if isinstance(record.get("blank"), str) and _strip_bom(after)[1].strip() == "{}":
            after = record["blank"]
        delete = bool(record.get("created")) and _strip_bom(after)[1].strip() == "{}"
        change = Change(path, after != before or delete, deleted=delete, events=events,
                        before_sha256=_sha(before), after_sha256=None if delete else _sha(after))
        if dry_run or not change.changed:
            return change, before, None if delete else after
        if _read(path) != before:
            continue
        _backup(hm_root, path, before, change)
        try:
            if delete:  # the file install created; a symlink to it stays, as it was before
                (path.resolve() if path.is_symlink() else path).unlink()
            else:
                write_atomic(path, after)
        except OSError as exc:
            raise HooksError(f"cannot write {path}: {exc}; nothing was changed.") from exc
        state.pop(key, None)
        _save_state(hm_root, state)
        return change, before, None if delete else after
    raise HooksError(f"{path} kept changing while we edited it; run the command again.")


def command_home(command: str) -> Path | None:
    """The data home a hook command of ours names with ``--home`` (``None``: none named, or the
    command cannot be split)."""
    try:
        parts = shlex.split(command.split(MARKER)[0])
    except ValueError:
        return None
    for i, part in enumerate(parts):
        if part == "--home" and i + 1 < len(parts):
            return Path(parts[i + 1])
        if part.startswith("--home="):
            return Path(part.removeprefix("--home="))
    return None


def installed_homes(path: Path) -> list[Path]:
    """The data homes our entries in ``path`` run against, in order of appearance, each once."""
    homes: list[Path] = []
    for entries in installed(path).values():
        for entry in entries:
            home = command_home(entry["command"])
            if home is not None and home not in homes:
                homes.append(home)
    return homes


def installed(path: Path) -> dict[str, list[dict[str, Any]]]:
    """Our hook entries in ``path`` by event (``{}`` when none, the file is missing or unreadable;
    comments in the file are allowed)."""
    try:
        text = _read(path)
    except HooksError:
        return {}
    if text is None:
        return {}
    try:
        data = jsonedit.loads(_strip_bom(text)[1])
    except ValueError:
        return {}
    out: dict[str, list[dict[str, Any]]] = {}
    hooks = data.get("hooks") if isinstance(data, dict) else None
    if not isinstance(hooks, dict):
        return {}
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            for entry in (group.get("hooks") or []) if isinstance(group, dict) else []:
                if is_ours(entry):
                    out.setdefault(event, []).append(entry)
    return out
