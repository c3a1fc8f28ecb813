"""An earlier summary inside the new tail must not break role alternation."""

from hermes_memory.config import CompressionConfig
from hermes_memory.context import ContextCompressor, split_summary
from hermes_memory.context.summary import format_summary
from tests.context.helpers import assistant, sys_msg, user


def _roles(messages: list) -> list:
    return [m["role"] for m in messages if m["role"] != "system"]


def test_earlier_pure_summary_in_the_tail_keeps_roles_alternating():
    """Repro: after a first compaction with a 4-message head the summary sat between two assistant
    turns (``..., a, summary(user), a, ...``). The second compaction's head is the system prompt
    only and its tail reached back over the summary; the summary was removed from the tail (it is
    folded into the new one), leaving two assistant messages side by side."""
    old_summary = {"role": "user", "content": format_summary("## Goal\nship it"), "_compressed_summary": True}
    messages = [
        sys_msg(),
        user("u1 " + "x" * 900),
        assistant(""),
        user("u2 " + "x" * 1000),
        assistant(None),
        old_summary,
        assistant([{"type": "text", "text": "p" * 400}]),
        user(""),
        assistant([{"type": "text", "text": "p" * 300}]),
        user("u5 " + "x" * 200),
        assistant("n" * 2000),
        user("m" * 2000),
    ]
    roles = _roles(messages)
    assert all(a != b for a, b in zip(roles, roles[1:], strict=False))
    comp = ContextCompressor(4000, CompressionConfig(protect_first_n=4, protect_last_n=10))
    comp.compression_count = 1
    out = comp.compress(messages)
    assert comp.compression_count == 2
    roles = _roles(out)
    assert all(a != b for a, b in zip(roles, roles[1:], strict=False)), roles
    assert len([m for m in out if split_summary(m)[0] is not None]) == 1
    assert out[-1] == messages[-1]
