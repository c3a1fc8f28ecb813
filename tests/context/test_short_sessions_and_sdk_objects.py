"""Issue 13 §8: compression that always leaves a useful result, SDK tool-call objects, summary markers.

* A forced or threshold compression of a short session (everything after the head fits the tail
  budget) keeps a minimum tail of recent messages and summarises the rest, as the reference agent
  does on the same input (checked live against its own compressor), or does nothing and says why
  without a summariser call.
* Tool calls held as SDK objects (openai, anthropic, pydantic) are read like dicts.
* A stand-alone summary ends with the same end-of-summary marker as a merged one.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import anthropic.types as at
import pytest
from openai.types.chat import ChatCompletionMessage
from openai.types.chat.chat_completion_message_function_tool_call import (
    ChatCompletionMessageFunctionToolCall,
    Function,
)

from hermes_memory.config import CompressionConfig
from hermes_memory.context import ContextCompressor
from hermes_memory.context.compressor import prune_tool_outputs, sanitize_tool_pairs
from hermes_memory.context.summary import END_MARKER, SUMMARY_PREFIX, split_summary
from tests import backends
from tests.context.helpers import assert_pairs_intact

PARAGRAPH = "we talked about the deployment pipeline and its stages. "


def session_61() -> list[dict[str, Any]]:
    """61 messages (system + 30 exchanges), about 11K tokens: far under a 128K window's tail budget."""
    out = [{"role": "system", "content": "You are helpful."}]
    for i in range(60):
        out.append({"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}: " + PARAGRAPH * 13})
    return out


class CountingSummariser:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, prompt: str, *, max_tokens: int | None = None) -> str:
        self.calls += 1
        return "## Goal\nTune the deployment pipeline."


_REFERENCE = r"""
import json, sys
from unittest.mock import patch
import agent.context_compressor as cc
msgs = json.loads(sys.stdin.read())
c = cc.ContextCompressor(model="test/model", quiet_mode=True, config_context_length=128_000)
seen = []
def summary(self, turns, *a, **k):
    seen.append(len(turns))
    return cc.SUMMARY_PREFIX + "\nsummary"
with patch.object(cc.ContextCompressor, "_generate_summary", summary):
    out = c.compress(msgs, force=True)
print(json.dumps({"after": len(out), "summarised": seen, "last": [m.get("content") for m in out[-8:]],
                  "roles": [m["role"] for m in out]}))
"""


