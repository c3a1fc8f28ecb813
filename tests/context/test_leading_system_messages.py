"""Several leading system messages are all the system prompt."""

from hermes_memory.config import CompressionConfig
from hermes_memory.context import ContextCompressor
from tests.context.helpers import assistant, sys_msg, user


def _turns(prefix: str) -> list:
    return [user(f"{prefix}{k} " + "w" * 600) if k % 2 == 0 else assistant("r" * 900) for k in range(20)]


def test_second_leading_system_message_survives_repeated_compressions():
    """Repro: ``[system: instructions, system: memory snapshot, user, ...]``. The first compaction
    kept the snapshot (inside protect_first_n), the second (head = system prompt only) counted
    just message 0 as the system prompt and summarised the snapshot away."""
    snapshot = {"role": "system", "content": "MEMORY SNAPSHOT: the user prefers tea"}
    comp = ContextCompressor(4000, CompressionConfig())
    out = comp.compress([sys_msg(), snapshot, *_turns("a"), user("LAST")])
    out = comp.compress([*out, *_turns("b"), user("LAST2")])
    assert comp.compression_count == 2
    assert out[:2] == [sys_msg(), snapshot]

