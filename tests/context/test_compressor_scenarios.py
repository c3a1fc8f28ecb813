"""docs/reference.md §12 "ContextCompressor" scenarios (ctx 100K, threshold 0.85 -> 85K)."""

import copy
import json
import logging

import pytest

from hermes_memory.config import CompressionConfig
from hermes_memory.context import SUMMARY_PREFIX, ContextCompressor, SummaryAuthError
from hermes_memory.context.compressor import COOLDOWN_TRANSIENT_S, SummaryRateLimitError
from tests.context.helpers import (
    RecordingSummariser,
    assert_pairs_intact,
    assistant,
    call,
    contains_verbatim,
    summary_messages,
    sys_msg,
    text_of,
    tool,
    user,
)


def _cc(**cfg):
    summarizer = cfg.pop("summarizer", None)
    clock = cfg.pop("clock", None)
    kwargs = {"clock": clock} if clock else {}
    return ContextCompressor(100_000, CompressionConfig(threshold=0.85, **cfg), summarizer, **kwargs)


def _big_conversation(n=10, chars=40_000, system=False):
    msgs = [sys_msg()] if system else []
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        msgs.append({"role": role, "content": f"turn {i} " + "x" * chars})
    return msgs


def test_threshold_and_should_compress():
    cc = _cc()
    assert cc.threshold_tokens == 85_000
    assert cc.should_compress(50_000) is False
    assert cc.should_compress(90_000) is True
    assert cc.should_compress(85_000) is True
    cc.update_from_response({"prompt_tokens": 90_000})
    assert cc.should_compress() is True
    assert cc.should_compress(10) is False  # an explicit argument overrides


def test_threshold_tokens_config_overrides_the_fraction():
    cc = ContextCompressor(100_000, CompressionConfig(threshold_tokens=30_000))
    assert cc.threshold_tokens == 30_000 and cc.tail_token_budget == 6_000


def test_disabled_compression_never_triggers():
    assert _cc(enabled=False).should_compress(99_000) is False


def test_preflight():
    cc = _cc()
    assert cc.should_compress_preflight([user("x" * 400_000)]) is True
    assert cc.should_compress_preflight([user("short")]) is False
    tools = [{"type": "function", "function": {"name": "t", "description": "d" * 400_000}}]
    assert cc.should_compress_preflight([user("short")], tools) is True


def test_update_from_response_and_status():
    cc = _cc()
    cc.update_from_response({"prompt_tokens": 50_000, "completion_tokens": 100, "total_tokens": 50_100})
    assert (cc.last_prompt_tokens, cc.last_completion_tokens, cc.last_total_tokens) == (50_000, 100, 50_100)
    status = cc.get_status()
    for key in ("last_prompt_tokens", "threshold_tokens", "context_length", "usage_percent", "compression_count"):
        assert key in status
    assert status["usage_percent"] == 50.0
    cc.update_from_response({})
    assert (cc.last_prompt_tokens, cc.last_completion_tokens, cc.last_total_tokens) == (0, 0, 0)
    cc.update_from_response({"input_tokens": 10, "cache_read_input_tokens": 900, "output_tokens": 5})
    assert cc.last_prompt_tokens == 910 and cc.last_completion_tokens == 5 and cc.last_total_tokens == 915


def test_four_messages_are_returned_unchanged():
    cc = _cc(protect_first_n=2, protect_last_n=2)
    msgs = _big_conversation(4)
    out = cc.compress(msgs)
    assert out == msgs and out is not msgs
    assert cc.compression_count == 0


def test_ten_messages_get_shorter_and_count_increments():
    cc = _cc(protect_first_n=2, protect_last_n=2)
    msgs = _big_conversation(10)
    before = copy.deepcopy(msgs)
    out = cc.compress(msgs)
    assert len(out) < len(msgs)
    assert cc.compression_count == 1
    assert out[-2:] == msgs[-2:]
    out2 = cc.compress(msgs)
    assert len(out2) < len(msgs)
    assert cc.compression_count == 2
    assert out2[-2:] == msgs[-2:]
    assert msgs == before


