"""Import a reference Hermes agent's ``state.db`` (another home's session history), or the file
``hermes-memory sessions export`` wrote (JSON: a list of sessions; JSONL: one session per line;
each session's columns plus its ``messages``), so an export is a backup that restores.

Sessions keep their ids, sources, timestamps, titles, token counters, working directory, git
branch and lineage; messages keep their roles, content, tool calls, tool names and reasoning
fields (the core columns of docs/reference.md §6; columns the source lacks are left empty). The
source file is opened read-only and never changed. A session whose ``parent_session_id`` is not
in the source or here is imported without the link (reported). An export that is not JSON (cut
short, say) is reported: a JSON file as a whole, a JSONL file per line, its whole lines imported.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.importers import (
    ImportReport,
    NestedTooDeep,
    Progress,
    json_reason,
    load_json,
    load_json_list,
    store_session,
)
from hermes_memory.sessions.migrations import MESSAGE_COLUMNS, SESSION_COLUMNS

_SET_BY_STORE = ("id", "source", "model", "system_prompt", "user_id", "parent_session_id", "title",
                 "started_at", "ended_at", "end_reason")
_COUNTERS = tuple(c for c, _ in SESSION_COLUMNS if c not in _SET_BY_STORE)
"""Session columns copied onto a session this import created, after its messages (counters,
costs, ``cwd``, ``git_branch``, ...): the source's values, not recounted."""
_MESSAGE_KEYS = tuple(c for c, _ in MESSAGE_COLUMNS if c not in ("id", "session_id"))

Messages = Callable[[str], "list[dict[str, Any]] | None"]


def _open_state_db(path: Path, report: ImportReport) -> tuple[list[dict[str, Any]], Messages, Callable[[], None]] | None:
    """The sessions of the ``state.db`` at ``path`` (read-only), a reader of one session's
    messages (``None`` after a read error, reported) and the close; ``None`` when unreadable."""
    try:
        src = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        src.row_factory = sqlite3.Row
        scols = {r[1] for r in src.execute("PRAGMA table_info(sessions)")}
        mcols = {r[1] for r in src.execute("PRAGMA table_info(messages)")}
        if not {"id", "source"} <= scols or not {"session_id", "role"} <= mcols:
            report.errors.append(f"{path}: no sessions/messages tables of a Hermes state.db")
            return None
        sessions = [dict(r) for r in src.execute("SELECT * FROM sessions ORDER BY started_at, id")]
    except sqlite3.Error as exc:
        report.errors.append(f"{path}: cannot read as SQLite: {exc}")
        return None
    wanted_m = [c for c in _MESSAGE_KEYS if c in mcols]

    def messages(sid: str) -> list[dict[str, Any]] | None:
        try:
            rows = src.execute(f"SELECT {', '.join(wanted_m)} FROM messages WHERE session_id = ? ORDER BY id",
                               (sid,)).fetchall()
        except sqlite3.Error as exc:
            report.errors.append(f"{path}:messages[{sid}]: {exc}")
            return None
        return [dict(r) for r in rows]

    return sessions, messages, src.close