def _reference_compress(messages: list[dict[str, Any]], tmp: Path) -> dict[str, Any]:
    python = backends.ensure("hermes-agent")
    proc = subprocess.run([str(python), "-c", _REFERENCE], input=json.dumps(messages), capture_output=True,
                          text=True, timeout=180, env={"HERMES_HOME": str(tmp), "PATH": "/usr/bin:/bin"},
                          check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_forced_compression_of_a_short_session_keeps_a_tail_and_summarises_the_rest_like_the_reference(
        tmp_path: Path):
    messages = session_61()
    summariser = CountingSummariser()
    compressor = ContextCompressor(128_000, CompressionConfig(), summariser)
    assert compressor.plan(messages).tail_tokens < compressor.tail_token_budget  # everything fits the tail
    out = compressor.compress(messages, force=True)
    reference = _reference_compress(messages, tmp_path)
    assert summariser.calls == 1
    assert len(out) == reference["after"] == 13  # system + 3 head + summary + 8 recent messages
    assert [m["content"] for m in out[-8:]] == [m["content"] for m in messages[-8:]] == reference["last"]
    assert compressor.last_stats["summarised_messages"] == reference["summarised"][0] == 49


def test_the_latest_assistant_reply_stays_verbatim_behind_a_run_of_user_messages_like_the_reference(
        tmp_path: Path):
    messages = session_61()[:41] + [{"role": "user", "content": f"and {c}?"} for c in "abcdefghi"]
    out = ContextCompressor(128_000, CompressionConfig(), CountingSummariser()).compress(messages, force=True)
    reference = _reference_compress(messages, tmp_path)
    last_reply = messages[40]
    # kept as a message of its own (the summary may be merged in front of it), not rolled into it
    kept = [split_summary(m)[1] if m.get("_compressed_summary") else m["content"] for m in out]
    assert last_reply["role"] == "assistant" and last_reply["content"] in kept
    assert len(out) == reference["after"] and [m["role"] for m in out] == reference["roles"]


def test_threshold_compression_of_a_short_session_shrinks_it_too():
    messages = session_61()
    compressor = ContextCompressor(128_000, CompressionConfig(), CountingSummariser())
    out = compressor.compress(messages)
    assert len(out) == 13 and compressor.compression_count == 1


def test_a_middle_too_small_to_shrink_is_refused_with_a_reason_and_no_summariser_call():
    messages = [{"role": "system", "content": "You are helpful."}] + [
        {"role": "user" if i % 2 == 0 else "assistant", "content": "ok"} for i in range(9)]
    summariser = CountingSummariser()
    compressor = ContextCompressor(128_000, CompressionConfig(), summariser)
    plan = compressor.plan(messages)
    assert not plan.will_compress and "not larger than a summary's fixed text" in plan.reason
    assert compressor.compress(messages, force=True) == messages
    assert summariser.calls == 0 and "fixed text" in compressor.last_stats["plan"]


def _sdk_history() -> list[Any]:
    """A tool-using conversation as the SDKs hand it back: openai message and tool-call objects, an
    anthropic ToolUseBlock in ``tool_calls``, and pydantic content blocks."""
    history: list[Any] = [{"role": "system", "content": "You are helpful."}]
    for i in range(12):
        history.append({"role": "user", "content": f"step {i}: " + PARAGRAPH * 4})
        if i % 2 == 0:
            call = ChatCompletionMessageFunctionToolCall(
                id=f"call_{i}", type="function",
                function=Function(name="terminal", arguments=json.dumps({"command": f"make step{i}"})))
            history.append(ChatCompletionMessage(role="assistant", content=None, tool_calls=[call]))
            history.append({"role": "tool", "tool_call_id": f"call_{i}", "content": f"build {i} output line\n" * 40})
        else:
            block = at.ToolUseBlock(id=f"toolu_{i}", name="read_file", input={"path": f"src/{i}.py"},
                                    type="tool_use")
            history.append({"role": "assistant", "content": [at.TextBlock(text="Reading it.", type="text")],
                            "tool_calls": [block]})
            history.append({"role": "tool", "tool_call_id": f"toolu_{i}", "content": f"def f{i}():\n    pass\n" * 30})
        history.append({"role": "assistant", "content": f"done {i}"})
    return history


def test_compress_reads_tool_calls_held_as_sdk_objects():
    history = _sdk_history()
    compressor = ContextCompressor(16_000, CompressionConfig(protect_last_n=6), CountingSummariser())
    out = compressor.compress(history, force=True)
    assert compressor.compression_count == 1 and len(out) < len(history)
    assert_pairs_intact(out)
    for message in out:
        assert isinstance(message, dict)
        for call in message.get("tool_calls") or []:
            assert isinstance(call, dict) and isinstance(call["function"]["arguments"], str)
    assert "make step" in compressor.last_prompt and "read_file" in compressor.last_prompt
    # the other public entry points read them too
    pruned, count = prune_tool_outputs(history, protect_tail_tokens=0, start=1)
    assert count > 0 and "[terminal] ran `make step0`" in json.dumps(pruned)
    kept, removed = sanitize_tool_pairs(history)
    assert removed == 0 and len(kept) == len(history)
    assert compressor.should_compress_preflight(history) in (True, False)


@pytest.mark.parametrize("head_last_role", ["user", "assistant"])
def test_a_summary_carries_the_end_marker_standing_alone_or_merged(head_last_role: str):
    messages = [{"role": "system", "content": "You are helpful."}]
    roles = ["user", "assistant"] if head_last_role == "assistant" else ["user", "user"]
    messages += [{"role": r, "content": f"head {i}"} for i, r in enumerate(roles)]
    for i in range(20):
        messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}: " + PARAGRAPH * 10})
    compressor = ContextCompressor(128_000, CompressionConfig(protect_first_n=2), CountingSummariser())
    out = compressor.compress(messages, force=True)
    summaries = [m for m in out if m.get("_compressed_summary")]
    assert len(summaries) == 1
    text = summaries[0]["content"]
    assert text.startswith(SUMMARY_PREFIX) and END_MARKER in text
    body, rest = split_summary(summaries[0])
    assert body and "Tune the deployment pipeline." in body and END_MARKER not in body
    # the summary is recognised again (a restart strips the marker key): folded in, not re-summarised
    again = [{k: v for k, v in m.items() if not k.startswith("_")} for m in out]
    assert compressor.plan(again).previous_summary == body


def test_both_placements_occur_in_the_marker_test():
    """The parametrised test above covers a stand-alone and a merged summary (guards its premise)."""
    placements = set()
    for roles in (["user", "assistant"], ["user", "user"]):
        messages = [{"role": "system", "content": "s"}] + [{"role": r, "content": "h"} for r in roles]
        messages += [{"role": "user" if i % 2 == 0 else "assistant", "content": PARAGRAPH * 10} for i in range(20)]
        out = ContextCompressor(128_000, CompressionConfig(protect_first_n=2), CountingSummariser()).compress(
            messages, force=True)
        summary = next(m for m in out if m.get("_compressed_summary"))
        placements.add("merged" if split_summary(summary)[1] else "alone")
    assert placements == {"merged", "alone"}