def test_none_system_or_assistant_content_does_not_crash():
    cc = _cc(protect_first_n=1, protect_last_n=2)
    msgs = [{"role": "system", "content": None}]
    for i in range(6):
        msgs += [user(f"q{i} " + "y" * 30_000), assistant(None, call(f"c{i}", command="ls")), tool(f"c{i}", "ok"),
                 {"role": "assistant", "content": None}]
    out = cc.compress(msgs)
    assert len(out) < len(msgs)
    assert out[0] == {"role": "system", "content": None}
    assert_pairs_intact(out)


def test_mocked_llm_summary_is_inserted():
    fake = RecordingSummariser("## Goal\nShip the parser\n## Critical Context\nport 8081")
    cc = _cc(protect_first_n=2, protect_last_n=2, summarizer=fake)
    out = cc.compress(_big_conversation(10, system=True))
    summaries = summary_messages(out)
    assert len(summaries) == 1
    assert text_of(summaries[0]).startswith(SUMMARY_PREFIX)
    assert "port 8081" in text_of(summaries[0])
    assert summaries[0]["_compressed_summary"] is True
    assert cc.last_summary_source == "llm" and cc.last_summary_fallback_used is False
    assert len(fake.prompts) == 1 and "## Critical Context" in fake.prompts[0]
    assert "turn 3" in fake.prompts[0]  # a middle turn reached the summariser


def test_system_message_is_byte_identical():
    system = {"role": "system", "content": "Rules ✓\n" + "r" * 500, "name": "sys"}
    msgs = [system] + _big_conversation(12)
    out = _cc(protect_first_n=2, protect_last_n=2).compress(msgs)
    assert json.dumps(out[0], ensure_ascii=False) == json.dumps(system, ensure_ascii=False)


def test_pair_integrity_when_the_tail_would_start_on_a_tool_message():
    msgs = [sys_msg(), user("start")]
    for i in range(8):
        msgs.append(assistant("working", call(f"a{i}", command=f"step {i}"), call(f"b{i}", "read_file", path=f"f{i}.py")))
        msgs.append(tool(f"a{i}", "out " * 3000))
        msgs.append(tool(f"b{i}", "file " * 3000))
    msgs.append(user("done?"))
    for first in (0, 1, 2, 3):
        cc = ContextCompressor(30_000, CompressionConfig(protect_first_n=first, protect_last_n=4))
        out = cc.compress(msgs)
        assert len(out) < len(msgs)
        assert_pairs_intact(out)


def test_roles_alternate_or_summary_is_merged_into_first_tail_message():
    # head [sys, u1, a1]: summary would be 'user'; tail starts with 'user' -> flip to 'assistant'
    # would collide with a1 -> merged into the first tail message.
    msgs = [sys_msg(), user("u1"), assistant("a1")]
    for i in range(6):
        msgs += [user(f"u{i + 2} " + "z" * 20_000), assistant(f"a{i + 2} " + "z" * 20_000)]
    msgs += [user("final ask")]
    cc = _cc(protect_first_n=2, protect_last_n=3)
    out = cc.compress(msgs)
    roles = [m["role"] for m in out[1:]]
    assert all(a != b for a, b in zip(roles, roles[1:], strict=False)), roles
    merged = [m for m in out if m.get("_compressed_summary")]
    assert len(merged) == 1 and merged[0] not in msgs
    assert contains_verbatim(out, msgs[-1])


def test_summary_role_flips_to_avoid_collision():
    # head [sys, u1]: summary 'assistant'; tail starts with 'user' -> no collision, standalone summary
    msgs = [sys_msg(), user("u1")]
    for i in range(6):
        msgs += [assistant(f"a{i} " + "z" * 20_000), user(f"u{i} " + "z" * 20_000)]
    cc = _cc(protect_first_n=1, protect_last_n=3)
    out = cc.compress(msgs)
    summary = summary_messages(out)[0]
    idx = out.index(summary)
    assert summary["role"] == "assistant" and out[idx - 1]["role"] == "user" and out[idx + 1]["role"] == "user"