def _is_export(path: Path) -> bool:
    """True when ``path`` holds JSON (``[`` or ``{`` first, after a BOM and blanks), not SQLite."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return head.removeprefix(b"\xef\xbb\xbf").lstrip()[:1] in (b"[", b"{")


def _read_export(path: Path, report: ImportReport) -> tuple[list[dict[str, Any]], Messages, Callable[[], None]]:
    """The sessions of a ``sessions export`` file (JSON list or JSONL) and their messages; records
    that are not JSON or not a session are reported in ``report`` and left out."""
    text = path.read_text(encoding="utf-8-sig", errors="replace")
    records: list[tuple[str, Any]] = []
    if text.lstrip().startswith("["):
        try:
            data, too_deep = load_json_list(text)
        except ValueError as exc:
            report.errors.append(f"{path}: not JSON ({json_reason(exc)}); the file may be truncated: "
                                 "export it again, or export as JSONL (--format jsonl) to keep whole lines")
            data, too_deep = [], {}
        for i, why in too_deep.items():
            report.errors.append(f"{path}:[{i}]: {why}")
        records = [(f"{path}:[{i}]", r) for i, r in enumerate(data if isinstance(data, list) else [data])
                   if i not in too_deep]
    else:
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    records.append((f"{path}:{n}", load_json(line)))
                except NestedTooDeep as exc:
                    report.errors.append(f"{path}:{n}: {exc}")
                except ValueError as exc:
                    report.errors.append(f"{path}:{n}: not JSON ({json_reason(exc)}); the line may be truncated")
    sessions: list[dict[str, Any]] = []
    by_id: dict[str, list[dict[str, Any]]] = {}
    for where, rec in records:
        if not (isinstance(rec, dict) and isinstance(rec.get("id"), str) and rec["id"]
                and isinstance(rec.get("messages"), list)):
            report.errors.append(f"{where}: not a session of a sessions export (needs \"id\" and \"messages\")")
            continue
        sessions.append({k: v for k, v in rec.items() if k != "messages"})
        by_id[rec["id"]] = [{k: m.get(k) for k in _MESSAGE_KEYS} for m in rec["messages"] if isinstance(m, dict)]
    sessions.sort(key=lambda s: (float(s.get("started_at") or 0.0), s["id"]))
    return sessions, by_id.get, lambda: None


def import_path(db: SessionDB, path: Path, progress: Progress | None = None) -> ImportReport:
    """Copy every session (parents first) and its messages from the ``state.db`` at ``path`` (or
    in the folder ``path``), or from the ``sessions export`` file ``path``."""
    report = ImportReport(format="hermes", path=str(path))
    if path.is_dir():
        path = path / "state.db"
    source = _read_export(path, report) if _is_export(path) else _open_state_db(path, report)
    if source is None:
        return report
    sessions, messages_of, close = source
    known = {s["id"] for s in sessions}
    # parents before children so the foreign key holds
    ordered: list[dict[str, Any]] = []
    placed: set[str] = set()
    pending = list(sessions)
    while pending:
        progress_made = False
        rest = []
        for s in pending:
            parent = s.get("parent_session_id")
            if not parent or parent in placed or parent not in known or db.get_session(parent):
                ordered.append(s)
                placed.add(s["id"])
                progress_made = True
            else:
                rest.append(s)
        if not progress_made:  # a cycle: break it
            ordered.extend(rest)
            break
        pending = rest
    total = len(ordered)
    for n, s in enumerate(ordered):
        if progress:
            progress(n, total)
        sid = s["id"]
        parent = s.get("parent_session_id")
        if parent and parent not in known and db.get_session(parent) is None:
            report.errors.append(f"{path}:sessions[{sid}]: parent {parent} not found, link dropped")
            parent = None
        if s.get("started_at") is None:
            report.errors.append(f"{path}:sessions[{sid}]: no started_at, using 0")
        rows = messages_of(sid)
        if rows is None:
            continue
        messages = []
        for m in rows:
            if not m.get("role"):
                report.errors.append(f"{path}:messages[{sid}]: row without role, imported as 'user'")
                m["role"] = "user"
            messages.append(m)
        before = db.get_session(sid)
        store_session(
            db,
            report,
            {
                "id": sid,
                "source": s.get("source") or "hermes",
                "model": s.get("model"),
                "system_prompt": s.get("system_prompt"),
                "user_id": s.get("user_id"),
                "parent_session_id": parent,
                "title": s.get("title"),
                "started_at": s.get("started_at") or 0.0,
                "ended_at": s.get("ended_at"),
                "end_reason": s.get("end_reason"),
            },
            messages,
        )
        if before is None:
            sets = {c: s[c] for c in _COUNTERS if s.get(c) is not None}
            if sets:
                sql = "UPDATE sessions SET " + ", ".join(f"{c} = ?" for c in sets) + " WHERE id = ?"
                vals = [*sets.values(), sid]
                with db.atomic() as conn:
                    conn.execute(sql, vals)
    close()
    if progress:
        progress(total, total)
    return report
