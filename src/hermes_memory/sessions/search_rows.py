"""The shape of one search result: its row, its snippet, its context (both engines).

Pure functions over rows already read (``sqlite3.Row``, a psycopg row, or anything indexable by
column name); nothing here runs a statement.
"""

from __future__ import annotations

import json
from typing import Any

from hermes_memory.sessions import fts as fts_mod
from hermes_memory.sessions.codec import decode_content

CONTEXT_CHARS = 200
"""Characters of the previous/next message shown as search ``context`` (reference)."""


def time_sort(ids: list[int], timestamps: dict[int, float], order_kind: str) -> None:
    """Sort ``ids`` in place by message time: ``"newest"`` first or else oldest first, ties by id."""
    if order_kind == "newest":
        ids.sort(key=lambda i: (-timestamps[i], -i))
    else:
        ids.sort(key=lambda i: (timestamps[i], i))


def message_snippet(highlighter: fts_mod.Highlighter, r: Any) -> str:
    """The ``>>>match<<<`` snippet of one message row (``content``, ``tool_name``, ``tool_calls``
    by name): its content, else its tool name and tool-call text where the match is."""
    text = decode_content(r["content"])
    if not isinstance(text, str):
        text = json.dumps(text, ensure_ascii=False) if text is not None else ""
    if r["tool_name"] and (not text or not highlighter.matches(text)):
        text = f"[{r['tool_name']}] {text}".strip()
    if not highlighter.matches(text) and r["tool_calls"]:
        text = f"{text} {r['tool_calls']}".strip()
    return highlighter.snippet(text)


def result_row(i: int, r: Any, snippet: str | None, rank: float | None, context: list[dict[str, Any]]) -> dict[str, Any]:
    """One :meth:`MessageSearchMethods.search_messages` result from a joined message/session row."""
    return {
        "id": i,
        "session_id": r["session_id"],
        "role": r["role"],
        "snippet": snippet,
        "timestamp": r["timestamp"],
        "tool_name": r["tool_name"],
        "source": r["source"],
        "model": r["model"],
        "title": r["title"],
        "user_id": r["user_id"],
        "session_started": r["session_started"],
        "rank": rank,
        "context": context,
    }


def context_row(row_id: int, role: str, content: str | None) -> dict[str, Any]:
    """One message of a result's ``context``: content decoded and cut to :data:`CONTEXT_CHARS`."""
    text = decode_content(content)
    if not isinstance(text, str):
        text = json.dumps(text, ensure_ascii=False) if text is not None else ""
    return {"id": int(row_id), "role": role, "content": text[:CONTEXT_CHARS]}


