"""Message builders and invariant checks shared by the context tests."""

from __future__ import annotations

import json
from typing import Any

from hermes_memory.context import content_text, split_summary


def sys_msg(text: str = "You are a helpful agent.") -> dict[str, Any]:
    return {"role": "system", "content": text}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str | None, *calls: dict[str, Any]) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        msg["tool_calls"] = list(calls)
    return msg


def call(call_id: str, name: str = "terminal", **args: Any) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def tool(call_id: str, content: Any) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def assert_pairs_intact(messages: list[dict[str, Any]]) -> None:
    """Every tool result directly follows (through other results) an assistant call with its id,
    and every call has its result; no tool message opens the conversation."""
    i = 0
    n = len(messages)
    while i < n:
        m = messages[i]
        if m.get("role") == "tool":
            raise AssertionError(f"orphan tool result at {i}: {m.get('tool_call_id')!r}")
        if m.get("role") == "assistant" and m.get("tool_calls"):
            ids = [c["id"] for c in m["tool_calls"]]
            j = i + 1
            got = []
            while j < n and messages[j].get("role") == "tool":
                got.append(messages[j]["tool_call_id"])
                j += 1
            assert sorted(got) == sorted(ids), f"calls {ids} vs results {got} at {i}"
            i = j
        else:
            i += 1


def summary_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if split_summary(m)[0] is not None]


def strip_private(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a caller persists and reloads: underscore keys removed, JSON round trip."""
    return json.loads(json.dumps([{k: v for k, v in m.items() if not k.startswith("_")} for m in messages]))


def contains_verbatim(output: list[dict[str, Any]], original: dict[str, Any]) -> bool:
    """True if ``original`` is in ``output`` unchanged, or a summary was merged in front of it."""
    if any(m == original for m in output):
        return True
    for m in output:
        body, rest = split_summary(m)
        if body is not None and m.get("role") == original.get("role"):
            if rest == original.get("content") or (
                original.get("content") in (None, "") and rest in (None, "")
            ):
                return True
    return False


class RecordingSummariser:
    """A summariser double: records every prompt, returns scripted replies or raises them."""

    def __init__(self, *replies: Any, events: list[str] | None = None) -> None:
        self.replies = list(replies) or ["## Goal\nkeep going"]
        self.prompts: list[str] = []
        self.max_tokens: list[Any] = []
        self.events = events

    def __call__(self, prompt: str, *, max_tokens: int | None = None) -> str:
        self.prompts.append(prompt)
        self.max_tokens.append(max_tokens)
        if self.events is not None:
            self.events.append("summarise")
        reply = self.replies[min(len(self.prompts) - 1, len(self.replies) - 1)]
        if isinstance(reply, BaseException):
            raise reply
        return reply


def text_of(message: dict[str, Any]) -> str:
    return content_text(message.get("content"))
