"""Import Codex CLI sessions: ``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl``.

Each line of a rollout is ``{"timestamp", "type", "payload"}`` with ``type`` one of:

* ``session_meta``: ``payload`` ``{"id", "timestamp", "cwd", "originator", "cli_version",
  "source", "git": {"commit_hash", "branch", "repository_url"}, ...}``; the first one names the
  session (``codex-<id>``, source ``codex``, started at its ``timestamp``).
* ``response_item``: what the model saw and said. ``message`` (``role``, ``content`` of
  ``input_text``/``output_text`` items) -> a user or assistant message; ``developer``/``system``
  messages and the context Codex injects as user messages (``<environment_context>``,
  ``<user_instructions>``, ``# AGENTS.md instructions``) -> ``system`` messages, so they are kept
  but not searched by default. ``function_call``/``custom_tool_call``/``local_shell_call``/
  ``web_search_call`` (``name``, ``arguments`` or ``input``, ``call_id``) -> tool calls on the
  assistant message; ``function_call_output``/``custom_tool_call_output`` (``call_id``,
  ``output`` string or content items) -> ``tool`` messages carrying the tool's name;
  ``reasoning`` summaries -> the next assistant message's ``reasoning`` (encrypted content is
  not readable and is left out).
* ``turn_context`` (``model``, ``cwd``): the first ``model`` becomes the session's model.
* ``event_msg`` of ``payload.type`` ``token_count``: ``info.total_token_usage`` holds the session's
  running totals (``input_tokens`` including ``cached_input_tokens``, ``output_tokens``,
  ``reasoning_output_tokens``); the last one sets the session's token columns: ``input_tokens`` =
  input minus cached (the uncached part, as the columns count Anthropic's), ``cache_read_tokens`` =
  cached, ``output_tokens``, ``reasoning_tokens``; ``api_call_count`` is the number of distinct totals
  seen (one per model response). Other ``event_msg`` records and ``compacted`` are UI events and
  summaries that repeat the response items; skipped.

The session's ``cwd`` and ``git_branch`` columns come from ``session_meta`` (``cwd``,
``git.branch``), or the first ``turn_context`` ``cwd``; a column already set is kept.

Files written before the envelope existed (first line ``{"id", "timestamp", "instructions",
"git"}``, then bare response items and ``{"record_type": "state"}`` lines) are read too.

``path`` is one rollout file or a folder (every ``rollout-*.jsonl`` below it, so ``~/.codex`` or
``~/.codex/sessions`` both work). The session ends at its last line's time. A line that is not
JSON, not an object, of no known shape, or a response item missing what it needs is reported as
``<file>:<line>: <reason>`` and skipped.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.importers import (
    ImportReport,
    Progress,
    iso_time,
    jsonl_files,
    load_json,
    record_reason,
    set_session_origin,
    store_session,
)

INJECTED_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<permissions")
"""User-role messages that Codex writes itself (context for the model), stored as ``system``."""
_UUID_TAIL = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$", re.IGNORECASE)
_CALLS = ("function_call", "custom_tool_call", "local_shell_call", "web_search_call")
_OUTPUTS = ("function_call_output", "custom_tool_call_output")
_SKIPPED_ITEMS = ("compaction", "compaction_summary", "ghost_snapshot", "image_generation_call", "tool_search_call",
                  "tool_search_output", "other")


def _content_text(content: Any) -> str:
    """Text of ``input_text``/``output_text`` items (an image is noted as ``[image]``)."""
    if isinstance(content, str):
        return content
    parts = []
    for item in content if isinstance(content, list) else []:
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            parts.append(item["text"])
        elif isinstance(item, dict) and item.get("type") == "input_image":
            parts.append("[image]")
    return "\n".join(parts)


class _Rollout:
    """The messages of one rollout file, built line by line."""

    def __init__(self) -> None:
        self.meta: dict[str, Any] | None = None
        self.model: str | None = None
        self.messages: list[dict[str, Any]] = []
        self.tool_names: dict[str, str] = {}
        self.reasoning: list[str] = []
        self.last_ts: float | None = None
        self.cwd: str | None = None
        self.usage: dict[str, int] | None = None
        self.usage_seen: set[tuple[int, ...]] = set()

    def token_count(self, payload: dict[str, Any]) -> None:
        """Keep the running totals of a ``token_count`` event (see the module docstring)."""
        info = payload.get("info")
        total = info.get("total_token_usage") if isinstance(info, dict) else None
        if not isinstance(total, dict):
            return  # rate-limit-only events carry no usage
        def n(key: str) -> int:
            value = total.get(key)
            return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
        cached = min(n("cached_input_tokens"), n("input_tokens"))
        self.usage = {"input_tokens": n("input_tokens") - cached, "cache_read_tokens": cached,
                      "output_tokens": n("output_tokens"), "reasoning_tokens": n("reasoning_output_tokens")}
        self.usage_seen.add(tuple(self.usage.values()))

    def _base(self, ts: float | None) -> dict[str, Any]:
        return {"timestamp": ts} if ts is not None else {}

    def _assistant(self, ts: float | None, text: str | None) -> dict[str, Any]:
        m: dict[str, Any] = {**self._base(ts), "role": "assistant", "content": text}
        if self.reasoning:
            m["reasoning"] = "\n".join(self.reasoning)
            self.reasoning = []
        self.messages.append(m)
        return m

    def item(self, item: dict[str, Any], ts: float | None) -> str | None:
        """Add one response item; return why it is malformed, else ``None``."""
        kind = item.get("type")
        if kind == "message":
            role = item.get("role")
            if role not in ("user", "assistant", "developer", "system") or not isinstance(item.get("content"),
                                                                                      (list, str)):
                return f"message without a known role and content list (role {role!r})"
            text = _content_text(item["content"])
            if role == "assistant":
                self._assistant(ts, text)
            elif role == "user" and not text.lstrip().startswith(INJECTED_PREFIXES):
                self.messages.append({**self._base(ts), "role": "user", "content": text})
            else:
                self.messages.append({**self._base(ts), "role": "system", "content": text})
        elif kind in _CALLS:
            call_id = item.get("call_id") or item.get("id")
            if kind == "function_call" and not (isinstance(item.get("name"), str) and isinstance(call_id, str)):
                return "function_call without a name and call_id"
            name = item.get("name") or {"local_shell_call": "local_shell", "web_search_call": "web_search"}.get(kind, kind)
            if kind == "function_call":
                arguments = item.get("arguments")
                arguments = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
            elif kind == "custom_tool_call":
                arguments = str(item.get("input") or "")
            else:
                arguments = json.dumps(item.get("action") or {}, ensure_ascii=False)
            call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
            last = self.messages[-1] if self.messages else None
            if last is None or last["role"] != "assistant" or self.reasoning:
                last = self._assistant(ts, None)
            last.setdefault("tool_calls", []).append(call)
            if isinstance(call_id, str):
                self.tool_names[call_id] = name
        elif kind in _OUTPUTS:
            call_id = item.get("call_id")
            if not isinstance(call_id, str) or "output" not in item:
                return f"{kind} without a call_id and output"
            output = item["output"]
            text = output if isinstance(output, str) else _content_text(output if isinstance(output, list)
                                                                        else [output])
            msg: dict[str, Any] = {**self._base(ts), "role": "tool", "content": text, "tool_call_id": call_id}
            if call_id in self.tool_names:
                msg["tool_name"] = self.tool_names[call_id]
            self.messages.append(msg)
        elif kind == "reasoning":
            for part in item.get("summary") or []:
                if isinstance(part, dict) and isinstance(part.get("text"), str) and part["text"].strip():
                    self.reasoning.append(part["text"])
        elif kind not in _SKIPPED_ITEMS:
            return f"unknown response item type {kind!r}"
        return None

    def line(self, rec: dict[str, Any], first: bool) -> str | None:
        """Add one parsed line; return why it is malformed, else ``None``."""
        if "payload" in rec and isinstance(rec.get("type"), str):
            ts = iso_time(rec.get("timestamp"))
            self.last_ts = ts or self.last_ts
            payload = rec["payload"]
            if not isinstance(payload, dict):
                return f"{rec['type']} record whose payload is not an object"
            if rec["type"] == "session_meta":
                if self.meta is None:
                    if not isinstance(payload.get("id"), str):
                        return "session_meta without an id"
                    self.meta = payload
                return None
            if rec["type"] == "response_item":
                return self.item(payload, ts)
            if rec["type"] == "turn_context":
                if self.model is None and isinstance(payload.get("model"), str):
                    self.model = payload["model"]
                if self.cwd is None and isinstance(payload.get("cwd"), str) and payload["cwd"]:
                    self.cwd = payload["cwd"]
                return None
            if rec["type"] == "event_msg":
                if payload.get("type") == "token_count":
                    self.token_count(payload)
                return None
            if rec["type"] == "compacted":
                return None
            return f"unknown record type {rec['type']!r}"
        if rec.get("record_type") == "state":  # legacy files: a state marker between items
            return None
        if first and isinstance(rec.get("id"), str) and "timestamp" in rec and "type" not in rec:
            self.meta = rec  # legacy files: the first line is the session meta itself
            return None
        if isinstance(rec.get("type"), str):  # legacy files: a bare response item
            return self.item(rec, None)
        return "not a Codex rollout record (no type/payload)"


def _files(path: Path, report: ImportReport) -> list[Path]:
    if not path.is_dir():
        return [path]
    files = [f for f in jsonl_files(path, report) if f.name.startswith("rollout-")]
    if not files and not report.errors:
        report.errors.append(f"{path}: no rollout-*.jsonl files below this folder; pass ~/.codex/sessions or a rollout")
    return files


def import_path(db: SessionDB, path: Path, progress: Progress | None = None) -> ImportReport:
    """Import one rollout file or every ``rollout-*.jsonl`` below a folder."""
    report = ImportReport(format="codex", path=str(path))
    files = _files(path, report)
    for fi, f in enumerate(files):
        if progress:
            progress(fi, len(files))
        try:
            lines = f.read_text(encoding="utf-8-sig", errors="replace").splitlines()  # a BOM from an editor is no record
        except OSError as exc:
            report.errors.append(f"{f}: cannot read: {exc}")
            continue
        rollout = _Rollout()
        first = True
        for ln, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                rec = load_json(line)
            except ValueError as exc:
                report.errors.append(f"{f}:{ln}: {record_reason(exc)}")
                continue
            if not isinstance(rec, dict):
                report.errors.append(f"{f}:{ln}: not a JSON object")
                continue
            problem = rollout.line(rec, first)
            first = False
            if problem:
                report.errors.append(f"{f}:{ln}: {problem}")
        if rollout.reasoning:  # a reasoning summary with no answer after it
            rollout._assistant(rollout.last_ts, None)
        if not rollout.messages:
            if any(line.strip() for line in lines):
                report.errors.append(f"{f}: no Codex messages found (is it another format? see --format)")
            continue
        meta = rollout.meta or {}
        sid = meta.get("id")
        if not isinstance(sid, str):
            tail = _UUID_TAIL.search(f.stem)
            sid = tail.group(1) if tail else f.stem
            report.errors.append(f"{f}: no session_meta record; session id {sid} taken from the file name")
        first_user = next((m["content"] for m in rollout.messages if m["role"] == "user" and m["content"].strip()),
                          None)
        started = iso_time(meta.get("timestamp")) or next((m["timestamp"] for m in rollout.messages if m.get("timestamp")),
                                                     None)
        status = store_session(
            db,
            report,
            {
                "id": f"codex-{sid}",
                "source": "codex",
                "model": rollout.model,
                "title": " ".join(first_user.split())[:60] if first_user else None,
                "started_at": started,
                "ended_at": rollout.last_ts,
                "end_reason": "imported",
            },
            rollout.messages,
        )
        if status == "differs":
            continue
        git: dict[str, Any] = meta["git"] if isinstance(meta.get("git"), dict) else {}
        cwd = meta.get("cwd") if isinstance(meta.get("cwd"), str) and meta.get("cwd") else rollout.cwd
        branch = git.get("branch") if isinstance(git.get("branch"), str) and git.get("branch") else None
        set_session_origin(db, f"codex-{sid}", cwd=cwd, git_branch=branch)
        if rollout.usage is not None:  # totals, so a re-import sets the same numbers again
            db.update_token_counts(f"codex-{sid}", **rollout.usage, model=rollout.model,
                                   api_call_count=len(rollout.usage_seen), absolute=True)
    if progress:
        progress(len(files), len(files))
    return report
