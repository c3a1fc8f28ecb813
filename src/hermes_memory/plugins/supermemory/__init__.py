"""Supermemory provider, built on the official ``supermemory`` SDK (3.x, the v3/v4 REST API).

Behaviour follows the reference plugin (docs/providers.md §6):

* Tools (4, each also under a kebab-case alias, so 8 schemas): ``supermemory_store``
  (alias ``supermemory-save``), ``supermemory_search``, ``supermemory_forget``,
  ``supermemory_profile``. With ``enable_custom_container_tags`` every tool also takes
  ``container_tag``, checked against ``custom_containers``.
* ``prefetch`` asks ``POST /v4/profile`` synchronously (query cut to 200 chars); static and dynamic
  profile facts are included on turn <= 1 and every ``profile_frequency``-th turn; search hits carry
  their age and similarity; the whole block is wrapped in ``<supermemory-context>``.
* ``sync_turn`` only buffers the turn (with any injected context blocks stripped);
  ``on_session_end`` sends the whole cleaned conversation as one document through
  ``POST /v4/conversations``; ``on_session_switch`` flushes the buffer as a ``partial`` document of
  the old session and moves writes to the new one; ``on_memory_write`` mirrors built-in ``add``
  writes; ``shutdown`` flushes what is still buffered.
* Writes are disabled outside the primary agent context (cron, flush, subagent).

Configuration: ``SUPERMEMORY_API_KEY`` (secret), ``SUPERMEMORY_BASE_URL``,
``SUPERMEMORY_CONTAINER_TAG``, then the ``supermemory:`` section of ``config.yaml`` and the
reference's ``$HERMES_HOME/supermemory.json`` (keys and ranges below; file values win over the
environment). Every call has ``api_timeout`` seconds and no retries.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from datetime import UTC, datetime
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
    sdk_problem,
)

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.supermemory.ai"
DEFAULT_ENTITY_CONTEXT = (
    "This is a conversation between a user and an AI assistant. Extract durable facts about the user: "
    "preferences, decisions, projects, people and plans. Ignore small talk and the assistant's own text.")
DEFAULTS: dict[str, Any] = {
    "container_tag": "hermes",
    "auto_recall": True,
    "auto_capture": True,
    "max_recall_results": 10,
    "profile_frequency": 50,
    "capture_mode": "all",
    "search_mode": "hybrid",
    "entity_context": DEFAULT_ENTITY_CONTEXT,
    "api_timeout": 5.0,
    "base_url": DEFAULT_BASE_URL,
    "enable_custom_container_tags": False,
    "custom_containers": [],
    "custom_container_instructions": "",
}
# (min, max) of numeric settings, from the reference; values outside are clamped.
RANGES = {"max_recall_results": (1, 20), "profile_frequency": (1, 500), "api_timeout": (0.5, 15.0)}
SEARCH_MODES = ("hybrid", "memories", "documents")
_CONTEXT_BLOCK = re.compile(r"<(supermemory-context|memory-context)>.*?</\1>\s*", re.DOTALL)
_CATEGORIES = (
    ("preference", re.compile(r"\b(prefer|like|love|hate|dislike|favou?rite|enjoy)\w*\b", re.I)),
    ("decision", re.compile(r"\b(decid|chose|choose|going to|will use|settled on|picked)\w*\b", re.I)),
    ("fact", re.compile(r"\b(is|are|was|has|have|lives?|works?|born)\b", re.I)),
)
ALIASES = {"supermemory-save": "supermemory_store", "supermemory-search": "supermemory_search",
           "supermemory-forget": "supermemory_forget", "supermemory-profile": "supermemory_profile"}


def _home(hermes_home: str | os.PathLike[str] | None = None) -> Path:
    return Path(hermes_home) if hermes_home else resolve_home()


def file_settings(home: Path) -> dict[str, Any]:
    """Settings from files: ``$HERMES_HOME/supermemory.json`` (the reference agent's file, still honoured) overlaid
    by its ``config.yaml`` sections (``supermemory:``, then ``memory.supermemory:``). Empty values (``None``, ``""``) are dropped."""
    merged = {**read_json_settings(home / "supermemory.json"), **provider_section(home, "supermemory")}
    return {k: v for k, v in merged.items() if v not in (None, "")}


def sanitize_tag(tag: str) -> str:
    """Container tags keep ``[A-Za-z0-9_]``; anything else becomes ``_`` (reference)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", tag.strip())[:100]


def load_settings(hermes_home: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Defaults < environment < files (:func:`file_settings`), numbers clamped to their ranges. No network."""
    home = _home(hermes_home)
    out = dict(DEFAULTS)
    if url := home_env("SUPERMEMORY_BASE_URL", home):
        out["base_url"] = url
    if tag := home_env("SUPERMEMORY_CONTAINER_TAG", home):
        out["container_tag"] = tag
    out.update(file_settings(home))
    for key, (lo, hi) in RANGES.items():
        kind = float if isinstance(DEFAULTS[key], float) else int
        try:
            out[key] = kind(min(max(kind(out[key]), lo), hi))
        except (TypeError, ValueError):
            out[key] = DEFAULTS[key]
    out["entity_context"] = str(out.get("entity_context") or DEFAULT_ENTITY_CONTEXT)[:1500]
    out["api_key"] = home_env("SUPERMEMORY_API_KEY", home)
    return out


def detect_category(text: str) -> str:
    """``preference`` / ``decision`` / ``fact`` / ``other`` by keyword (the store tool's default ``type``)."""
    for label, pattern in _CATEGORIES:
        if pattern.search(text):
            return label
    return "other"


def _age(stamp: str | None, now: datetime | None = None) -> str:
    if not stamp:
        return ""
    try:
        when = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    except ValueError:
        return ""
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    seconds = max(0, int(((now or datetime.now(UTC)) - when).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return "just now"


def _pct(similarity: Any) -> int | None:
    try:
        value = float(similarity)
    except (TypeError, ValueError):
        return None
    return round(value * 100) if value <= 1 else round(value)


class SupermemoryProvider(MemoryProvider):
    """Supermemory (cloud API through the official SDK). See the module docstring for behaviour."""

    def __init__(self, hermes_home: str | os.PathLike[str] | None = None) -> None:
        """``hermes_home`` is the data home used by :meth:`is_available` before :meth:`initialize`
        (default: ``$HERMES_HOME``, else ``~/.hermes``)."""
        self.settings: dict[str, Any] = {}
        self.home: Path | None = Path(hermes_home) if hermes_home else None
        self.session_id = ""
        self.agent_context = "primary"
        self.container_tag = "hermes"
        self.turn = 0
        self._client: Any = None
        self._buffer: list[dict[str, str]] = []
        self._buffer_lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._last_recall: dict[str, Any] | None = None

    # -- required ------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return "supermemory"

    def is_available(self) -> bool:
        return not self.unavailable_reason()

    def unavailable_reason(self) -> str:
        if problem := sdk_problem("supermemory", 3):
            return problem
        s = load_settings(self.home)
        if not s["api_key"]:
            return "SUPERMEMORY_API_KEY is not set: run 'hermes-memory memory setup --provider supermemory'"
        if problem := non_ascii_problem("SUPERMEMORY_API_KEY", s["api_key"]):
            return problem
        if str(s["container_tag"]).strip().lower() in ("default", "__default__"):
            return ("container_tag 'default' would be a literal tag split away from the default space "
                    "(reference issue #27226): choose another container_tag")
        return ""

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self.home = _home(kwargs.get("hermes_home") or self.home)
        self.settings = load_settings(self.home)
        self.session_id = session_id
        self.agent_context = kwargs.get("agent_context") or "primary"
        identity = str(kwargs.get("agent_identity") or "hermes")
        self.container_tag = sanitize_tag(str(self.settings["container_tag"]).replace("{identity}", identity)) \
            or "hermes"
        self.turn = 0
        self._buffer = []
        self._client = None

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        extra: dict[str, Any] = {}
        if self.settings.get("enable_custom_container_tags"):
            allowed = [self.container_tag, *[sanitize_tag(str(c)) for c in self.settings.get("custom_containers", [])]]
            extra = {"container_tag": {"type": "string", "enum": allowed,
                                       "description": "Container to use (default: the primary one). "
                                                      + str(self.settings.get("custom_container_instructions", ""))}}
        base: list[tuple[str, str, dict[str, Any], list[str]]] = [
            ("supermemory_store", "Save a durable fact or note to Supermemory.",
             {"content": {"type": "string"}, "metadata": {"type": "object", "description": "Optional metadata; "
                                                          "'type' defaults to a detected category."}}, ["content"]),
            ("supermemory_search", "Search Supermemory for relevant memories.",
             {"query": {"type": "string"}, "limit": {"type": "integer", "minimum": 1, "maximum": 20}}, ["query"]),
            ("supermemory_forget", "Forget a memory by id, or the best match for a query.",
             {"id": {"type": "string"}, "query": {"type": "string"}}, []),
            ("supermemory_profile", "The user's profile: static and dynamic facts, optionally with search hits.",
             {"query": {"type": "string"}}, []),
        ]
        schemas: list[dict[str, Any]] = [{"name": n, "description": d, "parameters": {"type": "object", "properties": {**p, **extra},
                                                                  "required": r}} for n, d, p, r in base]
        by_name = {s["name"]: s for s in schemas}
        aliases = [{**by_name[target], "name": alias, "description": by_name[target]["description"]
                    + f" (alias of {target})"} for alias, target in ALIASES.items()]
        return schemas + aliases

    # -- client ---------------------------------------------------------------------------------
    @property
    def client(self) -> Any:
        if self._client is None:
            from supermemory import Supermemory

            self._client = Supermemory(api_key=self.settings.get("api_key") or "missing",
                                       base_url=str(self.settings.get("base_url") or DEFAULT_BASE_URL),
                                       timeout=float(self.settings.get("api_timeout", 5.0)), max_retries=0,
                                       default_headers={"x-sm-source": "hermes"})
        return self._client

    def _writes_ok(self) -> bool:
        return self.writes_allowed(self.agent_context)

    def _tag_for(self, args: dict[str, Any]) -> str:
        requested = args.get("container_tag")
        if not requested or not self.settings.get("enable_custom_container_tags"):
            return self.container_tag
        tag = sanitize_tag(str(requested))
        allowed = {self.container_tag, *[sanitize_tag(str(c)) for c in self.settings.get("custom_containers", [])]}
        if tag not in allowed:
            raise ValueError(f"container_tag {requested!r} is not allowed; use one of {', '.join(sorted(allowed))}")
        return tag

    # -- tools ------------------------------------------------------------------------------------
    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        args = args or {}
        name = ALIASES.get(tool_name, tool_name)
        try:
            tag = self._tag_for(args)
            if name in ("supermemory_store", "supermemory_forget") and not self._writes_ok():
                return self.tool_error(f"{tool_name} is disabled in the {self.agent_context!r} agent context; "
                                       "only the primary agent writes to Supermemory")
            if name == "supermemory_store":
                return self._store(args, tag)
            if name == "supermemory_search":
                query = str(args.get("query") or "").strip()
                if not query:
                    return self.tool_error("query is required")
                limit = max(1, min(number_arg(args, "limit", 5) or 5, 20))
                results = self._search(query, tag, limit)
                return self.tool_result({"results": results, "count": len(results)})
            if name == "supermemory_forget":
                return self._forget(args, tag)
            if name == "supermemory_profile":
                query = str(args.get("query") or "").strip()
                resp = self.client.profile(container_tag=tag, **({"q": query[:200]} if query else {}))
                static, dynamic = _profile_lists(resp)
                return self.tool_result({"profile": _profile_markdown(static, dynamic), "static_count": len(static),
                                         "dynamic_count": len(dynamic)})
        except ValueError as exc:
            return self.tool_error(str(exc))
        except Exception as exc:
            return self.tool_error(f"supermemory: {_describe(exc)}")
        return self.tool_error(f"unknown tool {tool_name!r} for provider supermemory")

    def _store(self, args: dict[str, Any], tag: str) -> str:
        content = str(args.get("content") or "").strip()
        if not content:
            return self.tool_error("content is required")
        metadata = dict(args.get("metadata") or {}) if isinstance(args.get("metadata"), dict) else {}
        metadata.pop("source", None)
        metadata.setdefault("type", detect_category(content))
        metadata = {k: v for k, v in metadata.items() if isinstance(v, str | int | float | bool)}
        resp = self.client.documents.add(content=content, container_tags=[tag], metadata=metadata,
                                         entity_context=self.settings["entity_context"])
        preview = content if len(content) <= 80 else content[:77] + "..."
        return self.tool_result({"saved": True, "id": getattr(resp, "id", None), "preview": preview})

    def _search(self, query: str, tag: str, limit: int) -> list[dict[str, Any]]:
        mode = str(self.settings.get("search_mode", "hybrid"))
        resp = self.client.search.memories(q=query, container_tag=tag, limit=limit,
                                           search_mode=mode if mode in SEARCH_MODES else "hybrid")
        out = []
        for r in getattr(resp, "results", None) or []:
            text = getattr(r, "memory", None) or getattr(r, "chunk", None) or ""
            out.append({"id": r.id, "content": text, "similarity": _pct(getattr(r, "similarity", None))})
        return out

    def _forget(self, args: dict[str, Any], tag: str) -> str:
        mid = str(args.get("id") or "").strip()
        query = str(args.get("query") or "").strip()
        if not mid and not query:
            return self.tool_error("give id or query")
        if not mid:
            hits = self._search(query, tag, 5)
            if not hits:
                return self.tool_result({"success": False, "message": f"no memory matches {query!r}", "id": None})
            mid = hits[0]["id"]
        self.client.memories.forget(container_tag=tag, id=mid)
        return self.tool_result({"success": True, "message": "Memory forgotten.", "id": mid})

    # -- recall ---------------------------------------------------------------------------------------
    def system_prompt_block(self) -> str:
        return (f"# External memory: Supermemory (container '{self.container_tag}')\n"
                "Relevant memories are recalled automatically inside <supermemory-context>. Tools: "
                "supermemory_search, supermemory_store, supermemory_forget, supermemory_profile.")

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        self.turn = int(turn_number)

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        if not self.settings.get("auto_recall", True) or is_trivial_prompt(query):
            return ""
        try:
            resp = self.client.profile(container_tag=self.container_tag, q=query[:200])
        except Exception as exc:
            self._last_recall = {"ok": False, "error": _describe(exc)}
            log.warning("supermemory prefetch failed: %s", _describe(exc))
            return ""
        static, dynamic = _profile_lists(resp)
        freq = int(self.settings.get("profile_frequency", 50))
        lines: list[str] = []
        seen: set[str] = set()

        def add(line: str, key: str) -> None:
            if key.lower() not in seen:
                seen.add(key.lower())
                lines.append(line)

        if self.turn <= 1 or self.turn % freq == 0:
            if static or dynamic:
                lines.append("## User profile")
            for fact in static + dynamic:
                add(f"- {fact}", fact)
        hits = getattr(getattr(resp, "search_results", None), "results", None) or []
        hit_lines = []
        for h in hits[: int(self.settings.get("max_recall_results", 10))]:
            text = str(getattr(h, "memory", "") or "")
            if not text or text.lower() in seen:
                continue
            seen.add(text.lower())
            pct = _pct(getattr(h, "similarity", None))
            meta = [m for m in (_age(getattr(h, "updated_at", None)), f"{pct}%" if pct is not None else "") if m]
            hit_lines.append(f"- {text}" + (f" ({', '.join(meta)})" if meta else ""))
        if hit_lines:
            lines += ["## Relevant memories", *hit_lines]
        self._last_recall = {"ok": True, "count": len(lines)}
        return "<supermemory-context>\n" + "\n".join(lines) + "\n</supermemory-context>" if lines else ""

    def recall_status(self) -> dict[str, Any] | None:
        return self._last_recall

    # -- writes -----------------------------------------------------------------------------------------
    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: list[dict[str, Any]] | None = None) -> None:
        if not self._writes_ok() or not self.settings.get("auto_capture", True):
            return
        user, assistant = _clean(user_content), _clean(assistant_content)
        with self._buffer_lock:
            if user:
                self._buffer.append({"role": "user", "content": user})
            if assistant:
                self._buffer.append({"role": "assistant", "content": assistant})

    def _send_conversation(self, session_id: str, messages: list[dict[str, str]], kind: str) -> None:
        body = {"conversationId": session_id or "hermes-session", "messages": messages,
                "containerTags": [self.container_tag],
                "metadata": {"sm_source": "hermes", "type": kind, "session_id": session_id,
                             "message_count": len(messages)}}
        self.client.post("/v4/conversations", body=body, cast_to=object)

    def _flush(self, kind: str) -> None:
        with self._buffer_lock:
            messages, self._buffer = self._buffer, []
        if not messages:
            return
        try:
            self._send_conversation(self.session_id, messages, kind)
        except Exception as exc:
            log.warning("supermemory: %s conversation flush failed: %s", kind, _describe(exc))

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        if not self._writes_ok() or not self.settings.get("auto_capture", True):
            return
        cleaned = [{"role": m["role"], "content": _clean(str(m.get("content") or ""))}
                   for m in messages or [] if isinstance(m, dict)
                   and m.get("role") in ("user", "assistant") and isinstance(m.get("content"), str)]
        cleaned = [m for m in cleaned if m["content"]]
        with self._buffer_lock:
            buffered, self._buffer = self._buffer, []
        conversation = cleaned or buffered
        if not any(m["role"] == "user" and not is_trivial_prompt(m["content"]) for m in conversation):
            return  # trivial session: nothing worth keeping (reference)
        try:
            self._send_conversation(self.session_id, conversation, "full_session")
        except Exception as exc:
            log.warning("supermemory: session ingest failed: %s", _describe(exc))

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "", reset: bool = False,
                          rewound: bool = False, **kwargs: Any) -> None:
        if self._writes_ok():
            self._flush("partial")
        self.session_id = new_session_id

    def on_memory_write(self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None) -> None:
        if action != "add" or not content or not self._writes_ok():
            return

        def run() -> None:
            try:
                self.client.documents.add(content=content, container_tags=[self.container_tag],
                                          metadata={"target": target, "type": "explicit_memory"})
            except Exception as exc:
                log.warning("supermemory: mirror of memory write failed: %s", _describe(exc))

        thread = threading.Thread(target=run, name="supermemory-memory-write")
        self._threads.append(thread)
        thread.start()

    # -- setup, lifecycle --------------------------------------------------------------------------------
    def get_config_schema(self) -> list[ConfigField]:
        return [
            ConfigField("api_key", "Supermemory API key", secret=True, required=True, env_var="SUPERMEMORY_API_KEY",
                        url="https://console.supermemory.ai"),
            ConfigField("container_tag", "Container tag ({identity} = agent identity)", default="hermes"),
            ConfigField("base_url", f"API base URL (blank = {DEFAULT_BASE_URL})", default=""),
            ConfigField("auto_recall", "Recall memories before each turn", default=True, type="bool"),
            ConfigField("auto_capture", "Store conversations at session end", default=True, type="bool"),
            ConfigField("max_recall_results", "Memories per recall (1-20)", default=10, type="int"),
            ConfigField("profile_frequency", "Include profile facts every N turns (1-500)", default=50, type="int"),
            ConfigField("search_mode", "Search mode", default="hybrid", choices=SEARCH_MODES),
            ConfigField("api_timeout", "Seconds per API call (0.5-15)", default=5.0, type="float"),
        ]


    def backup_paths(self) -> list[str]:
        path = (self.home or _home()) / "supermemory.json"
        return [str(path)] if path.exists() else []

    def shutdown(self) -> None:
        if self._writes_ok():
            self._flush("partial")
        timeout = float(self.settings.get("api_timeout", 5.0)) + 1.0
        for thread in self._threads:
            thread.join(timeout)
        self._threads = []
        if self._client is not None:
            self._client.close()
            self._client = None


def _clean(text: str) -> str:
    return _CONTEXT_BLOCK.sub("", text or "").strip()


def _profile_lists(resp: Any) -> tuple[list[str], list[str]]:
    profile = getattr(resp, "profile", None)
    static = [str(x) for x in (getattr(profile, "static", None) or [])]
    dynamic = [str(x) for x in (getattr(profile, "dynamic", None) or [])]
    return static, dynamic


def _profile_markdown(static: list[str], dynamic: list[str]) -> str:
    parts = []
    if static:
        parts.append("## Stable facts\n" + "\n".join(f"- {s}" for s in static))
    if dynamic:
        parts.append("## Recent context\n" + "\n".join(f"- {d}" for d in dynamic))
    return "\n\n".join(parts) or "No profile facts yet."


def _describe(exc: BaseException) -> str:
    status = getattr(exc, "status_code", None)
    name = type(exc).__name__
    if status is not None:
        body = getattr(exc, "body", None)
        message = body.get("message") or body.get("error") if isinstance(body, dict) else None
        return f"{name} (HTTP {status}): {message or exc}"
    if name == "APITimeoutError":
        return "request timed out"
    return f"{name}: {exc}"


def register(ctx: Any) -> None:
    """Plugin entry point: register the provider with the discovery collector (its ``hermes_home``, if any)."""
    ctx.register_memory_provider(SupermemoryProvider(hermes_home=getattr(ctx, "hermes_home", None)))
