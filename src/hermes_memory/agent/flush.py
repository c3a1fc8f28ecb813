"""``flush_memories``: one extra model call that may only save memories before history is lost.

Behaviour (reference-behaviour.md §9, §11.20; failure case B34): a user message tagged with a
unique ``_flush_sentinel`` is appended to the history, the model is called once with the memory
tool as its *only* tool, the memory calls it returns are run against the store, and in a
``finally`` the history is popped back through the sentinel, so the caller's list is exactly what
it was before, even when the model call raises. Errors are logged and swallowed: a failing flush
never blocks a compression or a session end.

Skipped (no model call) when: ``flush_min_turns == 0`` and no explicit ``min_turns`` (flushing is
off), there is no memory tool, the history has fewer than ``min_turns`` user turns (default
``flush_min_turns``, 6 in the reference config), or fewer than 3 messages.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hermes_memory.agent.prompt import FLUSH_PROMPT
from hermes_memory.llm.base import ChatModel, ModelResponse, parse_tool_arguments

log = logging.getLogger(__name__)

SENTINEL_KEY = "_flush_sentinel"
FLUSH_TEMPERATURE = 0.3
"""Reference value for the flush call (reference-behaviour.md §9)."""
FLUSH_MAX_TOKENS = 5120
"""Reference cap on the flush reply, in tokens."""


@dataclass
class FlushOutcome:
    """What a flush did: ``ran`` (a model call was made), ``skipped`` reason, ``writes`` (memory calls run)."""

    ran: bool = False
    skipped: str = ""
    writes: int = 0
    error: str = ""
    usage: Any = None
    messages_seen: int = 0


def count_user_turns(messages: list[dict[str, Any]]) -> int:
    """Number of real user messages (flush/review sentinels excluded)."""
    return sum(1 for m in messages if m.get("role") == "user" and not m.get(SENTINEL_KEY))


def flush_memories(messages: list[dict[str, Any]], *, model: ChatModel, system_prompt: str,
                   memory_schema: dict[str, Any] | None, run_memory_tool: Callable[[dict[str, Any]], str],
                   flush_min_turns: int, min_turns: int | None = None,
                   prepare: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None = None,
                   on_response: Callable[[ModelResponse], None] | None = None) -> FlushOutcome:
    """Give the model one chance to save memories from ``messages`` (the full, uncompressed history).

    ``run_memory_tool(args) -> JSON str`` executes one ``memory`` call against the store (and mirrors
    it to the external provider). ``prepare`` turns the API message list into what is sent (e.g. adds
    prompt-cache breakpoints); ``on_response`` receives the reply (token accounting). Returns a
    :class:`FlushOutcome`; never raises for a model or tool failure. ``messages`` is restored in place.
    """
    if flush_min_turns == 0 and min_turns is None:
        return FlushOutcome(skipped="disabled (memory.flush_min_turns is 0)")
    if memory_schema is None:
        return FlushOutcome(skipped="no memory tool")
    needed = flush_min_turns if min_turns is None else min_turns
    turns = count_user_turns(messages)
    if turns < needed:
        return FlushOutcome(skipped=f"{turns} user turn(s) < {needed}")
    if len(messages) < 3:
        return FlushOutcome(skipped="fewer than 3 messages")
    sentinel = f"__flush_{id(messages)}_{time.monotonic_ns()}"
    outcome = FlushOutcome(ran=True, messages_seen=len(messages))
    messages.append({"role": "user", "content": FLUSH_PROMPT, SENTINEL_KEY: sentinel})
    try:
        api = [{"role": "system", "content": system_prompt}, *messages]
        if prepare is not None:
            api = prepare(api)
        resp = model.complete(api, tools=[memory_schema], temperature=FLUSH_TEMPERATURE,
                              max_tokens=FLUSH_MAX_TOKENS)
        outcome.usage = resp.usage
        if on_response is not None:
            on_response(resp)
        for call in resp.tool_calls:
            fn = call.get("function") or {}
            if fn.get("name") != memory_schema.get("name", "memory"):
                log.warning("flush_memories: ignoring call to %r (only the memory tool is offered)", fn.get("name"))
                continue
            result = run_memory_tool(parse_tool_arguments(fn.get("arguments")))
            outcome.writes += 1
            try:
                if not json.loads(result).get("success", False):
                    log.info("flush_memories: memory call refused: %s", result[:200])
            except (ValueError, AttributeError):
                pass
    except Exception as exc:  # a flush must never break compression or exit
        outcome.error = f"{type(exc).__name__}: {exc}"
        log.warning("flush_memories failed (continuing without it): %s", outcome.error)
    finally:
        while messages:
            popped = messages.pop()
            if popped.get(SENTINEL_KEY) == sentinel:
                break
    return outcome
