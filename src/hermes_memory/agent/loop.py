"""``Agent``: the turn loop where the four memory layers meet (docs/architecture.md "One turn, end to end").

One :class:`Agent` holds one live session at a time:

1. **Session start** - ``MemoryStore.load_from_disk()`` takes the frozen snapshot (via the built-in
   provider's ``initialize``); the system prompt (identity + guidance + snapshots + external provider
   block) is built once and kept byte-identical until a compression.
2. **Turn start** - consolidation-failure cap reset, nudge counter, ``on_turn_start``, and
   ``prefetch_all(user_message)``; the recalled text is fenced by ``build_memory_context_block`` and
   added to the *API copy* of the user message only (never to history or SessionDB).
3. **Model call** with prompt-cache breakpoints when the model supports them (Anthropic:
   system + last 3 messages). Usage (prompt, completion, cache read, cache write tokens) goes to
   the session row and to the compressor.
4. **Tools** - ``memory`` is run by the loop against the store and mirrored to the external
   provider (``notify_memory_tool_write``); ``session_search`` reads SessionDB; other names route to
   the provider that registered them.
5. Every message is appended to SessionDB as it happens. After the turn: ``sync_all`` and
   ``queue_prefetch_all``; a due memory review (nudge) runs.
6. **Context pressure** - preflight before each call, the reported prompt size after each call, or a
   context-length error (compress and retry once): ``flush_memories`` with the full history ->
   ``on_pre_compress`` -> ``compress`` -> snapshot reloaded and system prompt rebuilt -> the session
   ends with reason ``compression`` and a child session (``parent_session_id``, lineage title)
   continues, holding the compacted history.
7. **Session end** (``close``, ``new_session``, ``resume`` of another session): flush,
   ``on_session_end``, ``end_session``, ``shutdown_all``.

Providers never break a turn (the manager isolates every hook); a failing flush or review is logged
and skipped.
"""

from __future__ import annotations

import copy
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_memory.agent.compaction import Compaction
from hermes_memory.agent.flush import FlushOutcome, count_user_turns
from hermes_memory.agent.prompt import build_system_prompt
from hermes_memory.agent.review import REVIEW_MAX_ITERATIONS, MemoryReview  # noqa: F401 - re-exported
from hermes_memory.agent.session_ids import new_session_id
from hermes_memory.config import HermesConfig, load_config
from hermes_memory.context.caching import apply_anthropic_cache_control
from hermes_memory.context.compressor import ContextCompressor, sanitize_tool_pairs
from hermes_memory.errors import ContextLengthError
from hermes_memory.home import HermesHome
from hermes_memory.llm.base import (
    ChatModel,
    ModelResponse,
    Usage,
    message_text,
    parse_tool_arguments,
    strip_private_keys,
)
from hermes_memory.memory import MEMORY_TOOL_SCHEMA, MemoryStore, memory_tool, open_memory_store
from hermes_memory.providers.base import MemoryProvider, is_trivial_prompt
from hermes_memory.providers.builtin import BuiltinMemoryProvider
from hermes_memory.providers.discovery import load_configured_provider
from hermes_memory.providers.fencing import build_memory_context_block
from hermes_memory.providers.manager import MemoryManager
from hermes_memory.sessions import fusion
from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.factory import open_session_db
from hermes_memory.sessions.fts import scrub_text
from hermes_memory.sessions.search import SESSION_SEARCH_SCHEMA, session_search
from hermes_memory.wording import clause

log = logging.getLogger(__name__)

MAX_TOOL_ITERATIONS = 20
"""Model calls per user turn before the loop gives up on a final answer."""
_MEMORY_INTERNAL_ARGS = frozenset({"store", "origin"})
"""``memory_tool`` keywords set by the loop, never taken from the model's arguments."""
PREFLIGHT_MAX_PASSES = 3
"""Compression passes before one model call (docs/reference.md §9)."""


@dataclass
class TurnResult:
    """Outcome of one user turn.

    ``text`` is the final assistant answer; ``usage`` sums every model call of the turn (main loop,
    flushes, reviews, summaries; tokens); ``session_id`` is the session the turn ended in (a child
    when it compressed); ``compressions`` counts compactions during the turn.
    """

    text: str
    session_id: str
    usage: Usage = field(default_factory=Usage)
    api_calls: int = 0
    tool_calls: int = 0
    compressions: int = 0
    review_ran: bool = False
    finish_reason: str = "stop"


