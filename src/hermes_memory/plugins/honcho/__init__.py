"""Honcho provider, built on the official ``honcho-ai`` SDK (2.x, Honcho's v3 REST API).

Behaviour follows the reference plugin (docs/providers.md §1):

* Two peers per conversation: the user (``peerName``, else the gateway ``user_id``, else ``user``)
  and the assistant (``aiPeer``, default ``hermes``), in workspace ``workspace`` (default
  ``hermes``). Ids are sanitised to ``[A-Za-z0-9_-]``.
* Recall modes (``recallMode``): ``context`` injects context before each turn and exposes no tools;
  ``tools`` exposes the five tools and injects nothing; ``hybrid`` (default; ``auto`` is an alias)
  does both. Cron and flush contexts disable the provider unless it is tools-only.
* Tools (5): ``honcho_profile`` (read or replace a peer card), ``honcho_search`` (raw excerpts, no
  LLM), ``honcho_reasoning`` (dialectic answer), ``honcho_context`` (summary, representation, card,
  last 5 messages), ``honcho_conclude`` (create or delete a conclusion).
* Recall: ``prefetch`` returns the base context (session summary, representation, card) and a
  dialectic supplement; the first dialectic of a session runs at once, later ones are started by
  ``queue_prefetch`` after a turn and served on the next.
* Cost controls: ``injectionFrequency`` (``every-turn`` or ``first-turn``), ``contextCadence``
  (refresh the base context every N turns), ``dialecticCadence`` (run the dialectic every N turns;
  a ``honcho_reasoning`` call restarts the count), ``dialecticReasoningLevel`` (default ``low``)
  raised by the query-length heuristic (+1 at >= 120 chars, +2 at >= 400) and always capped at
  ``reasoningLevelCap`` (tool calls too), ``contextTokens`` (output cut to tokens x 4 chars),
  ``dialecticMaxChars``/``dialecticMaxInputChars``.
* Writes (``sync_turn`` messages, split at paragraph/sentence/word boundaries into chunks of at
  most ``messageMaxChars``, continuations prefixed ``[continued] ``) are flushed per
  ``writeFrequency``: ``async``/``turn`` every turn, an integer N every N turns, ``session`` at
  session end. ``on_session_switch`` flushes to the old session and moves writes to the new one.
  ``on_memory_write`` turns built-in user-profile adds into conclusions. Only the primary agent
  context writes.

Differences from the reference, on purpose: the base context is fetched synchronously when its
cadence is due (bounded by ``timeout``; the manager already bounds recall) rather than served from
a background fetch; the dialectic is one pass (``dialecticDepth`` is accepted and ignored);
the one-time upload of MEMORY.md/USER.md is not done; ``~/.honcho/config.json`` is not read (each
home is self-contained).

Configuration: the ``honcho:`` section of ``config.yaml`` (written by ``memory setup``) over the
reference's ``$HERMES_HOME/honcho.json`` (camelCase keys as in the reference; a ``hosts.<host>``
block overrides root keys, host ``hermes`` or ``$HERMES_HONCHO_HOST``), then the environment:
``HONCHO_API_KEY`` (secret), ``HONCHO_BASE_URL``/``HONCHO_URL``, ``HONCHO_ENVIRONMENT``,
``HONCHO_TIMEOUT``.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

from hermes_memory.plugins.honcho.settings import (  # noqa: F401 - moved there, re-exported
    COLD_PROMPT,
    DEFAULTS,
    EMPTY_CARD_HINT,
    LEVELS,
    PLACEHOLDER_KEY,
    RECALL_MODES,
    SEARCH_TOKENS_CAP,
    SEARCH_TOKENS_DEFAULT,
    SNIPPET_CHARS,
    _home,
    _number,
    auto_level,
    cap_level,
    file_settings,
    is_local_url,
    load_settings,
    sanitize_id,
    split_message,
)
from hermes_memory.providers.base import (
    ConfigField,
    MemoryProvider,
    ToolArgumentError,
    is_trivial_prompt,
    non_ascii_problem,
    number_arg,
    path_segment,
    sdk_problem,
)

log = logging.getLogger(__name__)


class HonchoProvider(MemoryProvider):
    """Honcho (v3 API through the official SDK). See the module docstring for behaviour."""

    def __init__(self, hermes_home: str | os.PathLike[str] | None = None) -> None:
        """``hermes_home`` is the data home used by :meth:`is_available` before :meth:`initialize`
        (default: ``$HERMES_HOME``, else ``~/.hermes``)."""
        self.settings: dict[str, Any] = {}
        self.home: Path | None = Path(hermes_home) if hermes_home else None
        self.session_id = ""
        self.agent_context = "primary"
        self.disabled = False
        self.user_peer_id = "user"
        self.ai_peer_id = "hermes"
        self.turn = 0
        self._honcho: Any = None
        self._peers: dict[str, Any] = {}
        self._sessions: dict[str, Any] = {}
        self._lock = threading.RLock()
        self._pending: list[tuple[str, str]] = []  # (peer id, content) waiting to be flushed
        self._pending_turns = 0
        self._context_cache: tuple[int, str] | None = None  # (turn fetched, text)
        self._dialectic_cache: tuple[int, str] | None = None
        self._last_dialectic_turn: int | None = None
        self._dialectic_thread: threading.Thread | None = None
        self._dialectic_started = 0.0
        self._threads: list[threading.Thread] = []
        self._last_recall: dict[str, Any] | None = None

    # -- required ------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return "honcho"

    def is_available(self) -> bool:
        return not self.unavailable_reason()

    def unavailable_reason(self) -> str:
        if problem := sdk_problem("honcho-ai", 2):
            return problem
        s = load_settings(self.home)
        if not (s["apiKey"] or s["baseUrl"]):
            return "HONCHO_API_KEY (or a baseUrl for a self-hosted server) is not set: " \
                   "run 'hermes-memory memory setup --provider honcho'"
        if problem := non_ascii_problem("HONCHO_API_KEY", s["apiKey"]):
            return problem
        if not s["enabled"]:
            return "honcho is disabled by its settings (enabled: false in config.yaml honcho: or honcho.json)"
        return ""

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self.home = _home(kwargs.get("hermes_home") or self.home)
        self.settings = load_settings(self.home)
        self.agent_context = kwargs.get("agent_context") or "primary"
        scheduled = self.agent_context in ("cron", "flush") or kwargs.get("platform") == "cron"
        self.disabled = scheduled and self.settings["recallMode"] != "tools"
        self.session_id = sanitize_id(session_id, "default-session")
        user = self.settings.get("peerName") or kwargs.get("user_id") or "user"
        self.user_peer_id = sanitize_id(str(user), "user")
        self.ai_peer_id = sanitize_id(str(self.settings.get("aiPeer") or "hermes"), "hermes")
        self.turn = 0
        self._context_cache = self._dialectic_cache = None
        self._last_dialectic_turn = None

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        if self.disabled or self.settings.get("recallMode") == "context":
            return []
        peer = {"type": "string", "description": "'user' (default), 'ai', or a peer id."}
        return [
            {"name": "honcho_profile",
             "description": "Read a peer's card (curated facts); pass 'card' to replace it.",
             "parameters": {"type": "object", "properties": {
                 "peer": peer, "card": {"type": "array", "items": {"type": "string"}}}, "required": []}},
            {"name": "honcho_search",
             "description": "Search raw message excerpts (no LLM). Cheap; use for exact recall.",
             "parameters": {"type": "object", "properties": {
                 "query": {"type": "string"},
                 "max_tokens": {"type": "integer", "description": "Budget (default 800, max 2000)."},
                 "peer": peer}, "required": ["query"]}},
            {"name": "honcho_reasoning",
             "description": "Ask Honcho a question about a peer; answered by its reasoning model.",
             "parameters": {"type": "object", "properties": {
                 "query": {"type": "string"}, "reasoning_level": {"type": "string", "enum": list(LEVELS)},
                 "peer": peer}, "required": ["query"]}},
            {"name": "honcho_context",
             "description": "Session context: summary, representation, peer card and recent messages.",
             "parameters": {"type": "object", "properties": {"query": {"type": "string"}, "peer": peer},
                            "required": []}},
            {"name": "honcho_conclude",
             "description": "Save a lasting conclusion about a peer, or delete one by id (e.g. to remove PII). "
                            "Give exactly one of 'conclusion' and 'delete_id'.",
             "parameters": {"type": "object", "properties": {
                 "conclusion": {"type": "string"}, "delete_id": {"type": "string"}, "peer": peer},
                 "required": []}},
        ]

    # -- SDK objects ---------------------------------------------------------------------------------
    @property
    def honcho(self) -> Any:
        with self._lock:
            if self._honcho is None:
                from honcho import Honcho

                s = self.settings
                key = s["apiKey"] or (PLACEHOLDER_KEY if s["baseUrl"] and is_local_url(s["baseUrl"]) else None)
                kwargs: dict[str, Any] = {"api_key": key, "workspace_id": sanitize_id(str(s["workspace"]), "hermes"),
                                          "timeout": float(s["timeout"]), "max_retries": 0}
                if s["baseUrl"]:
                    kwargs["base_url"] = s["baseUrl"]
                else:
                    kwargs["environment"] = s["environment"] if s["environment"] in ("local", "production") \
                        else "production"
                self._honcho = Honcho(**kwargs)
            return self._honcho

    def _peer(self, peer_id: str) -> Any:
        with self._lock:
            if peer_id not in self._peers:
                self._peers[peer_id] = self.honcho.peer(peer_id)
            return self._peers[peer_id]

    def _session(self, session_id: str | None = None) -> Any:
        sid = session_id or self.session_id
        with self._lock:
            if sid not in self._sessions:
                from honcho.api_types import SessionPeerConfig

                session = self.honcho.session(sid)
                session.add_peers([
                    (self._peer(self.user_peer_id), SessionPeerConfig(observe_me=True, observe_others=False)),
                    (self._peer(self.ai_peer_id), SessionPeerConfig(observe_me=True, observe_others=True)),
                ])
                self._sessions[sid] = session
            return self._sessions[sid]

    def _resolve_peer(self, value: Any) -> str:
        raw = str(value or "user").strip()
        if raw.lower() in ("user", ""):
            return self.user_peer_id
        if raw.lower() in ("ai", "assistant"):
            return self.ai_peer_id
        return sanitize_id(raw, self.user_peer_id)

    # -- tools --------------------------------------------------------------------------------------
    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        args = args or {}
        if self.disabled or self.settings.get("recallMode") == "context":
            return self.tool_error(f"honcho tools are off (recallMode={self.settings.get('recallMode')!r}, "
                                   f"agent context {self.agent_context!r})")
        try:
            if tool_name == "honcho_profile":
                return self._tool_profile(args)
            if tool_name == "honcho_search":
                return self._tool_search(args)
            if tool_name == "honcho_reasoning":
                return self._tool_reasoning(args)
            if tool_name == "honcho_context":
                return self._tool_context(args)
            if tool_name == "honcho_conclude":
                return self._tool_conclude(args)
        except ToolArgumentError as exc:
            return self.tool_error(str(exc))
        except Exception as exc:
            return self.tool_error(f"honcho: {_describe(exc)}")
        return self.tool_error(f"unknown tool {tool_name!r} for provider honcho")

    def _write_refusal(self, tool: str) -> str | None:
        if self.writes_allowed(self.agent_context):
            return None
        return self.tool_error(f"{tool} writes are disabled in the {self.agent_context!r} agent context; "
                               "only the primary agent writes to Honcho")

    def _tool_profile(self, args: dict[str, Any]) -> str:
        peer_id = self._resolve_peer(args.get("peer"))
        card = args.get("card")
        if card is None:
            facts = self._peer(peer_id).get_card() or []
            if not facts:
                return self.tool_result({"result": [], "hint": EMPTY_CARD_HINT})
            return self.tool_result({"result": facts})
        if refusal := self._write_refusal("honcho_profile"):
            return refusal
        if not isinstance(card, list) or not all(isinstance(c, str) for c in card):
            return self.tool_error("card must be a list of strings")
        card = [c.strip() for c in card if c.strip()]
        saved = self._peer(peer_id).set_card(card) or card
        return self.tool_result({"result": f"Peer card updated ({len(saved)} facts)", "card": saved})

    def _tool_search(self, args: dict[str, Any]) -> str:
        query = str(args.get("query") or "").strip()
        if not query:
            return self.tool_error("query is required")
        tokens = max(1, min(number_arg(args, "max_tokens", SEARCH_TOKENS_DEFAULT) or SEARCH_TOKENS_DEFAULT,
                             SEARCH_TOKENS_CAP))
        budget = tokens * 4  # ~4 chars per token (reference)
        limit = max(3, min(budget // 300, 20))
        messages = self._peer(self._resolve_peer(args.get("peer"))).search(query, limit=limit)
        lines, used = [], 0
        for m in messages:
            line = f"[{m.peer_id} · {m.session_id}] {m.content[:SNIPPET_CHARS]}"
            if used + len(line) > budget:
                break
            lines.append(line)
            used += len(line) + 1
        if not lines:
            return self.tool_result({"result": "No matching messages.", "count": 0})
        return self.tool_result({"result": "\n".join(lines), "count": len(lines)})

    def _tool_reasoning(self, args: dict[str, Any]) -> str:
        query = str(args.get("query") or "").strip()
        if not query:
            return self.tool_error("query is required")
        requested = str(args.get("reasoning_level") or self.settings["dialecticReasoningLevel"])
        if requested not in LEVELS:
            return self.tool_error(f"reasoning_level must be one of {', '.join(LEVELS)}; got {requested!r}")
        level = cap_level(requested, self.settings["reasoningLevelCap"])
        answer = self._dialectic(query[: self.settings["dialecticMaxInputChars"]],
                                 self._resolve_peer(args.get("peer")), level)
        self._last_dialectic_turn = self.turn  # a manual query restarts the auto-dialectic cadence
        return self.tool_result({"result": answer or "No relevant information yet.", "reasoning_level": level})

    def _tool_context(self, args: dict[str, Any]) -> str:
        peer_id = self._resolve_peer(args.get("peer"))
        ctx = self._session().context(summary=True, tokens=self.settings.get("contextTokens"),
                                      peer_target=peer_id, peer_perspective=self.ai_peer_id)
        recent = [{"peer": m.peer_id, "content": m.content[:200]} for m in (ctx.messages or [])[-5:]]
        return self.tool_result({"summary": ctx.summary.content if ctx.summary else "",
                                 "representation": ctx.peer_representation or "",
                                 "card": ctx.peer_card or [], "recent_messages": recent})

    def _tool_conclude(self, args: dict[str, Any]) -> str:
        conclusion = str(args.get("conclusion") or "").strip()
        delete_id = str(args.get("delete_id") or "").strip()
        if bool(conclusion) == bool(delete_id):
            return self.tool_error("give exactly one of 'conclusion' (to save) and 'delete_id' (to delete)")
        if refusal := self._write_refusal("honcho_conclude"):
            return refusal
        view = self._peer(self.ai_peer_id).conclusions_of(self._resolve_peer(args.get("peer")))
        if delete_id:
            view.delete(path_segment(delete_id))  # the SDK puts it in the URL path unescaped
            return self.tool_result({"result": "Conclusion deleted.", "id": delete_id})
        created = view.create([{"content": conclusion, "session_id": self.session_id}])
        return self.tool_result({"result": "Conclusion saved.", "id": created[0].id if created else None})

    # -- recall ----------------------------------------------------------------------------------------
    def _dialectic(self, query: str, target_id: str, level: str) -> str:
        ai = self._peer(self.ai_peer_id)
        kwargs: dict[str, Any] = {"reasoning_level": level}
        if target_id != self.ai_peer_id:
            kwargs["target"] = target_id
        answer = ai.chat(query, **kwargs)
        return str(answer or "").strip()[: self.settings["dialecticMaxChars"]]

    def system_prompt_block(self) -> str:
        if self.disabled:
            return ""
        mode = self.settings.get("recallMode", "hybrid")
        head = f"# External memory: Honcho (user peer '{self.user_peer_id}')\n"
        if mode == "context":
            return head + "What Honcho knows about the user is injected before each turn. It has no tools."
        tools = "honcho_search (raw excerpts), honcho_reasoning (ask about the user), honcho_profile, " \
                "honcho_context, honcho_conclude (save or delete a lasting fact)"
        if mode == "tools":
            return head + f"Nothing is injected automatically; query Honcho with its tools: {tools}."
        return head + f"Relevant context is injected before each turn; for more, use: {tools}."

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        self.turn = int(turn_number)

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        s = self.settings
        if self.disabled or s.get("recallMode") == "tools" or is_trivial_prompt(query):
            return ""
        turn = max(self.turn, 1)
        if s["injectionFrequency"] == "first-turn" and turn > 1:
            return ""
        errors: list[str] = []
        context = self._base_context(turn, errors)
        dialectic = self._auto_dialectic(query, turn, errors)
        self._last_recall = {"ok": not errors, "errors": errors, "turn": turn}
        if errors:
            log.warning("honcho recall: %s", "; ".join(errors))
        parts = [p for p in (context, f"### Honcho's read on this turn\n{dialectic}" if dialectic else "") if p]
        text = "\n\n".join(parts)
        if s.get("contextTokens"):
            text = text[: int(s["contextTokens"]) * 4]
        return text

    def _base_context(self, turn: int, errors: list[str]) -> str:
        cadence = int(self.settings["contextCadence"])
        if self._context_cache is not None and turn - self._context_cache[0] < cadence:
            return self._context_cache[1]
        try:
            ctx = self._session().context(summary=True, tokens=self.settings.get("contextTokens"),
                                          peer_target=self.user_peer_id, peer_perspective=self.ai_peer_id)
        except Exception as exc:
            errors.append(f"context: {_describe(exc)}")
            return ""
        sections = []
        if ctx.summary and ctx.summary.content:
            sections.append(f"### Session summary\n{ctx.summary.content}")
        if ctx.peer_representation:
            sections.append(f"### What I know about {self.user_peer_id}\n{ctx.peer_representation}")
        if ctx.peer_card:
            sections.append("### Peer card\n" + "\n".join(f"- {c}" for c in ctx.peer_card))
        text = "\n\n".join(sections)
        self._context_cache = (turn, text)
        return text

    def _auto_dialectic(self, query: str, turn: int, errors: list[str]) -> str:
        """The dialectic supplement for this turn.

        Before any dialectic ran in this session it runs now with the cold prompt (bounded by
        ``timeout``); afterwards the result :meth:`queue_prefetch` produced is served while it is
        fresh (fired at most ``dialecticCadence`` x 2 turns ago, reference), else nothing.
        """
        if self._last_dialectic_turn is None:
            self._last_dialectic_turn = turn
            try:
                answer = self._run_dialectic(COLD_PROMPT + query, query)
            except Exception as exc:
                errors.append(f"dialectic: {_describe(exc)}")
                return ""
            self._dialectic_cache = (turn, answer)
            return answer
        cached = self._dialectic_cache
        cadence = int(self.settings["dialecticCadence"])
        return cached[1] if cached and turn - cached[0] <= cadence * 2 else ""

    def _run_dialectic(self, prompt: str, query: str) -> str:
        s = self.settings
        level = auto_level(query, s["dialecticReasoningLevel"], s["reasoningLevelCap"], bool(s["reasoningHeuristic"]))
        return self._dialectic(prompt[: s["dialecticMaxInputChars"]], self.user_peer_id, level)

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """After a turn: run the next turn's dialectic in the background when ``dialecticCadence`` says it is due.

        Skipped while the previous one still runs (one older than 2 x ``timeout`` counts as dead,
        reference). :meth:`prefetch` serves the result on the next turn.
        """
        if self.disabled or self.settings.get("recallMode") == "tools" or is_trivial_prompt(query):
            return
        next_turn = max(self.turn, 1) + 1
        last = self._last_dialectic_turn
        if last is not None and next_turn - last < int(self.settings["dialecticCadence"]):
            return
        running = self._dialectic_thread
        timeout = float(self.settings["timeout"])
        if running is not None and running.is_alive() and time.monotonic() - self._dialectic_started < 2 * timeout:
            return
        self._last_dialectic_turn = next_turn

        def run() -> None:
            try:
                answer = self._run_dialectic(query, query)
            except Exception as exc:
                log.warning("honcho: background dialectic failed: %s", _describe(exc))
                if self._last_dialectic_turn == next_turn:
                    self._last_dialectic_turn = last  # a failure is not a result: due again after the next turn
                return
            self._dialectic_cache = (next_turn, answer)

        self._dialectic_started = time.monotonic()
        self._dialectic_thread = threading.Thread(target=run, name="honcho-dialectic", daemon=True)
        self._dialectic_thread.start()

    def wait_for_background(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for a queued dialectic; True when none is running."""
        thread = self._dialectic_thread
        if thread is not None:
            thread.join(timeout)
        return thread is None or not thread.is_alive()

    def recall_status(self) -> dict[str, Any] | None:
        return self._last_recall

    # -- writes -------------------------------------------------------------------------------------------
    def _writes_ok(self) -> bool:
        return not self.disabled and self.writes_allowed(self.agent_context)

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: list[dict[str, Any]] | None = None) -> None:
        if not self._writes_ok() or not self.settings.get("saveMessages", True):
            return
        limit = int(self.settings["messageMaxChars"])
        with self._lock:
            self._pending += [(self.user_peer_id, c) for c in split_message(user_content or "", limit)]
            self._pending += [(self.ai_peer_id, c) for c in split_message(assistant_content or "", limit)]
            self._pending_turns += 1
        freq = self.settings.get("writeFrequency", "async")
        if freq in ("async", "turn"):
            self.flush()
        elif freq != "session":
            every = _number(freq, int, 1, 1)
            if self._pending_turns >= every:
                self.flush()

    def flush(self, session_id: str | None = None) -> bool:
        """Send buffered messages to ``session_id`` (default: the current session), 100 per request.

        Returns True when nothing is left; on failure the messages stay buffered for the next flush.
        """
        with self._lock:
            pending = list(self._pending)
            if not pending:
                return True
            try:
                session = self._session(session_id)
                for i in range(0, len(pending), 100):
                    batch = pending[i:i + 100]
                    session.add_messages([self._peer(pid).message(text) for pid, text in batch])
                    del self._pending[: len(batch)]
            except Exception as exc:
                log.warning("honcho: flushing %d messages failed (kept for retry): %s", len(self._pending),
                            _describe(exc))
                return False
            self._pending_turns = 0
            return True

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        if self._writes_ok():
            self.flush()

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "", reset: bool = False,
                          rewound: bool = False, **kwargs: Any) -> None:
        if self._writes_ok():
            self.flush(self.session_id)
        with self._lock:
            self.session_id = sanitize_id(new_session_id, "default-session")
            self._context_cache = None

    def on_memory_write(self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None) -> None:
        if action != "add" or target != "user" or not content or not self._writes_ok():
            return
        session_id = self.session_id

        def run() -> None:
            try:
                self._peer(self.ai_peer_id).conclusions_of(self.user_peer_id).create(
                    [{"content": content, "session_id": session_id}])
            except Exception as exc:
                log.warning("honcho: conclusion from memory write failed: %s", _describe(exc))

        thread = threading.Thread(target=run, name="honcho-conclusion", daemon=True)
        self._threads.append(thread)
        thread.start()

    # -- setup, lifecycle ------------------------------------------------------------------------------------
    def get_config_schema(self) -> list[ConfigField]:
        return [
            ConfigField("apiKey", "Honcho API key (blank for a self-hosted server without auth)", secret=True,
                        env_var="HONCHO_API_KEY", url="https://app.honcho.dev", required_when=("baseUrl", ("",))),
            ConfigField("baseUrl", "Server URL (blank = Honcho cloud)", default="", env_var="HONCHO_BASE_URL"),
            ConfigField("workspace", "Workspace id", default="hermes"),
            ConfigField("peerName", "Your peer id (blank = the gateway user id, else 'user')", default=""),
            ConfigField("aiPeer", "The assistant's peer id", default="hermes"),
            ConfigField("recallMode", "context (inject only), tools (tools only) or hybrid (both)",
                        default="hybrid", choices=RECALL_MODES),
            ConfigField("injectionFrequency", "Inject context every turn or on the first turn only",
                        default="every-turn", choices=("every-turn", "first-turn")),
            ConfigField("contextCadence", "Refresh the base context every N turns", default=1, type="int"),
            ConfigField("dialecticCadence", "Run the dialectic every N turns", default=2, type="int"),
            ConfigField("dialecticReasoningLevel", "Default dialectic reasoning level", default="low", choices=LEVELS),
            ConfigField("reasoningLevelCap", "Highest reasoning level ever used", default="high", choices=LEVELS),
            ConfigField("writeFrequency", "When to send messages: async, turn, session, or every N turns",
                        default="async"),
            ConfigField("contextTokens", "Token budget of injected context (blank = no limit)", type="int"),
            ConfigField("timeout", "Seconds per request", default=8.0, type="float"),
        ]


    def backup_paths(self) -> list[str]:
        path = (self.home or _home()) / "honcho.json"
        return [str(path)] if path.exists() else []

    def shutdown(self) -> None:
        timeout = float(self.settings.get("timeout", 8.0)) + 1.0
        for thread in [*self._threads, self._dialectic_thread]:
            if thread is None:
                continue
            thread.join(timeout)
        self._threads = []
        if self._writes_ok():
            self.flush()
        with self._lock:
            if self._honcho is not None:
                http = getattr(self._honcho, "_http", None)
                if http is not None:
                    http.close()
            self._honcho = None
            self._peers.clear()
            self._sessions.clear()


def _describe(exc: BaseException) -> str:
    name = type(exc).__name__
    status = getattr(exc, "status", None) or getattr(exc, "status_code", None)
    text = str(exc).strip()[:300]
    if status:
        return f"{name} (HTTP {status}): {text}"
    return f"{name}: {text}" if text else name


def register(ctx: Any) -> None:
    """Plugin entry point: register the provider with the discovery collector (its ``hermes_home``, if any)."""
    ctx.register_memory_provider(HonchoProvider(hermes_home=getattr(ctx, "hermes_home", None)))
