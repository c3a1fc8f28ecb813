"""Review of Layer 3: adversarial conversations shaped like real agents' histories.

Each test pins one defect found in review (see the test's docstring for the repro).
"""


from hermes_memory.context import (
    prune_tool_outputs,
)
from tests.context.helpers import assistant, call, sys_msg, tool, user


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
