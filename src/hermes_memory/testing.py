"""Deterministic test doubles: ``ScriptedModel`` (a ``ChatModel`` that plays back a script)."""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Iterable
from typing import Any

from hermes_memory.errors import ModelError
from hermes_memory.llm.base import ModelResponse, Usage, message_text

Reply = Any  # str | dict (assistant message) | ModelResponse | BaseException | Callable[[list, list], Reply]

_ids = itertools.count(1)


def tool_call(name: str, arguments: dict[str, Any] | None = None, *, call_id: str | None = None) -> dict[str, Any]:
    """One OpenAI-style tool call ``{"id", "type": "function", "function": {"name", "arguments"}}``."""
    return {"id": call_id or f"call_{next(_ids)}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments or {}, ensure_ascii=False)}}


def assistant_tool_calls(*calls: dict[str, Any], content: str | None = None) -> dict[str, Any]:
    """An assistant message that makes ``calls`` (built with :func:`tool_call`)."""
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


def estimate_tokens(payload: Any) -> int:
    """Deterministic token estimate: characters of the JSON form / 4, rounded up (chars -> tokens)."""
    text = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False, sort_keys=True, default=str)
    return (len(text) + 3) // 4


class ScriptedModel:
    """A ``ChatModel`` that returns scripted replies in order and records every request.

    Each script item is one of:

    * ``str`` - a plain assistant answer;
    * ``dict`` - an assistant message (e.g. from :func:`assistant_tool_calls`);
    * :class:`ModelResponse` - returned as is;
    * an exception instance - raised (e.g. ``ContextLengthError(...)`` to test the retry);
    * a callable ``(messages, tools) -> item`` - called with the request, its result used as above.

    When the script is exhausted, ``default`` is used if given (same forms), else
    :class:`~hermes_memory.errors.ModelError` is raised saying the script ran out.
    ``requests`` holds ``{"messages", "tools", "opts"}`` deep copies, one per call. Usage is
    estimated with :func:`estimate_tokens` (no cache reads), so token counters move deterministically.
    """

    supports_cache_control = False

    def __init__(self, script: Iterable[Reply] = (), *, default: Reply = None, name: str = "scripted",
                 context_length: int = 128_000, supports_cache_control: bool = False) -> None:
        self.script = list(script)
        self.default = default
        self.name = name
        self.context_length = context_length
        self.supports_cache_control = supports_cache_control
        self.requests: list[dict[str, Any]] = []

    def add(self, *items: Reply) -> ScriptedModel:
        """Append replies to the script; returns self."""
        self.script.extend(items)
        return self

    @property
    def calls(self) -> int:
        return len(self.requests)

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                 **opts: Any) -> ModelResponse:
        self.requests.append({"messages": copy.deepcopy(messages), "tools": copy.deepcopy(tools),
                              "opts": dict(opts)})
        if self.script:
            item = self.script.pop(0)
        elif self.default is not None:
            item = self.default
        else:
            raise ModelError(f"ScriptedModel {self.name!r} ran out of scripted replies after "
                             f"{len(self.requests) - 1} call(s); add more with .add(...) or pass default=")
        if callable(item) and not isinstance(item, (ModelResponse, BaseException, type)):
            item = item(messages, tools)
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, ModelResponse):
            return item
        if isinstance(item, str):
            message: dict[str, Any] = {"role": "assistant", "content": item}
        elif isinstance(item, dict):
            message = {"role": "assistant", **copy.deepcopy(item)}
        else:
            raise TypeError(f"unsupported ScriptedModel reply {item!r}")
        prompt = estimate_tokens([messages, tools or []])
        completion = estimate_tokens(message_text(message) + json.dumps(message.get("tool_calls") or []))
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        return ModelResponse(message=message, usage=Usage(prompt, completion, 0, 0), finish_reason=finish,
                             model=self.name)
