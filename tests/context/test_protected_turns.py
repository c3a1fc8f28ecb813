"""The turns compression must keep: the latest user turn is never summarised away, and a short conversation is
not pruned by an off-by-one (failure case B31 of docs/failure-cases.md).
"""

from hermes_memory.config import CompressionConfig
from hermes_memory.context import (
    ContextCompressor,
    prune_tool_outputs,
)
from tests.context.helpers import (
    assert_pairs_intact,
    assistant,
    call,
    contains_verbatim,
    sys_msg,
    text_of,
    tool,
    user,
)

# --------------------------------------------------------------------------------------------- B31


def _b31a(protect_first_n):
    calls = [call(f"k{i}", "read_file", path=f"src/m{i}.py") for i in range(12)]
    msgs = [sys_msg(), user("u1 " + "e" * 4000), assistant("a1 " + "e" * 4000), user("LATEST-ASK"), assistant(None, *calls)]
    msgs += [tool(f"k{i}", f"content of m{i}".ljust(80, ".")) for i in range(12)]
    msgs.append(assistant("a3 all files read"))
    cc = ContextCompressor(10_000, CompressionConfig(protect_first_n=protect_first_n, protect_last_n=3, threshold_tokens=500))
    return msgs, cc


def test_B31_latest_user_turn_is_never_summarised_away():
    for first in (0, 1):
        msgs, cc = _b31a(first)
        out = cc.compress(msgs, force=True)
        assert cc.compression_count == 1
        assert contains_verbatim(out, user("LATEST-ASK"))
        idx = next(i for i, m in enumerate(out) if m["role"] == "user" and text_of(m).endswith("LATEST-ASK"))
        if first == 1:
            assert out[idx] == user("LATEST-ASK")
        assert out[idx + 1] == msgs[4]
        assert [m["tool_call_id"] for m in out[idx + 2 : idx + 14]] == [f"k{i}" for i in range(12)]
        assert_pairs_intact(out)


def test_B31_short_conversation_off_by_one_prunes_nothing():
    msgs = [user("run it"), assistant(None, call("t1", command="make")), tool("t1", "L" * 5000), assistant("done")]
    out, pruned = prune_tool_outputs(msgs, protect_tail_tokens=10, protect_tail_min=4)
    assert pruned == 0 and out == msgs
    cc = ContextCompressor(1000, CompressionConfig(protect_first_n=0, protect_last_n=4))
    assert cc.prune(msgs) == (msgs, 0)
    called = []
    assert cc.compress(msgs, force=True, before_cut=called.append) == msgs
    assert cc.compression_count == 0 and called == []
