"""The agent through the real SDK adapters against local wire-format servers on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hermes_memory.agent import Agent
from hermes_memory.agent.prompt import FLUSH_PROMPT
from hermes_memory.llm.anthropic import AnthropicModel
from hermes_memory.llm.openai_compat import OpenAICompatModel
from tests.agent.helpers import config
from tests.helpers.anthropic_fake import FakeAnthropicServer
from tests.helpers.model_fake import FakeOpenAIServer
from tests.helpers.values import present


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if b.get("type") == "text")


def anthropic_responder(body: dict[str, Any]) -> Any:
    last = body["messages"][-1]["content"]
    if isinstance(last, list) and any(b.get("type") == "tool_result" for b in last):
        return "Saved."
    text = _text(last)
    if text.startswith(FLUSH_PROMPT[:20]):
        return {"content": None, "tool_calls": [{"id": "toolu_flush", "type": "function", "function": {
            "name": "memory", "arguments": json.dumps({"action": "add", "target": "memory",
                                                       "content": "Staging cluster is k3s."})}}]}
    if "my name is" in text:
        return {"content": "Let me note that.", "tool_calls": [{"id": "toolu_1", "type": "function", "function": {
            "name": "memory", "arguments": json.dumps({"action": "add", "target": "user",
                                                       "content": "User's name is Noor."})}}]}
    return f"Answer to: {text[:40]}"


def test_anthropic_session_keeps_prompt_frozen_reads_cache_and_flushes(hermes_home: Path):
    cfg = config(memory={"flush_min_turns": 2})
    with FakeAnthropicServer(default=anthropic_responder, api_key="k") as srv:
        model = AnthropicModel("claude-fake", base_url=srv.url, api_key="k", max_retries=0)
        agent = Agent(model, home=hermes_home, config=cfg)
        agent.run_turn("hello, my name is Noor")
        for i in range(4):
            agent.run_turn(f"question {i} about the staging cluster")
        sid = agent.session_id
        agent.close()
        flush_at = [i for i, r in enumerate(srv.requests)
                    if _text(r.body["messages"][-1]["content"]).startswith(FLUSH_PROMPT[:20])]
        main_requests = [r.body for i, r in enumerate(srv.requests) if i not in flush_at]
        flush_requests = [srv.requests[i].body for i in flush_at]
        flush_usage = [srv.responses[i]["usage"] for i in flush_at]
        agent2 = Agent(AnthropicModel("claude-fake", base_url=srv.url, api_key="k", max_retries=0),
                       home=hermes_home, config=cfg)
        agent2.run_turn("who am I?")
        agent2.close()
        next_system = _text(srv.requests[-1].body["system"])
    # the system prompt never changed inside the session despite the memory write
    assert len({json.dumps(b["system"]) for b in main_requests}) == 1
    assert "Noor" not in _text(main_requests[0]["system"])
    # prompt cache: every request after the first reads the prefix written before it
    usages = [r["usage"] for r in srv.responses]
    assert all(u["cache_read_input_tokens"] > 0 for u in usages[1:len(main_requests)])
    row = present(agent.db.get_session(sid))
    assert row["cache_read_tokens"] == sum(u["cache_read_input_tokens"] for u in usages[:len(main_requests) + 1])
    assert row["cache_write_tokens"] > 0
    # the exit flush went through the adapter with the session's own tools and system prompt, so it
    # read the cache the turns wrote (all but its own new blocks), and its write is in the next prompt
    assert len(flush_requests) == 1
    assert flush_requests[0]["tools"] == main_requests[-1]["tools"]
    assert flush_requests[0]["system"] == main_requests[-1]["system"]
    assert "tool_choice" not in flush_requests[0]
    last_turn_prefix = usages[len(main_requests) - 1]
    assert flush_usage[0]["cache_read_input_tokens"] >= (last_turn_prefix["cache_read_input_tokens"]
                                                         + last_turn_prefix["cache_creation_input_tokens"])
    assert "User's name is Noor." in next_system and "Staging cluster is k3s." in next_system


def test_openai_conversation_compresses_through_the_real_sdk(hermes_home: Path):
    def responder(body: dict[str, Any]) -> Any:
        msgs = body["messages"]
        if msgs[0]["role"] != "system":
            return "SUMMARY: the user walked through twenty build steps."
        if _text(msgs[-1]["content"]).startswith(FLUSH_PROMPT[:20]):
            return "Nothing to save."
        return "Step acknowledged; the build log shows nothing unusual at this stage of the pipeline."

    cfg = config(memory={"flush_min_turns": 2},
                 compression={"threshold": 0.5, "protect_first_n": 1, "protect_last_n": 4})
    with FakeOpenAIServer(default=responder) as srv:
        model = OpenAICompatModel("gpt-fake", base_url=srv.base_url, api_key="k", max_retries=0, context_length=8000)
        agent = Agent(model, home=hermes_home, config=cfg)
        first = agent.session_id
        for i in range(40):
            agent.run_turn(f"step {i}: " + "the build runs lint, unit tests, packaging and upload. " * 5)
            if agent.compressor.compression_count:
                break
        agent.run_turn("what's the status?")
        agent.close()
    assert agent.compressor.compression_count >= 1 and agent.session_id != first
    assert present(agent.db.get_session(first))["end_reason"] == "compression"
    assert present(agent.db.get_session(agent.session_id))["parent_session_id"] == first
    last = srv.requests[-2].body["messages"] if _text(srv.requests[-1].body["messages"][-1]["content"]).startswith(
        FLUSH_PROMPT[:20]) else srv.requests[-1].body["messages"]
    assert any("SUMMARY: the user walked through" in _text(m.get("content") or "") for m in last)
    kinds = ["summary" if r.body["messages"][0]["role"] != "system" else
             "flush" if _text(r.body["messages"][-1]["content"]).startswith(FLUSH_PROMPT[:20]) else "main"
             for r in srv.requests]
    assert kinds.index("flush") < kinds.index("summary")
