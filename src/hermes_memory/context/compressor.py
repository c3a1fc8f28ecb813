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

import copy
import hashlib
import json
import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_memory.config import CompressionConfig
from hermes_memory.context.summary import (
    END_MARKER,
    SUMMARY_PREFIX,
    build_fallback_summary,
    build_summary_prompt,
    clean_summary_reply,
    format_summary,
    serialize_turns,
    split_summary,
)
from hermes_memory.context.tokens import (
    content_text,
    count_images,
    estimate_message_tokens,
    estimate_messages_tokens_rough,
    estimate_request_tokens,
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

Message = dict[str, Any]
Summarizer = Callable[..., str]

#: Tool results longer than this (chars) are pruned outside the tail / deduplicated.
PRUNE_MIN_CHARS = 200
#: Longest replacement a prune writes (chars): under ``PRUNE_MIN_CHARS``, so that a second pass
#: neither prunes nor de-duplicates its own output (B33).
PRUNE_RECORD_MAX_CHARS = PRUNE_MIN_CHARS - 1
#: Tool-call arguments longer than this (chars) get their long string leaves shortened.
ARGS_PRUNE_MIN_CHARS = 500
#: Long string leaves of pruned arguments keep this many chars, then ``ARGS_TRUNCATION_MARK``.
ARGS_LEAF_KEEP_CHARS = 200
ARGS_TRUNCATION_MARK = "...[truncated]"
DUPLICATE_PLACEHOLDER = "[Duplicate tool output — same content as a more recent call]"
IMAGE_PLACEHOLDER = "[image removed to save context]"
#: Summary size cap in tokens: min(5 % of the context, 10K) (reference NEWEST).
MAX_SUMMARY_TOKENS_CAP = 10_000
#: Cooldowns after a summariser failure, in seconds (reference NEWEST).
COOLDOWN_NOT_CONFIGURED_S = 600.0
COOLDOWN_TRANSIENT_S = (60.0, 300.0, 900.0)
COOLDOWN_OTHER_S = 60.0
#: Consecutive ineffective compactions after which ``should_compress`` stops firing (anti-thrash).
INEFFECTIVE_LIMIT = 2
#: Tokens of a summary message before any summary text (prefix and end marker, estimated as
#: chars / 4): a middle no larger than this cannot shrink, so no summariser call is made for it.
SUMMARY_OVERHEAD_TOKENS = (len(SUMMARY_PREFIX) + len(END_MARKER) + 3) // 4 + 1


_AUTH_STATUS = {401, 402, 403}
_TRANSIENT_STATUS = {408, 429, 500, 502, 503, 504, 529}
_KIND_CLASSES = {"auth": "auth", "network": "network", "rate_limit": "transient", "server": "transient"}


def classify_summary_error(exc: BaseException) -> str:
    """Classify a summariser exception as ``auth``, ``network``, ``transient``, ``not_configured``
    or ``other``.

    Our own errors decide by their kind (:attr:`~hermes_memory.errors.ModelCallError.kind`): ``auth``
    (:class:`SummaryAuthError`, :class:`~hermes_memory.errors.ModelAuthError`), ``network``
    (``SummaryNetworkError``, ``ModelNetworkError``), ``rate_limit``/``server`` -> transient
    (``SummaryRateLimitError``, ``ModelRateLimitError``, ``ModelServerError``). Otherwise an HTTP status in ``status_code`` / ``status`` (401/402/403 -> auth,
    408/429/5xx -> transient), builtin ``TimeoutError`` / ``ConnectionError`` or an exception
    class named like ``*Timeout*`` / ``*Connection*`` (openai/httpx/anthropic) -> network,
    :class:`~hermes_memory.errors.ModelNotConfiguredError` -> not_configured.
    """
    if isinstance(exc, ModelCallError) and exc.kind in _KIND_CLASSES:
        return _KIND_CLASSES[exc.kind]
    if isinstance(exc, ModelNotConfiguredError):
        return "not_configured"
    status = getattr(exc, "status_code", None) or getattr(exc, "status", None)
    if isinstance(status, int):
        if status in _AUTH_STATUS:
            return "auth"
        if status in _TRANSIENT_STATUS:
            return "transient"
    if isinstance(exc, (TimeoutError, ConnectionError)):
        return "network"
    names = " ".join(cls.__name__ for cls in type(exc).__mro__)
    if "Timeout" in names or "Connection" in names or "Connect" in names:
        return "network"
    if "Authentication" in names or "PermissionDenied" in names:
        return "auth"
    return "other"


@dataclass(frozen=True)
class CompressionPlan:
    """Where ``compress`` would cut ``messages`` (indices into that list).

    ``messages[:head_end]`` is kept as is, ``messages[head_end:tail_start]`` is summarised,
    ``messages[tail_start:]`` is kept (old summaries in it are folded into the new one).
    ``will_compress`` is False (with ``reason``) when nothing would be cut.
    """

    head_end: int
    tail_start: int
    will_compress: bool
    reason: str
    previous_summary: str | None
    middle_tokens: int
    tail_tokens: int


# ---------------------------------------------------------------------------------------------
# tool-call helpers
# ---------------------------------------------------------------------------------------------


def _as_dict(obj: Any) -> Any:
    """A plain dict for an SDK object (pydantic ``model_dump``, ``to_dict``, dataclass-like
    attributes); anything else unchanged."""
    if isinstance(obj, Mapping) or obj is None or isinstance(obj, (str, bytes, int, float, list, tuple)):
        return obj
    for name in ("model_dump", "to_dict", "dict"):
        method = getattr(obj, name, None)
        if callable(method):
            try:
                data = method(exclude_none=True) if name == "model_dump" else method()
            except TypeError:
                data = method()
            if isinstance(data, Mapping):
                return dict(data)
    attrs = getattr(obj, "__dict__", None)
    return {k: v for k, v in attrs.items() if not k.startswith("_")} if isinstance(attrs, dict) else obj


def normalize_tool_call(call: Any) -> Any:
    """One tool call in the OpenAI dict form ``{"id", "type": "function", "function": {"name",
    "arguments": <JSON str>}}``.

    Accepts that form, an SDK object of it (openai ``ChatCompletionMessageToolCall``), and
    Anthropic's ``tool_use`` block (``ToolUseBlock`` or its dict: ``{"type": "tool_use", "id",
    "name", "input"}``). A Responses-API ``call_id`` is kept. Anything else is returned as a dict
    when it can be read as one, else unchanged.
    """
    call = _as_dict(call)
    if not isinstance(call, Mapping):
        return call
    fn = _as_dict(call.get("function"))
    if call.get("type") == "tool_use" or (fn is None and "input" in call):
        args = call.get("input")
        out = {"id": str(call.get("id") or ""), "type": "function",
               "function": {"name": str(call.get("name") or ""),
                            "arguments": args if isinstance(args, str) else json.dumps(args or {}, ensure_ascii=False)}}
        return out
    if fn is not call.get("function"):
        return {**call, "function": fn}
    return call


def normalize_messages(messages: Sequence[Any]) -> list[Message]:
    """``messages`` as dicts: SDK message objects, SDK tool calls and SDK content blocks (openai,
    anthropic, other pydantic models) become the OpenAI dict forms the compressor reads.

    Every public entry point of this module calls it, so library users may pass what the SDKs
    return. Messages that are already plain dicts are returned as the same objects (never mutated).
    """
    out: list[Message] = []
    for message in messages:
        m = _as_dict(message)
        if not isinstance(m, Mapping):
            out.append(m)
            continue
        changed = m is not message
        calls = m.get("tool_calls")
        if calls:
            fixed = [normalize_tool_call(c) for c in calls]
            if any(a is not b for a, b in zip(fixed, calls, strict=True)) or not isinstance(calls, list):
                m = {**m, "tool_calls": fixed}
                changed = True
        content = m.get("content")
        if isinstance(content, (list, tuple)) and any(not isinstance(p, (Mapping, str)) for p in content):
            m = {**m, "content": [_as_dict(p) for p in content]}
            changed = True
        out.append(dict(m) if changed and not isinstance(m, dict) else m)  # type: ignore[arg-type]
    return out


def _call_id(call: Mapping[str, Any]) -> str:
    # ``call_id`` first: Responses-API calls carry an item ``id`` ("fc_...") besides the
    # ``call_id`` ("call_...") that their result's ``tool_call_id`` refers to (docs/reference.md §5).
    return str(call.get("call_id") or call.get("id") or "")


def _role(message: Mapping[str, Any]) -> str:
    return str(message.get("role") or "")


def _summary_parts(messages: Sequence[Mapping[str, Any]]) -> list[tuple[str | None, Any]]:
    """:func:`split_summary` of every message, except that the latest user message counts as a
    summary only when it carries the ``_compressed_summary`` marker or starts with our own
    :data:`SUMMARY_PREFIX` (a restart strips the marker): a user who pastes an old agent's
    summary ("[CONTEXT SUMMARY]: ... continue") is asking something, and the latest user
    message is always kept verbatim (B31)."""
    parts = [split_summary(m) for m in messages]
    for i in range(len(messages) - 1, -1, -1):
        if _role(messages[i]) == "user":
            message = messages[i]
            ours = message.get("_compressed_summary") or content_text(message.get("content")).lstrip().startswith(SUMMARY_PREFIX)
            if parts[i][0] is not None and not ours:
                parts[i] = (None, message.get("content"))
            break
    return parts


def sanitize_tool_pairs(messages: Sequence[Mapping[str, Any]]) -> tuple[list[Message], int]:
    """Remove orphan tool results and unanswered tool calls; returns ``(new_list, removed_count)``.

    A tool result belongs to the nearest preceding assistant message with ``tool_calls`` when only
    tool results lie between them, and only if that message has a call with its ``tool_call_id``
    (call id = ``call_id`` or else ``id``). Calls without a result, and repeats of a call id
    already seen in the same message, are dropped from ``tool_calls``; an
    assistant left with no calls and no text gets ``"(tool call removed)"``. Never inserts stub
    results. Unchanged messages are the same objects; changed ones are copies.
    """
    messages = normalize_messages(messages)
    out: list[Message] = []
    removed = 0
    i, n = 0, len(messages)
    while i < n:
        message = messages[i]
        if _role(message) == "assistant" and message.get("tool_calls"):
            j = i + 1
            results: list[Mapping[str, Any]] = []
            while j < n and _role(messages[j]) == "tool":
                results.append(messages[j])
                j += 1
            calls = list(message.get("tool_calls") or [])
            call_ids = {_call_id(c) for c in calls}
            result_ids: set[str] = set()
            kept_results: list[Mapping[str, Any]] = []
            for result in results:
                rid = str(result.get("tool_call_id") or "")
                if rid in call_ids and rid not in result_ids:
                    result_ids.add(rid)
                    kept_results.append(result)
                else:
                    removed += 1
            kept_calls = []
            kept_ids: set[str] = set()
            for c in calls:  # one call per answered id: providers reject repeated tool_use ids
                cid = _call_id(c)
                if cid in result_ids and cid not in kept_ids:
                    kept_ids.add(cid)
                    kept_calls.append(c)
            if len(kept_calls) != len(calls):
                removed += len(calls) - len(kept_calls)
                new = dict(message)
                if kept_calls:
                    new["tool_calls"] = kept_calls
                else:
                    new.pop("tool_calls", None)
                    if not content_text(new.get("content")).strip() and not count_images(new.get("content")):
                        new["content"] = "(tool call removed)"
                out.append(new)
            else:
                out.append(message)  # type: ignore[arg-type]
            out.extend(kept_results)  # type: ignore[arg-type]
            i = j
        elif _role(message) == "tool":
            removed += 1
            i += 1
        else:
            out.append(message)  # type: ignore[arg-type]
            i += 1
    return out, removed


# ---------------------------------------------------------------------------------------------
# phase 1: prune
# ---------------------------------------------------------------------------------------------

_EXIT = re.compile(r"(?i)(?:\"exit_code\"\s*:\s*|exit(?: code|_code|ed with(?: code)?)?[\s:=]+)(-?\d+)")


def _args_dict(call: Mapping[str, Any]) -> tuple[str, dict[str, Any] | None, str]:
    fn = call.get("function") or {}
    name = str(fn.get("name") or call.get("name") or "tool")
    raw = fn.get("arguments", call.get("arguments", ""))
    if isinstance(raw, Mapping):
        return name, dict(raw), json.dumps(raw, ensure_ascii=False)
    try:
        data = json.loads(raw) if raw else {}
    except (TypeError, ValueError):
        return name, None, str(raw)
    return name, data if isinstance(data, dict) else None, str(raw)


def _short(value: Any, limit: int = 60) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def tool_result_record(name: str, args: dict[str, Any] | None, raw_args: str, result: str) -> str:
    """One-line record (at most 199 chars) that replaces a pruned tool result.

    ``[terminal] ran `cmd` -> exit N, L lines output (C chars)``,
    ``[read_file] read PATH from line O (C chars)``, ``[memory] add on user (C chars result)``,
    otherwise ``[name] k=v, k=v (C chars result)``. The original size ``C`` is always kept.
    """
    size = len(result)
    lines = result.count("\n") + 1 if result else 0
    args = args or {}
    if name in ("terminal", "shell", "bash", "run_command", "execute_command") or "command" in args:
        cmd = args.get("command") or args.get("cmd") or raw_args
        match = _EXIT.search(result)
        status = f"exit {match.group(1)}" if match else "finished"
        record = f"[{name}] ran `{_short(cmd, 80)}` -> {status}, {lines} lines output ({size} chars)"
    elif name in ("read_file", "read", "view", "open_file") or ("path" in args and "content" not in args):
        path = args.get("path") or args.get("file_path") or args.get("file") or "?"
        offset = args.get("offset") or args.get("start_line") or 1
        record = f"[{name}] read {_short(path, 80)} from line {offset} ({size} chars)"
    elif name == "memory":
        record = f"[memory] {args.get('action', '?')} on {args.get('target', 'memory')} ({size} chars result)"
    else:
        pairs = ", ".join(f"{k}={_short(v, 40)}" for k, v in list(args.items())[:3])
        if not pairs and raw_args:
            pairs = _short(raw_args, 60)
        record = f"[{name}] {pairs} ({size} chars result)".replace("]  (", "] (")
    if len(record) > PRUNE_RECORD_MAX_CHARS:
        suffix = f" ({size} chars)"
        record = record[: PRUNE_RECORD_MAX_CHARS - len(suffix) - 1] + "…" + suffix
    return record


def _truncate_leaves(value: Any) -> Any:
    if isinstance(value, str):
        if len(value) > ARGS_LEAF_KEEP_CHARS:
            return value[:ARGS_LEAF_KEEP_CHARS] + ARGS_TRUNCATION_MARK
        return value
    if isinstance(value, list):
        return [_truncate_leaves(v) for v in value]
    if isinstance(value, dict):
        return {k: _truncate_leaves(v) for k, v in value.items()}
    return value


def shorten_tool_arguments(arguments: str) -> str:
    """Shorten a tool call's JSON ``arguments`` string when it is over 500 chars.

    String leaves over 200 chars keep their first 200 chars plus ``"...[truncated]"``; the
    result is re-serialised, so it is still valid JSON. Non-JSON text is returned unchanged.
    Idempotent: shortening the output again returns it unchanged.
    """
    if not isinstance(arguments, str) or len(arguments) <= ARGS_PRUNE_MIN_CHARS:
        return arguments
    try:
        data = json.loads(arguments)
    except (TypeError, ValueError):
        return arguments
    new = json.dumps(_truncate_leaves(data), ensure_ascii=False)
    return new if len(new) < len(arguments) else arguments


def _tail_boundary(
    messages: Sequence[Mapping[str, Any]], protect_tail_tokens: int, protect_tail_min: int, start: int
) -> int:
    """First index of the protected tail: at least ``protect_tail_min`` messages, plus as many more
    as fit in ``protect_tail_tokens``. (Counts and indices are kept apart on purpose: B33.)
    Pruning keeps every ``tool_call_id``, so the boundary may fall inside a tool group."""
    n = len(messages)
    acc = 0
    boundary = n
    for i in range(n - 1, start - 1, -1):
        tokens = estimate_message_tokens(messages[i])
        kept = n - 1 - i
        if kept >= protect_tail_min and acc + tokens > protect_tail_tokens:
            break
        acc += tokens
        boundary = i
    return boundary


def prune_tool_outputs(
    messages: Sequence[Mapping[str, Any]],
    *,
    protect_tail_tokens: int,
    protect_tail_min: int = 8,
    start: int = 0,
    boundary: int | None = None,
) -> tuple[list[Message], int]:
    """Phase 1 of compaction, no model call. Returns ``(new_list, pruned_count)``; never mutates.

    Only messages in ``[start, boundary)`` change, where ``boundary`` (if not given) is the start
    of the protected tail: the last ``protect_tail_min`` messages plus older ones while they fit in
    ``protect_tail_tokens`` tokens. In that range:

    * a tool result of >= 200 chars whose md5 equals a newer result's -> :data:`DUPLICATE_PLACEHOLDER`;
    * other tool results over 200 chars -> :func:`tool_result_record` (keeps tool name and size);
      image parts -> :data:`IMAGE_PLACEHOLDER`;
    * assistant tool-call arguments over 500 chars -> :func:`shorten_tool_arguments`.

    ``tool_call_id``s and every other key are kept; results of 200 chars or fewer are untouched.
    Every replacement is under 200 chars (:data:`PRUNE_RECORD_MAX_CHARS`), so a second pass
    prunes 0 (idempotent, B33).
    """
    messages = normalize_messages(messages)
    n = len(messages)
    if boundary is None:
        boundary = _tail_boundary(messages, protect_tail_tokens, protect_tail_min, start)
    boundary = max(start, min(boundary, n))
    calls: dict[str, tuple[str, dict[str, Any] | None, str]] = {}
    for message in messages:
        for call in message.get("tool_calls") or ():
            calls[_call_id(call)] = _args_dict(call)
    out: list[Message] = list(messages)  # type: ignore[arg-type]
    pruned = 0
    seen_hashes: set[str] = set()
    # newest first so that the newest copy of a repeated output is the one kept
    for i in range(n - 1, -1, -1):
        message = messages[i]
        role = _role(message)
        content = message.get("content")
        if role == "tool":
            text = content_text(content)
            digest = hashlib.md5(text.encode("utf-8", "surrogatepass")).hexdigest() if len(text) >= PRUNE_MIN_CHARS else ""
            in_range = start <= i < boundary
            if in_range and digest and digest in seen_hashes:
                new = dict(message)
                new["content"] = DUPLICATE_PLACEHOLDER
                out[i] = new
                pruned += 1
            elif in_range and (len(text) > PRUNE_MIN_CHARS or count_images(content)):
                name, args, raw = calls.get(str(message.get("tool_call_id") or ""), (str(message.get("name") or "tool"), None, ""))
                new = dict(message)
                if len(text) > PRUNE_MIN_CHARS:
                    new["content"] = tool_result_record(name, args, raw, text)
                else:  # short text + images: keep the text, cut so the result stays a final form
                    keep = PRUNE_RECORD_MAX_CHARS - len(IMAGE_PLACEHOLDER) - 1
                    if len(text) > keep:
                        text = text[: keep - 1] + "…"
                    new["content"] = (text + " " if text else "") + IMAGE_PLACEHOLDER
                out[i] = new
                pruned += 1
            if digest:
                seen_hashes.add(digest)
        elif role == "assistant" and message.get("tool_calls") and start <= i < boundary:
            new_calls = []
            changed = False
            for call in message["tool_calls"]:
                fn = call.get("function")
                if isinstance(fn, Mapping) and isinstance(fn.get("arguments"), str):
                    short = shorten_tool_arguments(fn["arguments"])
                    if short != fn["arguments"]:
                        call = {**call, "function": {**fn, "arguments": short}}
                        changed = True
                new_calls.append(call)
            if changed:
                new = dict(message)
                new["tool_calls"] = new_calls
                out[i] = new
                pruned += 1
    return out, pruned


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
    models' windows.
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
        messages = normalize_messages(messages)
        n = len(messages)
        parts = _summary_parts(messages)
        summary_idx = [i for i, (body, _) in enumerate(parts) if body is not None]
        # every earlier summary is folded in, oldest first (a resumed chain may hold several: B30)
        bodies = list(dict.fromkeys(parts[i][0] for i in summary_idx if parts[i][0]))
        previous = "\n\n".join(bodies) if summary_idx else None
        # every leading system message is part of the system prompt (instructions + a separate
        # memory snapshot, say): all of them stay in the head
        system_count = 0
        while system_count < n and _role(messages[system_count]) == "system":
            system_count += 1
        first_n = self.config.protect_first_n if (self.compression_count == 0 and not summary_idx) else 0
        head_end = min(n, system_count + first_n)
        while head_end < n and _role(messages[head_end]) == "tool":
            head_end += 1

        def result(tail: int, ok: bool, reason: str) -> CompressionPlan:
            tail = max(head_end, min(tail, n))
            mid = estimate_messages_tokens_rough(messages[head_end:tail]) if ok else 0
            return CompressionPlan(
                head_end, tail, ok, reason, previous, mid, estimate_messages_tokens_rough(messages[tail:])
            )

        if n <= head_end + 4:
            return result(n, False, f"too few messages to compress ({n}, head {head_end})")
        avail = n - head_end - 1
        min_tail = min(max(3, min(self.config.protect_last_n, 8)), max(3, avail - 2), avail)
        tokens = [estimate_message_tokens(m) for m in messages]

        def walk(budget: float) -> int:
            acc, cut = 0, n
            for i in range(n - 1, head_end - 1, -1):
                if (n - 1 - i) >= min_tail and acc + tokens[i] > budget:
                    break
                acc += tokens[i]
                cut = i
            return cut

        cut = walk(self.tail_token_budget * 1.5)
        if cut <= head_end:
            cut = walk(self.tail_token_budget)
        cut = min(cut, n - min_tail)
        if cut <= head_end:
            # everything after the head fits the tail budget (a short session, or a large system
            # prompt): keep the minimum tail of recent messages and summarise the rest, as the
            # reference does, rather than summarising one message for no gain
            cut = max(n - min_tail, head_end + 1)
        cut = self._align_cut(messages, cut, head_end)
        # the newest real user messages stay verbatim in the tail (B31)
        users = [
            i for i in range(head_end, n)
            if _role(messages[i]) == "user" and not (parts[i][0] is not None and parts[i][1] in (None, ""))
        ]
        need = max(1, self.config.min_tail_user_messages)
        protected = users[-need:]
        while True:
            stranded = [u for u in protected if head_end <= u < cut]
            if not stranded:
                break
            if stranded[0] > head_end:
                cut = stranded[0]  # later protected users are >= cut now
            else:  # it opens the middle: keep it by growing the head past it
                head_end = stranded[0] + 1
                while head_end < n and _role(messages[head_end]) == "tool":
                    head_end += 1
        # the newest assistant reply (what the user saw last) stays verbatim as well, as in the
        # reference: a run of user messages at the end must not roll it into the summary
        last_reply = next((i for i in range(n - 1, head_end - 1, -1)
                           if _role(messages[i]) == "assistant" and parts[i][0] is None), None)
        if last_reply is not None and head_end < last_reply < cut:
            cut = last_reply
        # an earlier stand-alone summary in the tail is dropped there (folded into the new one),
        # which would leave its two neighbours -- of one role -- side by side: cut after it
        # instead, so the new summary takes its place, unless that strands a protected user
        pure = [
            i for i in range(max(cut, head_end), n)
            if parts[i][0] is not None and parts[i][1] in (None, "", []) and not messages[i].get("tool_calls")
        ]
        if pure:
            after = self._align_cut(messages, pure[-1] + 1, head_end)
            if after < n and all(u >= after for u in protected):
                cut = after
        if cut <= head_end:
            return result(head_end, False, "nothing between the protected head and tail")
        if not any(body is None or rest not in (None, "", []) for body, rest in parts[head_end:cut]):
            return result(cut, False, "the middle holds only an earlier summary")
        middle = estimate_messages_tokens_rough(messages[head_end:cut])
        if middle <= SUMMARY_OVERHEAD_TOKENS:
            return result(cut, False, f"the middle ({cut - head_end} message(s), {middle} tokens) is not larger "
                                      f"than a summary's fixed text ({SUMMARY_OVERHEAD_TOKENS} tokens)")
        return result(cut, True, "ok")

    @staticmethod
    def _align_cut(messages: Sequence[Mapping[str, Any]], cut: int, head_end: int) -> int:
        n = len(messages)
        if cut >= n or _role(messages[cut]) != "tool":
            return cut
        j = cut
        while j > head_end and _role(messages[j]) == "tool":
            j -= 1
        if j > head_end and _role(messages[j]) == "assistant" and messages[j].get("tool_calls"):
            return j  # the whole tool group moves into the tail
        k = cut
        while k < n and _role(messages[k]) == "tool":
            k += 1
        return k  # the group stays in the middle

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
        result = self._assemble(messages, parts, head_end, tail_start, format_summary(summary_body))
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

    def _assemble(
        self,
        messages: list[Message],
        parts: list[tuple[str | None, Any]],
        head_end: int,
        tail_start: int,
        summary_text: str,
    ) -> list[Message]:
        def without_old_summaries(start: int, stop: int) -> list[Message]:
            # older summaries were folded into the new one (as previous_summary): drop them, and
            # unmerge them from the messages they were merged into
            kept: list[Message] = []
            for message, (body, rest) in zip(messages[start:stop], parts[start:stop], strict=True):
                if body is not None and _role(message) != "system":
                    if rest in (None, "", []) and not message.get("tool_calls"):
                        continue
                    # unmerge; a tool-call message the summary was merged into keeps its calls
                    message = {k: v for k, v in message.items() if k != "_compressed_summary"}
                    message["content"] = None if rest in (None, "", []) else rest
                kept.append(copy.deepcopy(message))
            return kept

        head = without_old_summaries(0, head_end)  # the system message: an equal copy
        tail = without_old_summaries(tail_start, len(messages))
        non_system_head = [m for m in head if _role(m) != "system"]
        head_last = _role(non_system_head[-1]) if non_system_head else None
        has_user = any(_role(m) == "user" for m in non_system_head + tail)
        forced = head_last is None or not has_user
        if forced:
            role = "user"
        elif head_last in ("assistant", "tool"):
            role = "user"
        else:
            role = "assistant"
        tail_first = _role(tail[0]) if tail else None
        merge = False
        if tail_first == role:
            flipped = "assistant" if role == "user" else "user"
            if not forced and flipped != head_last:
                role = flipped
            else:
                merge = True
        if merge:
            first = tail[0]
            content = first.get("content")
            if isinstance(content, list):
                first["content"] = [{"type": "text", "text": f"{summary_text}\n\n{END_MARKER}"}, *content]
            elif content in (None, ""):
                first["content"] = f"{summary_text}\n\n{END_MARKER}"
            else:
                first["content"] = f"{summary_text}\n\n{END_MARKER}\n\n{content}"
            first["_compressed_summary"] = True
            return head + tail
        # a stand-alone summary ends with the same marker as a merged one, so a model reads where the
        # background stops and does not replay an old request from it
        return head + [{"role": role, "content": f"{summary_text}\n\n{END_MARKER}", "_compressed_summary": True}] + tail
