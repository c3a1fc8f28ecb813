"""The agent's background memory work: the periodic memory review and the pre-compaction/exit memory flush, each a side call of the auxiliary model with the memory tool only."""

from __future__ import annotations

import json
import logging
from typing import Any

from hermes_memory.agent.flush import FlushOutcome, flush_memories
from hermes_memory.agent.host import AgentHost
from hermes_memory.agent.prompt import NUDGE_REVIEW_PROMPT
from hermes_memory.llm.base import (
    ChatModel,
    parse_tool_arguments,
)
from hermes_memory.memory import MEMORY_TOOL_SCHEMA

log = logging.getLogger("hermes_memory.agent.loop")  # the agent's logger, as before the split

REVIEW_MAX_ITERATIONS = 8
"""Model calls a memory review may make (docs/reference.md §9)."""


class MemoryReview(AgentHost):
    """Review and flush methods of :class:`~hermes_memory.agent.loop.Agent` (a mixin: uses its models, store, manager and history)."""

    # ------------------------------------------------------------------ memory review and flush
    def _run_review(self) -> bool:
        """The nudge's memory review: same model, memory tool only (add-only origin), at most 8 calls.

        Nothing from the review enters the history or SessionDB. Returns True when it ran."""
        msgs = [{"role": "system", "content": self.system_prompt}, *self._plain(self.messages),
                {"role": "user", "content": NUDGE_REVIEW_PROMPT}]
        # the session's own tools, so the review reads the turn's prompt cache; other tools are refused
        tools = self.tool_schemas()
        try:
            for _ in range(REVIEW_MAX_ITERATIONS):
                resp = self.model.complete(self._prepare(msgs), tools=tools)
                self._account(resp, main=False)
                msgs.append({"role": "assistant", "content": resp.message.get("content"),
                             **({"tool_calls": resp.tool_calls} if resp.tool_calls else {})})
                if not resp.tool_calls:
                    break
                for call in resp.tool_calls:
                    fn = call.get("function") or {}
                    if fn.get("name") == "memory":
                        result = self.run_memory_tool(parse_tool_arguments(fn.get("arguments")),
                                                      origin="background_review")
                    else:
                        result = json.dumps({"error": "only the memory tool is available during a memory review"})
                    msgs.append({"role": "tool", "tool_call_id": call.get("id"), "content": result})
        except Exception as exc:
            log.warning("memory review failed (skipped): %s", exc)
        return True

    def _side_call_tools(self, model: ChatModel) -> tuple[list[dict[str, Any]], bool]:
        """Tools for a flush or review on ``model`` and whether to force the ``memory`` tool.

        On the session's own model the request offers the session's tools unchanged, so it reads the
        prompt cache the turns wrote (tools come first in the cached prefix); the tool is forced only
        where the adapter says a forced choice keeps the cached messages (neither Anthropic nor
        OpenAI documents that today). Another model has no warm cache: it is offered ``memory`` alone
        and forced, which costs nothing there. ``flush_force_tool`` (True/False) overrides the choice.
        """
        if model is self.model:
            tools = self.tool_schemas()
            force = bool(getattr(model, "forced_tool_choice_keeps_message_cache", False))
        else:
            tools, force = [MEMORY_TOOL_SCHEMA], True
        if self.flush_force_tool is not None:
            force = self.flush_force_tool
        return tools, force

    def _flush(self, *, min_turns: int | None) -> FlushOutcome:
        tools, force = self._side_call_tools(self.aux_model)
        outcome = flush_memories(
            self.messages, model=self.aux_model, system_prompt=self.system_prompt,
            memory_schema=MEMORY_TOOL_SCHEMA if self.memory_tool_enabled else None,
            run_memory_tool=self.run_memory_tool, flush_min_turns=self.flush_min_turns, min_turns=min_turns,
            prepare=self._prepare if self.aux_model is self.model else self._plain,
            on_response=lambda r: self._account(r, main=False), tools=tools, force_tool=force,
        )
        if outcome.ran:
            self._turns_since_flush = 0
        self.last_flush = outcome
        return outcome

    def flush_memories(self, *, min_turns: int | None = None) -> FlushOutcome:
        """Public ``flush_memories`` over the live history (see :mod:`hermes_memory.agent.flush`)."""
        return self._flush(min_turns=min_turns)
