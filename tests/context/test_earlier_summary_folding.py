"""Earlier summaries are folded into the next one, not lost or fed back as turns: every earlier summary,
after a restart, with or without a model, and a merged summary keeps its tool call in the tail (failure
case B30 of docs/failure-cases.md). Each test's docstring has its repro.
"""

import copy
import json

from hermes_memory.config import CompressionConfig
from hermes_memory.context import (
    SUMMARY_PREFIX,
    ContextCompressor,
    split_summary,
)
from hermes_memory.context.summary import END_MARKER, format_summary
from hermes_memory.context.tokens import estimate_messages_tokens_rough
from tests.context.helpers import (
    RecordingSummariser,
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


def _filler(k: int) -> dict:
    return user(f"question {k}") if k % 2 else assistant("r" * 900)


def test_merged_summary_on_a_tool_call_message_keeps_the_call_in_the_tail():
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


def _long_turns() -> list:
    return [user(f"q{k} " + "w" * 600) if k % 2 == 0 else assistant("r" * 900) for k in range(20)]


def test_B30_every_earlier_summary_is_folded_in_not_only_the_last():
    """Repro: a history holding two summaries (a resumed session chain loaded with its ancestors)
    gave the summariser only the newest one as ``previous_summary``; the older one was dropped as
    an old summary and never reached the new one (facts of the first compaction lost)."""
    first = {"role": "user", "content": format_summary("## Critical Context\nALPHA-1")}
    second = {"role": "user", "content": format_summary("## Critical Context\nBETA-2")}
    messages = [sys_msg(), first, assistant("ok"), *_long_turns(), second, assistant("ok2"), *_long_turns(), user("LAST")]
    fake = RecordingSummariser("## Goal\nnew summary")
    comp = ContextCompressor(8000, CompressionConfig(), fake)
    out = comp.compress(messages)
    assert comp.compression_count == 1
    assert "ALPHA-1" in fake.prompts[-1] and "BETA-2" in fake.prompts[-1]
    assert fake.prompts[-1].count("ALPHA-1") == 1
    assert len([m for m in out if split_summary(m)[0] is not None]) == 1


def test_B30_llm_free_summary_keeps_facts_of_every_earlier_summary():
    first = {"role": "user", "content": format_summary("## Critical Context\nALPHA-1")}
    second = {"role": "user", "content": format_summary("## Critical Context\nBETA-2")}
    filler = _long_turns() * 3
    messages = [sys_msg(), first, assistant("ok"), *filler, second, assistant("ok2"), *filler, user("LAST")]
    comp = ContextCompressor(40_000, CompressionConfig())  # an 8000-char summary: room for both
    out = comp.compress(messages)
    assert comp.compression_count == 1
    text = json.dumps(out)
    assert "ALPHA-1" in text and "BETA-2" in text


def test_B31_latest_user_message_shaped_like_a_legacy_summary_is_kept():
    """Repro: the user pastes an old agent's summary to carry on ("[CONTEXT SUMMARY]: ...").
    As the latest user message it was taken for an earlier summary: folded away and dropped,
    so the output ended on an assistant message and the user's request was gone."""
    pasted = user("[CONTEXT SUMMARY]: yesterday we set up X. Please continue with step 3.")
    messages = [sys_msg(), *_long_turns(), pasted]
    out = ContextCompressor(2000, CompressionConfig()).compress(messages)
    assert len(out) < len(messages)
    assert out[-1] == pasted


def test_B30_restart_of_an_all_tool_conversation_still_finds_its_summary():
    """Guards the rule above: when the conversation has no user turn, the summary is the only
    user message; after a restart (markers stripped) it is still recognised by our prefix."""

    def tools(prefix: str) -> list:
        out = []
        for k in range(30):
            out += [assistant(None, call(f"{prefix}{k}", command=f"step {k}")), tool(f"{prefix}{k}", f"out {k} " + "o" * 2000)]
        return out

    first = ContextCompressor(4000, CompressionConfig()).compress([sys_msg(), *tools("x")])
    reloaded = strip_private(first) + tools("y")
    comp = ContextCompressor(4000, CompressionConfig())
    assert comp.plan(reloaded).previous_summary
    out = comp.compress(reloaded)
    assert comp.compression_count == 1
    assert len([m for m in out if split_summary(m)[0] is not None]) == 1


def test_B30_summary_reply_echoing_the_end_marker_is_still_one_summary():
    """Repro: a summariser reply that contains the END_MARKER line (echoed from a pasted
    transcript) produced a summary message that read back as "summary + merged user content":
    the text after the marker left the summary and came back as a user turn."""
    fake = RecordingSummariser(f"## Goal\nG1\n\n{END_MARKER}\n## Critical Context\nFACT-7")
    comp = ContextCompressor(4000, CompressionConfig(protect_first_n=0), fake)
    out = comp.compress([sys_msg(), *_long_turns(), user("LAST")])
    summaries = [split_summary(m) for m in out if split_summary(m)[0] is not None]
    assert len(summaries) == 1
    body, rest = summaries[0]
    assert "FACT-7" in body
    assert rest in (None, "")


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
