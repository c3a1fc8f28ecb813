"""Failure cases B27, B29, B30, B31, B33, B34 of docs/failure-cases.md, named after their id and kind."""

import copy
import json
import logging

from hermes_memory.config import CompressionConfig
from hermes_memory.context import (
    SUMMARY_PREFIX,
    ContextCompressor,
    prune_tool_outputs,
    split_summary,
)
from hermes_memory.context.compressor import DUPLICATE_PLACEHOLDER
from tests.context.helpers import (
    RecordingSummariser,
    assert_pairs_intact,
    assistant,
    call,
    contains_verbatim,
    strip_private,
    summary_messages,
    sys_msg,
    text_of,
    tool,
    user,
)

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


# --------------------------------------------------------------------------------------------- B29


def _b29_conversation():
    msgs = [sys_msg()]
    for i in range(20):
        msgs += [user(f"step {i}: deploy service-{i} to host{i}.internal " + "p" * 1500),
                 assistant(f"done step {i}, CODE-{i} recorded " + "q" * 1500)]
    return msgs


def _b29_compressor(summariser, **cfg):
    return ContextCompressor(20_000, CompressionConfig(**cfg), summariser)


def test_B29_summary_timeout_never_deletes_the_middle():
    msgs = _b29_conversation()
    before = copy.deepcopy(msgs)
    fake = RecordingSummariser(TimeoutError("summariser timed out"))
    cc = _b29_compressor(fake)
    assert cc.should_compress_preflight(msgs)
    out = cc.compress(msgs)
    assert out == before and msgs == before
    assert cc.last_compress_aborted is True and cc.compression_count == 0
    assert cc.last_failure.startswith("network")
    # a cooldown stops immediate re-triggering; a later (forced) retry is possible and succeeds
    assert cc.should_compress(10**6) is False
    fake.replies = ["## Goal\nrecovered"]
    retry = cc.compress(msgs, force=True)
    assert len(retry) < len(msgs) and cc.last_summary_source == "llm"


def test_B29_empty_or_blank_reply_returns_input_unchanged_by_default():
    for reply in ("", "   "):
        msgs = _b29_conversation()
        before = copy.deepcopy(msgs)
        cc = _b29_compressor(RecordingSummariser(reply))
        assert cc.compress(msgs) == before and msgs == before
        assert cc.last_compress_aborted is True and cc.last_summary_fallback_used is False
        assert "empty" in cc.last_failure
        assert cc.should_compress(10**6) is False  # cooldown: no immediate re-trigger


def test_B29_opt_in_fallback_summarises_the_dropped_turns_themselves():
    # Only with fallback_on_summary_failure: the middle is replaced by the LLM-free summary built
    # from those very turns, flagged; never by a fixed "unavailable" note.
    for reply in ("", "   "):
        msgs = _b29_conversation()
        cc = _b29_compressor(RecordingSummariser(reply), fallback_on_summary_failure=True)
        out = cc.compress(msgs)
        assert cc.last_summary_fallback_used is True and cc.last_compress_aborted is False
        assert "empty" in cc.last_failure
        summary = text_of(summary_messages(out)[0])
        dropped = [m for m in msgs if not contains_verbatim(out, m)]
        assert dropped, "something was compacted"
        # every dropped user ask is still named in the summary
        for m in dropped:
            if m["role"] == "user":
                assert text_of(m).split(" " + "p" * 10)[0][:30] in summary


def test_B29_empty_reply_with_abort_setting_returns_input_unchanged():
    for reply in ("", "   ", TimeoutError("t")):
        msgs = _b29_conversation()
        cc = _b29_compressor(RecordingSummariser(reply), abort_on_summary_failure=True,
                             fallback_on_summary_failure=True)
        assert cc.compress(msgs) == msgs
        assert cc.last_compress_aborted is True


# --------------------------------------------------------------------------------------------- B30


def _b30_turns(start, count):
    msgs = []
    for i in range(start, start + count, 2):
        msgs += [user(f"request {i} " + "r" * 2000), assistant(f"answer {i + 1} " + "s" * 2000)]
    return msgs


