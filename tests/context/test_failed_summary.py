"""A summary that times out, fails or comes back empty never deletes the middle of the conversation (failure
case B29 of docs/failure-cases.md).
"""

import copy

from hermes_memory.config import CompressionConfig
from hermes_memory.context import (
    ContextCompressor,
)
from tests.context.helpers import (
    RecordingSummariser,
    assistant,
    contains_verbatim,
    summary_messages,
    sys_msg,
    text_of,
    user,
)

# --------------------------------------------------------------------------------------------- B29


def _b29_conversation():
    msgs = [sys_msg()]
    for i in range(20):
        msgs += [user(f"step {i}: deploy service-{i} to host{i}.internal " + "p" * 1500),
                 assistant(f"done step {i}, CODE-{i} recorded " + "q" * 1500)]
    return msgs


def _b29_compressor(summariser, **cfg):
    return ContextCompressor(20_000, CompressionConfig(**cfg), summariser)


def test_B29_summary_timeout_never_deletes_the_middle():
    msgs = _b29_conversation()
    before = copy.deepcopy(msgs)
    fake = RecordingSummariser(TimeoutError("summariser timed out"))
    cc = _b29_compressor(fake)
    assert cc.should_compress_preflight(msgs)
    out = cc.compress(msgs)
    assert out == before and msgs == before
    assert cc.last_compress_aborted is True and cc.compression_count == 0
    assert cc.last_failure.startswith("network")
    # a cooldown stops immediate re-triggering; a later (forced) retry is possible and succeeds
    assert cc.should_compress(10**6) is False
    fake.replies = ["## Goal\nrecovered"]
    retry = cc.compress(msgs, force=True)
    assert len(retry) < len(msgs) and cc.last_summary_source == "llm"


def test_B29_empty_or_blank_reply_returns_input_unchanged_by_default():
    for reply in ("", "   "):
        msgs = _b29_conversation()
        before = copy.deepcopy(msgs)
        cc = _b29_compressor(RecordingSummariser(reply))
        assert cc.compress(msgs) == before and msgs == before
        assert cc.last_compress_aborted is True and cc.last_summary_fallback_used is False
        assert "empty" in cc.last_failure
        assert cc.should_compress(10**6) is False  # cooldown: no immediate re-trigger


def test_B29_opt_in_fallback_summarises_the_dropped_turns_themselves():
    # Only with fallback_on_summary_failure: the middle is replaced by the LLM-free summary built
    # from those very turns, flagged; never by a fixed "unavailable" note.
    for reply in ("", "   "):
        msgs = _b29_conversation()
        cc = _b29_compressor(RecordingSummariser(reply), fallback_on_summary_failure=True)
        out = cc.compress(msgs)
        assert cc.last_summary_fallback_used is True and cc.last_compress_aborted is False
        assert "empty" in cc.last_failure
        summary = text_of(summary_messages(out)[0])
        dropped = [m for m in msgs if not contains_verbatim(out, m)]
        assert dropped, "something was compacted"
        # every dropped user ask is still named in the summary
        for m in dropped:
            if m["role"] == "user":
                assert text_of(m).split(" " + "p" * 10)[0][:30] in summary


def test_B29_empty_reply_with_abort_setting_returns_input_unchanged():
    for reply in ("", "   ", TimeoutError("t")):
        msgs = _b29_conversation()
        cc = _b29_compressor(RecordingSummariser(reply), abort_on_summary_failure=True,
                             fallback_on_summary_failure=True)
        assert cc.compress(msgs) == msgs
        assert cc.last_compress_aborted is True
