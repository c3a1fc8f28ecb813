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
import os
import threading
from pathlib import Path
from typing import Any

import httpx

from hermes_memory.home import resolve_home
from hermes_memory.plugins.openviking.settings import (  # noqa: F401 - moved there, re-exported
    _DEFAULTS,
    BATCH_FULL_CAP,
    BATCH_SIZE,
    BROWSE_MAX,
    DEFAULT_ENDPOINT,
    L2_BONUS,
    MIN_RECALL_CHARS,
    NAME,
    PLAIN_PART_CHARS,
    READ_CAPS,
    RECALL_TOOLS,
    VERSION,
    OpenVikingError,
    _holds_secrets,
    _is_remote,
    _load_settings,
    forget_uri_problem,
    validate_endpoint,
)
from hermes_memory.plugins.openviking.tools import VikingTools
from hermes_memory.providers.base import ConfigField, MemoryProvider, is_trivial_prompt

log = logging.getLogger(__name__)


class OpenVikingProvider(VikingTools, MemoryProvider):
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
        out: list[dict[str, Any]] = []
        if start is None:
            if (user_content or "").strip():
                out.append({"role": "user", "parts": [{"type": "text", "text": user_content[:PLAIN_PART_CHARS]}]})
            if (assistant_content or "").strip():
                out.append({"role": "assistant",
                            "parts": [{"type": "text", "text": assistant_content[:PLAIN_PART_CHARS]}]})
            return out
        turn = (messages or [])[start:]  # start is set only when there are messages
        outputs = {m.get("tool_call_id"): m.get("content") for m in turn if m.get("role") == "tool"}
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


def register(ctx: Any) -> None:
    """Plugin entry point (uses ``ctx.hermes_home`` when the loader provides one): hand one :class:`OpenVikingProvider` to the discovery collector."""
    ctx.register_memory_provider(OpenVikingProvider(hermes_home=getattr(ctx, "hermes_home", None)))


__all__ = ["OpenVikingProvider", "OpenVikingError", "forget_uri_problem", "register", "validate_endpoint"]
