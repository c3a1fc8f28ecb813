"""Deterministic test doubles for code that uses hermes-memory.

* :class:`FakeProvider` — a configurable :class:`~hermes_memory.providers.base.MemoryProvider`
  that records every call, and can raise or hang in any hook.
* :class:`ScriptedModel` — a :class:`~hermes_memory.llm.base.ChatModel` that plays back scripted
  replies (text, tool calls, exceptions, callables) and records every request; helpers
  :func:`tool_call` / :func:`assistant_tool_calls` build OpenAI-style tool calls.
* :func:`write_openai_jsonl` — a file of synthetic conversations for ``sessions import -f openai``.

Nothing here touches the network or the clock beyond ``threading.Event`` waits.
"""

from __future__ import annotations

import copy
import itertools
import json
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from hermes_memory.errors import ModelError
from hermes_memory.llm.base import ModelResponse, Usage, message_text
from hermes_memory.providers.base import MemoryProvider

ALL_HOOKS = frozenset({
    "is_available", "initialize", "get_tool_schemas", "system_prompt_block", "prefetch", "queue_prefetch",
    "sync_turn", "handle_tool_call", "shutdown", "on_turn_start", "on_session_end", "on_session_switch",
    "on_pre_compress", "on_memory_write", "on_delegation",
})
"""Hook names :class:`FakeProvider` can be told to raise or hang in."""


