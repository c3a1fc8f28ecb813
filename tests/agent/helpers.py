"""Shared helpers for agent tests: a scripted model that routes flush / review / summary calls."""

from __future__ import annotations

import json
from typing import Any

from hermes_memory.agent.prompt import FLUSH_PROMPT, NUDGE_REVIEW_PROMPT
from hermes_memory.config import HermesConfig
from hermes_memory.llm.base import message_text
from hermes_memory.testing import ScriptedModel


def kind_of(messages: list[dict[str, Any]]) -> str:
    """Classify a request: ``flush``, ``review``, ``summary`` (no system prompt) or ``main``."""
    last = message_text(messages[-1]) if messages else ""
    if last.startswith(FLUSH_PROMPT[:20]):
        return "flush"
    if any(message_text(m) == NUDGE_REVIEW_PROMPT for m in messages):
        return "review"
    if not any(m.get("role") == "system" for m in messages):
        return "summary"
    return "main"


class RoutingModel(ScriptedModel):
    """``ScriptedModel`` whose replies depend on the kind of request.

    ``main``: the script (then ``"answer N"``); ``flush`` / ``review`` / ``summary``: callables or
    fixed replies. ``kinds`` lists the kind of every request in order.
    """

    def __init__(self, script=(), *, flush: Any = "Nothing to save.", review: Any = "Nothing to save.",
                 summary: Any = "SUMMARY: earlier turns discussed the project.", **kw: Any) -> None:
        super().__init__(script, **kw)
        self.handlers: dict[str, Any] = {"flush": flush, "review": review, "summary": summary}
        self.kinds: list[str] = []
        self._n = 0

    def complete(self, messages, tools=None, **opts):
        kind = kind_of(messages)
        self.kinds.append(kind)
        if kind != "main":
            handler = self.handlers[kind]
            saved, self.script = self.script, [handler]
            try:
                return super().complete(messages, tools, **opts)
            finally:
                self.script = saved
        if not self.script:
            self._n += 1
            self.script.append(f"answer {self._n}")
        return super().complete(messages, tools, **opts)

    def requests_of(self, kind: str) -> list[dict[str, Any]]:
        return [r for r, k in zip(self.requests, self.kinds, strict=True) if k == kind]


def config(**sections: dict[str, Any]) -> HermesConfig:
    return HermesConfig.model_validate(sections)


def system_of(request: dict[str, Any]) -> str:
    return message_text(request["messages"][0])


def tool_names(request: dict[str, Any]) -> list[str]:
    return [t["name"] for t in request["tools"] or []]


def memory_call(action: str, target: str, content: str) -> dict[str, Any]:
    from hermes_memory.testing import assistant_tool_calls, tool_call

    return assistant_tool_calls(tool_call("memory", {"action": action, "target": target, "content": content}))


def loads(text: str) -> Any:
    return json.loads(text)
