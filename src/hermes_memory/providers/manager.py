"""``MemoryManager``: the built-in provider plus at most one external :class:`MemoryProvider`.

Behaviour follows docs/reference.md §4 (NEWEST where it differs), with these guarantees:

* **Isolation.** Every per-provider call is wrapped: an exception is logged and that provider's
  contribution is dropped; it never reaches the other providers or the agent's turn.
* **Bounded time.** ``prefetch_all`` waits at most ``prefetch_timeout`` seconds (default 8 s, the
  reference's ``memory.prefetch_timeout``) per external provider; a provider whose previous
  prefetch is still running is skipped until it finishes. Other synchronous hooks of external
  providers are bounded by ``hook_timeout`` (default 10 s) and tool calls by ``tool_timeout``
  (default 60 s). A timed-out call keeps running in its daemon thread; its result is discarded.
* **No false "no memories".** The prefetch cache (keyed by session id, then provider, then query)
  stores only *successful* recalls. A failure or timeout is never cached, so the next turn asks
  again (failure case B17); a late result is only ever served to the same session and the same
  query, never to a later, unrelated turn.
* **Background writes.** ``sync_all`` and ``queue_prefetch_all`` run on one lazily started worker
  thread in FIFO order (writes are serialised); ``flush_pending`` waits for it; ``shutdown_all``
  drains it for at most ``drain_timeout`` seconds, then shuts providers down in reverse order.
* **Secrets.** Text sent to providers (queries, turns, memory writes) is passed through
  :func:`redact_secrets` first.

The fencing helpers (:func:`build_memory_context_block`, :func:`sanitize_context`,
:class:`StreamingContextScrubber`) live in :mod:`hermes_memory.fencing` and are
re-exported here.
"""

from __future__ import annotations

import functools
import json
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hermes_memory.fencing import (
    CONTEXT_NOTE,
    FENCE_CLOSE,
    FENCE_OPEN,
    StreamingContextScrubber,
    build_memory_context_block,
    sanitize_context,
    strip_memory_context,
)
from hermes_memory.home import resolve_home
from hermes_memory.providers.base import PRIMARY_CONTEXT, MemoryProvider
from hermes_memory.providers.calls import (  # noqa: F401 - moved there, re-exported
    _call_bounded,
    _filter_kwargs,
    _Inflight,
    _normalise_schemas,
    _Timeout,
)
from hermes_memory.providers.fanout import HookFanout
from hermes_memory.redact import redact_secrets

__all__ = [
    "CONTEXT_NOTE",
    "FENCE_CLOSE",
    "FENCE_OPEN",
    "MemoryManager",
    "StreamingContextScrubber",
    "build_memory_context_block",
    "create_memory_manager",
    "redact_secrets",
    "sanitize_context",
    "strip_memory_context",
]

logger = logging.getLogger(__name__)

BUILTIN_NAME = "builtin"
DEFAULT_PREFETCH_TIMEOUT = 8.0
"""Seconds one external provider may take to answer ``prefetch`` (reference: ``memory.prefetch_timeout``)."""
DEFAULT_HOOK_TIMEOUT = 10.0
DEFAULT_TOOL_TIMEOUT = 60.0
RESERVED_TOOL_NAMES = frozenset({"memory", "session_search"})
"""Core tool names a provider may not claim (NEWEST reference reserves core names)."""


@dataclass
class DrainState:
    """What ``shutdown_all`` left behind: queued tasks abandoned after the drain timeout."""

    drained: bool = True
    abandoned_tasks: int = 0
    waited_s: float = 0.0


