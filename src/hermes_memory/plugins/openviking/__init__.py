"""OpenViking memory provider: a self-hosted context database (memories, resources, skills as ``viking://`` files).

Behaviour follows the reference plugin (docs/providers.md §8). Transport: ``httpx`` against OpenViking's documented
HTTP contract (docs/providers.md §8.4), like the reference plugin itself. The ``openviking`` PyPI package is the
*server* (with litellm, scrapy, tree-sitter, volcengine SDKs... and ``mcp<2``, which conflicts with this
project's ``mcp>=2``), so it is not imported here; the server runs as its own process.

Envelope: ``{"status": "ok", "result": ...}`` or ``{"status": "error", "error": {"code", "message"}}``.
Headers: ``X-API-Key`` + ``Authorization: Bearer`` with a key, else ``X-OpenViking-Account`` /
``X-OpenViking-User`` (also added on a "trusted mode" 400 retry), ``X-OpenViking-Actor-Peer`` when an agent
peer is set.

Tools (6): ``viking_search`` (fast: ``search/find``; deep: ``search/search`` with the session), ``viking_read``
(abstract 1200 / overview 4000 / full 8000 chars; 2500 per item when several are read in full),
``viking_browse`` (tree / list / stat, 50 entries), ``viking_remember`` (``content/write`` of a new
``.md`` memory file under the user's ``memories/``: the README revision of the reference, chosen because it
is searchable at once and needs no server-side LLM extraction), ``viking_forget`` (concrete ``.md`` user
memory files only), ``viking_add_resource`` (remote URL as ``path``; a local file or folder is uploaded
through ``resources/temp_upload`` first).

Hooks: ``prefetch`` (once per session the user's ``memories/profile.md``; for queries of 5+ chars a
``search/find`` recall within ``recall_timeout_seconds``, ranked by score with +0.12 for L2 leaves, up to
``recall_full_read_limit`` full reads, capped at ``recall_max_injected_chars``); ``sync_turn`` (the turn as
OpenViking parts to ``sessions/{sid}/messages/batch``, per-message fallback); ``on_session_end`` (commit
when the session had turns); ``on_session_switch`` (commit the old session, then write to the new one,
which is registered with ``POST /api/v1/sessions`` before its first message); ``on_memory_write`` (``add``
and ``replace`` become new memory files). Writes happen only in the primary agent context; no hook raises.

Configuration: ``config.yaml`` (section ``openviking:`` as the setup wizard writes it, or ``memory.openviking:``);
the environment wins (``OPENVIKING_URL`` /
``OPENVIKING_ENDPOINT``, ``OPENVIKING_API_KEY``, ``OPENVIKING_ACCOUNT``, ``OPENVIKING_USER``,
``OPENVIKING_AGENT``).
"""

from __future__ import annotations

import logging
import mimetypes
import os
import secrets
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from hermes_memory.config import provider_section, read_env_file
from hermes_memory.errors import ProviderError
from hermes_memory.home import resolve_home
from hermes_memory.providers.base import ConfigField, MemoryProvider, is_trivial_prompt

log = logging.getLogger(__name__)

NAME = "openviking"
VERSION = "0.1.0"
DEFAULT_ENDPOINT = "http://127.0.0.1:1933"   # openviking-server's default listen address
READ_CAPS = {"abstract": 1200, "overview": 4000, "full": 8000}   # chars per level (reference)
BATCH_FULL_CAP = 2500          # chars per item when several URIs are read in full (reference)
BROWSE_MAX = 50                # entries returned by viking_browse (reference)
MIN_RECALL_CHARS = 5           # shorter prompts are not recalled (reference)
L2_BONUS = 0.12                # ranking bonus of concrete L2 leaves over directory summaries (reference)
BATCH_SIZE = 100               # messages per messages/batch request (reference)
PLAIN_PART_CHARS = 4000        # per side, plain-text fallback of a turn (reference)
RECALL_TOOLS = {"viking_search", "viking_read", "viking_browse"}   # never re-ingested (reference)
_DEFAULTS: dict[str, Any] = {
    "endpoint": "",
    "api_key": "",
    "account": "default",
    "user": "default",
    "agent": "",
    "timeout": 30.0,
    "recall_timeout_seconds": 4.0,
    "recall_limit": 6,
    "recall_score_threshold": 0.15,
    "recall_max_injected_chars": 4000,
    "recall_full_read_limit": 2,
    "profile_max_chars": 6000,
}
_ENV = {
    "endpoint": ("OPENVIKING_URL", "OPENVIKING_ENDPOINT"),
    "api_key": ("OPENVIKING_API_KEY",),
    "account": ("OPENVIKING_ACCOUNT",),
    "user": ("OPENVIKING_USER",),
    "agent": ("OPENVIKING_ACTOR_PEER_ID", "OPENVIKING_AGENT"),
}


