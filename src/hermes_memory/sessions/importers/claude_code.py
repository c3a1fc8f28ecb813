"""Import Claude Code transcripts: ``~/.claude/projects/<project>/<session>.jsonl``.

Each line is one JSON record. Records with ``type`` ``user`` or ``assistant`` carry
``message: {"role", "content"}`` where content is a string or a list of blocks: ``text``,
``thinking`` (kept as the assistant's ``reasoning``), ``tool_use`` (``{"id", "name", "input"}``
-> an OpenAI-style tool call) and ``tool_result`` (``{"tool_use_id", "content"}`` -> a ``tool``
message). Other record types (``summary``, ``system``, ``file-history-snapshot`` ...) are skipped.
``sessionId`` groups records (session id ``cc-<sessionId>``, source ``claude_code``); ISO
``timestamp`` becomes the message time; ``cwd`` and ``gitBranch`` are not stored. A line that is not
JSON, or a user/assistant record without a message, is reported as ``<file>:<line>: <reason>``.
``path`` may be one file or a folder (searched recursively for ``*.jsonl``).
"""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.importers import ImportReport, Progress, jsonl_files, store_session


def _ts(value: Any) -> float | None:
    if isinstance(value, (int, float)):
        return float(value) / (1000.0 if value > 1e11 else 1.0)
    if isinstance(value, str) and value:
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for b in content:
            if isinstance(b, dict) and b.get("type") == "text":
                parts.append(str(b.get("text", "")))
            elif isinstance(b, str):
                parts.append(b)
        return "\n".join(parts)
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def convert_record(rec: dict[str, Any]) -> list[dict[str, Any]]:
    """SessionDB message dicts for one user/assistant record (may be several: tool results)."""
    msg = rec["message"]
    role = msg.get("role") or rec.get("type")
    content = msg.get("content")
    ts = _ts(rec.get("timestamp"))
    base: dict[str, Any] = {"timestamp": ts} if ts is not None else {}
    if isinstance(content, str):
        return [{**base, "role": role, "content": content}]
    out: list[dict[str, Any]] = []
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    thinking: list[str] = []
    for b in content or []:
        if not isinstance(b, dict):
            continue
        kind = b.get("type")
        if kind == "text":
            texts.append(str(b.get("text", "")))
        elif kind == "thinking":
            thinking.append(str(b.get("thinking", "")))
        elif kind == "tool_use":
            calls.append({
                "id": b.get("id"),
                "type": "function",
                "function": {"name": b.get("name"), "arguments": json.dumps(b.get("input", {}), ensure_ascii=False)},
            })
        elif kind == "tool_result":
            out.append({**base, "role": "tool", "content": _text_of(b.get("content")),
                        "tool_call_id": b.get("tool_use_id")})
    if texts or calls or thinking:
        m: dict[str, Any] = {**base, "role": role, "content": "\n".join(texts) if texts else None}
        if calls:
            m["tool_calls"] = calls
        if thinking:
            m["reasoning"] = "\n".join(thinking)
        if rec.get("message", {}).get("model"):
            m["_model"] = msg["model"]
        out.insert(0, m)
    return out


def import_path(db: SessionDB, path: Path, progress: Progress | None = None) -> ImportReport:
    """Import one ``.jsonl`` transcript or every ``*.jsonl`` under a folder."""
    report = ImportReport(format="claude_code", path=str(path))
    files = jsonl_files(path, report)
    for fi, f in enumerate(files):
        if progress:
            progress(fi, len(files))
        sessions: dict[str, list[dict[str, Any]]] = defaultdict(list)
        errors_before = len(report.errors)
        records = 0
        try:
            lines = f.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError as exc:
            report.errors.append(f"{f}: cannot read: {exc}")
            continue
        for ln, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except ValueError as exc:
                report.errors.append(f"{f}:{ln}: not JSON ({exc.args[0][:60]})")
                continue
            if not isinstance(rec, dict):
                report.errors.append(f"{f}:{ln}: not a JSON object")
                continue
            if rec.get("type") not in ("user", "assistant"):
                continue
            if not isinstance(rec.get("message"), dict):
                report.errors.append(f"{f}:{ln}: {rec.get('type')} record without a message object")
                continue
            sid = str(rec.get("sessionId") or f.stem)
            records += 1
            sessions[sid].extend(convert_record(rec))
        if not path.is_dir() and not records and len(report.errors) == errors_before and any(
            line.strip() for line in lines
        ):
            report.errors.append(
                f"{f}: no Claude Code user/assistant records (is it another format? see --format)"
            )
        for sid, msgs in sessions.items():
            if not msgs:
                continue
            model = next((m.pop("_model") for m in msgs if "_model" in m), None)
            for m in msgs:
                m.pop("_model", None)
            first_user = next((m["content"] for m in msgs if m["role"] == "user" and isinstance(m.get("content"), str)
                               and m["content"].strip()), None)
            store_session(
                db,
                report,
                {
                    "id": f"cc-{sid}",
                    "source": "claude_code",
                    "model": model,
                    "title": " ".join(first_user.split())[:60] if first_user else None,
                    "started_at": next((m["timestamp"] for m in msgs if m.get("timestamp")), None),
                },
                msgs,
            )
    if progress:
        progress(len(files), len(files))
    return report
