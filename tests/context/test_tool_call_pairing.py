"""Every tool result keeps its call through pruning and compression: call ids win over item ids, no
orphan result after a head cut or at the start of the tail, orphans in the input are removed, not stubbed
(failure case B27 of docs/failure-cases.md). Each test's docstring has its repro.
"""

import json

from hermes_memory.config import CompressionConfig
from hermes_memory.context import (
    ContextCompressor,
    sanitize_tool_pairs,
)
from tests.context.helpers import (
    assert_pairs_intact,
    assistant,
    call,
    sys_msg,
    tool,
    user,
)


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


# --------------------------------------------------------------------------------------------- B27


def _b27_messages(big_args: bool = False):
    return [
        sys_msg(),
        user("u1 set up the project"),
        assistant(None, call("c1", command="git init")),
        tool("c1", "Initialized empty Git repository " + "." * 300),
        assistant("a2 repo ready"),
        user("u2 now add tests"),
        assistant(None, call("c2", command="pytest")),
        tool("c2", "collected 3 items " + "." * 3000),  # a middle worth more than its summary
        assistant(None, call("c3", "write_file", path="tests/test_x.py", content="y" * (4000 if big_args else 10))),
        tool("c3", "wrote tests/test_x.py"),
        assistant("a5 tests written"),
        user("u3 run them again"),
    ]


def test_B27_orphan_tool_result_after_head_cut_is_avoided_by_growing_the_head():
    msgs = _b27_messages()
    cc = ContextCompressor(10_000, CompressionConfig(protect_first_n=2, protect_last_n=3, threshold_tokens=1000))
    plan = cc.plan(msgs)
    # protect-first = [sys, u1, a1] would end on a1 whose result t1 is next: the head grows over t1
    assert plan.head_end == 4
    out = cc.compress(msgs, force=True)
    assert len(out) < len(msgs)
    assert out[:4] == msgs[:4]
    assert_pairs_intact(out)


def test_B27_orphan_tool_result_when_naive_tail_starts_on_tool_message():
    msgs = _b27_messages(big_args=True)
    cc = ContextCompressor(10_000, CompressionConfig(protect_first_n=2, protect_last_n=3, threshold_tokens=1000))
    plan = cc.plan(msgs)
    # budget 200 tokens (x1.5): a5, u3, t3 fit, the 1000-token a4 does not -> naive start t3 (index 9)
    assert plan.tail_start == 8 and msgs[8]["tool_calls"][0]["id"] == "c3"
    out = cc.compress(msgs, force=True)
    assert_pairs_intact(out)
    kept_ids = [m.get("tool_call_id") for m in out if m["role"] == "tool"]
    assert "c3" in kept_ids and "c2" not in kept_ids
    assert out[1]["role"] != "tool" and all(
        not (out[i]["role"] == "tool" and out[i - 1]["role"] not in ("assistant", "tool")) for i in range(1, len(out))
    )


def test_B27_orphans_in_the_input_are_removed_not_stubbed():
    msgs = _b27_messages() + [tool("ghost", "stray result"), assistant(None, call("c9", command="ls")), user("u4")]
    cc = ContextCompressor(10_000, CompressionConfig(protect_first_n=2, protect_last_n=3, threshold_tokens=1000))
    out = cc.compress(msgs, force=True)
    assert_pairs_intact(out)
    assert not any(m.get("tool_call_id") == "ghost" for m in out)
    assert not any(c["id"] == "c9" for m in out for c in m.get("tool_calls") or [])
    assert cc.last_stats["orphans_removed"] >= 2
