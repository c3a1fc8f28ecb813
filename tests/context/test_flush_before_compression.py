"""Memories are flushed from the whole uncompressed conversation before a cut, and a failing flush never blocks
compression (failure case B34 of docs/failure-cases.md).
"""

import copy
import logging

from hermes_memory.config import CompressionConfig
from hermes_memory.context import (
    ContextCompressor,
)
from tests.context.helpers import (
    RecordingSummariser,
    assistant,
    sys_msg,
    text_of,
    user,
)

# --------------------------------------------------------------------------------------------- B34


def _b34_conversation():
    msgs = [sys_msg()]
    for i in range(12):
        text = "remember: codename PLACEHOLDER-7" if i == 4 else f"question {i} " + "f" * 3000
        msgs += [user(text), assistant(f"reply {i} " + "g" * 3000)]
    return msgs


def test_B34_flush_runs_before_cut_with_full_uncompressed_list():
    events: list[str] = []
    flushed: list[list[dict]] = []

    def flush(messages):
        events.append("flush")
        flushed.append(copy.deepcopy(messages))

    fake = RecordingSummariser("## Goal\nsummary", events=events)
    cc = ContextCompressor(16_000, CompressionConfig(protect_first_n=2, protect_last_n=4), fake)
    msgs = _b34_conversation()
    # automatic trigger through the threshold
    cc.update_from_response({"prompt_tokens": 12_000})
    assert cc.should_compress()
    first = cc.compress(msgs, before_cut=flush)
    assert events == ["flush", "summarise"]
    assert flushed[0] == msgs
    assert any(text_of(m) == "remember: codename PLACEHOLDER-7" for m in flushed[0])
    assert not any(text_of(m) == "remember: codename PLACEHOLDER-7" for m in first)
    # manual trigger later: one more flush, over the compacted list (the old range is not re-flushed)
    later = first + [user("next " + "h" * 3000), assistant("ok " + "h" * 3000)] * 4
    cc.compress(later, force=True, before_cut=flush)
    assert events == ["flush", "summarise", "flush", "summarise"]
    assert flushed[1] == later
    assert not any(text_of(m) == "remember: codename PLACEHOLDER-7" for m in flushed[1])


def test_B34_failing_flush_does_not_block_compression(caplog):
    def flush(messages):
        raise RuntimeError("memory store locked")

    cc = ContextCompressor(16_000, CompressionConfig(protect_first_n=2, protect_last_n=4))
    msgs = _b34_conversation()
    with caplog.at_level(logging.WARNING, logger="hermes_memory.context"):
        out = cc.compress(msgs, before_cut=flush)
    assert len(out) < len(msgs) and cc.compression_count == 1
    assert "memory store locked" in caplog.text
    assert "memory store locked" in cc.last_stats["before_cut_error"]


def test_B34_flush_not_called_when_nothing_is_cut():
    calls = []
    cc = ContextCompressor(16_000, CompressionConfig(protect_first_n=2, protect_last_n=4))
    short = _b34_conversation()[:5]
    assert cc.compress(short, before_cut=calls.append) == short
    assert calls == []
