"""Import Claude Code transcripts: ``~/.claude/projects/<project>/<session>.jsonl``.

Each line is one JSON record. Records with ``type`` ``user`` or ``assistant`` carry
``message: {"role", "content"}`` where content is a string or a list of blocks: ``text``,
``thinking`` (kept as the assistant's ``reasoning``), ``tool_use`` (``{"id", "name", "input"}``
-> an OpenAI-style tool call) and ``tool_result`` (``{"tool_use_id", "content"}`` -> a ``tool``
message carrying the name of the tool that was called). Other record types (``summary``,
``system``, ``file-history-snapshot``, ``attachment`` ...) are skipped.

``sessionId`` groups records (session id ``cc-<sessionId>``, source ``claude_code``); a subagent's
records (``isSidechain``: in ``<session>/subagents/agent-<agentId>.jsonl``, carrying the parent's
``sessionId``) are a session of their own, ``cc-<sessionId>-agent-<agentId>``; ISO
``timestamp`` becomes the message time. Session metadata kept: ``cwd`` and ``gitBranch`` (the
first ones recorded) in the ``cwd``/``git_branch`` columns, the model, and token usage: an
assistant message's ``usage`` (``input_tokens``, ``output_tokens``, ``cache_read_input_tokens``,
``cache_creation_input_tokens``) counted once per API message id (Claude Code writes one record
per content block, each repeating the usage) into the session's token columns, its
``output_tokens`` as the first record's ``token_count``. An imported session is ended at its last
message's time (reason ``imported``), so ``sessions prune`` can remove it; a later import that tops
it up moves that end time forward.

A ``<memory-context>`` block inside a user message (recall our own hooks injected) is removed
before storing, as the agent never stores it either.

A line that is not JSON, or a user/assistant record without a message (or whose content is
neither a string nor a list of blocks), is reported as
``<file>:<line>: <reason>``. ``path`` may be one file or a folder (searched recursively).

:func:`import_incremental` reads only what a transcript gained since the last call (from a byte
offset kept by the caller), for hooks that import a live session after every turn.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from hermes_memory.fencing import FENCE_OPEN, strip_memory_context
from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.importers import (
    ImportReport,
    Progress,
    _free_title,
    jsonl_files,
    load_json,
    record_reason,
    set_session_origin,
    store_session,
)

SOURCE = "claude_code"
END_REASON = "imported"
TOOL_NAMES_KEPT = 500
"""Tool-call ids (-> tool names) remembered across incremental reads, newest kept."""


def _ts(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:  # NaN, infinities and integers beyond a float are no time at all
            seconds = float(value) / (1000.0 if value > 1e11 else 1.0)
        except OverflowError:
            return None
        return seconds if math.isfinite(seconds) else None
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


def _clean_user(text: str) -> str:
    return strip_memory_context(text) if FENCE_OPEN in text.lower() else text


def convert_record(rec: dict[str, Any], tool_names: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """SessionDB message dicts for one user/assistant record (may be several: tool results).

    ``tool_names`` (tool-call id -> tool name) is read for tool results and filled from tool calls.
    """
    names = tool_names if tool_names is not None else {}
    msg = rec["message"]
    role = msg.get("role") or rec.get("type")
    content = msg.get("content")
    ts = _ts(rec.get("timestamp"))
    base: dict[str, Any] = {"timestamp": ts} if ts is not None else {}
    if isinstance(content, str):
        return [{**base, "role": role, "content": _clean_user(content) if role == "user" else content}]
    out: list[dict[str, Any]] = []
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    thinking: list[str] = []
    for b in content or []:
        if not isinstance(b, dict):
            continue
        kind = b.get("type")
        if kind == "text":
            text = str(b.get("text", ""))
            texts.append(_clean_user(text) if role == "user" else text)
        elif kind == "thinking":
            thinking.append(str(b.get("thinking", "")))
        elif kind == "tool_use":
            if b.get("id") and b.get("name"):
                names[str(b["id"])] = str(b["name"])
            calls.append({
                "id": b.get("id"),
                "type": "function",
                "function": {"name": b.get("name"), "arguments": json.dumps(b.get("input", {}), ensure_ascii=False)},
            })
        elif kind == "tool_result":
            tool: dict[str, Any] = {**base, "role": "tool", "content": _text_of(b.get("content")),
                                    "tool_call_id": b.get("tool_use_id")}
            name = names.get(str(b.get("tool_use_id")))
            if name:
                tool["tool_name"] = name
            out.append(tool)
    if texts or calls or thinking:
        m: dict[str, Any] = {**base, "role": role, "content": "\n".join(texts) if texts else None}
        if calls:
            m["tool_calls"] = calls
        if thinking:
            m["reasoning"] = "\n".join(thinking)
        out.insert(0, m)
    return out


@dataclass
class _Session:
    """What one transcript says about one session."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    model: str | None = None
    cwd: str | None = None
    git_branch: str | None = None
    usage: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"), 0))
    api_calls: int = 0