class MemoryManager(HookFanout):
    """Runs the built-in provider and at most one external provider behind one interface.

    Args:
        prefetch_timeout: seconds to wait for each external provider's ``prefetch`` (default 8.0).
        hook_timeout: seconds to wait for other synchronous hooks of external providers (10.0).
        tool_timeout: seconds to wait for an external provider's tool call (60.0).
        reserved_tool_names: tool names providers may not register (default ``memory``,
            ``session_search``).

    Nothing here raises because of a provider: failures are logged (logger
    ``hermes_memory.providers.manager``) and recorded in :attr:`errors` (provider name → last
    error message).
    """

    def __init__(self, *, prefetch_timeout: float = DEFAULT_PREFETCH_TIMEOUT,
                 hook_timeout: float = DEFAULT_HOOK_TIMEOUT, tool_timeout: float = DEFAULT_TOOL_TIMEOUT,
                 reserved_tool_names: frozenset[str] | set[str] = RESERVED_TOOL_NAMES) -> None:
        self.prefetch_timeout = float(prefetch_timeout)
        self.hook_timeout = float(hook_timeout)
        self.tool_timeout = float(tool_timeout)
        self._reserved = frozenset(reserved_tool_names)
        self._providers: list[MemoryProvider] = []
        self._names: list[str] = []
        self._schemas: list[dict[str, Any]] = []
        self._routes: dict[str, MemoryProvider] = {}
        self._lock = threading.RLock()
        self._inflight: dict[str, _Inflight] = {}
        self._cache: dict[str, dict[str, tuple[str, str]]] = {}
        self._queue: queue.Queue[Callable[[], None] | None] | None = None
        self._worker: threading.Thread | None = None
        self._pending = 0
        self._pending_cv = threading.Condition()
        self.session_id = ""
        self.hermes_home: str | None = None  # set by create_memory_manager; initialize_all's default home
        self.errors: dict[str, str] = {}
        self.shutdown_drain_state = DrainState()

    # ------------------------------------------------------------------ registration
    def add_provider(self, provider: MemoryProvider) -> bool:
        """Register ``provider``; return True if accepted.

        ``builtin`` is always accepted (once). A second external provider is refused with a
        warning naming both (no exception). The provider's tool schemas are read *before* any
        state changes (external providers: within :attr:`hook_timeout`), so a provider whose
        ``get_tool_schemas`` raises or hangs leaves the manager as it was (and is refused). Tool names: the first registration wins; reserved core names are
        skipped with a warning.
        """
        try:
            name = str(provider.name)
        except Exception as exc:  # noqa: BLE001
            logger.warning("memory provider %r refused: its name raised %s", provider, exc)
            return False
        with self._lock:
            if name in self._names:
                logger.warning("memory provider %r is already registered; the second copy is ignored", name)
                return False
            if name != BUILTIN_NAME:
                external = [n for n in self._names if n != BUILTIN_NAME]
                if external:
                    logger.warning("memory provider %r refused: external provider %r is already active "
                                   "(only one external provider at a time; set memory.provider to choose)",
                                   name, external[0])
                    return False
            try:
                schemas = _normalise_schemas(_call_bounded(provider.get_tool_schemas,
                                                           None if name == BUILTIN_NAME else self.hook_timeout,
                                                           f"{name}.get_tool_schemas"))
            except Exception as exc:  # noqa: BLE001
                logger.warning("memory provider %r refused: get_tool_schemas() raised %s: %s",
                               name, type(exc).__name__, exc)
                self.errors[name] = f"get_tool_schemas: {exc}"
                return False
            self._providers.append(provider)
            self._names.append(name)
            for schema in schemas:
                tool = schema["name"]
                if tool in self._reserved:
                    logger.warning("memory provider %r may not register core tool %r; skipped", name, tool)
                    continue
                if tool in self._routes:
                    logger.warning("tool %r of provider %r ignored: already provided by %r",
                                   tool, name, self._routes[tool].name)
                    continue
                self._routes[tool] = provider
                self._schemas.append(schema)
            return True

    @property
    def providers(self) -> list[MemoryProvider]:
        """Registered providers in registration order (a copy)."""
        with self._lock:
            return list(self._providers)

    @property
    def external_provider(self) -> MemoryProvider | None:
        """The external provider, or ``None`` when only the built-in one is registered."""
        with self._lock:
            for p, n in zip(self._providers, self._names, strict=True):
                if n != BUILTIN_NAME:
                    return p
        return None

    def get_provider(self, name: str) -> MemoryProvider | None:
        """The provider registered under ``name``, or ``None``."""
        with self._lock:
            for p, n in zip(self._providers, self._names, strict=True):
                if n == name:
                    return p
        return None

    def get_all_tool_schemas(self) -> list[dict[str, Any]]:
        """Bare tool schemas (``{"name", "description", "parameters"}``) of every provider, deduplicated."""
        with self._lock:
            return [dict(s) for s in self._schemas]

    def get_all_tool_names(self) -> list[str]:
        """Names of all routed tools, in registration order."""
        with self._lock:
            return [s["name"] for s in self._schemas]

    def has_tool(self, name: str) -> bool:
        """True when some provider handles tool ``name``."""
        with self._lock:
            return name in self._routes

    # ------------------------------------------------------------------ helpers
    def _named(self) -> list[tuple[str, MemoryProvider]]:
        with self._lock:
            return list(zip(self._names, self._providers, strict=True))

    def _externals(self) -> list[tuple[str, MemoryProvider]]:
        return [(n, p) for n, p in self._named() if n != BUILTIN_NAME]

    def _record(self, name: str, hook: str, exc: BaseException) -> None:
        msg = f"{hook}: {type(exc).__name__}: {exc}"
        self.errors[name] = msg
        if isinstance(exc, _Timeout):
            logger.warning("memory provider %r %s timed out (%s); continuing without it", name, hook, exc)
        else:
            logger.warning("memory provider %r %s failed (%s: %s); continuing without it",
                           name, hook, type(exc).__name__, exc, exc_info=logger.isEnabledFor(logging.DEBUG))

    def _safe(self, name: str, hook: str, fn: Callable[[], Any], timeout: float | None = None,
              default: Any = None) -> Any:
        """Call ``fn``; on exception or timeout log, record and return ``default``."""
        try:
            return _call_bounded(fn, timeout if name != BUILTIN_NAME else None, f"{name}.{hook}")
        except Exception as exc:  # noqa: BLE001 - provider isolation is the point
            self._record(name, hook, exc)
            return default

    # ------------------------------------------------------------------ lifecycle
    def initialize_all(self, session_id: str, **kwargs: Any) -> None:
        """Call ``initialize(session_id, **kwargs)`` on every provider.

        ``hermes_home`` (:attr:`hermes_home`, else the resolved ``$HERMES_HOME``), ``platform`` (``"cli"``) and ``agent_context``
        (``"primary"``) are filled in when missing. A provider whose ``initialize`` raises is logged
        at ERROR level and recorded in :attr:`errors`; it stays registered (its later hooks are
        isolated as usual).
        """
        kwargs.setdefault("hermes_home", str(resolve_home(self.hermes_home)))
        kwargs.setdefault("platform", "cli")
        kwargs.setdefault("agent_context", PRIMARY_CONTEXT)
        self.session_id = session_id or ""
        for name, provider in self._named():
            try:
                _call_bounded(functools.partial(provider.initialize, session_id, **kwargs),
                              self.hook_timeout if name != BUILTIN_NAME else None, f"{name}.initialize")
            except Exception as exc:  # noqa: BLE001
                self.errors[name] = f"initialize: {type(exc).__name__}: {exc}"
                logger.error("memory provider %r failed to initialize: %s: %s", name, type(exc).__name__, exc)

    def build_system_prompt(self) -> str:
        """Non-empty ``system_prompt_block()`` results joined by a blank line (``""`` if none)."""
        blocks: list[str] = []
        for name, provider in self._named():
            block = self._safe(name, "system_prompt_block", provider.system_prompt_block, self.hook_timeout, "")
            if isinstance(block, str) and block.strip():
                blocks.append(block.strip())
        return "\n\n".join(blocks)

    # ------------------------------------------------------------------ recall
    def prefetch_all(self, query: str, *, session_id: str = "", timeout: float | None = None) -> str:
        """Ask every provider for context relevant to ``query``; return the non-empty results joined by a blank line.

        The query is cleaned first (fenced blocks removed, secrets redacted). Each external provider
        gets at most ``timeout`` seconds (default :attr:`prefetch_timeout`); one still busy with an
        earlier call is skipped. On timeout or failure that provider contributes nothing this turn,
        unless the cache holds a successful result for the *same* session and query. The returned
        text is raw: wrap it with :func:`build_memory_context_block` before showing it to a model.
        """
        clean = redact_secrets(strip_memory_context(query))
        if not clean.strip():
            return ""
        sid = session_id or self.session_id
        wait = self.prefetch_timeout if timeout is None else float(timeout)
        parts: list[str] = []
        for name, provider in self._named():
            if name == BUILTIN_NAME:
                text = self._safe(name, "prefetch", functools.partial(provider.prefetch, clean, session_id=sid), None, "")
            else:
                text = self._prefetch_external(name, provider, clean, sid, wait)
            if isinstance(text, str) and text.strip():
                parts.append(text.strip())
        return "\n\n".join(parts)

    prefetch = prefetch_all

    def _cached(self, sid: str, name: str, query: str) -> str:
        entry = self._cache.get(sid, {}).get(name)
        return entry[1] if entry and entry[0] == query else ""

    def _prefetch_external(self, name: str, provider: MemoryProvider, query: str, sid: str, wait: float) -> str:
        with self._lock:
            running = self._inflight.get(name)
            if running is not None and not running.done.is_set():
                logger.warning("memory provider %r skipped: its previous prefetch (%.1f s ago) is still running",
                               name, time.monotonic() - running.started)
                return self._cached(sid, name, query)
            slot = _Inflight(sid, query, time.monotonic())
            self._inflight[name] = slot
        box: dict[str, Any] = {}

        def run() -> None:
            try:
                box["value"] = provider.prefetch(query, session_id=sid)
            except BaseException as exc:  # noqa: BLE001
                box["error"] = exc
            finally:
                value = box.get("value")
                if "error" not in box and isinstance(value, str):
                    with self._lock:  # successful recall: cache for this session + query only
                        self._cache.setdefault(slot.session_id, {})[name] = (slot.query, value)
                slot.done.set()

        threading.Thread(target=run, name=f"hermes-memory:{name}.prefetch", daemon=True).start()
        if not slot.done.wait(max(wait, 0.0)):
            self._record(name, "prefetch", _Timeout(f"prefetch did not return within {wait:g} s"))
            return self._cached(sid, name, query)
        if "error" in box:
            self._record(name, "prefetch", box["error"])
            return ""  # never cached: the next call asks again
        value = box.get("value")
        if value is not None and not isinstance(value, str):
            self._record(name, "prefetch", TypeError(f"prefetch returned {type(value).__name__}, not str"))
            return ""
        return value or ""

    def build_user_message(self, user_text: str, *, session_id: str = "", timeout: float | None = None) -> str:
        """The API copy of a user message: ``user_text`` plus, when recall found anything, a blank line and the fenced block.

        ``user_text`` itself is left unchanged and outside the fence; a blank recall adds nothing.
        """
        block = build_memory_context_block(self.prefetch_all(user_text, session_id=session_id, timeout=timeout))
        return f"{user_text}\n\n{block}" if block else user_text

    # ------------------------------------------------------------------ background worker
    def _ensure_worker(self) -> queue.Queue[Callable[[], None] | None]:
        with self._lock:
            if self._queue is None or self._worker is None or not self._worker.is_alive():
                self._queue = queue.Queue()
                self._worker = threading.Thread(target=self._work, args=(self._queue,),
                                                 name="hermes-memory:worker", daemon=True)
                self._worker.start()
            return self._queue

    def _work(self, q: queue.Queue[Callable[[], None] | None]) -> None:
        while True:
            task = q.get()
            if task is None:
                return
            try:
                task()
            except Exception as exc:  # noqa: BLE001 - tasks already isolate providers
                logger.warning("memory background task failed: %s", exc)
            finally:
                with self._pending_cv:
                    self._pending -= 1
                    self._pending_cv.notify_all()

    def _submit(self, task: Callable[[], None]) -> None:
        with self._pending_cv:
            self._pending += 1
        self._ensure_worker().put(task)

    def sync_all(self, user_content: str, assistant_content: str, *, session_id: str = "",
                 messages: list[dict[str, Any]] | None = None, **extra: Any) -> None:
        """Queue ``sync_turn`` on every provider (background worker, FIFO). Empty input is a no-op.

        ``messages`` and extra keywords (e.g. ``turn_author``) are passed only to providers whose
        ``sync_turn`` signature accepts them. Text is secret-redacted and fences are stripped.
        """
        if not (user_content or "").strip() and not (assistant_content or "").strip():
            return
        user = redact_secrets(strip_memory_context(user_content))
        asst = redact_secrets(strip_memory_context(assistant_content))
        sid = session_id or self.session_id
        targets = self._named()

        def task() -> None:
            for name, provider in targets:
                kwargs = _filter_kwargs(provider.sync_turn, {"session_id": sid, "messages": messages, **extra})
                if messages is None:
                    kwargs.pop("messages", None)
                self._safe(name, "sync_turn", functools.partial(provider.sync_turn, user, asst, **kwargs))

        self._submit(task)

    def queue_prefetch_all(self, query: str, *, session_id: str = "") -> None:
        """Queue ``queue_prefetch(query)`` on every provider (background worker). Empty query is a no-op."""
        clean = redact_secrets(strip_memory_context(query))
        if not clean.strip():
            return
        sid = session_id or self.session_id
        targets = self._named()

        def task() -> None:
            for name, provider in targets:
                self._safe(name, "queue_prefetch", functools.partial(provider.queue_prefetch, clean, session_id=sid))

        self._submit(task)

    def flush_pending(self, timeout: float = 5.0) -> bool:
        """Wait up to ``timeout`` seconds for queued background work; True when the queue is empty."""
        deadline = time.monotonic() + max(timeout, 0.0)
        with self._pending_cv:
            while self._pending > 0:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._pending_cv.wait(left)
        return True

    # ------------------------------------------------------------------ tools
    def handle_tool_call(self, tool_name: str, args: dict[str, Any] | None, **kwargs: Any) -> str:
        """Route a tool call to the provider that registered ``tool_name``; return its JSON string.

        Unknown tool → ``{"error": "No memory provider handles tool '<name>'"}``; a provider exception,
        timeout or non-string result → ``{"error": "Memory tool '<name>' failed: ..."}``. Never raises.
        """
        with self._lock:
            provider = self._routes.get(tool_name)
        if provider is None:
            return json.dumps({"error": f"No memory provider handles tool '{tool_name}'"})
        name = provider.name
        kw = _filter_kwargs(provider.handle_tool_call, kwargs)
        try:
            result = _call_bounded(lambda: provider.handle_tool_call(tool_name, dict(args or {}), **kw),
                                   self.tool_timeout if name != BUILTIN_NAME else None, f"{name}.{tool_name}")
        except Exception as exc:  # noqa: BLE001
            self._record(name, f"tool {tool_name}", exc)
            return json.dumps({"error": f"Memory tool '{tool_name}' failed: {type(exc).__name__}: {exc}"})
        if isinstance(result, (dict, list)):
            return json.dumps(result, ensure_ascii=False, default=str)
        if not isinstance(result, str):
            return json.dumps({"error": f"Memory tool '{tool_name}' failed: provider returned {type(result).__name__}"})
        return result

    def shutdown_all(self, drain_timeout: float = 5.0) -> DrainState:
        """Drain the background worker (at most ``drain_timeout`` s), then ``shutdown()`` providers in reverse order.

        Tasks still queued after the drain are abandoned and counted in :attr:`shutdown_drain_state`
        (also returned). Each provider's ``shutdown`` is bounded by ``drain_timeout`` as well.
        """
        started = time.monotonic()
        drained = self.flush_pending(drain_timeout)
        abandoned = 0
        with self._lock:
            q, self._queue, self._worker = self._queue, None, None
        if q is not None:
            while True:
                try:
                    task = q.get_nowait()
                except queue.Empty:
                    break
                if task is not None:
                    abandoned += 1
                    with self._pending_cv:
                        self._pending -= 1
            q.put(None)
        if abandoned:
            logger.warning("memory manager shutdown: %d queued background task(s) abandoned after %.1f s",
                           abandoned, drain_timeout)
        self.shutdown_drain_state = DrainState(drained, abandoned, time.monotonic() - started)
        for name, provider in reversed(self._named()):
            self._safe(name, "shutdown", provider.shutdown, drain_timeout)
        return self.shutdown_drain_state


