"""Review of Layer 3: adversarial conversations shaped like real agents' histories.

Each test pins one defect found in review (see the test's docstring for the repro).
"""

import copy
import json

from hermes_memory.config import CompressionConfig
from hermes_memory.context import (
    ContextCompressor,
)
from hermes_memory.context.summary import END_MARKER, format_summary
from hermes_memory.context.tokens import estimate_messages_tokens_rough
from tests.context.helpers import assistant, call, sys_msg, tool, user


def _filler(k: int) -> dict:
    return user(f"question {k}") if k % 2 else assistant("r" * 900)


def test_review_merged_summary_on_a_tool_call_message_keeps_the_call_in_the_tail():
    """Repro: a summary merged into an assistant message with ``content=None`` and tool calls
    (the role-collision case) sits in the tail of the next compaction; unmerging it dropped the
    whole message with its tool calls, and then its results as orphans: tail turns lost."""
    merged = {
        "role": "assistant",
        "content": format_summary("## Goal\nCODENAME-9") + "\n\n" + END_MARKER,
        "tool_calls": [call("M1", command="make")],
        "_compressed_summary": True,
    }
    messages = [
        sys_msg(),
        user("u1 please read the long spec below\n" + "spec line\n" * 300),
        assistant("a1"),
        user("u2"),
        merged,
        tool("M1", "RESULT-M1 " + "z" * 100),
        assistant("after"),
        user("LAST1"),
        assistant("x" * 100),
        user("q"),
        assistant("y" * 100),
        user("LAST2"),
    ]
    snapshot = copy.deepcopy(messages)
    comp = ContextCompressor(8000, CompressionConfig())
    comp.compression_count = 1
    out = comp.compress(messages)
    assert messages == snapshot
    assert comp.compression_count == 2
    assert estimate_messages_tokens_rough(out) < estimate_messages_tokens_rough(messages)
    kept = [m for m in out if m.get("tool_calls")]
    assert [c["id"] for m in kept for c in m["tool_calls"]] == ["M1"]
    assert any(m.get("role") == "tool" and m.get("content", "").startswith("RESULT-M1") for m in out)
    assert sum("CODENAME-9" in json.dumps(m) for m in out) == 1  # folded into the new summary once