@dataclass
class _Reader:
    """Parses lines into sessions; keeps what crosses line (and incremental read) boundaries."""

    report: ImportReport
    file: Path
    tool_names: dict[str, str] = field(default_factory=dict)
    last_usage_id: str | None = None
    sessions: dict[str, _Session] = field(default_factory=dict)
    records: int = 0

    def line(self, ln: int, line: str) -> None:
        if not line.strip():
            return
        try:
            rec = load_json(line)
        except ValueError as exc:
            self.report.errors.append(f"{self.file}:{ln}: {record_reason(exc)}")
            return
        if not isinstance(rec, dict):
            self.report.errors.append(f"{self.file}:{ln}: not a JSON object")
            return
        if rec.get("type") not in ("user", "assistant"):
            return
        msg = rec.get("message")
        if not isinstance(msg, dict):
            self.report.errors.append(f"{self.file}:{ln}: {rec.get('type')} record without a message object")
            return
        if not isinstance(msg.get("content"), (str, list, type(None))):
            self.report.errors.append(f"{self.file}:{ln}: message content is neither text nor a list of blocks")
            return
        sid = str(rec.get("sessionId") or self.file.stem)
        if rec.get("isSidechain") is True:  # a subagent's records carry its parent's sessionId
            sid = f"{sid}-agent-{rec.get('agentId') or self.file.stem.removeprefix('agent-')}"
        self.records += 1
        acc = self.sessions.setdefault(sid, _Session())
        if acc.cwd is None and isinstance(rec.get("cwd"), str) and rec["cwd"]:
            acc.cwd = rec["cwd"]
        if acc.git_branch is None and isinstance(rec.get("gitBranch"), str) and rec["gitBranch"]:
            acc.git_branch = rec["gitBranch"]
        if msg.get("model") and acc.model is None and msg.get("model") != "<synthetic>":
            acc.model = str(msg["model"])
        converted = convert_record(rec, self.tool_names)
        usage = msg.get("usage")
        mid = msg.get("id") or rec.get("requestId")
        if rec.get("type") == "assistant" and isinstance(usage, dict) and mid != self.last_usage_id:
            self.last_usage_id = mid
            acc.api_calls += 1
            for ours, theirs in (("input_tokens", "input_tokens"), ("output_tokens", "output_tokens"),
                                 ("cache_read_tokens", "cache_read_input_tokens"),
                                 ("cache_write_tokens", "cache_creation_input_tokens")):
                value = usage.get(theirs)
                if isinstance(value, int) and not isinstance(value, bool):
                    acc.usage[ours] += value
            out_tokens = usage.get("output_tokens")
            if converted and isinstance(out_tokens, int) and converted[0].get("role") == "assistant":
                converted[0]["token_count"] = out_tokens
        acc.messages.extend(converted)


def _first_user_title(msgs: list[dict[str, Any]]) -> str | None:
    first = next((m["content"] for m in msgs if m["role"] == "user" and isinstance(m.get("content"), str)
                  and m["content"].strip()), None)
    return " ".join(first.split())[:60] if first else None


def _set_metadata(db: SessionDB, sid: str, acc: _Session, *, last_ts: float | None, end: bool) -> None:
    """cwd/git branch (when not set yet) and, when ``end``, move an import's end time forward."""

    set_session_origin(db, sid, cwd=acc.cwd, git_branch=acc.git_branch)
    with db.atomic() as conn:
        if end and last_ts is not None:
            conn.execute("UPDATE sessions SET ended_at = ? WHERE id = ? AND end_reason = ? AND ended_at < ?",
                         (last_ts, sid, END_REASON, last_ts))


def _store(db: SessionDB, report: ImportReport, sid: str, acc: _Session, *, end: bool,
           usage_absolute: bool) -> str:
    msgs = acc.messages
    last_ts = next((m["timestamp"] for m in reversed(msgs) if m.get("timestamp")), None)
    status = store_session(
        db,
        report,
        {
            "id": f"cc-{sid}",
            "source": SOURCE,
            "model": acc.model,
            "title": _first_user_title(msgs),
            "started_at": next((m["timestamp"] for m in msgs if m.get("timestamp")), None),
            "ended_at": last_ts if end else None,
            "end_reason": END_REASON,
        },
        msgs,
    )
    if status == "differs":
        return status
    title = _first_user_title(msgs)
    if status != "created" and title and (db.get_session(f"cc-{sid}") or {}).get("title") is None:
        free = _free_title(db, title)
        if free:
            db.set_session_title(f"cc-{sid}", free)
    _set_metadata(db, f"cc-{sid}", acc, last_ts=last_ts, end=end)
    if usage_absolute or any(acc.usage.values()):
        db.update_token_counts(f"cc-{sid}", **acc.usage, model=acc.model, api_call_count=acc.api_calls,
                               absolute=usage_absolute)
    return status


