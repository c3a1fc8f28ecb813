import copy

import pytest

from hermes_memory.context import apply_anthropic_cache_control

MARK = {"type": "ephemeral"}


def _marked(msg):
    if "cache_control" in msg:
        return msg["cache_control"]
    content = msg.get("content")
    if isinstance(content, list) and content and isinstance(content[-1], dict):
        return content[-1].get("cache_control")
    return None


def _conv(with_system=True, n=5):
    msgs = [{"role": "system", "content": "SYSTEM"}] if with_system else []
    for i in range(n):
        msgs.append({"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"})
    return msgs


def test_system_and_last_three_are_marked():
    out = apply_anthropic_cache_control(_conv(True, 5))
    flags = [_marked(m) is not None for m in out]
    assert flags == [True, False, False, True, True, True]
    assert sum(flags) == 4


def test_without_system_the_last_four_are_marked():
    out = apply_anthropic_cache_control(_conv(False, 6))
    assert [_marked(m) is not None for m in out] == [False, False, True, True, True, True]


def test_string_content_becomes_one_text_part_with_marker():
    out = apply_anthropic_cache_control([{"role": "user", "content": "hello"}])
    assert out[0]["content"] == [{"type": "text", "text": "hello", "cache_control": MARK}]


def test_list_content_marks_last_part_and_none_gets_top_level_marker():
    msgs = [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "x", "arguments": "{}"}}]},
    ]
    out = apply_anthropic_cache_control(msgs)
    assert "cache_control" not in out[0]["content"][0]
    assert out[0]["content"][1]["cache_control"] == MARK
    assert out[1]["cache_control"] == MARK
    assert out[1]["content"] is None


def test_native_anthropic_tool_message_gets_top_level_marker():
    msgs = [{"role": "tool", "tool_call_id": "c", "content": "result"}]
    out = apply_anthropic_cache_control(msgs, native_anthropic=True)
    assert out[0]["cache_control"] == MARK and out[0]["content"] == "result"
    assert apply_anthropic_cache_control(msgs)[0]["content"][0]["cache_control"] == MARK


def test_one_hour_ttl_adds_ttl():
    out = apply_anthropic_cache_control(_conv(True, 1), cache_ttl="1h")
    assert _marked(out[0]) == {"type": "ephemeral", "ttl": "1h"}


def test_input_not_mutated_and_idempotent():
    msgs = _conv(True, 7)
    before = copy.deepcopy(msgs)
    once = apply_anthropic_cache_control(msgs)
    assert msgs == before
    twice = apply_anthropic_cache_control(once)
    assert twice == once
    # re-applying to a longer conversation moves the markers: still at most 4
    longer = once + [{"role": "user", "content": "next"}]
    again = apply_anthropic_cache_control(longer)
    assert sum(_marked(m) is not None for m in again) == 4
    assert _marked(again[1]) is None and _marked(again[-1]) is not None


def test_bad_ttl_is_refused_with_a_fix():
    with pytest.raises(ValueError, match="prompt_caching.cache_ttl"):
        apply_anthropic_cache_control(_conv(), cache_ttl="10m")