def test_last_user_message_always_in_tail():
    msgs = [sys_msg(), user("first")]
    msgs += [assistant("a " + "q" * 30_000), user("THE LATEST ASK")]
    for i in range(10):
        msgs += [assistant(None, call(f"c{i}", command="x")), tool(f"c{i}", "r" * 20_000)]
    msgs.append(assistant("still working"))
    cc = _cc(protect_first_n=0, protect_last_n=2)
    out = cc.compress(msgs)
    assert len(out) < len(msgs)
    assert contains_verbatim(out, user("THE LATEST ASK"))
    assert_pairs_intact(out)


def test_abort_on_summary_failure_returns_input():
    fake = RecordingSummariser(ValueError("model replied with garbage"))
    cc = _cc(protect_first_n=2, protect_last_n=2, abort_on_summary_failure=True, summarizer=fake)
    msgs = _big_conversation(10)
    out = cc.compress(msgs)
    assert out == msgs
    assert cc.last_compress_aborted is True and cc.compression_count == 0
    assert "garbage" in cc.last_failure


def test_fallback_summary_sets_flag():
    fake = RecordingSummariser(ValueError("bad reply"))
    cc = _cc(protect_first_n=2, protect_last_n=2, fallback_on_summary_failure=True, summarizer=fake)
    msgs = _big_conversation(10)
    out = cc.compress(msgs)
    assert len(out) < len(msgs)
    assert cc.last_summary_fallback_used is True and cc.last_compress_aborted is False
    assert "turn 4" in text_of(summary_messages(out)[0]) and "turn 5" in text_of(summary_messages(out)[0])


def test_auth_error_always_aborts():
    fake = RecordingSummariser(SummaryAuthError("401 invalid key"))
    cc = _cc(protect_first_n=2, protect_last_n=2, summarizer=fake)
    msgs = _big_conversation(10)
    assert cc.compress(msgs) == msgs and cc.last_compress_aborted is True


class _HTTPError(Exception):
    def __init__(self, status_code):
        super().__init__(f"HTTP {status_code}")
        self.status_code = status_code


@pytest.mark.parametrize("status,aborted", [(401, True), (403, True), (429, False), (502, False), (400, False)])
def test_http_status_classification(status, aborted):
    cc = _cc(protect_first_n=2, protect_last_n=2, fallback_on_summary_failure=True, summarizer=RecordingSummariser(_HTTPError(status)))
    msgs = _big_conversation(10)
    out = cc.compress(msgs)
    assert cc.last_compress_aborted is aborted
    assert (out == msgs) is aborted


def test_cooldown_grows_and_force_bypasses_it():
    now = [1000.0]
    fake = RecordingSummariser(SummaryRateLimitError("429"), SummaryRateLimitError("429"), "## Goal\nok")
    cc = _cc(protect_first_n=2, protect_last_n=2, fallback_on_summary_failure=True, summarizer=fake, clock=lambda: now[0])
    msgs = _big_conversation(10)
    cc.compress(msgs)
    assert cc.cooldown_remaining() == COOLDOWN_TRANSIENT_S[0]
    assert cc.should_compress(99_000) is False
    cc.compress(msgs)  # in cooldown: the summariser is not called, the LLM-free summary is used
    assert len(fake.prompts) == 1 and cc.last_summary_fallback_used
    now[0] += COOLDOWN_TRANSIENT_S[0] + 1
    assert cc.should_compress(99_000) is True
    cc.compress(msgs)
    assert cc.cooldown_remaining() == COOLDOWN_TRANSIENT_S[1]
    cc.compress(msgs, force=True)  # force clears the cooldown and calls the model again
    assert len(fake.prompts) == 3 and cc.last_summary_source == "llm"
    assert cc.cooldown_remaining() == 0


def test_no_summariser_uses_llm_free_summary_without_cooldown():
    cc = _cc(protect_first_n=2, protect_last_n=2)
    out = cc.compress(_big_conversation(10))
    assert cc.last_summary_source == "llm_free" and cc.cooldown_remaining() == 0
    assert "## Completed Actions" in text_of(summary_messages(out)[0])


def test_anti_thrash_stops_auto_trigger_until_prompt_drops():
    cc = _cc(protect_first_n=2, protect_last_n=2)
    msgs = _big_conversation(4)
    cc.compress(msgs)
    cc.compress(msgs)  # two no-ops in a row
    assert cc.should_compress(99_000) is False
    cc.update_from_response({"prompt_tokens": 1000})
    assert cc.should_compress(99_000) is True


