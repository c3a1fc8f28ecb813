"""``ContextCompressor``: keeps a long conversation inside the model's context window.

Behaviour follows the reference agent's ``agent/context_compressor.py`` (docs/reference.md §5,
NEWEST safety fixes), with the failure cases B27, B29-B31, B33, B34 of docs/failure-cases.md:

1. **Prune** (no model call, :func:`prune_tool_outputs`): outside the protected tail, tool results
   over 200 chars become a one-line record of what the call did (tool, target, size, exit status),
   identical outputs keep only the newest copy, oversized tool-call arguments are shortened while
   staying valid JSON. Pruning its own output again changes nothing.
2. **Head**: the leading system message(s) plus ``protect_first_n`` messages; after the first compaction (or
   when the history already holds a summary, e.g. after a restart) only the system message(s).
3. **Tail**: a token-budgeted run of the newest messages that never splits an assistant tool-call
   message from its results and always holds the latest user message and the latest assistant
   reply verbatim. When everything
   after the head fits the budget (a short session), the tail is the minimum run of recent messages
   (``min(protect_last_n, 8)``, at least 3) and the rest is summarised, as the reference does; a
   middle no larger than a summary's fixed text is not compressed (the plan says why, and no
   summariser call is made).
4. **Summary** of the middle by the caller's summariser with the structured template, updating the
   previous summary (recovered from the history, so it survives a restart); or the deterministic
   LLM-free summary (:func:`~hermes_memory.context.summary.build_fallback_summary`).
5. **Assembly**: head + summary + tail, roles still alternating (the summary is merged into the
   first tail message when both neighbours collide; merged or standing alone, it ends with
   :data:`~hermes_memory.context.summary.END_MARKER`), no orphan tool call or result, the system
   message byte-identical (we do not append a note to it; the summary prefix carries that note,
   which also keeps the cached system prefix valid).

The summariser is any callable ``summarizer(prompt: str, *, max_tokens: int | None) -> str``.
Errors it raises are classified by :func:`classify_summary_error`. By default every summariser
failure, an empty or blank reply included, aborts the compaction: the input is returned unchanged
and ``last_compress_aborted = True`` (failure case B29: a failed summary must never cut turns).
``compression.fallback_on_summary_failure: true`` opts in to the lossy alternative for failures
other than ``auth`` and ``network`` (which always abort): the LLM-free summary of the dropped turns
is inserted and ``last_summary_fallback_used = True``; ``abort_on_summary_failure`` (the reference's
key) forces the abort whatever the opt-in says. Failures start a cooldown during which
``should_compress`` is False; ``compress(force=True)`` ignores it. With no summariser configured at
all, the LLM-free summary is the summary (that is not a failure).

Input: OpenAI-style message dicts, or what the SDKs return: message, tool-call and content-block
objects (openai ``ChatCompletionMessage`` / ``ChatCompletionMessageToolCall``, anthropic
``ToolUseBlock`` / ``TextBlock``, other pydantic models) are read as their dict forms
(:func:`normalize_messages`, called by every public entry point); results hold dicts.

Memory flush before the cut (B34): pass ``before_cut=callable``; it is called exactly once per
compaction that will cut something, with the full, unmodified input list, before pruning and
before the summariser. An exception from it is logged and compaction goes on.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hermes_memory.config import CompressionConfig
from hermes_memory.context.assemble import assemble
from hermes_memory.context.cooldown import (  # noqa: F401 - moved there, re-exported
    COOLDOWN_NOT_CONFIGURED_S,
    COOLDOWN_OTHER_S,
    COOLDOWN_TRANSIENT_S,
    classify_summary_error,
)
from hermes_memory.context.messages import (  # noqa: F401 - moved there, re-exported
    Message,
    _role,
    _summary_parts,
    normalize_messages,
    normalize_tool_call,
)
from hermes_memory.context.plan import (  # noqa: F401 - moved there, re-exported
    SUMMARY_OVERHEAD_TOKENS,
    CompressionPlan,
    align_cut,
    plan_compression,
)
from hermes_memory.context.prune import (  # noqa: F401 - moved there, re-exported
    ARGS_LEAF_KEEP_CHARS,
    ARGS_PRUNE_MIN_CHARS,
    ARGS_TRUNCATION_MARK,
    DUPLICATE_PLACEHOLDER,
    IMAGE_PLACEHOLDER,
    PRUNE_MIN_CHARS,
    PRUNE_RECORD_MAX_CHARS,
    prune_tool_outputs,
    shorten_tool_arguments,
    tool_result_record,
)
from hermes_memory.context.summary import (
    build_fallback_summary,
    build_summary_prompt,
    clean_summary_reply,
    format_summary,
    serialize_turns,
)
from hermes_memory.context.tokens import (
    estimate_messages_tokens_rough,
    estimate_request_tokens,
)
from hermes_memory.context.tool_pairs import (  # noqa: F401 - moved there, re-exported
    sanitize_tool_pairs,
)
from hermes_memory.errors import (  # noqa: F401 - the Summary*Error family is re-exported from here
    ModelCallError,
    ModelNotConfiguredError,
    SummarizerError,
    SummaryAuthError,
    SummaryNetworkError,
    SummaryRateLimitError,
)

logger = logging.getLogger("hermes_memory.context")

Summarizer = Callable[..., str]

#: Summary size cap in tokens: min(5 % of the context, 10K) (reference NEWEST).
MAX_SUMMARY_TOKENS_CAP = 10_000
#: Consecutive ineffective compactions after which ``should_compress`` stops firing (anti-thrash).
INEFFECTIVE_LIMIT = 2


def lowest_trigger_tokens(context_length: int) -> int:
    """Where the Hermes Agent 0.19 starts compressing when ``compression.threshold`` is 0 or
    below (its floors, measured on its ``ContextCompressor``): 75 % of a window under 512K tokens,
    but at least 64,000 tokens (its ``MINIMUM_CONTEXT_LENGTH``); when that floor reaches the window
    (windows under about 85K), 85 % of it. Tokens; never 0 and never the whole window."""
    pct = 0.75 if context_length < 512_000 else 0.0
    tokens = max(int(context_length * pct), 64_000)
    if tokens >= context_length:
        tokens = min(int(context_length * 0.85), context_length - 1)
    return max(1, tokens)





# ---------------------------------------------------------------------------------------------
# the compressor
# ---------------------------------------------------------------------------------------------


class ContextCompressor:
    """Compacts an OpenAI-style message list when it nears the context window.

    :param context_length: the model's context window, in tokens (> 0).
    :param config: the ``compression:`` section (defaults: threshold 0.50, target_ratio 0.20,
        protect_first_n 3, protect_last_n 20, min_tail_user_messages 1,
        abort_on_summary_failure False).
    :param summarizer: ``summarizer(prompt: str, *, max_tokens: int | None) -> str`` or ``None``
        (then the LLM-free summary is always used). See :func:`classify_summary_error` for how its
        exceptions are treated.
    :param clock: monotonic clock in seconds, used only for cooldowns (injectable for tests).
    :param fallback_max_chars: bound of the LLM-free summary body, in characters (default 8000).

    Raises :class:`ValueError` for a non-positive ``context_length``.

    Thresholds (tokens): ``threshold_tokens = config.threshold_tokens or int(context_length *
    config.threshold)``; ``tail_token_budget = int(threshold_tokens * target_ratio)``;
    ``max_summary_tokens = min(int(context_length * 0.05), 10_000)``. This is the reference's
    OLDER threshold rule; the NEWEST one's 64K floor is left out because it exceeds small local
    models' windows. A ``threshold`` of 0 means what it means to the reference, its lowest
    trigger (:func:`lowest_trigger_tokens`), not "never" (``enabled: false`` turns compression off).
    """

    name = "compressor"

    def __init__(
        self,
        context_length: int,
        config: CompressionConfig | None = None,
        summarizer: Summarizer | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        fallback_max_chars: int = 8000,
    ) -> None:
        if not isinstance(context_length, int) or context_length <= 0:
            raise ValueError(f"context_length must be a positive number of tokens, got {context_length!r}")
        self.context_length = context_length
        self.config = config or CompressionConfig()
        self.summarizer = summarizer
        self._clock = clock
        self.fallback_max_chars = fallback_max_chars
        if self.config.threshold_tokens:
            self.threshold_tokens = min(int(self.config.threshold_tokens), context_length)
        elif self.config.threshold <= 0:  # not "never": the reference's floor (enabled: false is off)
            self.threshold_tokens = lowest_trigger_tokens(context_length)
        else:
            self.threshold_tokens = max(1, int(context_length * self.config.threshold))
        self.tail_token_budget = max(1, int(self.threshold_tokens * self.config.target_ratio))
        self.max_summary_tokens = max(256, min(int(context_length * 0.05), MAX_SUMMARY_TOKENS_CAP))
        self.last_prompt_tokens = 0
        self.last_completion_tokens = 0
        self.last_total_tokens = 0
        self.compression_count = 0
        self.previous_summary: str | None = None
        self.last_compress_aborted = False
        self.last_summary_fallback_used = False
        self.last_summary_source: str | None = None  # "llm" | "llm_free" | None
        self.last_failure: str | None = None  # "<kind>: <message>" of the last summariser failure
        self.last_prompt: str | None = None  # the last prompt sent to the summariser
        self.last_stats: dict[str, Any] = {}
        self._cooldown_until = 0.0
        self._transient_streak = 0
        self._ineffective_streak = 0
        self._awaiting_effect = False
        self._unconfigured = False  # the summariser said no model is configured (LLM-free until cooldown ends)

    def reset(self) -> None:
        """Forget the conversation (``/new``, ``/reset``): counters, previous summary, cooldown,
        anti-thrash state and last token counts. Configuration is kept."""
        self.last_prompt_tokens = self.last_completion_tokens = self.last_total_tokens = 0
        self.compression_count = 0
        self.previous_summary = None
        self.last_compress_aborted = self.last_summary_fallback_used = False
        self.last_summary_source = self.last_failure = self.last_prompt = None
        self.last_stats = {}
        self._cooldown_until = 0.0
        self._transient_streak = self._ineffective_streak = 0
        self._awaiting_effect = False
        self._unconfigured = False

    # -- accounting -------------------------------------------------------------------------

    def update_from_response(self, usage: Mapping[str, Any] | None) -> None:
        """Store the real token counts a model reported for the last request.

        Accepts OpenAI keys (``prompt_tokens``, ``completion_tokens``, ``total_tokens``) and
        Anthropic keys (``input_tokens`` + ``cache_read_input_tokens`` +
        ``cache_creation_input_tokens`` as the prompt, ``output_tokens``). Missing keys count 0;
        ``None`` or ``{}`` store zeros. An SDK usage object (pydantic ``model_dump`` or plain
        attributes) is accepted too.
        """
        if usage is not None and not isinstance(usage, Mapping):
            dump = getattr(usage, "model_dump", None)
            usage = dump() if callable(dump) else dict(getattr(usage, "__dict__", {}))
        usage = usage or {}

        def num(key: str) -> int:
            value = usage.get(key)
            return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0

        prompt = num("prompt_tokens")
        if not prompt and "prompt_tokens" not in usage:
            prompt = num("input_tokens") + num("cache_read_input_tokens") + num("cache_creation_input_tokens")
        completion = num("completion_tokens") or num("output_tokens")
        total = num("total_tokens") or (prompt + completion if ("input_tokens" in usage or "output_tokens" in usage) else 0)
        self.last_prompt_tokens, self.last_completion_tokens, self.last_total_tokens = prompt, completion, total
        if self._awaiting_effect:
            self._awaiting_effect = False
            if prompt >= self.threshold_tokens:
                self._ineffective_streak += 1
            else:
                self._ineffective_streak = 0
        elif prompt and prompt < self.threshold_tokens:
            self._ineffective_streak = 0

    def cooldown_remaining(self) -> float:
        """Seconds left of the summariser-failure cooldown (0.0 when none)."""
        return max(0.0, self._cooldown_until - self._clock())

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        """True when ``prompt_tokens`` (default: the last reported prompt size) >= the threshold.

        False when compression is disabled in the config, during a summariser-failure cooldown,
        or after :data:`INEFFECTIVE_LIMIT` consecutive compactions that did not bring the prompt
        under the threshold (anti-thrash; cleared by a prompt under the threshold or a forced
        compaction).
        """
        if not self.config.enabled or (self.cooldown_remaining() > 0 and not self._unconfigured):
            return False
        if self._ineffective_streak >= INEFFECTIVE_LIMIT:
            return False
        tokens = self.last_prompt_tokens if prompt_tokens is None else prompt_tokens
        return tokens >= self.threshold_tokens

    def should_compress_preflight(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] | None = None
    ) -> bool:
        """Before a request: True when the estimated prompt (messages incl. system + tool schemas)
        reaches the threshold. Same refusals as :meth:`should_compress`."""
        messages = normalize_messages(messages)
        return self.should_compress(estimate_request_tokens(messages, tools))

    def get_status(self) -> dict[str, Any]:
        """``{last_prompt_tokens, threshold_tokens, context_length, usage_percent, compression_count,
        tail_token_budget, cooldown_remaining_s, last_compress_aborted, last_summary_fallback_used}``;
        ``usage_percent`` is last_prompt_tokens / context_length * 100, rounded to 0.1."""
        return {
            "last_prompt_tokens": self.last_prompt_tokens,
            "threshold_tokens": self.threshold_tokens,
            "context_length": self.context_length,
            "usage_percent": round(self.last_prompt_tokens / self.context_length * 100, 1),
            "compression_count": self.compression_count,
            "tail_token_budget": self.tail_token_budget,
            "cooldown_remaining_s": round(self.cooldown_remaining(), 1),
            "last_compress_aborted": self.last_compress_aborted,
            "last_summary_fallback_used": self.last_summary_fallback_used,
        }

    # -- phase 1 as its own step ------------------------------------------------------------

    def prune(self, messages: Sequence[Mapping[str, Any]]) -> tuple[list[Message], int]:
        """Phase 1 only (no model call): :func:`prune_tool_outputs` with this compressor's tail
        budget (tokens) and a tail floor of ``min(protect_last_n, 8)`` messages; the system message
        and head are left alone. Returns ``(new_list, pruned_count)``."""
        messages = normalize_messages(messages)
        head = 1 if messages and _role(messages[0]) == "system" else 0
        return prune_tool_outputs(
            messages,
            protect_tail_tokens=self.tail_token_budget,
            protect_tail_min=min(self.config.protect_last_n, 8),
            start=head,
        )

    # -- phase 2: boundaries ----------------------------------------------------------------

    def plan(self, messages: Sequence[Mapping[str, Any]]) -> CompressionPlan:
        """Compute head / middle / tail boundaries without changing anything (see :class:`CompressionPlan`)."""
        return plan_compression(
            messages, protect_first_n=self.config.protect_first_n, protect_last_n=self.config.protect_last_n,
            min_tail_user_messages=self.config.min_tail_user_messages, tail_token_budget=self.tail_token_budget,
            first_compaction=self.compression_count == 0)

    # -- phases 3 and 4 ---------------------------------------------------------------------

    def _start_cooldown(self, kind: str) -> None:
        if kind == "not_configured":
            delay = COOLDOWN_NOT_CONFIGURED_S
        elif kind == "transient":
            delay = COOLDOWN_TRANSIENT_S[min(self._transient_streak, len(COOLDOWN_TRANSIENT_S) - 1)]
            self._transient_streak += 1
        else:
            delay = COOLDOWN_OTHER_S
        if kind != "transient":
            self._transient_streak = 0
        self._cooldown_until = self._clock() + delay

    def _summarise(
        self,
        turns_for_model: list[Message],
        turns_raw: list[Message],
        previous: str | None,
        focus_topic: str | None,
        pre_compress_text: str,
        middle_tokens: int,
    ) -> tuple[str | None, str]:
        """Return ``(body, source)``; ``body is None`` means abort."""

        def fallback(reason: str) -> tuple[str | None, str]:
            if self.config.abort_on_summary_failure or not self.config.fallback_on_summary_failure:
                logger.warning("context compaction aborted, nothing was cut: %s", reason)
                return None, "aborted"
            logger.warning("summariser failed (%s); using the LLM-free summary", reason)
            return self._fallback_body(turns_raw, previous, focus_topic), "llm_free"

        if self.summarizer is None:
            return self._fallback_body(turns_raw, previous, focus_topic), "llm_free"
        if self.cooldown_remaining() > 0 and self._unconfigured:
            # No summary model is configured: the LLM-free summary is the summary, not a failure.
            return self._fallback_body(turns_raw, previous, focus_topic), "llm_free"
        if self.cooldown_remaining() > 0:
            self.last_failure = f"cooldown: {self.cooldown_remaining():.0f}s left after '{self.last_failure}'"
            return fallback("summariser in cooldown")
        target = max(2000, min(int(middle_tokens * 0.20), self.max_summary_tokens))
        prompt = build_summary_prompt(
            serialize_turns(turns_for_model),
            previous_summary=previous,
            target_tokens=target,
            focus_topic=focus_topic,
            pre_compress_text=pre_compress_text,
        )
        self.last_prompt = prompt
        try:
            reply = self.summarizer(prompt, max_tokens=None)
        except Exception as exc:  # any summariser fault is classified, never propagated
            kind = classify_summary_error(exc)
            self.last_failure = f"{kind}: {type(exc).__name__}: {exc}"
            self._start_cooldown(kind)
            self._unconfigured = kind == "not_configured"
            if self._unconfigured:
                logger.info("no summary model is configured; using the LLM-free summary")
                return self._fallback_body(turns_raw, previous, focus_topic), "llm_free"
            if kind in ("auth", "network"):
                logger.warning("context compaction aborted, nothing was cut: summariser %s error: %s", kind, exc)
                return None, "aborted"
            return fallback(f"{kind} error: {exc}")
        body = clean_summary_reply(reply if isinstance(reply, str) else None)
        if not body:
            self.last_failure = "empty: the summariser returned no text"
            self._start_cooldown("empty")
            return fallback("empty reply")
        self._transient_streak = 0
        self._cooldown_until = 0.0
        self._unconfigured = False
        return body, "llm"

    def _fallback_body(self, turns: list[Message], previous: str | None, focus_topic: str | None) -> str:
        limit = min(self.fallback_max_chars, self.max_summary_tokens * 4)
        return build_fallback_summary(turns, previous_summary=previous, focus_topic=focus_topic, max_chars=limit)

    def compress(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        current_tokens: int | None = None,
        focus_topic: str | None = None,
        force: bool = False,
        pre_compress_text: str = "",
        before_cut: Callable[[list[Message]], Any] | None = None,
    ) -> list[Message]:
        """Compact ``messages`` and return a **new** list (the input and its dicts are not mutated).

        :param current_tokens: the prompt size the caller measured (tokens), for the stats only.
        :param focus_topic: ``/compress <topic>``: the summary spends most of its budget on it.
        :param force: ignore the summariser cooldown (manual ``/compress``, context-length errors).
        :param pre_compress_text: text from the external provider's ``on_pre_compress``; given to
            the summariser as data.
        :param before_cut: called once with a copy of the full input list before anything is cut
            (memory flush, B34); not called when nothing would be cut. Its exceptions are logged.

        Returns the input unchanged (a new list, same length) when there is nothing to cut, when
        the compaction aborts (``last_compress_aborted``; see the module docstring), or when the
        result would not be smaller in estimated tokens than the input (``last_stats["plan"]``
        says so; ``before_cut`` has run by then). Otherwise returns
        ``head + [summary] + tail`` (the summary may be merged into the first tail message) and
        increments ``compression_count``. Summary messages carry ``_compressed_summary: True``;
        strip underscore keys before sending. Details of the run are in ``last_stats``.
        """
        self.last_compress_aborted = False
        self.last_summary_fallback_used = False
        self.last_summary_source = None
        messages = normalize_messages(messages)  # SDK objects (tool calls, messages, blocks) -> dicts
        before_tokens = estimate_messages_tokens_rough(messages)
        if force:
            self._cooldown_until = 0.0
            self._ineffective_streak = 0
        plan = self.plan(messages)
        self.last_stats = {
            "messages_before": len(messages),
            "tokens_before": before_tokens,
            "reported_tokens": current_tokens,
            "plan": plan.reason,
        }
        if not plan.will_compress:
            self._ineffective_streak += 1
            return list(messages)
        if before_cut is not None:
            try:
                before_cut(list(messages))
            except Exception as exc:  # a failing flush must not block compaction (B34)
                logger.warning("before_cut hook failed, compacting anyway: %s: %s", type(exc).__name__, exc)
                self.last_stats["before_cut_error"] = f"{type(exc).__name__}: {exc}"
        head_end, tail_start = plan.head_end, plan.tail_start
        pruned, pruned_count = prune_tool_outputs(
            messages, protect_tail_tokens=0, start=head_end, boundary=tail_start
        )
        raw_turns: list[Message] = []
        model_turns: list[Message] = []
        parts = _summary_parts(messages)
        for original, slim, (body, rest) in zip(
            messages[head_end:tail_start], pruned[head_end:tail_start], parts[head_end:tail_start], strict=True
        ):
            if body is not None:
                if rest in (None, "", []) and not original.get("tool_calls"):
                    continue  # an earlier summary: folded in as previous_summary, not a new turn
                rest = None if rest in (None, "", []) else rest  # a merged-into tool-call message
                original = {**original, "content": rest}
                slim = {**slim, "content": rest}
            raw_turns.append(original)
            model_turns.append(slim)
        summary_body, source = self._summarise(
            model_turns, raw_turns, plan.previous_summary, focus_topic, pre_compress_text, plan.middle_tokens
        )
        if summary_body is None:
            self.last_compress_aborted = True
            self.last_stats["aborted"] = self.last_failure
            return list(messages)
        result = assemble(messages, parts, head_end, tail_start, format_summary(summary_body))
        result, removed = sanitize_tool_pairs(result)
        after_tokens = estimate_messages_tokens_rough(result)
        if after_tokens >= before_tokens:
            # the summary outweighs the turns it would replace (a small middle): cutting would
            # only lose detail and grow the prompt, so this is a no-op (an ineffective strike)
            self._ineffective_streak += 1
            self.last_stats.update(
                plan=f"summary not smaller than the turns it replaces ({after_tokens} >= {before_tokens} tokens); nothing cut",
                tokens_after=before_tokens,
            )
            return list(messages)
        self.last_summary_source = source
        self.last_summary_fallback_used = source == "llm_free"
        self.compression_count += 1
        self.previous_summary = summary_body
        self._awaiting_effect = True
        self.last_stats.update(
            messages_after=len(result),
            tokens_after=after_tokens,
            ratio=round(after_tokens / before_tokens, 4) if before_tokens else 1.0,
            pruned=pruned_count,
            summarised_messages=tail_start - head_end,
            orphans_removed=removed,
            summary_source=source,
            summary_chars=len(summary_body),
        )
        return result