MAX_PREFETCH_TIMEOUT = 600.0
"""Upper bound of ``memory.prefetch_timeout`` in seconds (ours): a recall wait longer than this is a misconfiguration."""


def _timeout_setting(value: Any) -> float:
    """``memory.prefetch_timeout`` from ``config.yaml``: ``None`` → 8 s; else seconds in (0, 600], or :class:`ConfigError`."""
    from hermes_memory.errors import ConfigError

    if value is None:
        return DEFAULT_PREFETCH_TIMEOUT
    try:
        if isinstance(value, bool):
            raise ValueError
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = float("nan")
    if not 0 < seconds <= MAX_PREFETCH_TIMEOUT:  # also false for NaN
        raise ConfigError(f"memory.prefetch_timeout in config.yaml must be seconds between 0 and "
                          f"{MAX_PREFETCH_TIMEOUT:g} (default {DEFAULT_PREFETCH_TIMEOUT:g}), got {value!r}; "
                          "fix it or delete the key")
    return seconds


def create_memory_manager(config: Any, hermes_home: str | None = None, *, memory_store: Any = None,
                          prefetch_timeout: float | None = None) -> MemoryManager:
    """Build the manager the agent uses: builtin (over ``memory_store``) + the ``memory.provider`` plugin.

    ``config`` is a :class:`~hermes_memory.config.HermesConfig`. The prefetch timeout comes from
    ``prefetch_timeout``, else ``memory.prefetch_timeout`` in ``config.yaml`` (seconds in (0, 600];
    anything else raises :class:`~hermes_memory.errors.ConfigError`), else 8 s. A
    configured provider that is unknown, fails to load or is unavailable raises
    :class:`~hermes_memory.errors.ProviderError` (logged at ERROR level) — it is never silently
    dropped. ``initialize_all`` is left to the caller (it needs the session id).
    """
    from hermes_memory.providers.builtin import BuiltinMemoryProvider
    from hermes_memory.providers.discovery import load_configured_provider

    mem = config.memory
    timeout = prefetch_timeout if prefetch_timeout is not None else _timeout_setting(getattr(mem, "prefetch_timeout", None))
    manager = MemoryManager(prefetch_timeout=float(timeout))
    manager.hermes_home = str(resolve_home(hermes_home))
    manager.add_provider(BuiltinMemoryProvider(memory_store, memory_enabled=bool(mem.memory_enabled),
                                               user_profile_enabled=bool(mem.user_profile_enabled)))
    external = load_configured_provider(mem.provider, hermes_home)
    if external is not None:
        manager.add_provider(external)
    return manager