class OpenVikingError(ProviderError):
    """An OpenViking call failed; the message says how (HTTP status and server error, timeout, unreachable)."""


def validate_endpoint(url: str) -> str:
    """Return ``url`` without a trailing slash, or raise ``ValueError`` saying what is wrong.

    Only ``http``/``https`` with a host; no user info, query or fragment (credentials never travel in URLs).
    """
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"OpenViking endpoint {url!r} must be an http(s) URL such as {DEFAULT_ENDPOINT}")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise ValueError(f"OpenViking endpoint {url!r} must not carry user info, a query or a fragment")
    return url.strip().rstrip("/")


def _load_settings(home: Path) -> dict[str, Any]:
    """Defaults < ``config.yaml`` (``openviking:``, ``memory.openviking:``) < ``$HERMES_HOME/.env`` < environment."""
    settings = dict(_DEFAULTS)
    section = provider_section(home, NAME)
    if section:
        settings.update({k: v for k, v in section.items() if k in _DEFAULTS and v is not None})
    env_file = read_env_file(home / ".env")
    for key, names in _ENV.items():
        for var in names:
            value = os.environ.get(var) or env_file.get(var)
            if value:
                settings[key] = value
                break
    for key in ("timeout", "recall_timeout_seconds", "recall_score_threshold"):
        try:
            settings[key] = float(settings[key])
        except (TypeError, ValueError):
            settings[key] = float(_DEFAULTS[key])
    for key in ("recall_limit", "recall_max_injected_chars", "recall_full_read_limit", "profile_max_chars"):
        try:
            settings[key] = max(0, int(settings[key]))
        except (TypeError, ValueError):
            settings[key] = _DEFAULTS[key]
    for key in ("endpoint", "api_key", "account", "user", "agent"):
        settings[key] = str(settings[key] or "").strip()
    return settings


def _is_remote(url: str) -> bool:
    return url.startswith(("http://", "https://", "git://", "ssh://", "git@"))


def forget_uri_problem(uri: str) -> str:
    """Why ``uri`` may not be forgotten (``""`` when it may): only concrete ``.md`` user memory files."""
    if "?" in uri or "#" in uri:
        return "the URI must not carry a query or fragment"
    if not uri.startswith("viking://user/") or "/memories/" not in uri:
        return "only user memory files (viking://user/[<uid>/][peers/<p>/]memories/...) can be forgotten"
    name = uri.rsplit("/", 1)[-1]
    if not name.endswith(".md"):
        return "only a concrete .md memory file can be forgotten, not a directory"
    if name in (".abstract.md", ".overview.md"):
        return "generated .abstract.md / .overview.md summaries cannot be forgotten"
    return ""


