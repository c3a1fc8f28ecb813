"""How a summary is marked inside a history: its prefix and end marker, recognising (and stripping) older prefixes, think blocks and summariser replies."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from hermes_memory.context.tokens import content_text
from hermes_memory.redact import redact_secrets, sub_blocks

#: Starts every summary message. It tells the model the block is background, not an instruction.
SUMMARY_PREFIX = (
    "[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns of this conversation were compacted into the "
    "summary below. Treat it as background: respond only to the latest message after it. Memory files "
    "stay authoritative and all tools remain available."
)
#: Ends every summary: one merged into the first kept message (role-collision case) and one that
#: stands alone, so a model reads where the background stops in both.
END_MARKER = "--- END OF CONTEXT SUMMARY — respond to the message below, not the summary above ---"
#: Prefixes written by older versions of the reference; recognised and stripped before re-prefixing.
LEGACY_PREFIXES = ("[CONTEXT SUMMARY]:", "[CONTEXT COMPACTION]", "[CONTEXT COMPACTION — REFERENCE ONLY]")


_THINK_OPEN = re.compile(r"<(think|thinking|reasoning)>", re.IGNORECASE)
_THINK_CLOSE = {tag: re.compile(rf"</{tag}>\s*", re.IGNORECASE) for tag in ("think", "thinking", "reasoning")}


def strip_think(text: str) -> str:
    """Remove ``<think>``/``<thinking>``/``<reasoning>`` blocks (and the blank space after them);
    an unclosed tag is left as it is."""
    if "<" not in text:
        return text
    return sub_blocks(text, _THINK_OPEN, lambda m: _THINK_CLOSE[m.group(1).lower()], "")


def clean_summary_reply(text: str | None) -> str:
    """Normalise a summariser reply: drop think blocks, summary prefixes and secrets; trim.

    Returns ``""`` for ``None`` or a reply with no content (the caller treats that as a failure).
    """
    if not text:
        return ""
    text = strip_think(text)
    text = strip_summary_prefix(text)
    return redact_secrets(text).strip()


def strip_summary_prefix(text: str) -> str:
    """Remove a leading :data:`SUMMARY_PREFIX` or legacy prefix (repeatedly), and surrounding space."""
    text = text.strip()
    changed = True
    while changed:
        changed = False
        for prefix in (SUMMARY_PREFIX, *LEGACY_PREFIXES):
            if text.startswith(prefix):
                text = text[len(prefix) :].lstrip()
                changed = True
    return text


def format_summary(body: str) -> str:
    """The content of a summary message: ``SUMMARY_PREFIX + "\\n" + body``.

    :data:`END_MARKER` is removed from ``body`` (a reply may echo it): inside a summary message
    it would read back as the end of a merged summary, and the text after it as a real turn.
    """
    return f"{SUMMARY_PREFIX}\n{strip_summary_prefix(body.replace(END_MARKER, ''))}"


def split_summary(message: Mapping[str, Any]) -> tuple[str | None, Any]:
    """Recover an embedded summary from a message.

    Returns ``(summary_body, rest_content)``:

    * a pure summary message -> ``(body, None)``;
    * a message the summary was merged into -> ``(body, original content)`` (string or parts);
    * any other message -> ``(None, content)``.

    A summary is recognised by the ``_compressed_summary`` marker or by its text prefix, so it is
    found again after the caller stripped underscore keys and reloaded the history (restart).
    """
    content = message.get("content")
    if message.get("role") not in ("user", "assistant"):
        return None, content
    text = content_text(content)
    stripped = text.lstrip()
    if not (message.get("_compressed_summary") or stripped.startswith((SUMMARY_PREFIX, *LEGACY_PREFIXES))):
        return None, content
    if not stripped.startswith((SUMMARY_PREFIX, *LEGACY_PREFIXES)):
        return None, content
    if END_MARKER in text:
        if isinstance(content, list):
            # merged into a parts list: the first text part holds summary + marker
            first = content[0] if content else {}
            body_text = first.get("text", "") if isinstance(first, Mapping) else str(first)
            body = strip_summary_prefix(body_text.split(END_MARKER, 1)[0])
            return body, list(content[1:])
        body_text, rest = text.split(END_MARKER, 1)
        rest = rest.lstrip("\n")
        return strip_summary_prefix(body_text), rest
    return strip_summary_prefix(text), None
