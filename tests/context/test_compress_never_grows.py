"""A compression never returns a larger prompt than it was given (the test's docstring has the repro)."""


from hermes_memory.config import CompressionConfig
from hermes_memory.context import (
    ContextCompressor,
)
from hermes_memory.context.tokens import estimate_messages_tokens_rough
from tests.context.helpers import assistant, call, sys_msg, tool, user


def test_compress_never_returns_a_larger_prompt():
    """Repro: a large tail budget left one 900-char assistant turn in the middle; the summary that
    replaced it was longer than the turn, so ``compress`` returned as many messages and more
    tokens (1348 -> 1407). Such a compaction is ineffective: the input comes back unchanged."""
    messages = [sys_msg(), user("u1"), assistant("a1"), user("u2")]
    messages += [assistant("m" * 900) if k % 2 == 0 else user("mid") for k in range(10)]
    messages += [assistant(None, call("T1", command="ls")), tool("T1", "tool result T1"), assistant("after"), user("LAST1")]
    comp = ContextCompressor(8000, CompressionConfig())
    flushed = []
    out = comp.compress(messages, before_cut=flushed.append)
    assert estimate_messages_tokens_rough(out) <= estimate_messages_tokens_rough(messages)
    if estimate_messages_tokens_rough(out) == estimate_messages_tokens_rough(messages) or len(out) == len(messages):
        assert out == messages
        assert comp.compression_count == 0
        assert "not smaller" in comp.last_stats["plan"]
