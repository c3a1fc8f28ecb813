from hermes_memory.context import (
    IMAGE_TOKENS,
    content_text,
    estimate_message_tokens,
    estimate_messages_tokens_rough,
    estimate_request_tokens,
    estimate_tokens_rough,
)
from hermes_memory.context.tokens import MESSAGE_OVERHEAD_TOKENS
from tests.context.helpers import assistant, call


def test_chars_over_four_rounded_up():
    assert estimate_tokens_rough("") == 0
    assert estimate_tokens_rough(None) == 0
    assert estimate_tokens_rough("abc") == 1
    assert estimate_tokens_rough("abcd") == 1
    assert estimate_tokens_rough("abcde") == 2
    assert estimate_tokens_rough("x" * 400_000) == 100_000


def test_list_content_counts_text_parts_and_images_at_fixed_cost():
    parts = [
        {"type": "text", "text": "a" * 40},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 100_000}},
        {"type": "text", "text": "b" * 40},
    ]
    msg = {"role": "user", "content": parts}
    assert content_text(parts) == "a" * 40 + "\n" + "b" * 40
    # the base64 payload is NOT counted as text; the image costs a flat IMAGE_TOKENS
    assert estimate_message_tokens(msg) == MESSAGE_OVERHEAD_TOKENS + estimate_tokens_rough("a" * 40 + "\n" + "b" * 40) + IMAGE_TOKENS


def test_none_content_and_tool_calls_are_counted():
    bare = estimate_message_tokens({"role": "assistant", "content": None})
    assert bare == MESSAGE_OVERHEAD_TOKENS
    with_call = estimate_message_tokens(assistant(None, call("c1", command="x" * 400)))
    assert with_call > bare + 100


def test_reasoning_fields_are_counted():
    plain = estimate_message_tokens({"role": "assistant", "content": "hi"})
    reasoning = estimate_message_tokens({"role": "assistant", "content": "hi", "reasoning_content": "r" * 400})
    assert reasoning == plain + 100


def test_request_tokens_include_tool_schemas():
    msgs = [{"role": "user", "content": "hello"}]
    tools = [{"type": "function", "function": {"name": "memory", "description": "d" * 800, "parameters": {}}}]
    assert estimate_request_tokens(msgs, tools) > estimate_messages_tokens_rough(msgs) + 200
    assert estimate_request_tokens(msgs) == estimate_messages_tokens_rough(msgs)
