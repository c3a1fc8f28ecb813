"""Transcript importers: other agents' histories into :class:`~hermes_memory.sessions.db.SessionDB`.

One module per format, each exposing ``import_path(db, path, progress=None) -> ImportReport``:

=============  ===============================================  ===========================
format         input                                            session ids
=============  ===============================================  ===========================
``hermes``     a reference agent's ``state.db``                 kept as they are
``claude_code`` Claude Code ``*.jsonl`` transcripts (file/dir)  ``cc-<sessionId>``
``chatgpt``    ChatGPT export ``conversations.json``            ``chatgpt-<conversation id>``
``claude_ai``  Claude.ai export ``conversations.json`` / .zip   ``claude_ai-<conversation uuid>``
``codex``      Codex CLI ``rollout-*.jsonl`` (file/dir)         ``codex-<session id>``
``openai``     JSONL, one ``{"messages": [...]}`` per line      ``openai-<id>`` or content hash
``locomo``     LoCoMo ``locomo10.json``-style file              ``locomo-<sample>-s<n>``
=============  ===============================================  ===========================

Re-importing adds nothing twice: a session that already exists only receives the messages
beyond those it already holds (so a transcript that grew since the last import is topped up).
A session an earlier import ended is ended again at the new end when it was topped up.
When the messages it holds no longer match the file (edited, or a ChatGPT conversation
continued on another branch) nothing is appended and the session is reported.
Malformed records are reported in :attr:`ImportReport.errors` as ``"<path>:<line or key>:
<reason>"`` and the rest is imported. ``progress(done, total)`` is called as work proceeds
(``total`` may be ``None``) so the CLI can draw a progress bar. A UTF-8 byte-order mark at the
start of a Claude Code, Claude.ai or Codex file is ignored. A record nested deeper than
:data:`MAX_DEPTH` levels (a line, or an element of a whole-file JSON list) is reported as
``"<path>:<line or [index]>: nested too deeply ..."`` and skipped: every format parses through
:func:`load_json` / :func:`load_json_list`, so no walk of imported data meets such a record.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from hermes_memory.sessions.db import SessionDB

Progress = Callable[[int, int | None], None]

__all__ = ["FORMATS", "MAX_DEPTH", "ImportReport", "NestedTooDeep", "import_path", "iso_time", "jsonl_files",
           "load_json", "load_json_list", "record_reason", "set_session_origin", "store_session"]

FORMATS = ("hermes", "claude_code", "chatgpt", "claude_ai", "codex", "openai", "locomo")
"""Format names accepted by :func:`import_path` and ``hermes-memory sessions import --format``."""
_MODULES = {"openai": "openai_jsonl"}
"""The module of a format whose name differs from the format's."""


@dataclass
class ImportReport:
    """What an import did. Counts are sessions and messages; ``errors`` lists malformed records."""

    format: str
    path: str
    sessions_created: int = 0
    sessions_updated: int = 0
    sessions_unchanged: int = 0
    messages_imported: int = 0
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "path": self.path,
            "sessions_created": self.sessions_created,
            "sessions_updated": self.sessions_updated,
            "sessions_unchanged": self.sessions_unchanged,
            "messages_imported": self.messages_imported,
            "errors": list(self.errors),
        }


def json_reason(exc: ValueError) -> str:
    """Why a line is not JSON, whole: ``"Expecting value at column 1"`` for the decoder's own error
    (its message and 1-based column), ``str(exc)`` for any other ``ValueError``."""
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at column {exc.colno}"
    return str(exc)


MAX_DEPTH = 200
"""Most levels of nested arrays/objects an imported record may hold. Every walk of imported data
(the content flatteners, redaction, the content codec, ``json.dumps``) recurses once per level and
Python stops at 1,000 frames (``sys.getrecursionlimit()``), with the CLI's own frames below them;
real transcripts nest about 10 levels (a Claude Code tool result inside a message inside a record)."""

TOO_DEEP = f"nested too deeply (more than {MAX_DEPTH} levels of arrays/objects), skipped"


class NestedTooDeep(ValueError):
    """A JSON record nested deeper than :data:`MAX_DEPTH` levels (its message is :data:`TOO_DEEP`)."""

    def __init__(self) -> None:
        super().__init__(TOO_DEEP)


