"""The manager's fan-out hooks: turn start, session end and switch, pre-compress, memory writes and delegation, passed to every provider (each call isolated and bounded)."""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hermes_memory.providers.calls import (
    _accepts,
    _filter_kwargs,
)
from hermes_memory.redact import redact_secrets

if TYPE_CHECKING:
    from hermes_memory.providers.base import MemoryProvider


class HookFanout:
    """Hook methods of :class:`~hermes_memory.providers.manager.MemoryManager` (a mixin: uses its provider list, ``_safe`` wrapper and worker)."""

    # What the host (MemoryManager) provides; declared so the type checker sees the contract.
    hook_timeout: float
    session_id: str
    _lock: threading.RLock
    _cache: dict[str, dict[str, tuple[str, str]]]

    if TYPE_CHECKING:
        def _named(self) -> list[tuple[str, MemoryProvider]]: ...
        def _externals(self) -> list[tuple[str, MemoryProvider]]: ...
        def _safe(self, name: str, hook: str, fn: Callable[[], Any], timeout: float | None = None,
                  default: Any = None) -> Any: ...
        def _submit(self, task: Callable[[], None]) -> None: ...

    # ------------------------------------------------------------------ fan-out hooks
    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        """Fan out ``on_turn_start`` (extra keywords only to providers that accept them)."""
        msg = redact_secrets(message)
        for name, provider in self._named():
            kw = _filter_kwargs(provider.on_turn_start, kwargs)
            self._safe(name, "on_turn_start", functools.partial(provider.on_turn_start, turn_number, msg, **kw),
                       self.hook_timeout)

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """Fan out ``on_session_end(messages)`` (a real session boundary)."""
        for name, provider in self._named():
            self._safe(name, "on_session_end", functools.partial(provider.on_session_end, messages), self.hook_timeout)

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "", reset: bool = False,
                          rewound: bool = False, **kwargs: Any) -> None:
        """Tell providers the agent moved to ``new_session_id``; no-op for an empty id.

        The prefetch cache of the old session is dropped.
        """
        if not new_session_id:
            return
        with self._lock:
            old = self.session_id
            self.session_id = new_session_id
            if old and old != new_session_id:
                self._cache.pop(old, None)
        for name, provider in self._named():
            kw = _filter_kwargs(provider.on_session_switch, kwargs)
            self._safe(name, "on_session_switch",
                       functools.partial(provider.on_session_switch, new_session_id, parent_session_id=parent_session_id,
                                         reset=reset, rewound=rewound, **kw),
                       self.hook_timeout)

    def commit_session_boundary_async(self, messages: list[dict[str, Any]], new_session_id: str, *,
                                      parent_session_id: str = "", reset: bool = True) -> None:
        """Queue ``on_session_end(messages)`` then ``on_session_switch(new_session_id)`` as ONE background task."""
        def task() -> None:
            self.on_session_end(messages)
            self.on_session_switch(new_session_id, parent_session_id=parent_session_id, reset=reset)

        self._submit(task)

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        """Collect ``on_pre_compress(messages)`` text (for the summary prompt), non-empty parts joined by a blank line."""
        parts: list[str] = []
        for name, provider in self._named():
            text = self._safe(name, "on_pre_compress", functools.partial(provider.on_pre_compress, messages),
                              self.hook_timeout, "")
            if isinstance(text, str) and text.strip():
                parts.append(text.strip())
        return "\n\n".join(parts)

    def on_memory_write(self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None) -> None:
        """Mirror a committed built-in ``memory`` write to the external provider(s) only (never to builtin).

        ``metadata`` is passed by keyword when the provider's signature has it, else omitted.
        """
        text = redact_secrets(content)
        for name, provider in self._externals():
            fn = provider.on_memory_write
            if metadata is not None and _accepts(fn, "metadata"):
                call = lambda p=provider: p.on_memory_write(action, target, text, metadata=metadata)  # noqa: E731
            else:
                call = lambda p=provider: p.on_memory_write(action, target, text)  # noqa: E731
            self._safe(name, "on_memory_write", call, self.hook_timeout)

    def notify_memory_tool_write(self, result: dict[str, Any] | str, args: dict[str, Any]) -> None:
        """Mirror the outcome of one built-in ``memory`` tool call (NEWEST reference behaviour).

        Only committed writes are mirrored (``success`` true and not ``staged``); a batch
        (``operations``) is expanded per operation; ``old_text`` goes into ``metadata``.
        """
        if isinstance(result, str):
            try:
                result = json.loads(result)
            except ValueError:
                return
        if not isinstance(result, dict) or not result.get("success") or result.get("staged"):
            return
        ops: list[Any] = args["operations"] if isinstance(args.get("operations"), list) else [args]
        for op in ops:
            if not isinstance(op, dict):
                continue
            action = str(op.get("action") or args.get("action") or "")
            target = str(op.get("target") or args.get("target") or "memory")
            content = op.get("content") if op.get("content") is not None else op.get("new_text")
            meta = {k: op[k] for k in ("old_text",) if op.get(k)}
            if action in {"add", "replace", "remove"}:
                self.on_memory_write(action, target, str(content or ""), meta or None)

    def on_delegation(self, task: str, result: str, *, child_session_id: str = "", **kwargs: Any) -> None:
        """Fan out ``on_delegation`` (a subagent finished ``task``)."""
        for name, provider in self._named():
            kw = _filter_kwargs(provider.on_delegation, kwargs)
            self._safe(name, "on_delegation",
                       functools.partial(provider.on_delegation, task, result, child_session_id=child_session_id, **kw),
                       self.hook_timeout)
