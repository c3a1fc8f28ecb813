"""Import OpenAI-style message JSONL: one conversation per line.

Each line: ``{"messages": [{"role", "content", "tool_calls"?, "tool_call_id"?, "name"?}, ...]}``
with optional ``"id"`` (or ``"session_id"``), ``"model"``, ``"title"``, ``"created"`` (epoch s) --
the shape of chat-completions fine-tuning files and most agent logs. A bare JSON list of messages
on a line is accepted too. Session id ``openai-<id>``, or ``openai-<sha1 of the line>[:16]`` when
there is no id (so a re-import finds the same session). Source ``openai``. Content may be a string
or a list of content parts (the text parts are kept). Lines that are not JSON or have no message
list, and messages without a valid role, are reported as ``<file>:<line>: <reason>``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.importers import (
    ImportReport,
    Progress,
    jsonl_files,
    load_json,
    record_reason,
    store_session,
)

ROLES = ("system", "developer", "user", "assistant", "tool", "function")


def _content(value: Any) -> Any:
    if isinstance(value, list):
        texts: list[str] = [p["text"] for p in value if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return "\n".join(texts) if texts else value
    return value


def import_path(db: SessionDB, path: Path, progress: Progress | None = None) -> ImportReport:
    """Import every line of a JSONL file (or every ``*.jsonl`` in a folder)."""
    report = ImportReport(format="openai", path=str(path))
    files = jsonl_files(path, report)
    for f in files:
        try:
            lines = f.read_text(encoding="utf-8-sig", errors="replace").splitlines()
        except OSError as exc:
            report.errors.append(f"{f}: cannot read: {exc}")
            continue
        for ln, line in enumerate(lines, start=1):
            if progress:
                progress(ln, len(lines))
            if not line.strip():
                continue
            try:
                rec = load_json(line)
            except ValueError as exc:
                report.errors.append(f"{f}:{ln}: {record_reason(exc)}")
                continue
            if isinstance(rec, list):
                rec = {"messages": rec}
            if not isinstance(rec, dict) or not isinstance(rec.get("messages"), list):
                report.errors.append(f"{f}:{ln}: no \"messages\" list")
                continue
            msgs = []
            for mi, m in enumerate(rec["messages"]):
                if not isinstance(m, dict) or m.get("role") not in ROLES:
                    report.errors.append(f"{f}:{ln}: message {mi} has no valid role, skipped")
                    continue
                role = {"developer": "system", "function": "tool"}.get(m["role"], m["role"])
                msgs.append({
                    "role": role,
                    "content": _content(m.get("content")),
                    "tool_calls": m.get("tool_calls"),
                    "tool_call_id": m.get("tool_call_id"),
                    "tool_name": m.get("name"),
                    "reasoning": m.get("reasoning") or m.get("reasoning_content"),
                })
            if not msgs:  # an empty session would report success for a wrong --format
                report.errors.append(f"{f}:{ln}: no valid messages (each needs a \"role\"); not imported")
                continue
            ident = rec.get("id") or rec.get("session_id") or hashlib.sha1(line.encode()).hexdigest()[:16]
            created = rec.get("created")
            if isinstance(created, (int, float)):
                for i, m in enumerate(msgs):
                    m["timestamp"] = float(created) + i * 0.001
            store_session(
                db,
                report,
                {
                    "id": f"openai-{ident}",
                    "source": "openai",
                    "model": rec.get("model"),
                    "title": rec.get("title"),
                    "started_at": float(created) if isinstance(created, (int, float)) else None,
                },
                msgs,
            )
    return report
