"""Import a Claude.ai data export: its ``conversations.json`` (or the export's ``.zip``).

The file is a JSON list of conversations ``{"uuid", "name", "summary"?, "created_at",
"updated_at", "account": {"uuid"}, "chat_messages": [...]}``; each message is ``{"uuid",
"sender": "human"|"assistant", "text", "content": [blocks], "created_at", "updated_at",
"attachments": [{"file_name", "file_type", "file_size", "extracted_content"}], "files":
[{"file_name"}], "parent_message_uuid"?}``. Content blocks: ``text`` (``text``), ``thinking``
(``thinking``, kept as the assistant's ``reasoning``), ``tool_use`` (``id``, ``name``, ``input``
-> an OpenAI-style tool call) and ``tool_result`` (``tool_use_id``, ``name``, ``content`` blocks
-> a ``tool`` message, in the order the blocks came). A message without ``content`` blocks uses
``text``. An attachment's ``extracted_content`` is kept after the message text (headed
``[attachment: <file_name>]``) so it can be searched; a file without extracted text is named
(``[file: <file_name>]``).

When messages carry ``parent_message_uuid`` and the conversation branched (an edited prompt or a
retried answer), the branch ending at the newest message is imported, as claude.ai shows it.

Session id ``claude_ai-<conversation uuid>``, source ``claude_ai``, title the conversation's
``name`` (else its first prompt), started and ended at its ``created_at``/``updated_at``.
Malformed records are reported as ``<file>:[<i>]: <reason>`` (a conversation) or
``<file>:[<i>].chat_messages[<j>]: <reason>`` (a message) and skipped; the rest is imported.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.importers import ImportReport, Progress, iso_time, load_json_list, store_session

SENDERS = {"human": "user", "assistant": "assistant"}
ROOT_PARENT = "00000000-0000-4000-8000-000000000000"
"""``parent_message_uuid`` of a conversation's first message in claude.ai exports."""


def _block_text(blocks: Any) -> str:
    if isinstance(blocks, str):
        return blocks
    if not isinstance(blocks, list):
        return ""
    return "\n".join(str(b["text"]) for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str))


def _attachments(msg: dict[str, Any]) -> list[str]:
    out = []
    named = set()
    for a in msg.get("attachments") or []:
        if isinstance(a, dict) and a.get("file_name"):
            named.add(a["file_name"])
            text = a.get("extracted_content")
            out.append(f"[attachment: {a['file_name']}]\n{text}" if isinstance(text, str) and text.strip()
                       else f"[file: {a['file_name']}]")
    for f in msg.get("files") or []:
        if isinstance(f, dict) and f.get("file_name") and f["file_name"] not in named:
            out.append(f"[file: {f['file_name']}]")
    return out


def convert_message(msg: dict[str, Any]) -> list[dict[str, Any]]:
    """SessionDB message dicts for one chat message (several when it holds tool results)."""
    role = SENDERS[msg["sender"]]
    ts = iso_time(msg.get("created_at"))
    base: dict[str, Any] = {"timestamp": ts} if ts is not None else {}
    blocks = msg.get("content") if isinstance(msg.get("content"), list) and msg.get("content") else None
    out: list[dict[str, Any]] = []
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    thinking: list[str] = []

    def flush() -> None:
        if texts or calls or thinking:
            m: dict[str, Any] = {**base, "role": role, "content": "\n".join(texts) if texts else None}
            if calls:
                m["tool_calls"] = list(calls)
            if thinking:
                m["reasoning"] = "\n".join(thinking)
            out.append(m)
        texts.clear()
        calls.clear()
        thinking.clear()

    if blocks is None:
        texts.append(str(msg.get("text") or ""))
    for b in blocks or []:
        if not isinstance(b, dict):
            continue
        kind = b.get("type")
        if kind == "text" and isinstance(b.get("text"), str):
            texts.append(b["text"])
        elif kind == "thinking" and isinstance(b.get("thinking"), str):
            thinking.append(b["thinking"])
        elif kind == "tool_use":
            calls.append({"id": b.get("id"), "type": "function",
                          "function": {"name": b.get("name"),
                                       "arguments": json.dumps(b.get("input") or {}, ensure_ascii=False)}})
        elif kind == "tool_result":
            flush()
            tool: dict[str, Any] = {**base, "role": "tool", "content": _block_text(b.get("content")),
                                    "tool_call_id": b.get("tool_use_id")}
            if b.get("name"):
                tool["tool_name"] = b["name"]
            out.append(tool)
    extra = _attachments(msg)
    if extra:
        texts.extend(extra)
    flush()
    return [m for m in out if m["role"] == "tool" or m.get("tool_calls") or m.get("reasoning")
            or (m.get("content") or "").strip()]


