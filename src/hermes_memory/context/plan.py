"""Phase 2 of compaction: where to cut a history into a kept head, a summarised middle and a kept tail."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_memory.context.messages import _role, _summary_parts, normalize_messages
from hermes_memory.context.summary import END_MARKER, SUMMARY_PREFIX
from hermes_memory.context.tokens import estimate_message_tokens, estimate_messages_tokens_rough

#: Tokens of a summary message before any summary text (prefix and end marker, estimated as
#: chars / 4): a middle no larger than this cannot shrink, so no summariser call is made for it.
SUMMARY_OVERHEAD_TOKENS = (len(SUMMARY_PREFIX) + len(END_MARKER) + 3) // 4 + 1


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


def plan_compression(messages: Sequence[Mapping[str, Any]], *, protect_first_n: int, protect_last_n: int,
                     min_tail_user_messages: int, tail_token_budget: float,
                     first_compaction: bool) -> CompressionPlan:
    """Head / middle / tail boundaries of ``messages`` (see :class:`CompressionPlan`); changes nothing.

    ``protect_first_n`` messages after the system prompt stay in the head on the first compaction
    only (``first_compaction``; never once a summary exists); at least ``protect_last_n`` (3..8)
    messages and the newest ``min_tail_user_messages`` user messages stay in the tail, which is
    otherwise sized by ``tail_token_budget`` (tokens, estimated as chars / 4).
    """
    messages = normalize_messages(messages)
    n = len(messages)
    parts = _summary_parts(messages)
    summary_idx = [i for i, (body, _) in enumerate(parts) if body is not None]
    # every earlier summary is folded in, oldest first (a resumed chain may hold several: B30)
    bodies: list[str] = list(dict.fromkeys(body for i in summary_idx if (body := parts[i][0])))
    previous = "\n\n".join(bodies) if summary_idx else None
    # every leading system message is part of the system prompt (instructions + a separate
    # memory snapshot, say): all of them stay in the head
    system_count = 0
    while system_count < n and _role(messages[system_count]) == "system":
        system_count += 1
    first_n = protect_first_n if (first_compaction and not summary_idx) else 0
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
    min_tail = min(max(3, min(protect_last_n, 8)), max(3, avail - 2), avail)
    tokens = [estimate_message_tokens(m) for m in messages]

    def walk(budget: float) -> int:
        acc, cut = 0, n
        for i in range(n - 1, head_end - 1, -1):
            if (n - 1 - i) >= min_tail and acc + tokens[i] > budget:
                break
            acc += tokens[i]
            cut = i
        return cut

    cut = walk(tail_token_budget * 1.5)
    if cut <= head_end:
        cut = walk(tail_token_budget)
    cut = min(cut, n - min_tail)
    if cut <= head_end:
        # everything after the head fits the tail budget (a short session, or a large system
        # prompt): keep the minimum tail of recent messages and summarise the rest, as the
        # reference does, rather than summarising one message for no gain
        cut = max(n - min_tail, head_end + 1)
    cut = align_cut(messages, cut, head_end)
    # the newest real user messages stay verbatim in the tail (B31)
    users = [
        i for i in range(head_end, n)
        if _role(messages[i]) == "user" and not (parts[i][0] is not None and parts[i][1] in (None, ""))
    ]
    need = max(1, min_tail_user_messages)
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
        after = align_cut(messages, pure[-1] + 1, head_end)
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


def align_cut(messages: Sequence[Mapping[str, Any]], cut: int, head_end: int) -> int:
    """``cut`` moved so that a tool-call group is never split: the whole group goes to the tail when
    its assistant message is after the head, else the group stays in the middle."""
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
