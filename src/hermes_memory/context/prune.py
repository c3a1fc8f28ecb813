"""Phase 1 of compaction, no model call: old tool outputs replaced by one-line records, duplicates and images dropped, long tool arguments shortened (sizes in characters)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_memory.context.messages import (
    Message,
    _call_id,
    _role,
    normalize_messages,
)
from hermes_memory.context.tokens import (
    content_text,
    count_images,
    estimate_message_tokens,
)

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
    out: list[Message] = list(messages)
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
