"""Property tests: compress() over generated conversations keeps its invariants.

Generated: optional system prompt, random role sequences (user / assistant text / assistant with
1-4 parallel tool calls and their results / stray consecutive roles), string, ``None`` and list
content (text + image parts), sizes from a few chars to tens of thousands.
"""

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_memory.config import CompressionConfig
from hermes_memory.context import ContextCompressor, split_summary
from tests.context.helpers import RecordingSummariser, assert_pairs_intact, contains_verbatim

_sizes = st.sampled_from([0, 5, 60, 300, 2_000, 12_000, 40_000])


@st.composite
def _content(draw, allow_none=False):
    kind = draw(st.sampled_from(["str", "list", "none"] if allow_none else ["str", "str", "list"]))
    size = draw(_sizes)
    word = draw(st.sampled_from(["alpha", "beta", "src/app.py", "ERROR: boom", "Paris", "42"]))
    text = (word + " ") * max(1, size // (len(word) + 1))
    if kind == "none":
        return None
    if kind == "list":
        parts = [{"type": "text", "text": text}]
        if draw(st.booleans()):
            parts.append({"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}})
        return parts
    return text


@st.composite
def conversations(draw):
    msgs = []
    if draw(st.booleans()):
        msgs.append({"role": "system", "content": draw(_content())})
    counter = 0
    for _ in range(draw(st.integers(0, 40))):
        step = draw(st.sampled_from(["user", "user", "assistant", "tools", "tools", "assistant_none"]))
        if step == "user":
            msgs.append({"role": "user", "content": draw(_content())})
        elif step == "assistant":
            msgs.append({"role": "assistant", "content": draw(_content())})
        elif step == "assistant_none":
            msgs.append({"role": "assistant", "content": None})
        else:
            n_calls = draw(st.integers(1, 4))
            ids = [f"call_{counter + i}" for i in range(n_calls)]
            counter += n_calls
            calls = [
                {"id": i, "type": "function",
                 "function": {"name": draw(st.sampled_from(["terminal", "read_file", "memory", "web"])),
                              "arguments": '{"command": "' + "x" * draw(st.sampled_from([3, 900])) + '"}'}}
                for i in ids
            ]
            msgs.append({"role": "assistant", "content": draw(_content(allow_none=True)), "tool_calls": calls})
            order = draw(st.permutations(ids))
            for i in order:
                msgs.append({"role": "tool", "tool_call_id": i, "content": draw(_content())})
    return msgs


@st.composite
def compressors(draw):
    cfg = CompressionConfig(
        protect_first_n=draw(st.integers(0, 4)),
        protect_last_n=draw(st.integers(1, 25)),
        target_ratio=draw(st.sampled_from([0.1, 0.2, 0.5])),
        min_tail_user_messages=draw(st.integers(0, 2)),
    )
    summariser = draw(st.sampled_from([None, "llm", "empty", "error"]))
    fake = {
        None: None,
        "llm": RecordingSummariser("## Goal\nmodel summary"),
        "empty": RecordingSummariser(""),
        "error": RecordingSummariser(ValueError("boom")),
    }[summariser]
    return ContextCompressor(draw(st.sampled_from([4_000, 16_000, 64_000])), cfg, fake)


def _last_user(messages):
    for m in reversed(messages):
        if m.get("role") == "user" and split_summary(m)[0] is None:
            return m
    return None


def _check(before, out):
    assert_pairs_intact(out)
    if before and before[0].get("role") == "system":
        assert out[0] == before[0]
        assert sum(1 for m in out if m.get("role") == "system") == sum(1 for m in before if m.get("role") == "system")
    last = _last_user(before)
    if last is not None:
        assert contains_verbatim(out, last), "last user message lost"
    assert sum(1 for m in out if split_summary(m)[0] is not None) <= 1


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(conversations(), compressors(), st.data())
def test_compress_keeps_pairs_last_user_and_system(msgs, cc, data):
    snapshot = copy.deepcopy(msgs)
    out = cc.compress(msgs, force=data.draw(st.booleans()))
    assert msgs == snapshot, "input mutated"
    _check(msgs, out)
    if len(out) == len(msgs) and cc.compression_count == 0:
        assert out == msgs  # a no-op returns the input unchanged
    # a second compaction of the result (later in the same session) keeps the invariants too
    grown = out + [{"role": "user", "content": "and now? " * data.draw(st.sampled_from([1, 3000]))}]
    out2 = cc.compress(grown, force=True)
    _check(grown, out2)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(conversations(), compressors())
def test_prune_is_idempotent_and_keeps_ids(msgs, cc):
    once, _ = cc.prune(msgs)
    twice, count = cc.prune(once)
    assert count == 0 and twice == once
    assert [m.get("tool_call_id") for m in once] == [m.get("tool_call_id") for m in msgs]
    assert [m.get("role") for m in once] == [m.get("role") for m in msgs]
