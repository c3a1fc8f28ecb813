"""Mem0 memory provider: the Mem0 Platform API or mem0's open-source library, in process.

Behaviour follows the reference plugin (docs/providers.md §2), built on the official ``mem0ai`` SDK:

* ``platform`` mode: ``mem0.MemoryClient`` against ``host`` (default ``https://api.mem0.ai``;
  ``MEM0_HOST`` or ``host`` points it at any server speaking the Platform API), with our own
  ``httpx.Client`` so every call has ``timeout`` seconds. Adds are asynchronous on the Platform
  (``{event_id, status: "PENDING"}``).
* ``selfhosted`` mode: the mem0 repository's FastAPI ``server/`` at ``host`` (``POST /memories``,
  ``POST /search``, ``PUT``/``DELETE /memories/{id}``, ``X-API-Key`` when a key is set), through
  ``httpx``, since ``MemoryClient`` insists on Token auth and ``/v1/ping/``. ``MEM0_HOST`` without
  ``MEM0_MODE`` selects this mode, as in the reference.
* ``oss`` mode: ``mem0.Memory.from_config`` in this process, from the ``oss`` block of
  settings (``vector_store`` / ``embedder`` / ``llm``, mem0's own format). The
  ``Memory`` object is cached per configuration for the whole process, because embedded Qdrant
  allows one client per path (reference issue #58705).

Tools (4): ``mem0_search``, ``mem0_add`` (stored verbatim, ``infer=False``), ``mem0_update``,
``mem0_delete``. Hooks: ``on_turn_start`` starts a search for the message in the background,
``prefetch`` takes it (or searches, bounded by ``timeout``) and returns ``## Mem0 Memory`` bullets,
``sync_turn`` adds the user and assistant messages (each cut to its last sentence boundary within
``sync_max_chars``). Only the primary agent context writes. A circuit breaker pauses calls for
120 s after 5 consecutive failures (client errors such as "not found" do not count).

Configuration: ``MEM0_API_KEY`` (secret, in ``$HERMES_HOME/.env``), ``MEM0_HOST``, ``MEM0_MODE``,
``MEM0_USER_ID``, ``MEM0_AGENT_ID``, then the ``mem0:`` section of ``config.yaml`` (written by
``memory setup``) and the reference's ``$HERMES_HOME/mem0.json``; file keys win over the environment,
as in the reference.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import re
import threading
import time
from pathlib import Path
from typing import Any

from hermes_memory.config import home_env, provider_section, read_json_settings
from hermes_memory.home import resolve_home
from hermes_memory.providers.base import (
    ConfigField,
    MemoryProvider,
    is_trivial_prompt,
    non_ascii_problem,
    number_arg,
    path_segment,
    sdk_problem,
)

log = logging.getLogger(__name__)

DEFAULTS: dict[str, Any] = {
    "mode": "platform",
    "host": "",
    "user_id": "",
    "agent_id": "hermes",
    "rerank": False,
    "sync_max_chars": 450,  # reference default, sized for 512-token embedders
    "sync_infer": True,
    "timeout": 10.0,  # seconds per call (ours; the SDK's own default is 300 s)
    "prefetch_top_k": 5,
    "oss": {},
}
BREAKER_THRESHOLD = 5  # consecutive failures before pausing (reference)
BREAKER_PAUSE_S = 120.0
DEFAULT_USER = "hermes-user"  # the reference's fallback user id; counts as "unset"
_CLIENT_ERROR = re.compile(r"not found|valid uuid|404", re.IGNORECASE)

_OSS_CACHE: dict[str, Any] = {}
_OSS_LOCK = threading.Lock()


@atexit.register
def _close_oss_memories() -> None:
    """Close the cached in-process stores at exit (embedded Qdrant releases its lock; reference)."""
    with _OSS_LOCK:
        memories = list(_OSS_CACHE.values())
        _OSS_CACHE.clear()
    for memory in memories:
        close = getattr(getattr(getattr(memory, "vector_store", None), "client", None), "close", None)
        if callable(close):
            try:
                close()
            except Exception as exc:  # exiting anyway: report, do not raise
                log.debug("mem0: closing the vector store failed: %s", exc)


def _home(hermes_home: str | os.PathLike[str] | None = None) -> Path:
    return Path(hermes_home) if hermes_home else resolve_home()


def file_settings(home: Path) -> dict[str, Any]:
    """Settings from files: ``$HERMES_HOME/mem0.json`` (the reference agent's file, still honoured) overlaid
    by its ``config.yaml`` sections (``mem0:``, then ``memory.mem0:``). Empty values (``None``, ``""``) are dropped."""
    merged = {**read_json_settings(home / "mem0.json"), **provider_section(home, "mem0")}
    return {k: v for k, v in merged.items() if v not in (None, "")}


def load_settings(hermes_home: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Resolved settings: defaults < environment < files (:func:`file_settings`). Never touches the network.

    The API key is read from ``MEM0_API_KEY`` (process environment, then ``$HERMES_HOME/.env``) and
    returned under ``api_key``.
    """
    home = _home(hermes_home)
    out = dict(DEFAULTS)
    for key, var in (("host", "MEM0_HOST"), ("mode", "MEM0_MODE"), ("user_id", "MEM0_USER_ID"),
                     ("agent_id", "MEM0_AGENT_ID")):
        if value := home_env(var, home):
            out[key] = value
    if home_env("MEM0_HOST", home) and not home_env("MEM0_MODE", home):
        out["mode"] = "selfhosted"  # the reference: a host means the self-hosted server
    out.update(file_settings(home))
    out["api_key"] = home_env("MEM0_API_KEY", home)
    out["mode"] = str(out.get("mode") or "platform").lower()
    return out


def _cut(text: str, limit: int) -> str:
    """``text`` cut to its last sentence boundary within ``limit`` chars (hard cut if none)."""
    text = (text or "").strip()
    if limit <= 0 or len(text) <= limit:
        return text
    head = text[:limit]
    ends = [m.end() for m in re.finditer(r"[.!?](\s|$)", head)]
    return head[: ends[-1]].strip() if ends else head


def _import_mem0(home: Path) -> Any:
    """Import ``mem0`` with telemetry off and its state folder inside the data home."""
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    os.environ.setdefault("MEM0_DIR", str(home / "mem0"))
    import mem0

    return mem0


class _PlatformBackend:
    """``mem0.MemoryClient`` with a bounded ``httpx`` client (the SDK pings ``/v1/ping/`` on creation)."""

    label = "platform"

    def __init__(self, settings: dict[str, Any], home: Path) -> None:
        import httpx

        mem0 = _import_mem0(home)
        self._http = httpx.Client(timeout=float(settings["timeout"]))
        self.client = mem0.MemoryClient(api_key=settings["api_key"], host=settings["host"] or None,
                                        client=self._http)

    def add(self, messages: list[dict[str, str]], *, user_id: str, agent_id: str, infer: bool,
            metadata: dict[str, Any]) -> dict[str, Any]:
        return self.client.add(messages, user_id=user_id, agent_id=agent_id, infer=infer, metadata=metadata)

    def search(self, query: str, *, user_id: str, top_k: int, rerank: bool) -> list[dict[str, Any]]:
        out = self.client.search(query, filters={"user_id": user_id}, top_k=top_k, rerank=rerank)
        return out.get("results", []) if isinstance(out, dict) else list(out or [])

    def update(self, memory_id: str, text: str) -> Any:
        return self.client.update(memory_id, text=text)

    def delete(self, memory_id: str) -> Any:
        return self.client.delete(memory_id)

    def close(self) -> None:
        self._http.close()


class _SelfHostedBackend:
    """The mem0 repository's FastAPI server (``server/main.py``) over ``httpx``."""

    label = "selfhosted"

    def __init__(self, settings: dict[str, Any], home: Path) -> None:
        import httpx

        if not settings.get("host"):
            raise RuntimeError("mem0 selfhosted mode needs 'host' (MEM0_HOST), the server's base URL")
        headers = {"X-API-Key": settings["api_key"]} if settings.get("api_key") else {}
        self._http = httpx.Client(base_url=str(settings["host"]).rstrip("/"), headers=headers,
                                  timeout=float(settings["timeout"]))

    def _req(self, method: str, path: str, body: Any = None) -> Any:
        resp = self._http.request(method, path, json=body)
        if resp.status_code >= 400:
            try:
                detail = resp.json().get("detail", resp.text)
            except ValueError:
                detail = resp.text
            raise RuntimeError(f"HTTP {resp.status_code} from {method} {path}: {str(detail)[:300]}")
        return resp.json() if resp.content else {}

    def add(self, messages: list[dict[str, str]], *, user_id: str, agent_id: str, infer: bool,
            metadata: dict[str, Any]) -> dict[str, Any]:
        return self._req("POST", "/memories", {"messages": messages, "user_id": user_id, "agent_id": agent_id,
                                               "infer": infer, "metadata": metadata})

    def search(self, query: str, *, user_id: str, top_k: int, rerank: bool) -> list[dict[str, Any]]:
        out = self._req("POST", "/search", {"query": query, "top_k": top_k, "filters": {"user_id": user_id}})
        return out.get("results", []) if isinstance(out, dict) else list(out or [])

    def update(self, memory_id: str, text: str) -> Any:
        return self._req("PUT", f"/memories/{path_segment(memory_id)}", {"text": text})

    def delete(self, memory_id: str) -> Any:
        return self._req("DELETE", f"/memories/{path_segment(memory_id)}")

    def close(self) -> None:
        self._http.close()


def _bounded(fn: Any, timeout: float, what: str) -> Any:
    """Run ``fn()`` in a daemon thread and wait at most ``timeout`` seconds.

    mem0's in-process ``Memory`` calls its embedder and LLM clients without a deadline of ours, so
    the wait is bounded here; on timeout :class:`TimeoutError` is raised and the call finishes (or
    not) in the background.
    """
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the caller below
            box["error"] = exc

    thread = threading.Thread(target=run, name=f"mem0-oss-{what}", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise TimeoutError(f"mem0 {what} did not finish within {timeout:g}s")
    if "error" in box:
        raise box["error"]
    return box.get("value")


class _OSSBackend:
    """``mem0.Memory`` in this process, one instance per configuration (embedded Qdrant locks its path).

    Every call is bounded by ``timeout`` seconds (see :func:`_bounded`).
    """

    label = "oss"

    def __init__(self, settings: dict[str, Any], home: Path) -> None:
        self.timeout = float(settings["timeout"])
        mem0 = _import_mem0(home)
        cfg = json.loads(json.dumps(settings.get("oss") or {}))
        (home / "mem0").mkdir(parents=True, exist_ok=True)
        cfg.setdefault("history_db_path", str(home / "mem0" / "history.db"))
        vs = cfg.get("vector_store") or {}
        if vs.get("provider", "qdrant") == "qdrant":
            vs.setdefault("provider", "qdrant")
            vs.setdefault("config", {}).setdefault("path", str(home / "mem0" / "qdrant"))
            cfg["vector_store"] = vs
        key = json.dumps(cfg, sort_keys=True)
        with _OSS_LOCK:
            if key not in _OSS_CACHE:
                _OSS_CACHE[key] = mem0.Memory.from_config(cfg)
            self.memory = _OSS_CACHE[key]

    def add(self, messages: list[dict[str, str]], *, user_id: str, agent_id: str, infer: bool,
            metadata: dict[str, Any]) -> dict[str, Any]:
        return _bounded(lambda: self.memory.add(messages, user_id=user_id, agent_id=agent_id, infer=infer,
                                                metadata=metadata), self.timeout, "add")

    def search(self, query: str, *, user_id: str, top_k: int, rerank: bool) -> list[dict[str, Any]]:
        out = _bounded(lambda: self.memory.search(query, filters={"user_id": user_id}, top_k=top_k),
                       self.timeout, "search")
        return out.get("results", []) if isinstance(out, dict) else list(out or [])

    def update(self, memory_id: str, text: str) -> Any:
        return _bounded(lambda: self.memory.update(memory_id, text), self.timeout, "update")

    def delete(self, memory_id: str) -> Any:
        return _bounded(lambda: self.memory.delete(memory_id), self.timeout, "delete")

    def close(self) -> None:
        """The cached ``Memory`` stays open for the process (see class docstring)."""


class Mem0Provider(MemoryProvider):
    """Mem0 (Platform API or open-source library). See the module docstring for behaviour."""

    def __init__(self, hermes_home: str | os.PathLike[str] | None = None) -> None:
        """``hermes_home`` is the data home used by :meth:`is_available` before :meth:`initialize`
        (default: ``$HERMES_HOME``, else ``~/.hermes``)."""
        self.settings: dict[str, Any] = {}
        self.home: Path | None = Path(hermes_home) if hermes_home else None
        self.session_id = ""
        self.agent_context = "primary"
        self.platform = "cli"
        self.user_id = DEFAULT_USER
        self._backend: _PlatformBackend | _SelfHostedBackend | _OSSBackend | None = None
        self._backend_lock = threading.Lock()
        self._failures = 0
        self._paused_until = 0.0
        self._search_job: tuple[str, threading.Thread, dict[str, Any]] | None = None
        self._last_recall: dict[str, Any] | None = None

    # -- required ------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return "mem0"

    def is_available(self) -> bool:
        return not self.unavailable_reason()

    def unavailable_reason(self) -> str:
        if problem := sdk_problem("mem0ai", 2):
            return problem
        s = load_settings(self.home)
        if s["mode"] == "oss":
            if not (s.get("oss") or {}).get("vector_store"):
                return "mem0 oss mode needs an 'oss.vector_store' block in the mem0: section of config.yaml"
            return ""
        if s["mode"] == "selfhosted":
            return "" if s.get("host") else "mem0 selfhosted mode needs 'host' (MEM0_HOST), the server's base URL"
        if s["mode"] != "platform":
            return f"mem0 mode {s['mode']!r} is not one of platform, selfhosted, oss"
        if not s["api_key"]:
            return "MEM0_API_KEY is not set: run 'hermes-memory memory setup --provider mem0'"
        return non_ascii_problem("MEM0_API_KEY", s["api_key"])

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self.home = _home(kwargs.get("hermes_home") or self.home)
        self.settings = load_settings(self.home)
        self.session_id = session_id
        self.agent_context = kwargs.get("agent_context") or "primary"
        self.platform = kwargs.get("platform") or "cli"
        configured = str(self.settings.get("user_id") or "")
        if configured and configured != DEFAULT_USER:
            self.user_id = configured
        else:
            self.user_id = str(kwargs.get("user_id") or DEFAULT_USER)
        self._failures = 0
        self._paused_until = 0.0

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [
            {"name": "mem0_search",
             "description": "Search Mem0 long-term memory about the user. Use before answering questions "
                            "that may depend on earlier conversations.",
             "parameters": {"type": "object", "properties": {
                 "query": {"type": "string", "description": "What to look for."},
                 "top_k": {"type": "integer", "description": "Results to return (default 10, max 50).",
                           "minimum": 1, "maximum": 50},
                 "rerank": {"type": "boolean", "description": "Rerank results (Platform only)."}},
                 "required": ["query"]}},
            {"name": "mem0_add",
             "description": "Store one fact about the user in Mem0, verbatim.",
             "parameters": {"type": "object", "properties": {
                 "content": {"type": "string", "description": "The fact to remember."}},
                 "required": ["content"]}},
            {"name": "mem0_update",
             "description": "Replace the text of a Mem0 memory (ids come from mem0_search).",
             "parameters": {"type": "object", "properties": {
                 "memory_id": {"type": "string"}, "text": {"type": "string"}},
                 "required": ["memory_id", "text"]}},
            {"name": "mem0_delete",
             "description": "Delete a Mem0 memory by id (ids come from mem0_search).",
             "parameters": {"type": "object", "properties": {"memory_id": {"type": "string"}},
                            "required": ["memory_id"]}},
        ]

    # -- backend, breaker ----------------------------------------------------------------------------
    def _get_backend(self) -> _PlatformBackend | _SelfHostedBackend | _OSSBackend:
        with self._backend_lock:
            if self._backend is None:
                home = self.home or _home()
                if self.settings.get("mode") == "oss":
                    self._backend = _OSSBackend(self.settings, home)
                elif self.settings.get("mode") == "selfhosted":
                    self._backend = _SelfHostedBackend(self.settings, home)
                else:
                    self._backend = _PlatformBackend(self.settings, home)
            return self._backend

    def _call(self, op: str, fn: Any) -> Any:
        """Run ``fn(backend)`` under the breaker; raises ``RuntimeError`` with a readable message."""
        now = time.monotonic()
        if now < self._paused_until:
            raise RuntimeError(f"mem0 is paused for {self._paused_until - now:.0f}s after "
                               f"{BREAKER_THRESHOLD} consecutive failures")
        try:
            result = fn(self._get_backend())
        except Exception as exc:
            message = _describe(exc)
            if op == "add" or not _CLIENT_ERROR.search(message):
                self._failures += 1
                if self._failures >= BREAKER_THRESHOLD:
                    self._paused_until = time.monotonic() + BREAKER_PAUSE_S
                    log.warning("mem0: %d consecutive failures, pausing for %.0fs", self._failures, BREAKER_PAUSE_S)
            raise RuntimeError(f"mem0 {op} failed: {message}") from exc
        self._failures = 0
        return result

    def _search(self, query: str, top_k: int, rerank: bool | None = None) -> list[dict[str, Any]]:
        rr = bool(self.settings.get("rerank") if rerank is None else rerank)
        return self._call("search", lambda b: b.search(query, user_id=self.user_id, top_k=top_k, rerank=rr))

    # -- prompt, recall --------------------------------------------------------------------------
    def system_prompt_block(self) -> str:
        mode = {"oss": "Mem0 (local)", "selfhosted": "Mem0 (self-hosted)"}.get(str(self.settings.get("mode")),
                                                                              "Mem0 Platform")
        return (f"# External memory: {mode}\nLong-term memory for user '{self.user_id}'. Search it with "
                "mem0_search before answering questions that may depend on earlier conversations; store "
                "durable facts with mem0_add.")

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        if is_trivial_prompt(message):
            return
        box: dict[str, Any] = {}

        def run() -> None:
            try:
                box["results"] = self._search(message, int(self.settings["prefetch_top_k"]))
            except Exception as exc:  # recorded, served as "" by prefetch
                box["error"] = str(exc)

        thread = threading.Thread(target=run, name="mem0-prefetch", daemon=True)
        self._search_job = (message, thread, box)
        thread.start()

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        if is_trivial_prompt(query):
            return ""
        job, self._search_job = self._search_job, None
        if job is not None and job[0] == query:
            job[1].join(float(self.settings.get("timeout", 10.0)))
            box = job[2]
            if job[1].is_alive():
                box = {"error": "mem0 search timed out"}
        else:
            box = {}
            try:
                box["results"] = self._search(query, int(self.settings.get("prefetch_top_k", 5)))
            except Exception as exc:
                box["error"] = str(exc)
        if "error" in box:
            self._last_recall = {"ok": False, "error": box["error"]}
            log.warning("mem0 prefetch failed: %s", box["error"])
            return ""
        lines = [f"- {r.get('memory', '')}" for r in box.get("results", []) if r.get("memory")]
        self._last_recall = {"ok": True, "count": len(lines)}
        return "## Mem0 Memory\n" + "\n".join(lines) if lines else ""

    def recall_status(self) -> dict[str, Any] | None:
        return self._last_recall

    # -- writes ---------------------------------------------------------------------------------
    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: list[dict[str, Any]] | None = None) -> None:
        if not self.writes_allowed(self.agent_context):
            return
        limit = int(self.settings.get("sync_max_chars", 450))
        msgs = [{"role": "user", "content": _cut(user_content, limit)},
                {"role": "assistant", "content": _cut(assistant_content, limit)}]
        msgs = [m for m in msgs if m["content"]]
        if not msgs:
            return
        meta = {"channel": self.platform, "session_id": session_id or self.session_id}
        try:
            self._call("add", lambda b: b.add(msgs, user_id=self.user_id, agent_id=str(self.settings["agent_id"]),
                                              infer=bool(self.settings.get("sync_infer", True)), metadata=meta))
        except Exception as exc:
            log.warning("mem0 sync_turn failed: %s", exc)

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "", reset: bool = False,
                          rewound: bool = False, **kwargs: Any) -> None:
        self.session_id = new_session_id
        self._search_job = None

    # -- tools ----------------------------------------------------------------------------------
    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        args = args or {}
        try:
            if tool_name == "mem0_search":
                query = str(args.get("query") or "").strip()
                if not query:
                    return self.tool_error("query is required")
                top_k = max(1, min(number_arg(args, "top_k", 10), 50))
                hits = self._search(query, top_k, args.get("rerank"))
                results = [{"id": h.get("id"), "memory": h.get("memory"), "score": h.get("score")} for h in hits]
                if not results:
                    return self.tool_result({"results": [], "count": 0, "message": "No relevant memories found."})
                return self.tool_result({"results": results, "count": len(results)})
            if tool_name in ("mem0_add", "mem0_update", "mem0_delete") and not self.writes_allowed(self.agent_context):
                return self.tool_error(f"{tool_name} is disabled in the {self.agent_context!r} agent context; "
                                       "only the primary agent writes to Mem0")
            if tool_name == "mem0_add":
                content = str(args.get("content") or "").strip()
                if not content:
                    return self.tool_error("content is required")
                out = self._call("add", lambda b: b.add([{"role": "user", "content": content}], user_id=self.user_id,
                                                        agent_id=str(self.settings["agent_id"]), infer=False,
                                                        metadata={"channel": self.platform}))
                if isinstance(out, dict) and out.get("event_id"):
                    return self.tool_result({"result": "Fact queued for storage.", "event_id": out["event_id"]})
                return self.tool_result({"result": "Fact stored."})
            if tool_name == "mem0_update":
                mid, text = str(args.get("memory_id") or ""), str(args.get("text") or "").strip()
                if not mid or not text:
                    return self.tool_error("memory_id and text are required")
                self._call("update", lambda b: b.update(mid, text))
                return self.tool_result({"result": "Memory updated.", "memory_id": mid})
            if tool_name == "mem0_delete":
                mid = str(args.get("memory_id") or "")
                if not mid:
                    return self.tool_error("memory_id is required")
                self._call("delete", lambda b: b.delete(mid))
                return self.tool_result({"result": "Memory deleted.", "memory_id": mid})
        except Exception as exc:
            return self.tool_error(str(exc))
        return self.tool_error(f"unknown tool {tool_name!r} for provider mem0")

    # -- setup, lifecycle -----------------------------------------------------------------------
    def get_config_schema(self) -> list[ConfigField]:
        return [
            ConfigField("api_key", "Mem0 Platform API key (platform mode only)", secret=True,
                        env_var="MEM0_API_KEY", url="https://app.mem0.ai/dashboard/api-keys",
                        required_when=("mode", ("platform",))),
            ConfigField("mode", "platform (Mem0 cloud API), selfhosted (mem0 server) or oss (library in process)",
                        default="platform", choices=("platform", "selfhosted", "oss")),
            ConfigField("host", "Server base URL (platform: blank = https://api.mem0.ai; selfhosted: required)",
                        default="", env_var="MEM0_HOST", required_when=("mode", ("selfhosted",))),
            ConfigField("user_id", "User id memories are stored under (blank = gateway user, else hermes-user)",
                        default=""),
            ConfigField("agent_id", "Agent id sent with each add", default="hermes"),
            ConfigField("rerank", "Rerank search results (Platform only)", default=False, type="bool"),
            ConfigField("sync_infer", "Let Mem0 extract facts from each turn with its LLM", default=True, type="bool"),
            ConfigField("sync_max_chars", "Max chars per synced message", default=450, type="int"),
            ConfigField("timeout", "Seconds per Mem0 call", default=10.0, type="float"),
        ]


    def backup_paths(self) -> list[str]:
        home = self.home or _home()
        return [str(home / "mem0.json")] if (home / "mem0.json").exists() else []

    def shutdown(self) -> None:
        job, self._search_job = self._search_job, None
        if job is not None:
            job[1].join(float(self.settings.get("timeout", 10.0)))
        with self._backend_lock:
            backend, self._backend = self._backend, None
        if backend is not None:
            backend.close()


def _describe(exc: BaseException) -> str:
    """One-line description of an SDK/HTTP failure (status and server message where present)."""
    parts = [type(exc).__name__]
    text = str(exc).strip()
    if text:
        parts.append(text[:300])
    return ": ".join(parts)


def register(ctx: Any) -> None:
    """Plugin entry point: register the provider with the discovery collector (its ``hermes_home``, if any)."""
    ctx.register_memory_provider(Mem0Provider(hermes_home=getattr(ctx, "hermes_home", None)))
