"""Repeated compactions of alternating conversations (hypothesis).

Each generated conversation strictly alternates user / assistant turns (an assistant turn may
be a tool-call group: calls, their results in shuffled order, then a text reply). It is
compacted, extended by one more exchange, and compacted again, three times. After each
compaction: roles still alternate, at most one summary, no orphan call or result, the newest
message unchanged, the system messages unchanged, never more tokens when something was cut.
"""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_memory.config import CompressionConfig
from hermes_memory.context import ContextCompressor, estimate_messages_tokens_rough, split_summary

_sizes = st.sampled_from([1, 40, 400, 1500, 4000])


def _alternates(messages: list) -> bool:
    for x, y in zip(messages, messages[1:], strict=False):
        if x["role"] == y["role"] == "user":
            return False
        if x["role"] == y["role"] == "assistant" and not x.get("tool_calls"):
            return False
    return True


def _pairs_ok(messages: list) -> bool:
    i = 0
    while i < len(messages):
        m = messages[i]
        if m["role"] == "tool":
            return False
        if m["role"] == "assistant" and m.get("tool_calls"):
            ids = sorted(c.get("call_id") or c["id"] for c in m["tool_calls"])
            j = i + 1
            while j < len(messages) and messages[j]["role"] == "tool":
                j += 1
            if sorted(r["tool_call_id"] for r in messages[i + 1 : j]) != ids:
                return False
            i = j
        else:
            i += 1
    return True


@st.composite
def _exchange(draw, tag: str):
    size = draw(_sizes)
    content = draw(st.sampled_from(["str", "list", "empty"]))
    text = f"{tag} " + "w" * size
    ask = {"str": text, "list": [{"type": "text", "text": text}], "empty": ""}[content]
    out = [{"role": "user", "content": ask}]
    if draw(st.booleans()):
        n = draw(st.integers(1, 5))
        style = draw(st.sampled_from(["id", "call_id"]))
        calls = []
        for k in range(n):
            call = {"type": "function", "function": {"name": "terminal", "arguments": json.dumps({"command": f"c{k}"})}}
            if style == "id":
                call["id"] = f"{tag}-{k}"
            else:
                call.update(id=f"fc-{tag}-{k}", call_id=f"{tag}-{k}")
            calls.append(call)
        out.append({"role": "assistant", "content": None, "tool_calls": calls})
        order = draw(st.permutations(list(range(n))))
        out += [{"role": "tool", "tool_call_id": f"{tag}-{k}", "content": "o" * draw(_sizes)} for k in order]
    out.append({"role": "assistant", "content": draw(st.sampled_from([None, "r" * draw(_sizes)]))})
    return out


@st.composite
def _conversation(draw):
    messages = [{"role": "system", "content": "SYS"}]
    if draw(st.booleans()):
        messages.append({"role": "system", "content": "MEMORY SNAPSHOT"})
    for k in range(draw(st.integers(2, 14))):
        messages += draw(_exchange(f"t{k}"))
    more = [draw(_exchange(f"n{k}")) for k in range(3)]
    return messages, more


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    _conversation(),
    st.sampled_from([1500, 4000, 16000]),
    st.integers(0, 4),
    st.integers(1, 12),
)
def test_repeated_compactions_keep_alternation_and_one_summary(conv, context, first_n, last_n):
    messages, more = conv
    system = [m for m in messages if m["role"] == "system"]
    comp = ContextCompressor(context, CompressionConfig(protect_first_n=first_n, protect_last_n=last_n))
    for extra in [[], *more]:
        messages = messages + extra
        out = comp.compress(messages)
        assert _alternates(out)
        assert _pairs_ok(out)
        assert out[: len(system)] == system
        assert len([m for m in out if split_summary(m)[0] is not None]) <= 1
        # the last message survives verbatim, or with the summary merged in front of its text
        # (an assistant message with no text, content None, keeps "" after the summary)
        assert out[-1] == messages[-1] or (split_summary(out[-1])[1] or None) == (messages[-1]["content"] or None)
        if out != messages:
            assert estimate_messages_tokens_rough(out) < estimate_messages_tokens_rough(messages)
        messages = out