def _too_deep(value: Any) -> bool:
    """Whether ``value`` (parsed JSON) nests deeper than :data:`MAX_DEPTH` levels; walked with a
    list, not recursion, so any depth is measured."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node
        if depth > MAX_DEPTH:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


def load_json(text: str | bytes) -> Any:
    """``json.loads(text)``, bounded: the one place importers parse a record, so nothing nested
    deeper than :data:`MAX_DEPTH` reaches a recursive walk. Raises :class:`NestedTooDeep` (a
    ``ValueError``) for such a record, however deep (Python's parser itself raises
    ``RecursionError`` near 1,000 levels), and ``ValueError`` when it is not JSON."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise NestedTooDeep() from None
    opens = text.count("[") + text.count("{") if isinstance(text, str) else text.count(b"[") + text.count(b"{")
    if opens > MAX_DEPTH and isinstance(value, (dict, list)) and _too_deep(value):  # fewer opens: cannot be deeper
        raise NestedTooDeep()
    return value


def record_reason(exc: ValueError) -> str:
    """Why a record of a file was skipped: :data:`TOO_DEEP`, or ``"not JSON (<json_reason>)"``."""
    return str(exc) if isinstance(exc, NestedTooDeep) else f"not JSON ({json_reason(exc)})"


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{},]', re.S)
"""A JSON string (skipped whole) or a structural character: enough to find a list's elements."""


def _list_items(text: str) -> list[str] | None:
    """The texts of the elements of the JSON list ``text``, found without parsing them (any depth),
    or ``None`` when ``text`` is not one list."""
    body = text.strip()
    if not body.startswith("["):
        return None
    items: list[str] = []
    depth, start = 0, 1
    for m in _JSON_TOKEN.finditer(body):
        tok = m.group()
        if tok in "[{":
            depth += 1
        elif tok in "]}":
            depth -= 1
            if depth == 0:
                if body[m.end():].strip():
                    return None
                last = body[start:m.start()].strip()
                if last or items:
                    items.append(last)
                return items
        elif tok == "," and depth == 1:
            items.append(body[start:m.start()].strip())
            start = m.end()
    return None


def load_json_list(text: str) -> tuple[Any, dict[int, str]]:
    """A whole-file JSON document (a ChatGPT or Claude.ai export, a LoCoMo file) and the elements
    left out of it: ``(data, {index: reason})``. When the document is a list some of whose elements
    nest deeper than :data:`MAX_DEPTH`, those elements are ``None`` in ``data`` (the others keep
    their index) and the dict says why; otherwise the dict is empty. Raises ``ValueError`` as
    :func:`load_json` does when the file is not JSON, or is too deep and not a list."""
    try:
        return load_json(text), {}
    except NestedTooDeep:
        items = _list_items(text)
        if items is None:
            raise
    data: list[Any] = []
    bad: dict[int, str] = {}
    for i, item in enumerate(items):
        try:
            data.append(load_json(item))
        except NestedTooDeep as exc:
            data.append(None)
            bad[i] = str(exc)
    return data, bad


