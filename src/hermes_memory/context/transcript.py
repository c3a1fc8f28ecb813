"""The middle of a conversation as the plain-text transcript sent to the summariser, with the reference's caps (characters)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_memory.context.markers import (
    strip_think,
)
from hermes_memory.context.tokens import content_text, count_images
from hermes_memory.redact import redact_secrets

#: Reference caps for the serialised middle, in characters.
CONTENT_MAX_CHARS = 6000
CONTENT_HEAD_CHARS = 4000
CONTENT_TAIL_CHARS = 1500
ARGS_MAX_CHARS = 1500
ARGS_KEEP_CHARS = 1200
TRANSCRIPT_MAX_CHARS = 160_000


_MEDIA = re.compile(r"^MEDIA:.*$", re.MULTILINE)


def _call_id(call: Mapping[str, Any]) -> str:
    return str(call.get("call_id") or call.get("id") or "")


def _call_name_args(call: Mapping[str, Any]) -> tuple[str, str]:
    fn = call.get("function") or {}
    name = fn.get("name") or call.get("name") or "tool"
    args = fn.get("arguments", call.get("arguments", ""))
    if not isinstance(args, str):
        args = json.dumps(args, ensure_ascii=False, default=str)
    return str(name), args


def _cap(text: str) -> str:
    if len(text) > CONTENT_MAX_CHARS:
        cut = len(text) - CONTENT_HEAD_CHARS - CONTENT_TAIL_CHARS
        return f"{text[:CONTENT_HEAD_CHARS]}\n...[{cut} chars omitted]...\n{text[-CONTENT_TAIL_CHARS:]}"
    return text


def _clean_for_transcript(text: str) -> str:
    return redact_secrets(_MEDIA.sub("", strip_think(text)))


def serialize_turns(messages: Sequence[Mapping[str, Any]]) -> str:
    """Plain-text transcript of ``messages`` for the summariser (characters, capped at 160K).

    Content over 6000 chars keeps its first 4000 and last 1500; tool arguments over 1500 keep the
    first 1200; images become ``[image]``; secrets are redacted; think blocks and ``MEDIA:`` lines
    are dropped. When the whole text exceeds 160K chars, 45 % of the budget is kept from the start
    and 55 % from the end around an omission marker.
    """
    lines: list[str] = []
    for message in messages:
        role = str(message.get("role") or "unknown")
        content = message.get("content")
        text = _clean_for_transcript(content_text(content))
        images = count_images(content)
        if images:
            text = (text + " " if text else "") + " ".join(["[image]"] * images)
        text = _cap(text)
        if role == "tool":
            lines.append(f"[TOOL RESULT {message.get('tool_call_id', '')}]: {text}")
        elif role == "assistant":
            calls = []
            for call in message.get("tool_calls") or ():
                name, args = _call_name_args(call)
                args = redact_secrets(args)
                if len(args) > ARGS_MAX_CHARS:
                    args = args[:ARGS_KEEP_CHARS] + "...[truncated]"
                calls.append(f"{name}({args})")
            suffix = f" [Tool calls: {'; '.join(calls)}]" if calls else ""
            lines.append(f"[ASSISTANT]: {text}{suffix}")
        else:
            lines.append(f"[{role.upper()}]: {text}")
    out = "\n\n".join(lines)
    if len(out) > TRANSCRIPT_MAX_CHARS:
        head = int(TRANSCRIPT_MAX_CHARS * 0.45)
        tail = TRANSCRIPT_MAX_CHARS - head
        out = f"{out[:head]}\n\n...[{len(out) - head - tail} chars of transcript omitted]...\n\n{out[-tail:]}"
    return out
