"""Pairing of tool calls and tool results: every result answers a call, every call gets a result."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hermes_memory.context.messages import (
    Message,
    _call_id,
    _role,
    normalize_messages,
)
from hermes_memory.context.tokens import (
    content_text,
    count_images,
)


def sanitize_tool_pairs(messages: Sequence[Mapping[str, Any]]) -> tuple[list[Message], int]:
    """Remove orphan tool results and unanswered tool calls; returns ``(new_list, removed_count)``.

    A tool result belongs to the nearest preceding assistant message with ``tool_calls`` when only
    tool results lie between them, and only if that message has a call with its ``tool_call_id``
    (call id = ``call_id`` or else ``id``). Calls without a result, and repeats of a call id
    already seen in the same message, are dropped from ``tool_calls``; an
    assistant left with no calls and no text gets ``"(tool call removed)"``. Never inserts stub
    results. Unchanged messages are the same objects; changed ones are copies.
    """
    messages = normalize_messages(messages)
    out: list[Message] = []
    removed = 0
    i, n = 0, len(messages)
    while i < n:
        message = messages[i]
        if _role(message) == "assistant" and message.get("tool_calls"):
            j = i + 1
            results: list[Message] = []
            while j < n and _role(messages[j]) == "tool":
                results.append(messages[j])
                j += 1
            calls = list(message.get("tool_calls") or [])
            call_ids = {_call_id(c) for c in calls}
            result_ids: set[str] = set()
            kept_results: list[Message] = []
            for result in results:
                rid = str(result.get("tool_call_id") or "")
                if rid in call_ids and rid not in result_ids:
                    result_ids.add(rid)
                    kept_results.append(result)
                else:
                    removed += 1
            kept_calls = []
            kept_ids: set[str] = set()
            for c in calls:  # one call per answered id: providers reject repeated tool_use ids
                cid = _call_id(c)
                if cid in result_ids and cid not in kept_ids:
                    kept_ids.add(cid)
                    kept_calls.append(c)
            if len(kept_calls) != len(calls):
                removed += len(calls) - len(kept_calls)
                new = dict(message)
                if kept_calls:
                    new["tool_calls"] = kept_calls
                else:
                    new.pop("tool_calls", None)
                    if not content_text(new.get("content")).strip() and not count_images(new.get("content")):
                        new["content"] = "(tool call removed)"
                out.append(new)
            else:
                out.append(message)
            out.extend(kept_results)
            i = j
        elif _role(message) == "tool":
            removed += 1
            i += 1
        else:
            out.append(message)
            i += 1
    return out, removed
