"""``flush_memories``: one extra model call that may only save memories before history is lost.

Behaviour (docs/reference.md §9, §11 item 20; failure case B34): a user message tagged with a
unique ``_flush_sentinel`` is appended to the history, the model is called once, the memory calls
it returns are run against the store, and in a ``finally`` the history is popped back through the
sentinel, so the caller's list is exactly what it was before, even when the model call raises.
Errors are logged and swallowed: a failing flush never blocks a compression or a session end.

**Prompt cache.** The request can share the cached prefix of the session: the caller passes the
session's own ``tools`` (the service caches tools -> system -> messages, so offering a different
tool list makes the whole request a cold cache write) and the same system prompt and ``prepare``.
The flush is then restricted to memory writes by other means: the flush instruction says so, and
every call to another tool is refused here, never run (``FlushOutcome.refused``). Where forcing
the tool costs nothing, ``force_tool=True`` also sends the provider's forced tool choice
(``tool_choice={"name": "memory"}``); a forced model must call the tool, so that instruction asks
for an empty ``operations`` list when nothing qualifies, which is counted as "nothing to save"
and never reaches the store. A server that rejects the forced choice (400) is asked once more
without it.

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

from hermes_memory.agent.prompt import FLUSH_FORCED_NOTE, FLUSH_PROMPT
from hermes_memory.llm.base import ChatModel, ModelRequestError, ModelResponse, parse_tool_arguments

log = logging.getLogger(__name__)

SENTINEL_KEY = "_flush_sentinel"
FLUSH_TEMPERATURE = 0.3
"""Reference value for the flush call (docs/reference.md §9)."""
FLUSH_MAX_TOKENS = 5120
"""Reference cap on the flush reply, in tokens."""


@dataclass
class FlushOutcome:
    """What a flush did: ``ran`` (a model call was made), ``skipped`` reason, ``writes`` (memory calls
    run), ``refused`` (calls to other tools, not run), ``forced`` (the forced tool choice was sent and
    accepted)."""

    ran: bool = False
    skipped: str = ""
    writes: int = 0
    refused: int = 0
    forced: bool = False
    error: str = ""
    usage: Any = None
    messages_seen: int = 0


def _is_empty_batch(args: dict[str, Any]) -> bool:
    ops = args.get("operations")
    return isinstance(ops, list) and not ops and not args.get("action")


def count_user_turns(messages: list[dict[str, Any]]) -> int:
    """Number of real user messages (flush/review sentinels excluded)."""
    return sum(1 for m in messages if m.get("role") == "user" and not m.get(SENTINEL_KEY))


def flush_memories(messages: list[dict[str, Any]], *, model: ChatModel, system_prompt: str,
                   memory_schema: dict[str, Any] | None, run_memory_tool: Callable[[dict[str, Any]], str],
                   flush_min_turns: int, min_turns: int | None = None,
                   prepare: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None = None,
                   on_response: Callable[[ModelResponse], None] | None = None,
                   tools: list[dict[str, Any]] | None = None, force_tool: bool = False) -> FlushOutcome:
    """Give the model one chance to save memories from ``messages`` (the full, uncompressed history).

    ``run_memory_tool(args) -> JSON str`` executes one ``memory`` call against the store (and mirrors
    it to the external provider). ``prepare`` turns the API message list into what is sent (e.g. adds
    prompt-cache breakpoints); ``on_response`` receives the reply (token accounting). ``tools`` is
    the tool list sent (default: only ``memory_schema``; pass the session's tools to share its
    prompt cache; ``memory_schema`` is added when missing); ``force_tool`` sends the forced tool
    choice (see the module docstring). Returns a :class:`FlushOutcome`; never raises for a model or
    tool failure. ``messages`` is restored in place.
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
    name = memory_schema.get("name", "memory")
    offered = list(tools) if tools else [memory_schema]
    if not any((t.get("function") or t).get("name") == name for t in offered):
        offered.append(memory_schema)
    sentinel = f"__flush_{id(messages)}_{time.monotonic_ns()}"
    outcome = FlushOutcome(ran=True, messages_seen=len(messages))
    prompt = f"{FLUSH_PROMPT}\n\n{FLUSH_FORCED_NOTE}" if force_tool else FLUSH_PROMPT
    messages.append({"role": "user", "content": prompt, SENTINEL_KEY: sentinel})
    try:
        api = [{"role": "system", "content": system_prompt}, *messages]
        if prepare is not None:
            api = prepare(api)
        opts: dict[str, Any] = {"temperature": FLUSH_TEMPERATURE, "max_tokens": FLUSH_MAX_TOKENS}
        if force_tool:
            try:
                resp = model.complete(api, tools=offered, tool_choice={"name": name}, **opts)
                outcome.forced = True
            except ModelRequestError as exc:  # a server without named tool_choice: ask once more unforced
                log.info("flush_memories: forced tool choice refused (%s); retrying without it", exc)
                resp = model.complete(api, tools=offered, **opts)
        else:
            resp = model.complete(api, tools=offered, **opts)
        outcome.usage = resp.usage
        if on_response is not None:
            on_response(resp)
        for call in resp.tool_calls:
            fn = call.get("function") or {}
            if fn.get("name") != name:
                outcome.refused += 1
                log.warning("flush_memories: refused a call to %r (only the memory tool may run during a flush)",
                            fn.get("name"))
                continue
            args = parse_tool_arguments(fn.get("arguments"))
            if _is_empty_batch(args):
                continue  # the forced flush's "nothing to save"
            result = run_memory_tool(args)
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