def _read_text(f: Path, report: ImportReport) -> list[str] | None:
    try:
        return f.read_text(encoding="utf-8-sig", errors="replace").splitlines()
    except OSError as exc:
        report.errors.append(f"{f}: cannot read: {exc}")
        return None


def _import_file(db: SessionDB, f: Path, report: ImportReport, *, single: bool, end: bool) -> _Reader | None:
    lines = _read_text(f, report)
    if lines is None:
        return None
    reader = _Reader(report, f)
    errors_before = len(report.errors)
    for ln, line in enumerate(lines, start=1):
        reader.line(ln, line)
    if single and not reader.records and len(report.errors) == errors_before and any(x.strip() for x in lines):
        report.errors.append(f"{f}: no Claude Code user/assistant records (is it another format? see --format)")
    for sid, acc in reader.sessions.items():
        if acc.messages:
            _store(db, report, sid, acc, end=end, usage_absolute=True)
    return reader


def import_path(db: SessionDB, path: Path, progress: Progress | None = None) -> ImportReport:
    """Import one ``.jsonl`` transcript or every ``*.jsonl`` under a folder (sessions ended at their
    last message, reason ``imported``)."""
    report = ImportReport(format="claude_code", path=str(path))
    files = jsonl_files(path, report)
    for fi, f in enumerate(files):
        if progress:
            progress(fi, len(files))
        _import_file(db, f, report, single=not path.is_dir(), end=True)
    if progress:
        progress(len(files), len(files))
    return report


def import_incremental(db: SessionDB, path: Path, state: dict[str, Any] | None) -> tuple[ImportReport, dict[str, Any]]:
    """Import what the transcript ``path`` gained since ``state`` was returned; returns the report
    and the new state (a JSON-able dict the caller keeps: byte offset, lines read, messages held per
    session, recent tool names, the file's identity).

    Only complete lines are read (a line still being written waits for the next call). The fast
    path appends the new messages directly; it is taken only when the file is the same one (inode,
    not shorter than the offset) and every session in it holds exactly the messages the state says.
    Otherwise (first call, a crash between the commit and the caller saving the state, a rewritten
    file) the whole file is imported by position, which adds nothing twice. Sessions are not ended.
    Raises ``OSError`` when the file cannot be read and ``SessionStoreError`` on database failure.
    """
    report = ImportReport(format="claude_code", path=str(path))
    st = os.stat(path)
    ident = [st.st_dev, st.st_ino]
    prev = state or {}
    counts: dict[str, int] = dict(prev.get("counts") or {})
    offset = int(prev.get("offset") or 0)
    fast = bool(prev) and prev.get("file") == ident and st.st_size >= offset
    if fast:
        fast = all(db.message_count(f"cc-{sid}") == n for sid, n in counts.items())
    reader = _Reader(report, path, tool_names=dict(prev.get("tools") or {}) if fast else {},
                     last_usage_id=prev.get("last_usage_id") if fast else None)
    with open(path, "rb") as fh:
        fh.seek(offset if fast else 0)
        data = fh.read()
    end = data.rfind(b"\n") + 1
    lines = data[:end].decode("utf-8-sig", errors="replace").splitlines()
    first_line = int(prev.get("lines") or 0) + 1 if fast else 1
    for i, line in enumerate(lines):
        reader.line(first_line + i, line)
    # a session this state does not know, yet holding messages: let the position-based path decide
    fast = fast and all(sid in counts or db.message_count(f"cc-{sid}") == 0 for sid in reader.sessions)
    if not fast and prev and first_line > 1:
        return import_incremental(db, path, None)
    if not fast:  # counts describe this read of the file, so a later fast path follows the file
        counts = {}
    for sid, acc in reader.sessions.items():
        if not acc.messages:
            continue
        sess = f"cc-{sid}"
        if not fast or db.get_session(sess) is None:
            _store(db, report, sid, acc, end=False, usage_absolute=not fast)
        else:
            db.append_messages(sess, acc.messages)
            report.messages_imported += len(acc.messages)
            report.sessions_updated += 1
            _set_metadata(db, sess, acc, last_ts=None, end=False)
            if any(acc.usage.values()):
                db.update_token_counts(sess, **acc.usage, model=acc.model, api_call_count=acc.api_calls, absolute=False)
        # by position, the file's count: a database holding more (the file shrank) or other
        # messages keeps the next call off the fast path, which would append after the offset
        counts[sid] = db.message_count(sess) if fast else len(acc.messages)
    return report, {"file": ident, "offset": (offset if fast else 0) + end,
                    "lines": first_line - 1 + len(lines), "counts": counts,
                    "tools": dict(list(reader.tool_names.items())[-TOOL_NAMES_KEPT:]),
                    "last_usage_id": reader.last_usage_id}
