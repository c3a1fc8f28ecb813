"""Rough token estimation for OpenAI-style message lists (no tokenizer needed).

Units: every function here returns **tokens** (estimated). The rule is the reference agent's
(docs/reference.md §5): ``ceil(chars / 4)`` for text, a fixed :data:`IMAGE_TOKENS` per image
part, a flat :data:`MESSAGE_OVERHEAD_TOKENS` per message for role/framing, and the JSON text of
every tool call counted like text. Providers' real counts (``update_from_response``) always win
over these estimates when they exist; the estimates only have to be stable and monotone.

Content may be a string, ``None``, or a list of parts (``{"type": "text", "text": ...}``,
``{"type": "image_url", ...}``, ``{"type": "image", ...}``, ``{"type": "input_image", ...}``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

#: Characters per token of the rough estimate (reference ``estimate_tokens_rough``: len // 4;
#: we round up so that a non-empty text never counts as 0 tokens).
CHARS_PER_TOKEN = 4
#: Fixed cost of one image part, in tokens (reference NEWEST: flat 1600 per image).
IMAGE_TOKENS = 1600
#: Per-message framing overhead, in tokens (reference tail walk: text/4 + 10).
MESSAGE_OVERHEAD_TOKENS = 10
#: Assistant fields that carry replayed reasoning and are sent back to some providers.
REASONING_FIELDS = ("reasoning", "reasoning_content", "reasoning_details", "codex_reasoning_items")

_IMAGE_PART_TYPES = frozenset({"image_url", "image", "input_image"})


def estimate_tokens_rough(text: str | None) -> int:
    """Tokens of ``text``: ``ceil(len(text) / 4)``; ``None`` or ``""`` -> 0."""
    if not text:
        return 0
    return -(-len(text) // CHARS_PER_TOKEN)


def is_image_part(part: Any) -> bool:
    """True for an image content part of any of the OpenAI / Anthropic / Responses shapes."""
    return isinstance(part, Mapping) and part.get("type") in _IMAGE_PART_TYPES


def content_text(content: Any) -> str:
    """The text of a message's ``content``: a string as is, text parts joined by newlines.

    ``None`` -> ``""``. Image parts contribute nothing; unknown part shapes contribute their
    ``"text"`` value if any, else nothing. Never raises.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence) and not isinstance(content, (bytes, bytearray)):
        texts: list[str] = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, Mapping) and not is_image_part(part):
                value = part.get("text")
                if isinstance(value, str):
                    texts.append(value)
        return "\n".join(texts)
    return str(content)


def count_images(content: Any) -> int:
    """Number of image parts in ``content`` (0 for strings and ``None``)."""
    if isinstance(content, list):
        return sum(1 for part in content if is_image_part(part))
    return 0


def _json_len(value: Any) -> int:
    try:
        return len(json.dumps(value, ensure_ascii=False, default=str))
    except (TypeError, ValueError):
        return len(str(value))


def estimate_message_tokens(message: Mapping[str, Any]) -> int:
    """Estimated tokens of one message: text/4 + 10 + tool calls/4 + reasoning/4 + images*1600."""
    content = message.get("content")
    tokens = MESSAGE_OVERHEAD_TOKENS + estimate_tokens_rough(content_text(content))
    tokens += count_images(content) * IMAGE_TOKENS
    for call in message.get("tool_calls") or ():
        tokens += -(-_json_len(call) // CHARS_PER_TOKEN)
    for field in REASONING_FIELDS:
        value = message.get(field)
        if value:
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
            tokens += estimate_tokens_rough(text)
    return tokens


def estimate_messages_tokens_rough(messages: Iterable[Mapping[str, Any]]) -> int:
    """Estimated tokens of a whole message list (sum of :func:`estimate_message_tokens`)."""
    return sum(estimate_message_tokens(m) for m in messages)


def estimate_tools_tokens(tools: Iterable[Mapping[str, Any]] | None) -> int:
    """Estimated tokens of tool schemas as sent with a request (their JSON text / 4)."""
    if not tools:
        return 0
    return sum(-(-_json_len(tool) // CHARS_PER_TOKEN) for tool in tools)


def estimate_request_tokens(
    messages: Iterable[Mapping[str, Any]], tools: Iterable[Mapping[str, Any]] | None = None
) -> int:
    """Estimated prompt tokens of a request: messages (system included) plus tool schemas."""
    return estimate_messages_tokens_rough(messages) + estimate_tools_tokens(tools)