class Agent(MemoryReview, Compaction):
    """The agent loop. ``model`` is any :class:`~hermes_memory.llm.base.ChatModel`.

    :param aux_model: model for summaries, memory flushes and reviews (default: ``model``).
    :param home: data home (path or :class:`HermesHome`; default ``$HERMES_HOME``/``~/.hermes``).
    :param config: parsed ``config.yaml`` (default: loaded from the home).
    :param provider: an external :class:`MemoryProvider` instance; when ``None`` the one named by
        ``memory.provider`` is loaded, and a configured provider that cannot load or is unavailable
        raises :class:`~hermes_memory.errors.ProviderError` (never silently dropped).
    :param session_db: a :class:`SessionDB` to share (default: ``<home>/state.db``).
    :param resume: id, unique id prefix or title of a session to continue instead of starting one.
    :param platform: ``platform`` passed to providers (``"cli"``); ``source`` is the session row's source.
    :param identity: first paragraph of the system prompt (default :data:`prompt.DEFAULT_IDENTITY`).
    :param max_iterations: model calls per turn (default :data:`MAX_TOOL_ITERATIONS`).
    :param summary_model: model for compression summaries (``compression.summary_model``; default ``aux_model``).

    Raises :class:`SessionStoreError` (:class:`~hermes_memory.sessions.db.SessionLookupError`) when
    ``resume`` matches no session or is an ambiguous id prefix (the message lists candidates).
    """

    def __init__(self, model: ChatModel, *, aux_model: ChatModel | None = None,
                 home: HermesHome | str | Path | None = None, config: HermesConfig | None = None,
                 provider: MemoryProvider | None = None, session_db: SessionDB | None = None,
                 resume: str | None = None, platform: str = "cli", source: str = "cli",
                 identity: str | None = None, max_iterations: int = MAX_TOOL_ITERATIONS,
                 summary_model: ChatModel | None = None) -> None:
        self.model = model
        self.aux_model = aux_model or model
        self.home = home if isinstance(home, HermesHome) else HermesHome.resolve(home)
        self.home.ensure()
        self.config = config if config is not None else load_config(self.home.config_path)
        self.platform = platform
        self.source = source
        self.identity = identity
        self.max_iterations = max_iterations
        mem = self.config.memory
        self.memory_enabled = mem.memory_enabled
        self.user_profile_enabled = mem.user_profile_enabled
        self.store: MemoryStore | None = None
        if self.memory_enabled or self.user_profile_enabled:
            self.store = open_memory_store(self.home, self.config)
        self.db = session_db or open_session_db(self.home, self.config)
        if session_db is None:  # session_search fused with semantic search when search.embeddings is on
            fusion.attach(self.db, self.config.search)
        self._external = provider if provider is not None else load_configured_provider(mem.provider, self.home.root)
        self.summary_model = summary_model or self.aux_model
        self.compressor = ContextCompressor(model.context_length, self.config.compression, self._summarize)
        self.nudge_interval = mem.nudge_interval
        self.flush_min_turns = mem.flush_min_turns
        self.total_usage = Usage()
        self.total_api_calls = 0
        self._turns_since_memory = 0
        self._memory_used_this_turn = False
        self.last_flush: FlushOutcome | None = None
        #: None: force the ``memory`` tool in flushes only where it keeps the prompt cache (see
        #: :meth:`_side_call_tools`); True/False: always / never send the forced tool choice.
        self.flush_force_tool: bool | None = None
        self._closed = True
        self._turn_usage: Usage | None = None
        self._turn_calls = 0
        self._rotation_failed_this_turn = False
        self._start_session(resume)

    # ------------------------------------------------------------------ session lifecycle
    def _new_manager(self) -> MemoryManager:
        manager = MemoryManager()
        manager.add_provider(BuiltinMemoryProvider(self.store, self.memory_enabled, self.user_profile_enabled))
        if self._external is not None:
            manager.add_provider(self._external)
        return manager

    def _start_session(self, resume: str | None) -> None:
        self.messages: list[dict[str, Any]] = []
        self.session_usage = Usage()
        self.session_api_calls = 0
        self._turns_since_flush = 0
        self._session_created = False
        parent = ""
        if resume:
            sid = self._resolve_session(resume)
            row = self.db.get_session(sid) or {}
            self.session_id = sid
            stored = [m for m in self.db.get_messages_as_conversation(sid) if m.get("role") != "system"]
            # A process killed mid-tool (closed terminal, kill -9) can leave a call without its result;
            # the APIs refuse such a history on every turn, so unpaired calls/results are dropped here.
            self.messages, dropped = sanitize_tool_pairs(stored)
            if dropped:
                log.warning("session %s: dropped %d unpaired tool call(s)/result(s) on resume", sid, dropped)
            self._session_created = True
            self.db.reopen_session(sid)
            parent = row.get("parent_session_id") or ""
        else:
            self.session_id = new_session_id()
            row = {}
        self.manager = self._new_manager()
        self.manager.initialize_all(self.session_id, hermes_home=str(self.home.root), platform=self.platform,
                                    agent_context="primary", **({"parent_session_id": parent} if parent else {}))
        # Resuming keeps the stored prompt byte-identical (its prompt cache stays valid).
        self.system_prompt = row.get("system_prompt") or self._build_system_prompt()
        self._closed = False

    def _resolve_session(self, ref: str) -> str:
        ref = scrub_text(ref)  # undecodable terminal bytes (lone surrogates) cannot be bound by SQLite
        # SessionLookupError (a SessionStoreError): unknown, or an ambiguous prefix with candidates
        return self.db.resolve_session(ref)

    def _build_system_prompt(self) -> str:
        return build_system_prompt(identity=self.identity, memory_enabled=self.memory_enabled,
                                   user_profile_enabled=self.user_profile_enabled, session_search_enabled=True,
                                   memory_blocks=self.manager.build_system_prompt())

    def _ensure_session_row(self) -> None:
        if not self._session_created:
            self.db.create_session(self.session_id, source=self.source, model=self.model.name,
                                   system_prompt=self.system_prompt)
            self._session_created = True

    def close(self, reason: str = "user_exit") -> None:
        """End the live session: flush memories (``flush_min_turns`` applies), ``on_session_end``,
        mark the row ended with ``reason``, ``shutdown_all``. Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._session_created and self._turns_since_flush > 0:
                self._flush(min_turns=None)
        finally:  # Ctrl-C during the flush (a model call) still ends the session and the providers
            self.manager.on_session_end(self._plain(self.messages))
            if self._session_created:
                self.db.end_session(self.session_id, reason)
            self.manager.shutdown_all()

    def new_session(self) -> str:
        """``/new``: close the live session (reason ``new_session``) and start a fresh one; returns its id."""
        self.close("new_session")
        self._start_session(None)
        return self.session_id

    def resume(self, ref: str) -> str:
        """Close the live session (reason ``resumed_other``) and continue session ``ref``; returns its id."""
        sid = self._resolve_session(ref)
        if sid == self.session_id:
            return sid
        self.close("resumed_other")
        self._start_session(sid)
        return self.session_id

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ tools
    @property
    def memory_tool_enabled(self) -> bool:
        return self.store is not None

    def tool_schemas(self) -> list[dict[str, Any]]:
        """Tools offered to the model: ``memory`` (when a store is enabled), ``session_search``, provider tools."""
        tools: list[dict[str, Any]] = []
        if self.memory_tool_enabled:
            tools.append(MEMORY_TOOL_SCHEMA)
        tools.append(SESSION_SEARCH_SCHEMA)
        taken = {t["name"] for t in tools}
        for schema in self.manager.get_all_tool_schemas():
            if schema.get("name") not in taken:
                tools.append(schema)
                taken.add(schema["name"])
        return tools

    def run_memory_tool(self, args: dict[str, Any], *, origin: str = "foreground") -> str:
        """Run one ``memory`` call against the store, mirror a committed write to the external provider
        (``notify_memory_tool_write``) and reset the nudge counter. Returns the tool's JSON string."""
        if self.store is None:
            return json.dumps({"success": False, "error": "Memory is not available. It is disabled in config.yaml "
                                                          "(memory.memory_enabled / memory.user_profile_enabled)."})
        if not self.memory_enabled and args.get("target", "memory") != "user":
            return json.dumps({"success": False, "error": "Only the 'user' store is enabled; use target='user'."})
        # ``store`` and ``origin`` are ours: a model passing them must neither redirect the write nor
        # lift the review's add-only origin (nor make the call fail with a duplicate keyword).
        clean = {k: v for k, v in args.items() if k not in _MEMORY_INTERNAL_ARGS}
        result = memory_tool(**clean, store=self.store, origin=origin)
        self._turns_since_memory = 0
        self._memory_used_this_turn = True
        self.manager.notify_memory_tool_write(result, clean)
        return result

    def _dispatch(self, name: str, args: dict[str, Any]) -> str:
        if "__invalid_arguments__" in args:
            return json.dumps({"error": f"arguments for {name} were not a JSON object: "
                                        f"{args['__invalid_arguments__'][:200]}. Call it again with valid JSON."})
        try:
            if name == "memory" and self.memory_tool_enabled:
                return self.run_memory_tool(args)
            if name == "session_search":
                summarizer = self._summarize_session if self.config.session_search.summarize else None
                return session_search(args, self.db, current_session_id=self.session_id, summarizer=summarizer)
            if self.manager.has_tool(name):
                return self.manager.handle_tool_call(name, args, session_id=self.session_id)
        except Exception as exc:  # a tool failure is reported to the model, not raised
            log.warning("tool %s failed: %s", name, exc)
            return json.dumps({"error": f"tool {name} failed: {type(exc).__name__}: {exc}"})
        known = ", ".join(t["name"] for t in self.tool_schemas())
        return json.dumps({"error": f"Unknown tool '{name}'. Available tools: {known}."})

    # ------------------------------------------------------------------ model plumbing
    @staticmethod
    def _plain(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [strip_private_keys(m) for m in messages]

    def _prepare(self, api: list[dict[str, Any]]) -> list[dict[str, Any]]:
        api = self._plain(api)
        if getattr(self.model, "supports_cache_control", False):
            api = apply_anthropic_cache_control(api, self.config.prompt_caching.cache_ttl, native_anthropic=True)
        return api

    def _account(self, resp: ModelResponse, *, main: bool) -> None:
        u = resp.usage
        self.session_usage = self.session_usage + u
        self.total_usage = self.total_usage + u
        self.session_api_calls += 1
        self.total_api_calls += 1
        if self._turn_usage is not None:
            self._turn_usage = self._turn_usage + u
            self._turn_calls += 1
        if self._session_created:
            self.db.update_token_counts(self.session_id, input_tokens=u.prompt_tokens,
                                        output_tokens=u.completion_tokens, cache_read_tokens=u.cache_read_tokens,
                                        cache_write_tokens=u.cache_write_tokens, model=self.model.name,
                                        api_call_count=1)
        if main:
            self.compressor.update_from_response({"prompt_tokens": u.prompt_tokens,
                                                  "completion_tokens": u.completion_tokens,
                                                  "total_tokens": u.prompt_tokens + u.completion_tokens})

    def _summarize(self, prompt: str, *, max_tokens: int | None = None) -> str:
        """Summariser handed to the compressor: one auxiliary-model call. Its ``Model*Error`` propagate
        unchanged: the compressor classifies them by ``kind`` (auth/network abort, 429/5xx fall back)."""
        opts: dict[str, Any] = {"max_tokens": max_tokens} if max_tokens else {}
        resp = self.summary_model.complete([{"role": "user", "content": prompt}], **opts)
        self._account(resp, main=False)
        return resp.content

    def _summarize_session(self, transcript: str, query: str) -> str:
        """``session_search`` summariser (``session_search.summarize: true``): one auxiliary-model call."""
        prompt = (f"Summarise this past conversation in at most 8 sentences, focusing on what relates to "
                  f"\"{query}\": decisions, facts about the user, outcomes. Transcript:\n\n{transcript}")
        resp = self.aux_model.complete([{"role": "user", "content": prompt}], max_tokens=1024)
        self._account(resp, main=False)
        return resp.content

    def _persist(self, message: dict[str, Any], *, token_count: int | None = None,
                 finish_reason: str | None = None) -> None:
        self._ensure_session_row()
        self.db.append_message(
            self.session_id, message["role"], message.get("content"),
            tool_name=message.get("name") if message["role"] == "tool" else None,
            tool_calls=message.get("tool_calls") or None, tool_call_id=message.get("tool_call_id"),
            token_count=token_count, finish_reason=finish_reason,
        )

    def _api_messages(self, block: str) -> list[dict[str, Any]]:
        """System prompt + history, with the fenced recall appended to the last user message's copy."""
        api = [{"role": "system", "content": self.system_prompt}]
        api += [copy.copy(m) for m in self.messages]
        if block:
            for i in range(len(api) - 1, 0, -1):
                if api[i].get("role") == "user":
                    content = api[i].get("content")
                    if isinstance(content, list):
                        api[i]["content"] = [*content, {"type": "text", "text": block}]
                    else:
                        api[i]["content"] = f"{content or ''}\n\n{block}"
                    break
        return api

    def _call_model(self, block: str, tools: list[dict[str, Any]]) -> ModelResponse:
        """Preflight compression, the call, and one compress-and-retry on a context-length error."""
        for _ in range(PREFLIGHT_MAX_PASSES):
            api = self._api_messages(block)
            if len(api) <= self.config.compression.protect_first_n + self.config.compression.protect_last_n + 1:
                break
            if not self.compressor.should_compress_preflight(api, tools):
                break
            if not self.compress_context(reason="preflight"):
                break
        try:
            resp = self.model.complete(self._prepare(self._api_messages(block)), tools=tools or None)
        except ContextLengthError as first:
            log.warning("context-length error: compressing and retrying once")
            if not self.compress_context(reason="context_length", force=True):
                raise self._uncured(first) from first
            try:
                resp = self.model.complete(self._prepare(self._api_messages(block)), tools=tools or None)
            except ContextLengthError as again:
                raise self._uncured(again) from again
        self._account(resp, main=True)
        return resp

    def _uncured(self, exc: ContextLengthError) -> ContextLengthError:
        """The error raised when compressing once did not make the prompt fit: what to do about it."""
        err = ContextLengthError(
            f"{clause(exc)}. Compressing the conversation did not make it fit. Compression budgets against "
            f"model.context_length in config.yaml ({self.model.context_length:,} tokens): set it to the server's "
            "real window if that is smaller, shorten a message that alone exceeds the window, or start a new "
            "session (/new in chat)."
        )
        err.status_code = getattr(exc, "status_code", None)
        err.kind = "context_length"
        return err

    # ------------------------------------------------------------------ the turn
    def run_turn(self, user_message: str) -> TurnResult:
        """Run one user turn to its final answer; see the module docstring for the steps.

        Raises :class:`~hermes_memory.errors.ModelError` when the model fails (auth, network, a
        context-length error that one compression did not cure); the user message is already in
        SessionDB then, except on the first turn of a new session that got no answer at all: that
        session (one user message) is deleted and the message dropped from the history, so a dead
        model leaves nothing behind (``session_stored`` is False again). Provider failures never raise.
        """
        if self._closed:
            raise RuntimeError("this Agent's session is closed; call new_session() or resume() first")
        # Undecodable terminal bytes arrive as lone surrogates, which no SDK can encode; scrub them
        # the way SessionDB stores them so history, the wire and state.db hold the same text.
        user_message = scrub_text(user_message)
        self._turn_usage, self._turn_calls = Usage(), 0
        self._memory_used_this_turn = False
        self._rotation_failed_this_turn = False
        compressions_before = self.compressor.compression_count
        if self.store is not None and hasattr(self.store, "reset_consolidation_failures"):
            self.store.reset_consolidation_failures()
        review_due = False
        if self.nudge_interval > 0 and self.memory_tool_enabled:
            self._turns_since_memory += 1
            if self._turns_since_memory >= self.nudge_interval:
                review_due = True
                self._turns_since_memory = 0
        turn_number = count_user_turns(self.messages) + 1
        self.manager.on_turn_start(turn_number, user_message)
        raw = "" if is_trivial_prompt(user_message) else self.manager.prefetch_all(user_message,
                                                                                   session_id=self.session_id)
        block = build_memory_context_block(raw)
        user = {"role": "user", "content": user_message}
        fresh, start = not self._session_created, len(self.messages)
        self.messages.append(user)
        self._persist(user)
        self._turns_since_flush += 1
        tools = self.tool_schemas()
        text, finish, tool_count = "", "stop", 0
        try:
            for _ in range(self.max_iterations):
                resp = self._call_model(block, tools)
                assistant = {"role": "assistant", "content": resp.message.get("content")}
                if resp.tool_calls:
                    assistant["tool_calls"] = resp.tool_calls
                self.messages.append(assistant)
                self._persist(assistant, token_count=resp.usage.completion_tokens, finish_reason=resp.finish_reason)
                finish = resp.finish_reason
                if not resp.tool_calls:
                    text = message_text(assistant)
                    break
                answered = 0
                try:
                    for call in resp.tool_calls:
                        fn = call.get("function") or {}
                        name = fn.get("name", "")
                        result = self._dispatch(name, parse_tool_arguments(fn.get("arguments")))
                        tool_count += 1
                        tool_msg = {"role": "tool", "tool_call_id": call.get("id"), "name": name, "content": result}
                        self.messages.append(tool_msg)
                        self._persist(tool_msg)
                        answered += 1
                except BaseException:
                    # Ctrl-C (or a crash) while a tool ran: every call still gets a result, or the
                    # history (live and in SessionDB) is one the model APIs reject from now on.
                    self._answer_interrupted(resp.tool_calls[answered:])
                    raise
                if self.compressor.should_compress():
                    self.compress_context(reason="threshold")
            else:
                text = f"(stopped after {self.max_iterations} model calls without a final answer)"
                finish = "max_iterations"
                stop = {"role": "assistant", "content": text}
                self.messages.append(stop)
                self._persist(stop, finish_reason=finish)
            self.manager.sync_all(user_message, text, session_id=self.session_id, messages=self._plain(self.messages))
            self.manager.queue_prefetch_all(user_message, session_id=self.session_id)
            review_ran = False
            if review_due and not self._memory_used_this_turn:
                review_ran = self._run_review()
            if self.compressor.should_compress():
                self.compress_context(reason="threshold")
            return TurnResult(text=text, session_id=self.session_id, usage=self._turn_usage,
                              api_calls=self._turn_calls, tool_calls=tool_count,
                              compressions=self.compressor.compression_count - compressions_before,
                              review_ran=review_ran, finish_reason=finish)
        except Exception:  # not Ctrl-C: an interrupted first turn is kept and ended as "interrupted"
            if fresh and not any(m.get("role") == "assistant" for m in self.messages[start:]):
                self._discard_unanswered_session(start)
            raise
        finally:
            self._turn_usage = None

    @property
    def session_stored(self) -> bool:
        """True once the live session has a row in SessionDB (its first message was saved)."""
        return self._session_created

    def _discard_unanswered_session(self, start: int) -> None:
        """The first turn of a new session failed without an answer (model unreachable, refused): remove
        the session row it created, so no one-message session is left behind, and forget the turn.
        The agent stays usable: the next turn creates the row again."""
        del self.messages[start:]
        self._turns_since_flush = max(0, self._turns_since_flush - 1)
        try:
            self.db.delete_session(self.session_id)
        except Exception as exc:  # keep the model error as the one the caller sees
            log.warning("could not remove the unanswered session %s: %s", self.session_id, exc)
            return
        self._session_created = False

    def _answer_interrupted(self, calls: list[dict[str, Any]]) -> None:
        """Give each of ``calls`` (not yet answered) an error result, in history and SessionDB."""
        for call in calls:
            name = (call.get("function") or {}).get("name", "")
            msg = {"role": "tool", "tool_call_id": call.get("id"), "name": name,
                   "content": json.dumps({"error": f"tool {name} was interrupted before it returned"})}
            self.messages.append(msg)
            try:
                self._persist(msg)
            except Exception as exc:  # keep the original interruption as the error the caller sees
                log.warning("could not save the result of interrupted tool %s: %s", name, exc)

    # ------------------------------------------------------------------ status
    def status(self) -> dict[str, Any]:
        """Counters for the CLI footer: session id, tokens (session and total), cache share, compressions."""
        return {
            "session_id": self.session_id,
            "session_usage": self.session_usage.as_dict(),
            "total_usage": self.total_usage.as_dict(),
            "cache_share": round(self.total_usage.cache_share, 4),
            "api_calls": self.total_api_calls,
            "compressions": self.compressor.compression_count,
            "context": self.compressor.get_status(),
        }