def test_summary_failure_abort_is_logged_by_default(caplog):
    cc = _cc(protect_first_n=2, protect_last_n=2, summarizer=RecordingSummariser(""))
    msgs = _big_conversation(10)
    with caplog.at_level(logging.WARNING, logger="hermes_memory.context"):
        assert cc.compress(msgs) == msgs
    assert cc.last_compress_aborted is True and "nothing was cut" in caplog.text


def test_summary_failure_is_logged(caplog):
    cc = _cc(protect_first_n=2, protect_last_n=2, fallback_on_summary_failure=True, summarizer=RecordingSummariser(""))
    with caplog.at_level(logging.WARNING, logger="hermes_memory.context"):
        cc.compress(_big_conversation(10))
    assert "LLM-free" in caplog.text


def test_focus_topic_and_pre_compress_text_reach_the_prompt():
    fake = RecordingSummariser()
    cc = _cc(protect_first_n=2, protect_last_n=2, summarizer=fake)
    cc.compress(_big_conversation(10), focus_topic="database migration", pre_compress_text='user likes "tea"')
    prompt = fake.prompts[0]
    assert "FOCUS TOPIC: 'database migration'" in prompt
    assert json.dumps('user likes "tea"') in prompt


def test_list_content_is_compressed_and_counted():
    msgs = [sys_msg()]
    for i in range(8):
        msgs.append({"role": "user", "content": [{"type": "text", "text": f"look at image {i}"},
                                                  {"type": "image_url", "image_url": {"url": "data:,x"}}]})
        msgs.append(assistant(f"I see picture {i}: " + "d" * 4000))
    cc = ContextCompressor(20_000, CompressionConfig(protect_first_n=1, protect_last_n=2))
    out = cc.compress(msgs)
    assert len(out) < len(msgs)
    assert contains_verbatim(out, msgs[-2])
    assert "image 3" in text_of(summary_messages(out)[0])


def test_context_length_must_be_positive():
    with pytest.raises(ValueError, match="positive"):
        ContextCompressor(0)


def test_reset_restores_head_protection_and_clears_cooldown():
    cc = _cc(protect_first_n=2, protect_last_n=2, fallback_on_summary_failure=True, summarizer=RecordingSummariser(SummaryRateLimitError("429")))
    msgs = _big_conversation(10)
    cc.compress(msgs)
    assert cc.compression_count == 1 and cc.cooldown_remaining() > 0
    assert cc.plan(msgs).head_end == 0  # decayed after the first compaction
    cc.reset()
    assert cc.compression_count == 0 and cc.cooldown_remaining() == 0 and cc.previous_summary is None
    assert cc.plan(msgs).head_end == 2


def test_update_from_response_accepts_sdk_usage_objects():
    class Usage:
        def __init__(self):
            self.prompt_tokens, self.completion_tokens, self.total_tokens = 7, 3, 10

    cc = _cc()
    cc.update_from_response(Usage())
    assert (cc.last_prompt_tokens, cc.last_completion_tokens, cc.last_total_tokens) == (7, 3, 10)


def test_summariser_reporting_no_model_configured_uses_the_llm_free_summary():
    # "No model configured" is not a failure to abort on: the LLM-free summary is the summary
    # (issue 4), now and on later compactions, without asking the summariser again.
    from hermes_memory.errors import ModelNotConfiguredError

    fake = RecordingSummariser(ModelNotConfiguredError("no model configured"))
    cc = _cc(protect_first_n=2, protect_last_n=2, summarizer=fake)
    msgs = _big_conversation(10)
    out = cc.compress(msgs)
    assert len(out) < len(msgs) and cc.last_compress_aborted is False
    assert cc.last_summary_source == "llm_free"
    assert cc.should_compress(10**6) is True  # no cooldown blocks compression
    out2 = cc.compress(out + _big_conversation(6)[1:])
    assert cc.last_summary_source == "llm_free" and len(fake.prompts) == 1
    assert cc.compression_count == 2 and len(out2) < len(out) + 6
