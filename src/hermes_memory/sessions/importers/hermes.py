"""Import a reference Hermes agent's ``state.db`` (another home's session history).

Sessions keep their ids, sources, timestamps, titles, token counters and lineage; messages keep
their roles, content, tool calls and reasoning fields (the core columns of docs/reference.md §6;
columns the source lacks are left empty). The source file is opened read-only and never changed.
A session whose ``parent_session_id`` is not in the source or here is imported without the link
(reported).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.importers import ImportReport, Progress, store_session
from hermes_memory.sessions.migrations import MESSAGE_COLUMNS, SESSION_COLUMNS

_COUNTERS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens",
             "estimated_cost_usd", "actual_cost_usd", "api_call_count", "billing_provider", "model_config")


def import_path(db: SessionDB, path: Path, progress: Progress | None = None) -> ImportReport:
    """Copy every session (parents first) and its messages from the ``state.db`` at ``path``."""
    report = ImportReport(format="hermes", path=str(path))
    if path.is_dir():
        path = path / "state.db"
    try:
        src = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        src.row_factory = sqlite3.Row
        scols = {r[1] for r in src.execute("PRAGMA table_info(sessions)")}
        mcols = {r[1] for r in src.execute("PRAGMA table_info(messages)")}
        if not {"id", "source"} <= scols or not {"session_id", "role"} <= mcols:
            report.errors.append(f"{path}: no sessions/messages tables of a Hermes state.db")
            return report
        sessions = [dict(r) for r in src.execute("SELECT * FROM sessions ORDER BY started_at, id")]
    except sqlite3.Error as exc:
        report.errors.append(f"{path}: cannot read as SQLite: {exc}")
        return report
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
    wanted_m = [c for c, _ in MESSAGE_COLUMNS if c in mcols and c not in ("id", "session_id")]
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
        try:
            rows = src.execute(
                f"SELECT {', '.join(wanted_m)} FROM messages WHERE session_id = ? ORDER BY id", (sid,)
            ).fetchall()
        except sqlite3.Error as exc:
            report.errors.append(f"{path}:messages[{sid}]: {exc}")
            continue
        messages = []
        for r in rows:
            m = dict(r)
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
            sets = {c: s[c] for c in _COUNTERS if c in s and c in dict(SESSION_COLUMNS) and s[c] is not None}
            if sets:
                sql = "UPDATE sessions SET " + ", ".join(f"{c} = ?" for c in sets) + " WHERE id = ?"
                vals = [*sets.values(), sid]
                with db.atomic() as conn:
                    conn.execute(sql, vals)
    src.close()
    if progress:
        progress(total, total)
    return report