def visible_branch(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages on the branch ending at the newest message, root first.

    Without parent links (older exports), or when they do not form one chain back to the root,
    every message is kept in file order.
    """
    by_id = {m.get("uuid"): m for m in messages if isinstance(m.get("uuid"), str)}
    if len(by_id) != len(messages) or not all(isinstance(m.get("parent_message_uuid"), str) for m in messages):
        return messages
    children: dict[str, int] = {}
    for m in messages:
        children[m["parent_message_uuid"]] = children.get(m["parent_message_uuid"], 0) + 1
    if all(n == 1 for n in children.values()):
        return messages  # no branching: keep the file's order
    leaf = max(enumerate(messages), key=lambda im: (iso_time(im[1].get("created_at")) or 0.0, im[0]))[1]
    chain: list[dict[str, Any]] = []
    seen: set[str] = set()
    node: dict[str, Any] | None = leaf
    while node is not None and node["uuid"] not in seen:
        seen.add(node["uuid"])
        chain.append(node)
        node = by_id.get(node["parent_message_uuid"])
    return list(reversed(chain))


def _load(path: Path, report: ImportReport) -> tuple[Path | str, Any]:
    """(where, parsed JSON) of the export's conversations.json, or (where, None) after reporting why."""
    if path.is_dir():
        path = path / "conversations.json"
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as zf:
                names = [n for n in zf.namelist() if n.rsplit("/", 1)[-1] == "conversations.json"]
                if not names:
                    report.errors.append(f"{path}: no conversations.json in this archive")
                    return path, None
                return f"{path}!{names[0]}", load_json_list(zf.read(names[0]).decode("utf-8-sig"))
        return path, load_json_list(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        report.errors.append(f"{path}: not a Claude.ai conversations.json: {exc}")
        return path, None


def import_path(db: SessionDB, path: Path, progress: Progress | None = None) -> ImportReport:
    """Import every conversation of a Claude.ai export (``conversations.json``, its folder or its ``.zip``)."""
    report = ImportReport(format="claude_ai", path=str(path))
    where, loaded = _load(path, report)
    if loaded is None:
        return report
    data, too_deep = loaded
    if not isinstance(data, list):
        report.errors.append(f"{where}: expected a JSON list of conversations")
        return report
    for ci, conv in enumerate(data):
        if ci in too_deep:
            report.errors.append(f"{where}:[{ci}]: {too_deep[ci]}")
            continue
        if progress:
            progress(ci, len(data))
        if not isinstance(conv, dict) or not isinstance(conv.get("chat_messages"), list):
            report.errors.append(f"{where}:[{ci}]: conversation without a chat_messages list, skipped")
            continue
        if not isinstance(conv.get("uuid"), str) or not conv["uuid"]:
            report.errors.append(f"{where}:[{ci}]: conversation without a uuid, skipped")
            continue
        good = []
        for mi, msg in enumerate(conv["chat_messages"]):
            if not isinstance(msg, dict):
                report.errors.append(f"{where}:[{ci}].chat_messages[{mi}]: not a JSON object, skipped")
            elif msg.get("sender") not in SENDERS:
                report.errors.append(f"{where}:[{ci}].chat_messages[{mi}]: unknown sender {msg.get('sender')!r} "
                                     "(expected human or assistant), skipped")
            else:
                good.append(msg)
        messages = [m for msg in visible_branch(good) for m in convert_message(msg)]
        if not messages:
            continue
        first_user = next((m["content"] for m in messages if m["role"] == "user" and m.get("content")), None)
        title = conv.get("name") if isinstance(conv.get("name"), str) and conv["name"].strip() else None
        store_session(
            db,
            report,
            {
                "id": f"claude_ai-{conv['uuid']}",
                "source": "claude_ai",
                "title": title or (" ".join(first_user.split())[:60] if first_user else None),
                "started_at": iso_time(conv.get("created_at")),
                "ended_at": iso_time(conv.get("updated_at")),
                "end_reason": "imported",
            },
            messages,
        )
    if progress:
        progress(len(data), len(data))
    return report