def test_B30_previous_summary_survives_restart():
    cfg = CompressionConfig(protect_first_n=2, protect_last_n=4, threshold_tokens=8000)
    a = ContextCompressor(32_000, cfg, RecordingSummariser("## Key facts\nCODENAME=PLACEHOLDER-7"))
    first = a.compress([sys_msg()] + _b30_turns(0, 30))
    assert a.compression_count == 1
    persisted = strip_private(first)  # what SessionDB stores; the process then restarts
    history = persisted + _b30_turns(30, 30)
    fake_b = RecordingSummariser("## Key facts\nCODENAME=PLACEHOLDER-7\nNEW=1")
    b = ContextCompressor(32_000, cfg, fake_b)
    out = b.compress(history)
    prompt = fake_b.prompts[0]
    assert prompt.count("CODENAME=PLACEHOLDER-7") == 1
    previous, new_turns = prompt.split("PREVIOUS SUMMARY:\n", 1)[1].split("\n\nNEW TURNS:\n", 1)
    assert "CODENAME=PLACEHOLDER-7" in previous
    assert SUMMARY_PREFIX not in new_turns and "CODENAME" not in new_turns
    # new turns are the messages A did not summarise: A's protected head (the head decays to the
    # system prompt after a compaction) and what came after the old summary; never A's middle.
    summary_idx = next(i for i, m in enumerate(history) if split_summary(m)[0] is not None)
    assert summary_idx == 3
    first_line = new_turns.split("\n\n", 1)[0]
    assert first_line.startswith("[USER]: request 0 ")
    assert "answer 1 " in new_turns and f"{text_of(history[summary_idx + 1])[:12]}" in new_turns
    a_middle = [m for m in _b30_turns(0, 30) if not contains_verbatim(first, m)]
    assert a_middle and not any(text_of(m)[:12] in new_turns for m in a_middle)
    assert len(summary_messages(out)) == 1
    assert "NEW=1" in text_of(summary_messages(out)[0])


def test_B30_llm_free_summary_carries_previous_facts_after_restart():
    cfg = CompressionConfig(protect_first_n=2, protect_last_n=4, threshold_tokens=8000)
    a = ContextCompressor(32_000, cfg, RecordingSummariser("## Key facts\nCODENAME=PLACEHOLDER-7"))
    history = strip_private(a.compress([sys_msg()] + _b30_turns(0, 30))) + _b30_turns(30, 30)
    b = ContextCompressor(32_000, cfg)  # no model configured
    out = b.compress(history)
    summaries = summary_messages(out)
    assert len(summaries) == 1
    assert text_of(summaries[0]).count("CODENAME=PLACEHOLDER-7") == 1


def test_B30_in_process_summary_is_not_fed_back_as_a_new_turn():
    cfg = CompressionConfig(protect_first_n=2, protect_last_n=4, threshold_tokens=8000)
    fake = RecordingSummariser("## Key facts\nCODENAME=PLACEHOLDER-7")
    cc = ContextCompressor(32_000, cfg, fake)
    first = cc.compress([sys_msg()] + _b30_turns(0, 30))
    cc.compress(first + _b30_turns(30, 30))
    assert fake.prompts[1].count("CODENAME=PLACEHOLDER-7") == 1


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


# --------------------------------------------------------------------------------------------- B34


def _b34_conversation():
    msgs = [sys_msg()]
    for i in range(12):
        text = "remember: codename PLACEHOLDER-7" if i == 4 else f"question {i} " + "f" * 3000
        msgs += [user(text), assistant(f"reply {i} " + "g" * 3000)]
    return msgs


def test_B34_flush_runs_before_cut_with_full_uncompressed_list():
    events: list[str] = []
    flushed: list[list[dict]] = []

    def flush(messages):
        events.append("flush")
        flushed.append(copy.deepcopy(messages))

    fake = RecordingSummariser("## Goal\nsummary", events=events)
    cc = ContextCompressor(16_000, CompressionConfig(protect_first_n=2, protect_last_n=4), fake)
    msgs = _b34_conversation()
    # automatic trigger through the threshold
    cc.update_from_response({"prompt_tokens": 12_000})
    assert cc.should_compress()
    first = cc.compress(msgs, before_cut=flush)
    assert events == ["flush", "summarise"]
    assert flushed[0] == msgs
    assert any(text_of(m) == "remember: codename PLACEHOLDER-7" for m in flushed[0])
    assert not any(text_of(m) == "remember: codename PLACEHOLDER-7" for m in first)
    # manual trigger later: one more flush, over the compacted list (the old range is not re-flushed)
    later = first + [user("next " + "h" * 3000), assistant("ok " + "h" * 3000)] * 4
    cc.compress(later, force=True, before_cut=flush)
    assert events == ["flush", "summarise", "flush", "summarise"]
    assert flushed[1] == later
    assert not any(text_of(m) == "remember: codename PLACEHOLDER-7" for m in flushed[1])


def test_B34_failing_flush_does_not_block_compression(caplog):
    def flush(messages):
        raise RuntimeError("memory store locked")

    cc = ContextCompressor(16_000, CompressionConfig(protect_first_n=2, protect_last_n=4))
    msgs = _b34_conversation()
    with caplog.at_level(logging.WARNING, logger="hermes_memory.context"):
        out = cc.compress(msgs, before_cut=flush)
    assert len(out) < len(msgs) and cc.compression_count == 1
    assert "memory store locked" in caplog.text
    assert "memory store locked" in cc.last_stats["before_cut_error"]


def test_B34_flush_not_called_when_nothing_is_cut():
    calls = []
    cc = ContextCompressor(16_000, CompressionConfig(protect_first_n=2, protect_last_n=4))
    short = _b34_conversation()[:5]
    assert cc.compress(short, before_cut=calls.append) == short
    assert calls == []
