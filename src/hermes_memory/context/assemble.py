"""Phase 4 of compaction: head + summary + tail, with roles that keep alternating."""

from __future__ import annotations

import copy
from typing import Any

from hermes_memory.context.messages import Message, _role
from hermes_memory.context.summary import END_MARKER


def assemble(
    messages: list[Message],
    parts: list[tuple[str | None, Any]],
    head_end: int,
    tail_start: int,
    summary_text: str,
) -> list[Message]:
    """``messages`` compacted: the head and tail without older summaries (folded into ``summary_text``)
    and the new summary between them, as a message of the role that keeps roles alternating, or
    merged into the first tail message when no role fits. Pure: ``messages`` is not changed."""
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
