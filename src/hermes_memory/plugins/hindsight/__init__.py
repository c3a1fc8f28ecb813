"""Hindsight memory provider: a bank of facts, observations and reflections behind the Hindsight HTTP API.

Behaviour follows the reference plugin (docs/providers.md §3), reached through the official ``hindsight-client``
SDK (PyPI, ``Hindsight(base_url=..., api_key=..., timeout=...)``), which targets any base URL: the cloud,
a self-hosted ``hindsight-api`` or a local fake. The SDK is async (aiohttp); this provider runs it on one
private event loop in a daemon thread and waits for every call at most ``timeout`` seconds.

Tools (3; hidden when ``memory_mode`` is ``context``): ``hindsight_retain(content, context?, tags?,
occurred_at?)``, ``hindsight_recall(query)``, ``hindsight_reflect(query)``. Errors are ``{"error": ...}``.

Hooks:

* ``prefetch(query)``: the result queued for this session by ``queue_prefetch`` when there is one
  (joined for at most ``timeout`` s), otherwise a synchronous recall (or reflect, per
  ``recall_prefetch_method``) of the query cut to ``recall_max_input_chars``; ``## Hindsight Memory`` block.
  A failed or timed-out recall returns ``""`` and is never cached as "nothing found".
* ``sync_turn``: buffers the turn; every ``retain_every_n_turns`` turns it retains the buffered turns as
  one item of the session's document (``document_id = session_id``, ``update_mode="append"``), tagged
  ``session:<id>`` (and ``parent:<id>``), with string metadata. Only in the primary agent context. A server
  older than 0.5.0 (``GET /version``, probed once) has no append: it gets the whole session so far under a
  per-process document id ``<session>-<start time>``, as the reference does.
* ``on_session_switch``: flushes the buffer into the old session's document, then moves writes to the new
  session (new document id, new tags, counters and prefetch cache reset).
* ``shutdown``: flushes the buffer, closes the client, stops the loop.

Configuration, lowest to highest: ``$HERMES_HOME/hindsight/config.json`` (the reference's file), ``config.yaml``
(section ``hindsight:`` as the setup wizard writes it, then ``memory.hindsight:``), ``$HERMES_HOME/.env`` and the
environment (``HINDSIGHT_API_URL``, ``HINDSIGHT_API_KEY``, ``HINDSIGHT_BANK_ID``, ``HINDSIGHT_BUDGET``,
``HINDSIGHT_TIMEOUT``). Embedded mode
(``hindsight-all``, a daemon with its own PostgreSQL) is not bundled: point ``api_url`` at a running
``hindsight-api`` instead.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hermes_memory.home import resolve_home
from hermes_memory.plugins.hindsight.settings import (  # noqa: F401 - moved there, re-exported
    _DEFAULTS,
    _ENV,
    APPEND_MIN_VERSION,
    BUDGETS,
    DEFAULT_LOCAL_URL,
    FACT_TYPES,
    MODES,
    NAME,
    _as_bool,
    _as_list,
    _client_installed,
    _describe,
    _load_settings,
    _version_tuple,
)
from hermes_memory.providers.base import ConfigField, MemoryProvider, is_trivial_prompt

log = logging.getLogger(__name__)


async def _cancel_pending_and_close(client: Any) -> None:
    """Cancel the loop's other tasks (calls still in flight) and wait for them, then close the SDK client.

    A loop stopped with a call still suspended leaves a coroutine that is destroyed later, from whatever
    thread collects it ("coroutine already executing").
    """
    pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    await client.aclose()


class HindsightProvider(MemoryProvider):
    """External memory in a Hindsight bank (see the module docstring for tools, hooks and config)."""

    def __init__(self, hermes_home: str | os.PathLike[str] | None = None) -> None:
        self._home: Path | None = Path(hermes_home) if hermes_home else None
        self._settings: dict[str, Any] = dict(_DEFAULTS)
        self._session_id = ""
        self._parent_session_id = ""
        self._agent_context = "primary"
        self._platform = ""
        self._extra: dict[str, Any] = {}
        self._client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: threading.Thread | None = None
        self._buffer: list[dict[str, str]] = []
        self._session_log: list[dict[str, str]] = []   # every turn of this session (for servers without append)
        self._append_mode: bool | None = None
        self._process_start = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
        self._turns = 0
        self._buffer_lock = threading.Lock()
        self._client_lock = threading.Lock()
        self._closed = False  # set by shutdown: no new client (a late prefetch thread would leak one)
        self._prefetch: dict[str, Future[str]] = {}
        self._last: dict[str, Any] = {"ok": True, "count": 0, "error": None}
        self._last_write_error: str | None = None

    # -- identity and availability -----------------------------------------------------------
    @property
    def name(self) -> str:
        return NAME

    def _current_settings(self) -> dict[str, Any]:
        return _load_settings(self._home or resolve_home())

    def is_available(self) -> bool:
        """True when ``hindsight-client`` imports and an API URL or key is configured. No network."""
        try:
            settings = self._current_settings()
        except Exception:
            return False
        return _client_installed() and bool(settings["api_url"] or settings["api_key"])

    def unavailable_reason(self) -> str:
        if not _client_installed():
            return "the `hindsight-client` package is missing: pip install 'hermes-memory[providers]'"
        if not self.is_available():
            return ("no Hindsight server configured: set memory.hindsight.api_url (or HINDSIGHT_API_URL) to a "
                    f"running hindsight-api, e.g. {DEFAULT_LOCAL_URL}, or HINDSIGHT_API_KEY for the cloud")
        return ""

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Resolve settings for ``session_id``; the client and its loop start on first use (no network here)."""
        if self._client is not None:  # re-initialised: settings may have changed
            self.shutdown()
        self._closed = False
        home = kwargs.get("hermes_home")
        self._home = Path(home) if home else resolve_home()
        self._settings = _load_settings(self._home)
        self._session_id = session_id
        self._parent_session_id = kwargs.get("parent_session_id") or ""
        self._agent_context = kwargs.get("agent_context") or "primary"
        self._platform = kwargs.get("platform") or ""
        self._extra = {k: str(v) for k, v in kwargs.items()
                       if k in ("user_id", "agent_identity") and v}

    @property
    def bank_id(self) -> str:
        return str(self._settings["bank_id"])

    @property
    def api_url(self) -> str:
        """The base URL used: configured ``api_url``, else the cloud when a key is set, else localhost:8888."""
        if self._settings["api_url"]:
            return self._settings["api_url"]
        return "https://api.hindsight.vectorize.io" if self._settings["api_key"] else DEFAULT_LOCAL_URL

    def _writes_ok(self) -> bool:
        return self.writes_allowed(self._agent_context)

    # -- the SDK on a private loop ------------------------------------------------------------------
    def _ensure_client(self) -> Any:
        with self._client_lock:  # a prefetch thread and the worker may both get here first
            if self._closed:
                raise RuntimeError("the Hindsight provider is shut down")
            if self._client is None:
                self._client = self._start_client()
            return self._client

    def _start_client(self) -> Any:
        from hindsight_client import Hindsight

        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="hindsight-loop", daemon=True)
        thread.start()
        self._loop, self._loop_thread = loop, thread
        timeout = self._settings["timeout"]

        async def make() -> Any:  # aiohttp sessions must be created on the loop that uses them
            return Hindsight(base_url=self.api_url, api_key=self._settings["api_key"] or None,
                             timeout=timeout, user_agent="hermes-memory", max_attempts=1)

        return asyncio.run_coroutine_threadsafe(make(), loop).result(timeout=timeout)

    def _call(self, make_coro: Any) -> Any:
        """Run ``make_coro(client)`` on the private loop; wait at most ``timeout`` seconds.

        Raises the SDK's exception, or ``TimeoutError`` (the coroutine is cancelled) past the timeout.
        """
        client = self._ensure_client()
        assert self._loop is not None
        timeout = self._settings["timeout"]
        coro: Coroutine[Any, Any, Any] = asyncio.wait_for(make_coro(client), timeout)
        fut = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return fut.result(timeout=timeout + 1.0)
        except FutureTimeout:
            fut.cancel()
            raise TimeoutError(f"no answer within {timeout:g} s") from None

    def _recall(self, query: str) -> list[str]:
        s = self._settings
        kwargs: dict[str, Any] = {"budget": s["recall_budget"], "max_tokens": s["recall_max_tokens"],
                                  "types": s["recall_types"]}
        if s["recall_tags"]:
            kwargs.update(tags=s["recall_tags"], tags_match=s["recall_tags_match"])
        resp = self._call(lambda c: c.arecall(bank_id=self.bank_id, query=query, **kwargs))
        return [r.text for r in (resp.results or []) if getattr(r, "text", "")]

    def _reflect(self, query: str) -> str:
        resp = self._call(lambda c: c.areflect(bank_id=self.bank_id, query=query,
                                               budget=self._settings["recall_budget"]))
        return resp.text or ""

    def _retain(self, items: list[dict[str, Any]], document_id: str | None = None) -> Any:
        return self._call(lambda c: c.aretain_batch(bank_id=self.bank_id, items=items, document_id=document_id,
                                                    retain_async=self._settings["retain_async"]))

    # -- tools ---------------------------------------------------------------------------------------
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        if self._settings["memory_mode"] == "context":
            return []
        return [
            {
                "name": "hindsight_retain",
                "description": ("Store a durable fact, event or preference in long-term memory (Hindsight). "
                                "Write it self-contained; say when it happened if it is an event."),
                "parameters": {"type": "object", "properties": {
                    "content": {"type": "string", "description": "What to remember."},
                    "context": {"type": "string", "description": "Short label for where it came from."},
                    "tags": {"type": "array", "items": {"type": "string"},
                             "description": "Tags to file it under (added to the configured ones)."},
                    "occurred_at": {"type": "string",
                                    "description": "ISO date or datetime the event happened (optional)."},
                }, "required": ["content"]},
            },
            {
                "name": "hindsight_recall",
                "description": "Search long-term memory (Hindsight) for facts relevant to a query.",
                "parameters": {"type": "object", "properties": {
                    "query": {"type": "string", "description": "What to look for."},
                }, "required": ["query"]},
            },
            {
                "name": "hindsight_reflect",
                "description": ("Ask long-term memory (Hindsight) a question; it reasons over everything "
                                "remembered and answers in prose."),
                "parameters": {"type": "object", "properties": {
                    "query": {"type": "string", "description": "The question."},
                }, "required": ["query"]},
            },
        ]

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run a ``hindsight_*`` tool; returns JSON. Every failure is ``{"error": ...}``, never an exception."""
        args = args or {}
        if tool_name not in ("hindsight_retain", "hindsight_recall", "hindsight_reflect"):
            return self.tool_error(f"unknown Hindsight tool {tool_name!r}; use hindsight_retain, "
                                   "hindsight_recall or hindsight_reflect")
        try:
            if tool_name == "hindsight_retain":
                return self._tool_retain(args)
            query = str(args.get("query") or "").strip()
            if not query:
                return self.tool_error(f"{tool_name} needs a non-empty 'query'")
            if tool_name == "hindsight_recall":
                facts = self._recall(query)
                if not facts:
                    return self.tool_result({"result": "No relevant memories found.", "count": 0})
                numbered = "\n".join(f"{i}. {t}" for i, t in enumerate(facts, 1))
                return self.tool_result({"result": numbered, "count": len(facts)})
            return self.tool_result({"result": self._reflect(query)})
        except Exception as exc:  # the SDK raises many types; the model gets one clear line
            return self.tool_error(_describe(exc), tool=tool_name)

    def _tool_retain(self, args: dict[str, Any]) -> str:
        content = str(args.get("content") or "").strip()
        if not content:
            return self.tool_error("hindsight_retain needs a non-empty 'content'")
        if not self._writes_ok():
            return self.tool_error(f"hindsight_retain is disabled in the {self._agent_context!r} agent context; "
                                   "only the primary agent writes memory")
        if not isinstance(args.get("tags"), (str, list, type(None))):
            return self.tool_error(f"tags must be a list of strings, got {type(args['tags']).__name__}")
        tags = _as_list(args.get("tags")) if not isinstance(args.get("tags"), list) else [str(t) for t in args["tags"]]
        item: dict[str, Any] = {
            "content": content,
            "context": str(args.get("context") or "") or None,
            "tags": sorted(set(self._settings["retain_tags"]) | set(tags)) or None,
            "metadata": self._metadata(source="tool"),
        }
        occurred = str(args.get("occurred_at") or "").strip()
        if occurred:
            try:
                datetime.fromisoformat(occurred.replace("Z", "+00:00"))
            except ValueError:
                return self.tool_error(f"occurred_at {occurred!r} is not an ISO date or datetime "
                                       "(e.g. 2026-05-01 or 2026-05-01T14:30:00Z)")
            item["timestamp"] = occurred
        self._retain([item])
        return self.tool_result({"result": "Memory stored successfully."})

    # -- hooks ------------------------------------------------------------------------------------------
    def system_prompt_block(self) -> str:
        mode = self._settings["memory_mode"]
        head = f"# Hindsight memory\nLong-term memory lives in Hindsight bank '{self.bank_id}'"
        if mode == "context":
            return head + "; relevant memories are recalled into context automatically."
        if mode == "tools":
            return head + ". Use hindsight_recall / hindsight_reflect to look things up and hindsight_retain to store."
        return (head + ". Relevant memories are recalled automatically; use hindsight_recall or hindsight_reflect "
                "for more and hindsight_retain for durable facts.")

    def _recall_block(self, query: str) -> str:
        query = query.strip()[: self._settings["recall_max_input_chars"]]
        try:
            if self._settings["recall_prefetch_method"] == "reflect":
                text = self._reflect(query)
                count = 1 if text else 0
                body = text
            else:
                facts = self._recall(query)
                count = len(facts)
                body = "\n".join(f"- {t}" for t in facts)
        except Exception as exc:
            self._last = {"ok": False, "count": 0, "error": _describe(exc)}
            log.warning("hindsight: recall failed: %s", self._last["error"])
            raise
        self._last = {"ok": True, "count": count, "error": None}
        return f"## Hindsight Memory\n{body}" if body else ""

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """Start a recall for the next turn on the private loop's executor (no-op for trivial prompts)."""
        if not self._settings["auto_recall"] or self._settings["memory_mode"] == "tools" or is_trivial_prompt(query):
            return
        key = session_id or self._session_id
        fut: Future[str] = Future()

        def work() -> None:
            if not fut.set_running_or_notify_cancel():
                return  # a session switch cancelled it before it started: nobody wants the answer
            try:
                fut.set_result(self._recall_block(query))
            except Exception as exc:
                fut.set_exception(exc)

        threading.Thread(target=work, name="hindsight-prefetch", daemon=True).start()
        self._prefetch[key] = fut

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """Recalled memories for ``query`` (see module docstring); ``""`` on trivial prompts and failures."""
        if not self._settings["auto_recall"] or self._settings["memory_mode"] == "tools" or is_trivial_prompt(query):
            return ""
        key = session_id or self._session_id
        queued = self._prefetch.pop(key, None)
        try:
            if queued is not None:
                return queued.result(timeout=self._settings["timeout"])
            return self._recall_block(query)
        except Exception:
            return ""

    def recall_status(self) -> dict[str, Any] | None:
        status = dict(self._last)
        status["provider"] = NAME
        status["indicator"] = f"Hindsight: recalled {status['count']} memories" if status["ok"] else None
        status["write_error"] = self._last_write_error
        return status

    def _metadata(self, **more: str) -> dict[str, str]:
        meta = {"session_id": self._session_id, "platform": self._platform,
                "retained_at": datetime.now(UTC).isoformat(timespec="seconds"), **self._extra, **more}
        return {k: str(v) for k, v in meta.items() if v}

    def _tags(self) -> list[str]:
        tags = set(self._settings["retain_tags"])
        if self._session_id:
            tags.add(f"session:{self._session_id}")
        if self._parent_session_id:
            tags.add(f"parent:{self._parent_session_id}")
        return sorted(tags)

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: list[dict[str, Any]] | None = None) -> None:
        """Buffer the turn; retain every ``retain_every_n_turns`` turns. Primary context only; never raises."""
        if not (self._writes_ok() and self._settings["auto_retain"]):
            return
        if not (user_content or "").strip() and not (assistant_content or "").strip():
            return
        if session_id and session_id != self._session_id:
            self.on_session_switch(session_id)  # the caller moved on without telling us: old turns stay in the old doc
        now = datetime.now(UTC).isoformat(timespec="seconds")
        with self._buffer_lock:
            self._buffer.append({"role": "user", "content": f"User: {user_content}", "timestamp": now})
            self._buffer.append({"role": "assistant", "content": f"Assistant: {assistant_content}", "timestamp": now})
            self._turns += 1
            due = self._turns % self._settings["retain_every_n_turns"] == 0
        if due:
            self._flush_buffer()

    def _append_supported(self) -> bool:
        """Whether the server takes ``update_mode="append"`` (API >= 0.5.0), probed once with ``GET /version``.

        A failed probe is not remembered (the next flush asks again) and counts as supported, the
        behaviour of every current server.
        """
        if self._append_mode is None:
            async def probe(c: Any) -> str:
                # raw JSON: an older server's /version lacks feature flags the SDK's model now requires
                resp = await c.monitoring.get_version_without_preload_content(_request_timeout=self._settings["timeout"])
                return str(json.loads(await resp.read()).get("api_version", ""))

            try:
                version = self._call(probe)
            except Exception as exc:
                log.debug("hindsight: version probe failed: %s", _describe(exc))
                return True
            self._append_mode = _version_tuple(version) >= APPEND_MIN_VERSION
        return self._append_mode

    def _flush_buffer(self) -> bool:
        """Retain the buffered turns into the current session's document. True when sent (or nothing to send).

        API >= 0.5.0: the new turns are appended to the document ``<session id>``. Older servers have no
        append: the whole session so far is resent under a per-process document id
        ``<session id>-<process start>`` (the reference's fix for resumed sessions overwriting documents).
        """
        with self._buffer_lock:
            turns, self._buffer = self._buffer, []
        if not turns:
            return True
        append = self._append_supported()
        self._session_log.extend(turns)
        sent = turns if append else list(self._session_log)
        document_id = (self._session_id if append else f"{self._session_id}-{self._process_start}") or None
        item: dict[str, Any] = {
            "content": json.dumps(sent, ensure_ascii=False),
            "context": self._settings["retain_context"],
            "metadata": self._metadata(message_count=str(len(sent)), turn_index=str(self._turns)),
            "tags": self._tags() or None,
            "document_id": document_id,
        }
        if append:
            item["update_mode"] = "append"
        try:
            self._retain([item], document_id=document_id)
            self._last_write_error = None
            return True
        except Exception as exc:
            self._last_write_error = _describe(exc)
            log.warning("hindsight: retain failed (%d messages dropped): %s", len(turns), self._last_write_error)
            return False

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "", reset: bool = False,
                          rewound: bool = False, **kwargs: Any) -> None:
        """Flush the old session's turns under its own document, then write to ``new_session_id``."""
        if not new_session_id or new_session_id == self._session_id:
            return
        if self._writes_ok():
            self._flush_buffer()
        for fut in self._prefetch.values():
            fut.cancel()
        self._prefetch.clear()
        self._parent_session_id = parent_session_id or ("" if reset else self._session_id)
        self._session_id = new_session_id
        self._turns = 0
        self._session_log = []

    def shutdown(self) -> None:
        """Flush buffered turns (bounded by ``timeout``), close the client and stop the loop."""
        try:
            if self._writes_ok() and self._buffer:
                self._flush_buffer()
        finally:
            with self._client_lock:  # from here on no thread can start a new client
                self._closed = True
                client, loop, thread = self._client, self._loop, self._loop_thread
                self._client, self._loop, self._loop_thread = None, None, None
            if client is not None and loop is not None:
                try:
                    asyncio.run_coroutine_threadsafe(_cancel_pending_and_close(client), loop).result(timeout=5)
                except Exception as exc:
                    log.debug("hindsight: close failed: %s", exc)
            if loop is not None:
                loop.call_soon_threadsafe(loop.stop)
                if thread is not None:
                    thread.join(timeout=5)
                if thread is None or not thread.is_alive():
                    loop.close()  # also ends the loop's default executor threads (aiohttp's DNS lookups)

    # -- setup wizard -----------------------------------------------------------------------------------
    def get_config_schema(self) -> list[ConfigField]:
        return [
            ConfigField("api_url", "Hindsight API URL (self-hosted hindsight-api or the cloud)",
                        default=DEFAULT_LOCAL_URL, required=True),
            ConfigField("api_key", "Hindsight API key (cloud, or a server started with auth)", secret=True,
                        env_var="HINDSIGHT_API_KEY", url="https://hindsight.vectorize.io"),
            ConfigField("bank_id", "Memory bank to use", default="hermes"),
            ConfigField("recall_budget", "Recall effort", default="mid", choices=BUDGETS),
            ConfigField("memory_mode", "hybrid: auto-recall + tools; context: auto-recall only; tools: tools only",
                        default="hybrid", choices=MODES),
            ConfigField("timeout", "Seconds before a Hindsight call is abandoned", default=120.0, type="float"),
            ConfigField("retain_every_n_turns", "Retain the conversation every N turns", default=1, type="int"),
        ]


def register(ctx: Any) -> None:
    """Plugin entry point (uses ``ctx.hermes_home`` when the loader provides one): hand one :class:`HindsightProvider` to the discovery collector."""
    ctx.register_memory_provider(HindsightProvider(hermes_home=getattr(ctx, "hermes_home", None)))


__all__ = ["HindsightProvider", "register"]