class OpenVikingProvider(MemoryProvider):
    """External memory in an OpenViking server (see the module docstring for tools, hooks and config)."""

    def __init__(self, hermes_home: str | os.PathLike[str] | None = None) -> None:
        self._home: Path | None = Path(hermes_home) if hermes_home else None
        self._settings: dict[str, Any] = dict(_DEFAULTS)
        self._session_id = ""
        self._agent_context = "primary"
        self._client: httpx.Client | None = None
        self._registered: set[str] = set()
        self._turns: dict[str, int] = {}
        self._uid: str | None = None
        self._profile_done: set[str] = set()
        self._lock = threading.RLock()
        self._last: dict[str, Any] = {"ok": True, "count": 0, "error": None}
        self._last_write_error: str | None = None

    # -- identity and availability -------------------------------------------------------------
    @property
    def name(self) -> str:
        return NAME

    def _current_settings(self) -> dict[str, Any]:
        return _load_settings(self._home or resolve_home())

    def is_available(self) -> bool:
        """True when a valid endpoint is configured (env or ``config.yaml``). No network."""
        return self.unavailable_reason() == ""

    def unavailable_reason(self) -> str:
        try:
            settings = self._current_settings()
        except Exception as exc:
            return f"cannot read the OpenViking settings: {exc}"
        if not settings["endpoint"]:
            return ("no OpenViking server configured: set memory.openviking.endpoint or OPENVIKING_URL "
                    f"(start one with `openviking-server --host 127.0.0.1 --port 1933`; default {DEFAULT_ENDPOINT})")
        try:
            validate_endpoint(settings["endpoint"])
        except ValueError as exc:
            return str(exc)
        return ""

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Resolve settings for ``session_id``. No network: the session is registered before its first write."""
        home = kwargs.get("hermes_home")
        self._home = Path(home) if home else resolve_home()
        self._settings = _load_settings(self._home)
        self._session_id = session_id
        self._agent_context = kwargs.get("agent_context") or "primary"
        if kwargs.get("user_id") and not os.environ.get("OPENVIKING_USER"):
            self._settings["user"] = str(kwargs["user_id"])
        self._close_client()

    def _writes_ok(self) -> bool:
        return self.writes_allowed(self._agent_context)

    # -- HTTP ------------------------------------------------------------------------------------------
    def _http(self) -> httpx.Client:
        if self._client is None:
            endpoint = validate_endpoint(self._settings["endpoint"] or DEFAULT_ENDPOINT)
            for key in ("account", "user", "agent", "api_key"):  # all travel in HTTP headers: ASCII only
                if not str(self._settings[key] or "").isascii():
                    shown = "the API key" if key == "api_key" else f"{key} {self._settings[key]!r}"
                    raise OpenVikingError(f"OpenViking {shown} has non-ASCII characters, which HTTP headers cannot "
                                          f"carry; set memory.openviking.{key} (or its OPENVIKING_* variable) "
                                          "to an ASCII value")
            headers = {"User-Agent": f"hermes-memory-openviking/{VERSION}", "Content-Type": "application/json"}
            if self._settings["agent"]:
                headers["X-OpenViking-Actor-Peer"] = self._settings["agent"]
            if self._settings["api_key"]:
                headers["X-API-Key"] = self._settings["api_key"]
                headers["Authorization"] = f"Bearer {self._settings['api_key']}"
            else:
                headers.update(self._identity_headers())
            self._client = httpx.Client(base_url=endpoint, headers=headers, timeout=self._settings["timeout"],
                                        trust_env=False)
        return self._client

    def _identity_headers(self) -> dict[str, str]:
        return {"X-OpenViking-Account": self._settings["account"] or "default",
                "X-OpenViking-User": self._settings["user"] or "default"}

    def _close_client(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _request(self, method: str, path: str, *, timeout: float | None = None, **kw: Any) -> Any:
        """One call; returns the envelope's ``result``. Raises :class:`OpenVikingError` on any failure."""
        client = self._http()
        if timeout is not None:
            kw["timeout"] = timeout
        try:
            resp = client.request(method, path, **kw)
            if resp.status_code == 400 and "trusted mode" in resp.text.lower():
                kw["headers"] = {**kw.get("headers", {}), **self._identity_headers()}
                resp = client.request(method, path, **kw)
        except httpx.TimeoutException as exc:
            limit = timeout if timeout is not None else self._settings["timeout"]
            raise OpenVikingError(f"OpenViking did not answer {method} {path} within {limit:g} s") from exc
        except (httpx.HTTPError, httpx.InvalidURL) as exc:  # InvalidURL (URL too long...) is no HTTPError
            raise OpenVikingError(f"cannot reach OpenViking at {client.base_url}: {exc}") from exc
        try:
            payload = resp.json()
        except ValueError:
            payload = None
        if isinstance(payload, dict) and payload.get("status") == "error" or resp.status_code >= 400:
            err = (payload or {}).get("error") if isinstance(payload, dict) else None
            if isinstance(err, dict):
                detail = f"{err.get('code', '')}: {err.get('message', '')}".strip(": ")
            elif isinstance(payload, dict) and "detail" in payload:
                detail = str(payload["detail"])
            else:
                detail = resp.text[:300]
            raise OpenVikingError(f"OpenViking {method} {path} failed (HTTP {resp.status_code}): {detail[:300]}")
        return payload.get("result") if isinstance(payload, dict) else payload

    def _user_id(self) -> str:
        """The server's idea of the current user (``system/status`` → ``result.user``), else the configured one."""
        if self._uid is None:
            try:
                status = self._request("GET", "/api/v1/system/status")
                self._uid = str((status or {}).get("user") or self._settings["user"] or "default")
            except OpenVikingError:
                return self._settings["user"] or "default"
        return self._uid

    # -- sessions ----------------------------------------------------------------------------------------
    def _ensure_session(self, sid: str) -> None:
        """Register ``sid`` with ``POST /api/v1/sessions`` once (OpenViking >= 0.3 needs it before messages)."""
        if sid in self._registered:
            return
        try:
            self._request("POST", "/api/v1/sessions", json={"session_id": sid})
        except OpenVikingError as exc:
            if "409" not in str(exc) and "exist" not in str(exc).lower():
                raise
        self._registered.add(sid)

    def _commit(self, sid: str) -> dict[str, Any]:
        result = self._request("POST", f"/api/v1/sessions/{sid}/commit", json={"keep_recent_count": 0})
        self._turns.pop(sid, None)
        return result if isinstance(result, dict) else {}

    # -- tools ------------------------------------------------------------------------------------------
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [
            {"name": "viking_search",
             "description": ("Search OpenViking (memories, resources, skills) for context relevant to a query. "
                             "mode: fast (vector find), deep (session-aware search), auto (= fast)."),
             "parameters": {"type": "object", "properties": {
                 "query": {"type": "string", "description": "What to look for."},
                 "mode": {"type": "string", "enum": ["auto", "fast", "deep"]},
                 "scope": {"type": "string", "description": "viking:// prefix to search under (optional)."},
                 "limit": {"type": "integer", "minimum": 1, "maximum": 50, "description": "Default 10."},
             }, "required": ["query"]}},
            {"name": "viking_read",
             "description": "Read one or up to 3 viking:// URIs at abstract, overview (default) or full detail.",
             "parameters": {"type": "object", "properties": {
                 "uri": {"type": "string"},
                 "uris": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
                 "level": {"type": "string", "enum": ["abstract", "overview", "full"]},
             }, "required": []}},
            {"name": "viking_browse",
             "description": "Browse the viking:// tree: list a folder, show a tree, or stat one entry.",
             "parameters": {"type": "object", "properties": {
                 "action": {"type": "string", "enum": ["tree", "list", "stat"]},
                 "path": {"type": "string", "description": "viking:// URI (default viking://)."},
             }, "required": ["action"]}},
            {"name": "viking_remember",
             "description": "Store a durable fact or preference about the user as a new OpenViking memory file.",
             "parameters": {"type": "object", "properties": {
                 "content": {"type": "string", "description": "The fact, self-contained."},
             }, "required": ["content"]}},
            {"name": "viking_forget",
             "description": "Delete one user memory file (a concrete viking://user/.../memories/....md URI).",
             "parameters": {"type": "object", "properties": {
                 "uri": {"type": "string"},
             }, "required": ["uri"]}},
            {"name": "viking_add_resource",
             "description": ("Add a resource (web page, git repo, or a local file/folder) to OpenViking so it "
                             "becomes searchable."),
             "parameters": {"type": "object", "properties": {
                 "url": {"type": "string", "description": "http(s)/git URL or a local path."},
                 "reason": {"type": "string"},
                 "to": {"type": "string", "description": "Exact target viking:// URI (not with parent)."},
                 "parent": {"type": "string", "description": "Parent viking:// folder (not with to)."},
                 "instruction": {"type": "string"},
                 "wait": {"type": "boolean", "description": "Wait for processing to finish."},
                 "timeout": {"type": "number", "description": "Seconds to wait when wait=true."},
             }, "required": ["url"]}},
        ]

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run a ``viking_*`` tool; returns JSON. Every failure is ``{"error": ...}``, never an exception."""
        args = args or {}
        handler = {
            "viking_search": self._tool_search, "viking_read": self._tool_read, "viking_browse": self._tool_browse,
            "viking_remember": self._tool_remember, "viking_forget": self._tool_forget,
            "viking_add_resource": self._tool_add_resource,
        }.get(tool_name)
        if handler is None:
            return self.tool_error(f"unknown OpenViking tool {tool_name!r}")
        try:
            return handler(args)
        except (OpenVikingError, ValueError, OSError) as exc:
            return self.tool_error(str(exc), tool=tool_name)

    def _search(self, query: str, *, mode: str = "fast", scope: str = "", limit: int = 10,
                score_threshold: float | None = None, timeout: float | None = None) -> list[dict[str, Any]]:
        body: dict[str, Any] = {"query": query, "limit": limit}
        if score_threshold is not None:
            body["score_threshold"] = score_threshold
        if scope:
            body["target_uri"] = scope
        path = "/api/v1/search/find"
        if mode == "deep":
            path = "/api/v1/search/search"
            if self._session_id and self._session_id in self._registered:
                body["session_id"] = self._session_id
        result = self._request("POST", path, json=body, timeout=timeout) or {}
        items: list[dict[str, Any]] = []
        for bucket in ("memories", "resources", "skills"):
            for it in result.get(bucket) or []:
                if isinstance(it, dict) and it.get("uri"):
                    items.append({"uri": it["uri"], "type": it.get("context_type") or bucket.rstrip("s"),
                                  "score": float(it.get("score") or 0.0), "level": it.get("level"),
                                  "abstract": it.get("abstract") or "",
                                  "related": [r.get("uri", r) if isinstance(r, dict) else r
                                              for r in (it.get("relations") or [])]})
        items.sort(key=lambda i: -i["score"])
        return items

    def _tool_search(self, args: dict[str, Any]) -> str:
        query = str(args.get("query") or "").strip()
        if not query:
            return self.tool_error("viking_search needs a non-empty 'query'")
        mode = str(args.get("mode") or "auto")
        if mode not in ("auto", "fast", "deep"):
            return self.tool_error(f"mode must be auto, fast or deep, not {mode!r}")
        scope = str(args.get("scope") or "").strip()
        if scope and not scope.startswith("viking://"):
            return self.tool_error(f"scope must be a viking:// URI prefix, not {scope!r}")
        try:
            limit = min(50, max(1, int(args.get("limit") or 10)))
        except (TypeError, ValueError):
            return self.tool_error("limit must be an integer between 1 and 50")
        items = self._search(query, mode="deep" if mode == "deep" else "fast", scope=scope, limit=limit)[:limit]
        for it in items:
            it.pop("level", None)
        return self.tool_result({"results": items, "total": len(items)})

    def _read_one(self, uri: str, level: str, cap: int) -> str:
        if level in ("abstract", "overview"):
            try:
                text = self._request("GET", f"/api/v1/content/{level}", params={"uri": uri})
            except OpenVikingError:
                text = self._request("GET", "/api/v1/content/read", params={"uri": uri})  # files have no summary
        else:
            text = self._request("GET", "/api/v1/content/read", params={"uri": uri})
        text = text if isinstance(text, str) else str(text or "")
        return text if len(text) <= cap else text[:cap] + "\n…[truncated]"

    def _tool_read(self, args: dict[str, Any]) -> str:
        uris = args.get("uris") or ([args["uri"]] if args.get("uri") else [])
        if isinstance(uris, str):
            uris = [uris]
        if not isinstance(uris, (list, tuple)):
            return self.tool_error(f"uris must be a list of viking:// URIs, got {type(uris).__name__}")
        uris = [str(u).strip() for u in uris if str(u).strip()]
        if not uris:
            return self.tool_error("viking_read needs 'uri' or 'uris'")
        if len(uris) > 3:
            return self.tool_error(f"viking_read reads at most 3 URIs at once, got {len(uris)}")
        bad = [u for u in uris if not u.startswith("viking://")]
        if bad:
            return self.tool_error(f"not a viking:// URI: {bad[0]!r}")
        level = str(args.get("level") or "overview")
        if level not in READ_CAPS:
            return self.tool_error(f"level must be abstract, overview or full, not {level!r}")
        cap = BATCH_FULL_CAP if (level == "full" and len(uris) > 1) else READ_CAPS[level]
        results = []
        for uri in uris:
            try:
                results.append({"uri": uri, "level": level, "content": self._read_one(uri, level, cap)})
            except OpenVikingError as exc:
                if len(uris) == 1:
                    raise
                results.append({"uri": uri, "error": str(exc)})
        return self.tool_result(results[0] if len(results) == 1 else {"results": results})

    def _tool_browse(self, args: dict[str, Any]) -> str:
        action = str(args.get("action") or "")
        if action not in ("tree", "list", "stat"):
            return self.tool_error("action must be tree, list or stat")
        path = str(args.get("path") or "viking://").strip()
        if not path.startswith("viking://"):
            return self.tool_error(f"path must be a viking:// URI, not {path!r}")
        route = {"tree": "tree", "list": "ls", "stat": "stat"}[action]
        result = self._request("GET", f"/api/v1/fs/{route}", params={"uri": path})
        if action == "stat":
            return self.tool_result({"entry": result})
        entries = []
        for e in (result or [])[:BROWSE_MAX]:
            if isinstance(e, dict):
                uri = e.get("uri", "")
                entries.append({"name": e.get("name") or uri.rstrip("/").rsplit("/", 1)[-1], "uri": uri,
                                "type": "dir" if e.get("isDir") else "file", "abstract": e.get("abstract", "")})
        return self.tool_result({"path": path, "entries": entries, "truncated": len(result or []) > BROWSE_MAX})

    def _memory_uri(self, kind: str) -> str:
        uid = self._user_id()
        peer = f"peers/{self._settings['agent']}/" if self._settings["agent"] else ""
        return f"viking://user/{uid}/{peer}memories/{kind}/mem_{secrets.token_hex(6)}.md"

    def _write_memory(self, content: str, kind: str) -> dict[str, Any]:
        uri = self._memory_uri(kind)
        result = self._request("POST", "/api/v1/content/write", json={"uri": uri, "content": content, "mode": "create"})
        return {"uri": uri, **({"task_id": result.get("task_id")} if isinstance(result, dict) else {})}

    def _tool_remember(self, args: dict[str, Any]) -> str:
        content = str(args.get("content") or "").strip()
        if not content:
            return self.tool_error("viking_remember needs a non-empty 'content'")
        if not self._writes_ok():
            return self.tool_error(f"viking_remember is disabled in the {self._agent_context!r} agent context; "
                                   "only the primary agent writes memory")
        return self.tool_result({"status": "stored", **self._write_memory(content, "preferences")})

    def _tool_forget(self, args: dict[str, Any]) -> str:
        uri = str(args.get("uri") or "").strip()
        problem = forget_uri_problem(uri) if uri else "viking_forget needs 'uri'"
        if problem:
            return self.tool_error(problem)
        if not self._writes_ok():
            return self.tool_error(f"viking_forget is disabled in the {self._agent_context!r} agent context; "
                                   "only the primary agent writes memory")
        self._request("DELETE", "/api/v1/fs", params={"uri": uri, "recursive": "false"})
        return self.tool_result({"status": "forgotten", "uri": uri})

    def _tool_add_resource(self, args: dict[str, Any]) -> str:
        url = str(args.get("url") or "").strip()
        if not url:
            return self.tool_error("viking_add_resource needs 'url'")
        if args.get("to") and args.get("parent"):
            return self.tool_error("give either 'to' or 'parent', not both")
        if not self._writes_ok():
            return self.tool_error(f"viking_add_resource is disabled in the {self._agent_context!r} agent context")
        body: dict[str, Any] = {k: args[k] for k in ("to", "parent", "reason", "instruction") if args.get(k)}
        wait = bool(args.get("wait"))
        body["wait"] = wait
        timeout = None
        if wait:
            try:
                timeout = float(args.get("timeout") or self._settings["timeout"])
            except (TypeError, ValueError):
                return self.tool_error("timeout must be a number of seconds")
        if _is_remote(url):
            body["path"] = url
        else:
            body["temp_file_id"] = self._upload(Path(url).expanduser())
        result = self._request("POST", "/api/v1/resources", json=body, timeout=timeout) or {}
        return self.tool_result({"status": "added", "root_uri": result.get("root_uri")})

    def _upload(self, path: Path) -> str:
        """Upload a local file (a folder is zipped first) with ``resources/temp_upload``; return its temp id."""
        if not path.exists():
            raise ValueError(f"{path} does not exist; give an http(s)/git URL or an existing local path")
        if _holds_secrets(path, self._home or resolve_home()):
            raise ValueError(f"refusing to upload {path}: it is or contains a secrets file (.env*)")
        with tempfile.TemporaryDirectory() as tmp:
            target = path
            if path.is_dir():
                target = Path(shutil.make_archive(str(Path(tmp) / path.name), "zip", root_dir=path))
            mime = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
            client = self._http()
            headers = {k: v for k, v in client.headers.items() if k.lower() != "content-type"}
            with target.open("rb") as fh:
                try:
                    resp = httpx.post(f"{client.base_url}/api/v1/resources/temp_upload", headers=headers,
                                      files={"file": (target.name, fh, mime)}, timeout=self._settings["timeout"],
                                      trust_env=False)
                except httpx.TimeoutException as exc:
                    raise OpenVikingError(f"OpenViking did not accept the upload within "
                                          f"{self._settings['timeout']:g} s") from exc
                except (httpx.HTTPError, httpx.InvalidURL) as exc:  # InvalidURL (URL too long...) is no HTTPError
                    raise OpenVikingError(f"cannot reach OpenViking at {client.base_url}: {exc}") from exc
        try:
            payload = resp.json()
        except ValueError:
            payload = {}
        if resp.status_code >= 400 or payload.get("status") == "error":
            raise OpenVikingError(f"OpenViking upload failed (HTTP {resp.status_code}): {resp.text[:300]}")
        temp_id = (payload.get("result") or {}).get("temp_file_id")
        if not temp_id:
            raise OpenVikingError("OpenViking upload answered without result.temp_file_id")
        return str(temp_id)

    # -- hooks ---------------------------------------------------------------------------------------------
    def system_prompt_block(self) -> str:
        return ("# OpenViking memory\nOpenViking holds long-term memories, resources and skills as viking:// files. "
                "Relevant context is recalled automatically; use viking_search / viking_read / viking_browse for "
                "more, viking_remember for durable facts about the user, viking_add_resource for documents.")

    def _profile_block(self) -> str:
        """The user's ``memories/profile.md`` (``""`` when there is none); raises on any other failure."""
        uid = self._user_id()
        try:
            text = self._request("GET", "/api/v1/content/read",
                                 params={"uri": f"viking://user/{uid}/memories/profile.md"},
                                 timeout=self._settings["recall_timeout_seconds"])
        except OpenVikingError as exc:
            if "NOT_FOUND" in str(exc) or "HTTP 404" in str(exc):
                return ""
            raise
        text = text if isinstance(text, str) else ""
        return text.strip()[: self._settings["profile_max_chars"]]

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """Profile (once per session) + recall for ``query``; ``""`` when nothing is found or on any failure."""
        sid = session_id or self._session_id
        sections: list[str] = []
        count = 0
        try:
            if sid not in self._profile_done:
                profile = self._profile_block()
                self._profile_done.add(sid)  # only once it was read (or is absent): a failure is retried
                if profile:
                    sections.append(f"### User profile\n{profile}")
            if not is_trivial_prompt(query) and len(query.strip()) >= MIN_RECALL_CHARS:
                recalled, count = self._recall(query.strip())
                if recalled:
                    sections.append(recalled)
            self._last = {"ok": True, "count": count, "error": None}
        except OpenVikingError as exc:
            self._last = {"ok": False, "count": 0, "error": str(exc)}
            log.warning("openviking: prefetch failed: %s", exc)
        if not sections:
            return ""
        return "## OpenViking Context\n" + "\n\n".join(sections)

    def _recall(self, query: str) -> tuple[str, int]:
        """Recalled lines for ``query`` within the char budget, and how many; raises :class:`OpenVikingError`."""
        s = self._settings
        items = self._search(query, limit=s["recall_limit"], score_threshold=s["recall_score_threshold"],
                             timeout=s["recall_timeout_seconds"])
        for it in items:
            it["rank"] = it["score"] + (L2_BONUS if it.get("level") == 2 else 0.0)
        items.sort(key=lambda i: -i["rank"])
        seen: set[str] = set()
        lines: list[str] = []
        budget = s["recall_max_injected_chars"]
        full_reads = 0
        for it in items[: s["recall_limit"]]:
            if it["uri"] in seen:
                continue
            seen.add(it["uri"])
            text = it["abstract"]
            if it.get("level") == 2 and full_reads < s["recall_full_read_limit"]:
                try:
                    full = self._request("GET", "/api/v1/content/read", params={"uri": it["uri"]},
                                         timeout=s["recall_timeout_seconds"])
                    if isinstance(full, str) and full.strip():
                        text = full.strip()
                        full_reads += 1
                except OpenVikingError:
                    pass
            line = f"- [{it['type']}] {it['uri']}: {text}"
            if len(line) > budget:
                if budget > 80:
                    lines.append(line[: budget - 1] + "…")
                break
            lines.append(line)
            budget -= len(line) + 1
        return "\n".join(lines), len(lines)

    def recall_status(self) -> dict[str, Any] | None:
        return {"provider": NAME, **self._last, "write_error": self._last_write_error}

    @staticmethod
    def _turn_messages(user_content: str, assistant_content: str,
                       messages: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
        """The finished turn as OpenViking messages ``[{role, parts}]`` (recall-tool calls dropped)."""
        if isinstance(messages, list):  # anything that is not a message dict carries nothing to send
            messages = [m for m in messages if isinstance(m, dict)]
        else:
            messages = None
        if messages:
            start = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=None)
        else:
            start = None
        if start is None:
            out = []
            if (user_content or "").strip():
                out.append({"role": "user", "parts": [{"type": "text", "text": user_content[:PLAIN_PART_CHARS]}]})
            if (assistant_content or "").strip():
                out.append({"role": "assistant",
                            "parts": [{"type": "text", "text": assistant_content[:PLAIN_PART_CHARS]}]})
            return out
        turn = messages[start:]
        outputs = {m.get("tool_call_id"): m.get("content") for m in turn if m.get("role") == "tool"}
        out: list[dict[str, Any]] = []
        for m in turn:
            role = m.get("role")
            content = m.get("content")
            text = content if isinstance(content, str) else " ".join(
                p.get("text", "") for p in (content or []) if isinstance(p, dict))
            if role == "user" and text.strip():
                out.append({"role": "user", "parts": [{"type": "text", "text": text}]})
            elif role == "assistant":
                parts: list[dict[str, Any]] = []
                if text.strip():
                    parts.append({"type": "text", "text": text})
                for call in m.get("tool_calls") or []:
                    if not isinstance(call, dict):
                        continue
                    fn = call.get("function") or {}
                    name = fn.get("name") or call.get("name") or ""
                    if name in RECALL_TOOLS:
                        continue
                    part = {"type": "tool", "tool_id": call.get("id", ""), "tool_name": name,
                            "tool_input": fn.get("arguments") or "", "tool_status": "completed"}
                    if call.get("id") in outputs:
                        part["tool_output"] = str(outputs[call.get("id")])[:PLAIN_PART_CHARS]
                    parts.append(part)
                if parts:
                    out.append({"role": "assistant", "parts": parts})
        return out

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: list[dict[str, Any]] | None = None) -> None:
        """Send the finished turn to its session (registered first). Primary context only; never raises.

        A ``session_id`` other than the current one counts as a session switch (the old one is committed).
        """
        if not self._writes_ok():
            return
        if session_id and session_id != self._session_id:
            self.on_session_switch(session_id)  # the caller moved on without telling us (reference #30947)
        payload = self._turn_messages(user_content, assistant_content, messages)
        if not payload:
            return
        with self._lock:
            sid = self._session_id
            try:
                self._ensure_session(sid)
                self._send_messages(sid, payload)
                self._turns[sid] = self._turns.get(sid, 0) + 1
                self._last_write_error = None
            except OpenVikingError as exc:
                self._last_write_error = str(exc)
                log.warning("openviking: sync_turn to session %s failed: %s", sid, exc)

    def _send_messages(self, sid: str, payload: list[dict[str, Any]]) -> None:
        try:
            for i in range(0, len(payload), BATCH_SIZE):
                self._request("POST", f"/api/v1/sessions/{sid}/messages/batch",
                              json={"messages": payload[i:i + BATCH_SIZE]})
        except OpenVikingError as exc:
            if "HTTP 404" not in str(exc) and "HTTP 405" not in str(exc):
                raise
            for msg in payload:  # an older server without the batch route
                self._request("POST", f"/api/v1/sessions/{sid}/messages", json=msg)

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """Commit the session (server-side memory extraction) when it received turns. Never raises."""
        if not self._writes_ok():
            return
        with self._lock:
            sid = self._session_id
            if not self._turns.get(sid):
                return
            try:
                self._commit(sid)
            except OpenVikingError as exc:
                self._last_write_error = str(exc)
                log.warning("openviking: commit of session %s failed: %s", sid, exc)

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "", reset: bool = False,
                          rewound: bool = False, **kwargs: Any) -> None:
        """Commit the old session (unless rewound), then write to ``new_session_id`` (registered on first write)."""
        if not new_session_id or new_session_id == self._session_id:
            return
        with self._lock:
            old = self._session_id
            if self._writes_ok() and not rewound and self._turns.get(old):
                try:
                    self._commit(old)
                except OpenVikingError as exc:
                    self._last_write_error = str(exc)
                    log.warning("openviking: commit of session %s failed: %s", old, exc)
            self._session_id = new_session_id

    def on_memory_write(self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None) -> None:
        """Mirror a built-in ``add``/``replace`` as a new memory file (``preferences`` for user, else ``patterns``)."""
        if action not in ("add", "replace") or not (content or "").strip() or not self._writes_ok():
            return
        try:
            self._write_memory(content.strip(), "preferences" if target == "user" else "patterns")
        except OpenVikingError as exc:
            self._last_write_error = str(exc)
            log.warning("openviking: memory mirror failed: %s", exc)

    def shutdown(self) -> None:
        with self._lock:
            self._close_client()

    # -- setup wizard ----------------------------------------------------------------------------------------
    def get_config_schema(self) -> list[ConfigField]:
        return [
            ConfigField("endpoint", "OpenViking server URL", default=DEFAULT_ENDPOINT, required=True),
            ConfigField("api_key", "OpenViking API key (empty for a local dev-mode server)", secret=True,
                        env_var="OPENVIKING_API_KEY", url="https://docs.openviking.ai"),
            ConfigField("account", "Account (trusted/dev mode)", default="default"),
            ConfigField("user", "User id (trusted/dev mode)", default="default"),
            ConfigField("agent", "Actor peer id for this agent (optional)", default=""),
            ConfigField("recall_limit", "Memories recalled per turn", default=6, type="int"),
            ConfigField("recall_timeout_seconds", "Seconds before a recall is abandoned", default=4.0, type="float"),
            ConfigField("timeout", "Seconds before any other OpenViking call is abandoned", default=30.0,
                        type="float"),
        ]


def _holds_secrets(path: Path, home: Path) -> bool:
    """True when ``path`` is a ``.env*`` file (the home's secrets file included) or a folder holding one."""
    resolved = path.resolve()
    if resolved.is_dir():
        return (home / ".env").resolve().is_relative_to(resolved) or any(resolved.rglob(".env*"))
    return resolved.name.lower().startswith(".env") or resolved == (home / ".env").resolve()


def register(ctx: Any) -> None:
    """Plugin entry point (uses ``ctx.hermes_home`` when the loader provides one): hand one :class:`OpenVikingProvider` to the discovery collector."""
    ctx.register_memory_provider(OpenVikingProvider(hermes_home=getattr(ctx, "hermes_home", None)))


__all__ = ["OpenVikingProvider", "OpenVikingError", "forget_uri_problem", "register", "validate_endpoint"]