def iso_time(value: Any) -> float | None:
    """Epoch seconds of an ISO-8601 string (``Z`` or an offset; naive means local time), else ``None``."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def jsonl_files(path: Path, report: ImportReport) -> list[Path]:
    """``path`` itself, or every ``*.jsonl`` below the folder ``path`` (sorted).

    An empty folder adds an error to ``report`` saying what to pass instead, and returns ``[]``.
    """
    files = sorted(path.rglob("*.jsonl")) if path.is_dir() else [path]
    if not files:
        report.errors.append(f"{path}: no *.jsonl files found in this folder; pass a transcript or its folder")
    return files


def store_session(
    db: SessionDB,
    report: ImportReport,
    session: dict[str, Any],
    messages: list[dict[str, Any]],
) -> str:
    """Create ``session`` (keys of :meth:`SessionDB.create_session` plus ``ended_at``/
    ``end_reason``) if new, then append the ``messages`` it does not hold yet (by position).

    Returns ``"created"``, ``"updated"``, ``"unchanged"`` or ``"differs"`` (stored messages do not
    match the incoming ones; nothing appended, reported in ``report.errors``)."""
    sid = session["id"]
    existing = db.get_session(sid)
    if existing is None:
        db.create_session(
            session_id=sid,
            source=session.get("source") or "import",
            model=session.get("model"),
            system_prompt=session.get("system_prompt"),
            user_id=session.get("user_id"),
            parent_session_id=session.get("parent_session_id"),
            title=_free_title(db, session.get("title")),
            started_at=session.get("started_at"),
        )
        have = 0
        report.sessions_created += 1
    else:
        have = db.message_count(sid)
        differs = _first_difference(db.get_messages(sid), messages)
        if differs is not None:
            report.errors.append(
                f"{sid}: message {differs + 1} differs from the stored copy (edited, or another branch "
                "of the conversation); not topped up. Delete the session to import this version."
            )
            report.sessions_unchanged += 1
            return "differs"
    new = messages[have:]
    if new:
        db.append_messages(sid, new)
        report.messages_imported += len(new)
        if existing is not None:
            report.sessions_updated += 1
    elif existing is not None:
        report.sessions_unchanged += 1
    if session.get("ended_at") is not None and (existing is None or existing.get("ended_at") is None):
        reason = session.get("end_reason") or "imported"
        with db.atomic() as conn:
            conn.execute(
                "UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL",
                (session["ended_at"], reason, sid),
            )
    elif session.get("ended_at") is not None and new:
        # a conversation continued since the last import ends later now (else `sessions prune`
        # would count it by its old end); only an end an import set is moved
        with db.atomic() as conn:
            conn.execute(
                "UPDATE sessions SET ended_at = ? WHERE id = ? AND end_reason = ? AND ended_at < ?",
                (session["ended_at"], sid, session.get("end_reason") or "imported", session["ended_at"]),
            )
    if existing is None:
        return "created"
    return "updated" if new else "unchanged"


def set_session_origin(db: SessionDB, session_id: str, *, cwd: str | None, git_branch: str | None) -> None:
    """Record where a session ran (working directory, git branch) when those columns are still
    empty: a value already stored (by the agent that wrote it, or an earlier import) is kept."""
    if cwd is None and git_branch is None:
        return
    with db.atomic() as conn:
        conn.execute("UPDATE sessions SET cwd = coalesce(cwd, ?), git_branch = coalesce(git_branch, ?) WHERE id = ?",
                     (cwd, git_branch, session_id))


def _first_difference(stored: list[dict[str, Any]], incoming: list[dict[str, Any]]) -> int | None:
    """Index of the first stored message whose role or content differs from the incoming
    message at the same position (compared as the database would store it), else ``None``."""
    from hermes_memory.sessions.codec import decode_content, encode_content

    for i, (old, new) in enumerate(zip(stored, incoming, strict=False)):
        content = decode_content(encode_content(new.get("content")))
        if old.get("role") != str(new.get("role") or "user") or old.get("content") != content:
            return i
    return None


def _free_title(db: SessionDB, title: str | None) -> str | None:
    from hermes_memory.sessions.titles import sanitize_title

    try:
        clean = sanitize_title(title)
    except ValueError:
        clean = sanitize_title(str(title)[:100])
    if clean is None:
        return None
    if db.get_session_by_title(clean) is None:  # free: kept as it is ("Deploy #3" stays "Deploy #3")
        return clean
    return db.get_next_title_in_lineage(clean)


def import_path(db: SessionDB, path: str | Path, fmt: str, progress: Progress | None = None) -> ImportReport:
    """Import ``path`` in format ``fmt`` (one of :data:`FORMATS`). Raises ``ValueError`` for an
    unknown format and ``FileNotFoundError`` for a missing path; malformed records inside the
    file are reported, not raised."""
    p = Path(path).expanduser()
    if not p.exists():
        raise FileNotFoundError(f"{p} does not exist; pass the file (or folder) to import.")
    if fmt not in FORMATS:
        raise ValueError(f"unknown import format {fmt!r}; use one of: {', '.join(FORMATS)}.")
    module = _MODULES.get(fmt, fmt)  # the module of each format, imported on first use
    mod = importlib.import_module(f"hermes_memory.sessions.importers.{module}")
    report: ImportReport = mod.import_path(db, p, progress)
    return report
