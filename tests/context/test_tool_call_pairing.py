"""Review of Layer 3: adversarial conversations shaped like real agents' histories.

Each test pins one defect found in review (see the test's docstring for the repro).
"""

import json

from hermes_memory.config import CompressionConfig
from hermes_memory.context import (
    ContextCompressor,
    sanitize_tool_pairs,
)
from tests.context.helpers import assistant, call, sys_msg, tool, user


def _responses_call(item_id: str, call_id: str) -> dict:
    # OpenAI Responses-API function calls carry an item id ("fc_...") AND the call id ("call_...");
    # the tool result refers to the call id.
    return {
        "id": item_id,
        "call_id": call_id,
        "type": "function",
        "function": {"name": "terminal", "arguments": json.dumps({"command": "ls"})},
    }


def _filler(k: int) -> dict:
    return user(f"question {k}") if k % 2 else assistant("r" * 900)


def test_call_id_wins_over_item_id_when_both_are_present():
    """Repro: a call with ``id="fc_1", call_id="call_1"`` and its result ``tool_call_id="call_1"``
    was treated as an orphan pair and both were deleted. docs/reference.md §5: call id = ``call_id`` or ``id``."""
    messages = [
        user("list files"),
        assistant(None, _responses_call("fc_1", "call_1")),
        tool("call_1", "a.txt b.txt"),
        assistant("two files"),
    ]
    out, removed = sanitize_tool_pairs(messages)
    assert removed == 0
    assert out == messages


def test_call_id_pairs_survive_compress():
    comp = ContextCompressor(2000, CompressionConfig())
    messages = [sys_msg(), user("start")]
    messages += [_filler(k) for k in range(20)]
    messages += [assistant(None, _responses_call("fc_9", "call_9")), tool("call_9", "RESULT-9"), assistant("ok"), user("LAST")]
    out = comp.compress(messages)
    assert len(out) < len(messages)
    assert any(m.get("role") == "tool" and m.get("content") == "RESULT-9" for m in out)
    assert any(c.get("call_id") == "call_9" for m in out for c in m.get("tool_calls") or ())


def test_duplicate_call_ids_in_one_message_leave_one_call_per_result():
    """Repro: ``assistant(tool_calls=[d1, d1]), tool(d1)`` kept both calls but one result, so the
    provider gets a call without a result (and a duplicate tool_use id)."""
    messages = [
        user("go"),
        assistant(None, call("d1", command="ls"), call("d1", command="ls")),
        tool("d1", "out"),
        assistant("done"),
    ]
    out, removed = sanitize_tool_pairs(messages)
    assert [c["id"] for c in out[1]["tool_calls"]] == ["d1"]
    assert [m for m in out if m["role"] == "tool"] == [tool("d1", "out")]
    assert removed == 1
    assert messages[1]["tool_calls"] == [call("d1", command="ls"), call("d1", command="ls")]  # not mutated
