"""Messages as the compressor reads them: SDK objects normalised to OpenAI-style dicts, roles, call ids and earlier summaries found in a history."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_memory.context.summary import (
    SUMMARY_PREFIX,
    split_summary,
)
from hermes_memory.context.tokens import (
    content_text,
)

Message = dict[str, Any]


def _as_dict(obj: Any) -> Any:
    """A plain dict for an SDK object (pydantic ``model_dump``, ``to_dict``, dataclass-like
    attributes); anything else unchanged."""
    if isinstance(obj, Mapping) or obj is None or isinstance(obj, (str, bytes, int, float, list, tuple)):
        return obj
    for name in ("model_dump", "to_dict", "dict"):
        method = getattr(obj, name, None)
        if callable(method):
            try:
                data = method(exclude_none=True) if name == "model_dump" else method()
            except TypeError:
                data = method()
            if isinstance(data, Mapping):
                return dict(data)
    attrs = getattr(obj, "__dict__", None)
    return {k: v for k, v in attrs.items() if not k.startswith("_")} if isinstance(attrs, dict) else obj


def normalize_tool_call(call: Any) -> Any:
    """One tool call in the OpenAI dict form ``{"id", "type": "function", "function": {"name",
    "arguments": <JSON str>}}``.

    Accepts that form, an SDK object of it (openai ``ChatCompletionMessageToolCall``), and
    Anthropic's ``tool_use`` block (``ToolUseBlock`` or its dict: ``{"type": "tool_use", "id",
    "name", "input"}``). A Responses-API ``call_id`` is kept. Anything else is returned as a dict
    when it can be read as one, else unchanged.
    """
    call = _as_dict(call)
    if not isinstance(call, Mapping):
        return call
    fn = _as_dict(call.get("function"))
    if call.get("type") == "tool_use" or (fn is None and "input" in call):
        args = call.get("input")
        out = {"id": str(call.get("id") or ""), "type": "function",
               "function": {"name": str(call.get("name") or ""),
                            "arguments": args if isinstance(args, str) else json.dumps(args or {}, ensure_ascii=False)}}
        return out
    if fn is not call.get("function"):
        return {**call, "function": fn}
    return call


def normalize_messages(messages: Sequence[Any]) -> list[Message]:
    """``messages`` as dicts: SDK message objects, SDK tool calls and SDK content blocks (openai,
    anthropic, other pydantic models) become the OpenAI dict forms the compressor reads.

    Every public entry point of this module calls it, so library users may pass what the SDKs
    return. Messages that are already plain dicts are returned as the same objects (never mutated).
    """
    out: list[Message] = []
    for message in messages:
        m = _as_dict(message)
        if not isinstance(m, Mapping):
            out.append(m)
            continue
        changed = m is not message
        calls = m.get("tool_calls")
        if calls:
            fixed = [normalize_tool_call(c) for c in calls]
            if any(a is not b for a, b in zip(fixed, calls, strict=True)) or not isinstance(calls, list):
                m = {**m, "tool_calls": fixed}
                changed = True
        content = m.get("content")
        if isinstance(content, (list, tuple)) and any(not isinstance(p, (Mapping, str)) for p in content):
            m = {**m, "content": [_as_dict(p) for p in content]}
            changed = True
        out.append(dict(m) if changed and not isinstance(m, dict) else m)
    return out


def _call_id(call: Mapping[str, Any]) -> str:
    # ``call_id`` first: Responses-API calls carry an item ``id`` ("fc_...") besides the
    # ``call_id`` ("call_...") that their result's ``tool_call_id`` refers to (docs/reference.md §5).
    return str(call.get("call_id") or call.get("id") or "")


def _role(message: Mapping[str, Any]) -> str:
    return str(message.get("role") or "")


def _summary_parts(messages: Sequence[Mapping[str, Any]]) -> list[tuple[str | None, Any]]:
    """:func:`split_summary` of every message, except that the latest user message counts as a
    summary only when it carries the ``_compressed_summary`` marker or starts with our own
    :data:`SUMMARY_PREFIX` (a restart strips the marker): a user who pastes an old agent's
    summary ("[CONTEXT SUMMARY]: ... continue") is asking something, and the latest user
    message is always kept verbatim (B31)."""
    parts = [split_summary(m) for m in messages]
    for i in range(len(messages) - 1, -1, -1):
        if _role(messages[i]) == "user":
            message = messages[i]
            ours = message.get("_compressed_summary") or content_text(message.get("content")).lstrip().startswith(SUMMARY_PREFIX)
            if parts[i][0] is not None and not ours:
                parts[i] = (None, message.get("content"))
            break
    return parts