class FakeProvider(MemoryProvider):
    """A scriptable provider.

    Args:
        name: provider name (``"builtin"`` makes the manager treat it as the built-in one).
        tools: tool names (or full schemas) it exposes; calls return ``tool_result`` (JSON-encoded
            if not a string) and are recorded.
        prefetch_result: what ``prefetch`` returns. A string, a callable ``(query) -> str``, or a list
            consumed one item per call (the last item repeats); an ``Exception`` item is raised.
        system_prompt: ``system_prompt_block`` text.
        pre_compress: ``on_pre_compress`` text.
        raise_in: hooks that raise ``RuntimeError`` (``"all"`` = every hook in :data:`ALL_HOOKS`).
        hang_in: hooks that block until :meth:`release` is called (or ``max_hang`` seconds pass).
        available / reason: what ``is_available`` / ``unavailable_reason`` return.

    ``calls`` lists ``(hook, args, kwargs)`` in call order (thread-safe); :meth:`called` filters it.
    """

    def __init__(self, name: str = "fake", *, tools: Iterable[str | dict[str, Any]] = (),
                 prefetch_result: str | list[Any] | Callable[[str], str] = "", system_prompt: str = "",
                 pre_compress: str = "", tool_result: Any = None, raise_in: Iterable[str] | str = (),
                 hang_in: Iterable[str] | str = (), available: bool = True, reason: str = "",
                 max_hang: float = 60.0) -> None:
        self._name = name
        self._tools = [t if isinstance(t, dict) else
                       {"name": t, "description": f"fake tool {t}", "parameters": {"type": "object", "properties": {}}}
                       for t in tools]
        self._prefetch = prefetch_result
        self._prefetch_i = 0
        self._system_prompt = system_prompt
        self._pre_compress = pre_compress
        self._tool_result = tool_result
        self.raise_in = self._hooks(raise_in, "raise_in")
        self.hang_in = self._hooks(hang_in, "hang_in")
        self._available = available
        self._reason = reason
        self.max_hang = max_hang
        self.released = threading.Event()
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
        self._lock = threading.Lock()

    @staticmethod
    def _hooks(value: Iterable[str] | str, arg: str) -> set[str]:
        """``"all"``/``"*"`` or hook names from :data:`ALL_HOOKS`; a typo raises (a double that silently never fails hides bugs)."""
        if value in ("all", "*"):
            return set(ALL_HOOKS)
        if isinstance(value, str):
            raise ValueError(f"{arg}={value!r}: pass a set of hook names (e.g. {{{value!r}}}) or 'all'")
        hooks = set(value)
        if unknown := hooks - ALL_HOOKS:
            raise ValueError(f"{arg}: unknown hook(s) {sorted(unknown)}; known: {sorted(ALL_HOOKS)}")
        return hooks

    # -- control ------------------------------------------------------------------------------
    def release(self) -> None:
        """Let every hanging hook (current and future) return."""
        self.released.set()

    def called(self, hook: str) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
        """``(args, kwargs)`` of each call to ``hook``, in order."""
        with self._lock:
            return [(a, k) for h, a, k in self.calls if h == hook]

    def _enter(self, hook: str, *args: Any, **kwargs: Any) -> None:
        with self._lock:
            self.calls.append((hook, args, kwargs))
        if hook in self.hang_in:
            self.released.wait(self.max_hang)
        if hook in self.raise_in:
            raise RuntimeError(f"FakeProvider {self._name!r}: {hook} failed on purpose")

    # -- MemoryProvider -----------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    def is_available(self) -> bool:
        self._enter("is_available")
        return self._available

    def unavailable_reason(self) -> str:
        return "" if self._available else (self._reason or "FakeProvider configured as unavailable")

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self._enter("initialize", session_id, **kwargs)

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        self._enter("get_tool_schemas")
        return [dict(t) for t in self._tools]

    def system_prompt_block(self) -> str:
        self._enter("system_prompt_block")
        return self._system_prompt

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        self._enter("prefetch", query, session_id=session_id)
        result = self._prefetch
        if callable(result):
            return result(query)
        if isinstance(result, list):
            with self._lock:
                item = result[min(self._prefetch_i, len(result) - 1)] if result else ""
                self._prefetch_i += 1
            if isinstance(item, BaseException):
                raise item
            return item
        return result

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        self._enter("queue_prefetch", query, session_id=session_id)

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: list[dict[str, Any]] | None = None) -> None:
        self._enter("sync_turn", user_content, assistant_content, session_id=session_id, messages=messages)

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        self._enter("handle_tool_call", tool_name, args, **kwargs)
        if self._tool_result is None:
            return json.dumps({"tool": tool_name, "args": args, "provider": self._name})
        return self._tool_result if isinstance(self._tool_result, str) else json.dumps(self._tool_result)

    def shutdown(self) -> None:
        self._enter("shutdown")

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        self._enter("on_turn_start", turn_number, message, **kwargs)

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        self._enter("on_session_end", messages)

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "", reset: bool = False,
                          rewound: bool = False, **kwargs: Any) -> None:
        self._enter("on_session_switch", new_session_id, parent_session_id=parent_session_id, reset=reset,
                    rewound=rewound, **kwargs)

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        self._enter("on_pre_compress", messages)
        return self._pre_compress

    def on_memory_write(self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None) -> None:
        self._enter("on_memory_write", action, target, content, metadata=metadata)

    def on_delegation(self, task: str, result: str, *, child_session_id: str = "", **kwargs: Any) -> None:
        self._enter("on_delegation", task, result, child_session_id=child_session_id, **kwargs)


# -- chat model double ------------------------------------------------------------------------------

Reply = Any  # str | dict (assistant message) | ModelResponse | BaseException | Callable[[list, list], Reply]

_ids = itertools.count(1)


def tool_call(name: str, arguments: dict[str, Any] | None = None, *, call_id: str | None = None) -> dict[str, Any]:
    """One OpenAI-style tool call ``{"id", "type": "function", "function": {"name", "arguments"}}``."""
    return {"id": call_id or f"call_{next(_ids)}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments or {}, ensure_ascii=False)}}


def assistant_tool_calls(*calls: dict[str, Any], content: str | None = None) -> dict[str, Any]:
    """An assistant message that makes ``calls`` (built with :func:`tool_call`)."""
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


def write_openai_jsonl(path: Path, conversations: int, per_conversation: int) -> Path:
    """Write ``conversations`` lines of OpenAI-style message JSONL to ``path`` (ids ``c0``, ``c1``...,
    alternating user/assistant messages) and return ``path``."""
    lines = [
        json.dumps({"id": f"c{i}", "messages": [
            {"role": "user" if j % 2 == 0 else "assistant", "content": f"conversation {i} line {j} about deploy windows"}
            for j in range(per_conversation)
        ]})
        for i in range(conversations)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


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
