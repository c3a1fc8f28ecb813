"""Import a ChatGPT data export's ``conversations.json``.

The file is a JSON list of conversations ``{"id" | "conversation_id", "title", "create_time",
"update_time", "mapping": {node_id: {"message", "parent", "children"}}, "current_node"}``. The
visible branch is the chain of parents from ``current_node`` (or from the newest leaf) to the
root; regenerated side branches are left out. Each message has ``author.role``
(``user``/``assistant``/``system``/``tool``), ``content`` (``parts`` of text, or ``text``) and
``create_time`` (epoch seconds). Empty system/hidden messages are skipped. Session id
``chatgpt-<conversation id>``, source ``chatgpt``, the export's title. A conversation without a
mapping is reported as ``<file>:[<index>]: <reason>``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.importers import ImportReport, Progress, load_json_list, store_session


def _content_text(content: Any) -> str:
    if not isinstance(content, dict):
        return ""
    if isinstance(content.get("parts"), list):
        out = []
        for p in content["parts"]:
            if isinstance(p, str):
                out.append(p)
            elif isinstance(p, dict) and isinstance(p.get("text"), str):
                out.append(p["text"])
        return "\n".join(x for x in out if x)
    if isinstance(content.get("text"), str):
        return content["text"]
    return ""


def branch(mapping: dict[str, Any], current: str | None) -> list[dict[str, Any]]:
    """Messages on the visible branch, root first."""
    if not current or current not in mapping:
        leaves = [k for k, v in mapping.items() if isinstance(v, dict) and not v.get("children")]
        current = max(
            leaves,
            key=lambda k: ((mapping[k].get("message") or {}).get("create_time") or 0),
            default=None,
        )
    chain = []
    seen: set[str] = set()
    node = current
    while node and node in mapping and node not in seen:
        seen.add(node)
        entry = mapping[node]
        if isinstance(entry, dict) and isinstance(entry.get("message"), dict):
            chain.append(entry["message"])
        node = entry.get("parent") if isinstance(entry, dict) else None
    return list(reversed(chain))


def import_path(db: SessionDB, path: Path, progress: Progress | None = None) -> ImportReport:
    """Import every conversation of a ChatGPT ``conversations.json`` (or a folder holding one)."""
    report = ImportReport(format="chatgpt", path=str(path))
    if path.is_dir():
        path = path / "conversations.json"
    try:
        data, too_deep = load_json_list(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError) as exc:
        report.errors.append(f"{path}: not a ChatGPT conversations.json: {exc}")
        return report
    if not isinstance(data, list):
        report.errors.append(f"{path}: expected a JSON list of conversations")
        return report
    for ci, conv in enumerate(data):
        if ci in too_deep:
            report.errors.append(f"{path}:[{ci}]: {too_deep[ci]}")
            continue
        if progress:
            progress(ci, len(data))
        if not isinstance(conv, dict) or not isinstance(conv.get("mapping"), dict):
            report.errors.append(f"{path}:[{ci}]: conversation without a mapping, skipped")
            continue
        cid = conv.get("conversation_id") or conv.get("id")
        if not cid:
            report.errors.append(f"{path}:[{ci}]: conversation without an id, skipped")
            continue
        messages = []
        model = None
        for m in branch(conv["mapping"], conv.get("current_node")):
            role = (m.get("author") or {}).get("role")
            text = _content_text(m.get("content"))
            meta = m.get("metadata") or {}
            if role not in ("user", "assistant", "system", "tool") or not text.strip():
                continue
            if meta.get("is_visually_hidden_from_conversation"):
                continue
            model = model or meta.get("model_slug")
            msg: dict[str, Any] = {"role": role, "content": text}
            if m.get("create_time"):
                msg["timestamp"] = float(m["create_time"])
            if role == "tool":
                msg["tool_name"] = (m.get("author") or {}).get("name")
            messages.append(msg)
        store_session(
            db,
            report,
            {
                "id": f"chatgpt-{cid}",
                "source": "chatgpt",
                "model": model,
                "title": conv.get("title"),
                "started_at": float(conv["create_time"]) if conv.get("create_time") else None,
                "ended_at": float(conv["update_time"]) if conv.get("update_time") else None,
                "end_reason": "imported",
            },
            messages,
        )
    if progress:
        progress(len(data), len(data))
    return report
