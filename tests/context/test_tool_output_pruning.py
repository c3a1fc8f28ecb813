"""Pruning old tool outputs: only large results outside the protected tail, the newest of duplicate
outputs kept, arguments still valid JSON, and a second prune changes nothing (failure case B33 of
docs/failure-cases.md). Each test's docstring has its repro.
"""


import copy
import json

from hermes_memory.context import (
    prune_tool_outputs,
)
from hermes_memory.context.compressor import DUPLICATE_PLACEHOLDER
from tests.context.helpers import (
    assistant,
    call,
    sys_msg,
    tool,
    user,
)


def _filler(k: int) -> dict:
    return user(f"question {k}") if k % 2 else assistant("r" * 900)


def _prune_twice(messages):
    first, n1 = prune_tool_outputs(messages, protect_tail_tokens=0, protect_tail_min=3, start=1)
    second, n2 = prune_tool_outputs(first, protect_tail_tokens=0, protect_tail_min=3, start=1)
    return first, n1, second, n2


def test_B33_prune_is_idempotent_on_a_tool_result_with_an_image():
    """Repro: a tool result of 190 chars of text plus an image became text + image placeholder
    (222 chars), which the second pass pruned again into a one-line record."""
    image_result = [{"type": "text", "text": "y" * 190}, {"type": "image_url", "image_url": {"url": "data:,"}}]
    messages = [sys_msg(), user("screenshot"), assistant(None, call("i1", name="screenshot")), tool("i1", image_result)]
    messages += [_filler(k) for k in range(20)]
    first, n1, second, n2 = _prune_twice(messages)
    assert n1 == 1
    assert "image" in first[3]["content"]
    assert n2 == 0
    assert second == first


def test_B33_prune_is_idempotent_when_records_are_cut_to_the_cap():
    """Repro: two calls of a tool with long argument names gave identical records cut to exactly
    200 chars; the second pass treated them as a repeated >=200-char output and replaced one
    with the duplicate placeholder."""
    args = {
        "query_string_for_search": "same query " * 5,
        "organisation_filter_value": "org " * 10,
        "maximum_number_of_results": 50,
    }
    messages = [sys_msg(), user("search")]
    for k in range(2):
        messages += [
            assistant(None, call(f"e{k}", name="mcp__github__search_repositories_and_code", **args)),
            tool(f"e{k}", f"line {k}\n" * 100),
        ]
    messages += [_filler(k) for k in range(20)]
    first, n1, second, n2 = _prune_twice(messages)
    assert n1 == 2
    assert n2 == 0
    assert second == first


# --------------------------------------------------------------------------------------------- B33


def _b33_messages():
    sizes = [1000, 150, 1000, 1000, 150, 1000, 1000, 150, 1000, 1000, 150, 1000, 1000, 150, 1000]
    msgs = [user("audit the repo")]
    k = 0
    for group in range(3):
        ids = [f"g{group}_{j}" for j in range(5)]
        msgs.append(assistant(None, *[call(i, "terminal", command=f"cat file{i}") for i in ids]))
        for i in ids:
            msgs.append(tool(i, f"output {i} exit code: 0 ".ljust(sizes[k], "o")))
            k += 1
    msgs.append(assistant("audit finished"))
    assert len(msgs) == 20
    return msgs


def test_B33_prune_boundary_big_budget_prunes_nothing():
    msgs = _b33_messages()
    out, pruned = prune_tool_outputs(msgs, protect_tail_tokens=10**6, protect_tail_min=3)
    assert pruned == 0 and out == msgs


def test_B33_small_budget_prunes_only_large_results_outside_tail_and_is_idempotent():
    msgs = _b33_messages()
    before = copy.deepcopy(msgs)
    out, pruned = prune_tool_outputs(msgs, protect_tail_tokens=0, protect_tail_min=3)
    assert msgs == before
    boundary = len(msgs) - 3
    assert out[boundary:] == msgs[boundary:]
    expected = 0
    for old, new in zip(msgs[:boundary], out[:boundary], strict=True):
        if old["role"] == "tool" and len(old["content"]) > 200:
            expected += 1
            assert new["tool_call_id"] == old["tool_call_id"]
            assert new["content"].startswith("[terminal] ran `cat file")
            assert "(1000 chars)" in new["content"] and "exit 0" in new["content"]
            assert len(new["content"]) <= 200
        else:
            assert new == old
    assert pruned == expected == 9
    again, pruned_again = prune_tool_outputs(out, protect_tail_tokens=0, protect_tail_min=3)
    assert pruned_again == 0 and again == out


def test_B33_duplicate_outputs_keep_only_the_newest():
    same = "identical listing\n" * 30
    msgs = [user("ls twice")]
    for i in range(3):
        msgs += [assistant(None, call(f"d{i}", command="ls -la")), tool(f"d{i}", same)]
    msgs += [assistant("listed"), user("ok")]
    out, pruned = prune_tool_outputs(msgs, protect_tail_tokens=0, protect_tail_min=3)
    contents = [m["content"] for m in out if m["role"] == "tool"]
    assert contents == [DUPLICATE_PLACEHOLDER, DUPLICATE_PLACEHOLDER, same]
    assert pruned == 2
    assert prune_tool_outputs(out, protect_tail_tokens=0, protect_tail_min=3) == (out, 0)


def test_B33_long_tool_arguments_stay_valid_json_after_pruning():
    args = {"path": "notes.md", "content": "w" * 3000, "nested": {"list": ["v" * 900, 3, None]}}
    msgs = [user("write"), assistant(None, {"id": "w1", "type": "function", "function": {"name": "write_file", "arguments": json.dumps(args)}}),
            tool("w1", "ok"), assistant("written"), user("thanks"), assistant("welcome")]
    out, pruned = prune_tool_outputs(msgs, protect_tail_tokens=0, protect_tail_min=2)
    new_args = json.loads(out[1]["tool_calls"][0]["function"]["arguments"])
    assert new_args["path"] == "notes.md"
    assert new_args["content"] == "w" * 200 + "...[truncated]"
    assert new_args["nested"]["list"][1:] == [3, None]
    assert pruned == 1
    assert prune_tool_outputs(out, protect_tail_tokens=0, protect_tail_min=2)[1] == 0
    # non-JSON arguments are left alone
    raw = [user("x"), assistant(None, {"id": "r", "type": "function", "function": {"name": "t", "arguments": "not json " * 100}}),
           tool("r", "ok"), user("a"), assistant("b")]
    assert prune_tool_outputs(raw, protect_tail_tokens=0, protect_tail_min=2) == (raw, 0)
