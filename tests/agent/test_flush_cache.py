"""The memory flush shares the session's prompt cache and is still restricted to memory writes.

Issue 13 §7: a flush that offered only the ``memory`` tool changed the first block of the cached
prefix (tools -> system -> messages), so every flush was a cold cache write of the whole history.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.agent import Agent
from hermes_memory.agent.prompt import FLUSH_PROMPT
from hermes_memory.llm.anthropic import AnthropicModel
from hermes_memory.llm.base import ModelRequestError
from hermes_memory.llm.openai_compat import OpenAICompatModel
from hermes_memory.testing import ScriptedModel, assistant_tool_calls, tool_call
from tests.agent.helpers import RoutingModel, config, tool_names
from tests.helpers.anthropic_fake import FakeAnthropicServer
from tests.helpers.model_fake import FakeOpenAIServer

CFG = {"memory": {"flush_min_turns": 1, "nudge_interval": 0}}


def _user_md(home: Path) -> str:
    path = home / "memories" / "USER.md"
    return path.read_text() if path.exists() else ""


def test_flush_offers_the_session_tools_and_refuses_any_other_tool(hermes_home: Path, monkeypatch: pytest.MonkeyPatch):
    flush_reply = assistant_tool_calls(
        tool_call("session_search", {"query": "anything"}, call_id="c1"),
        tool_call("memory", {"action": "add", "target": "user", "content": "User deploys on Tuesdays."},
                  call_id="c2"))
    model = RoutingModel(flush=flush_reply)
    agent = Agent(model, home=hermes_home, config=config(**CFG))
    agent.run_turn("we deploy on tuesdays")
    agent.run_turn("and release on fridays")
    searched: list[str] = []

    def dispatch(name: str, args: dict[str, Any]) -> str:  # any tool the loop would run
        searched.append(name)
        return "{}"

    monkeypatch.setattr(agent, "_dispatch", dispatch)
    outcome = agent.flush_memories()
    flush = model.requests_of("flush")[0]
    assert tool_names(flush) == tool_names(model.requests_of("main")[0])
    assert flush["messages"][0] == model.requests_of("main")[0]["messages"][0]  # the same system prompt
    assert "tool_choice" not in flush["opts"]  # forcing would cost the cached messages
    assert "Only the `memory` tool may be used" in flush["messages"][-1]["content"]
    assert outcome.refused == 1 and outcome.writes == 1 and searched == []
    assert "Tuesdays" in _user_md(hermes_home)
    agent.close()


def test_forced_flush_sends_the_named_tool_choice_and_an_empty_batch_saves_nothing(hermes_home: Path):
    model = RoutingModel(flush=assistant_tool_calls(tool_call("memory", {"target": "user", "operations": []})))
    agent = Agent(model, home=hermes_home, config=config(**CFG))
    agent.flush_force_tool = True
    agent.run_turn("hello")
    agent.run_turn("bye")
    before = _user_md(hermes_home)
    outcome = agent.flush_memories()
    flush = model.requests_of("flush")[0]
    assert flush["opts"]["tool_choice"] == {"name": "memory"}
    assert "empty list" in flush["messages"][-1]["content"]
    assert outcome.forced and outcome.writes == 0 and _user_md(hermes_home) == before
    agent.close()


def test_flush_on_another_model_offers_memory_alone_and_forces_it(hermes_home: Path):
    main = RoutingModel()
    aux = RoutingModel(flush=assistant_tool_calls(tool_call("memory", {"target": "user", "operations": []})))
    agent = Agent(main, aux_model=aux, home=hermes_home, config=config(**CFG))
    agent.run_turn("hello")
    agent.run_turn("bye")
    outcome = agent.flush_memories()
    flush = aux.requests_of("flush")[0]
    assert tool_names(flush) == ["memory"] and flush["opts"]["tool_choice"] == {"name": "memory"}
    assert outcome.forced and outcome.writes == 0
    agent.close()


class _NoNamedChoice(ScriptedModel):
    """A server that rejects a forced tool choice with 400 (some local OpenAI-compatible servers)."""

    def complete(self, messages, tools=None, **opts):
        if opts.get("tool_choice"):
            self.requests.append({"messages": messages, "tools": tools, "opts": dict(opts)})
            raise ModelRequestError("tool_choice object is not supported", status_code=400)
        return super().complete(messages, tools, **opts)


def test_forced_choice_rejected_by_the_server_is_asked_again_without_it(hermes_home: Path):
    model = _NoNamedChoice(["hi", "ok", assistant_tool_calls(tool_call(
        "memory", {"action": "add", "target": "user", "content": "User is called Lior."}))])
    agent = Agent(model, home=hermes_home, config=config(**CFG))
    agent.flush_force_tool = True
    agent.run_turn("I'm Lior")
    agent.run_turn("thanks")
    outcome = agent.flush_memories()
    assert [bool(r["opts"].get("tool_choice")) for r in model.requests[2:]] == [True, False]
    assert outcome.ran and not outcome.forced and outcome.writes == 1 and not outcome.error
    assert "Lior" in _user_md(hermes_home)
    agent.close()


def _is_flush(body: dict[str, Any]) -> bool:
    last = body["messages"][-1]["content"]
    text = last if isinstance(last, str) else "".join(b.get("text", "") for b in last if b.get("type") == "text")
    return text.startswith(FLUSH_PROMPT[:20])


def _session(model: Any, home: Path, *, force: bool | None) -> None:
    agent = Agent(model, home=home, config=config(**CFG))
    agent.flush_force_tool = force
    for i in range(3):
        agent.run_turn(f"question {i}: " + "the staging cluster runs k3s with three nodes. " * 60)
    agent.close()


def test_anthropic_flush_reads_the_session_cache_and_forcing_costs_the_cached_messages(tmp_path: Path):
    reads = {}
    for force in (None, True):
        with FakeAnthropicServer(default="Nothing to save.") as srv:
            model = AnthropicModel("claude-fake", base_url=srv.url, api_key="k", max_retries=0)
            _session(model, tmp_path / f"home-{force}", force=force)
            i = next(i for i, r in enumerate(srv.requests) if _is_flush(r.body))
            body, usage, turn = srv.requests[i].body, srv.responses[i]["usage"], srv.responses[i - 1]["usage"]
            assert body["tools"] == srv.requests[i - 1].body["tools"]
            reads[force] = usage["cache_read_input_tokens"]
            if force:
                assert body["tool_choice"] == {"type": "tool", "name": "memory"}
            else:
                assert "tool_choice" not in body
                # everything the last turn sent was cached by it and is read back by the flush
                assert reads[force] >= turn["cache_read_input_tokens"] + turn["cache_creation_input_tokens"]
    assert reads[True] < reads[None] / 2  # forced: only tools + system are read


def test_openai_forced_flush_sends_the_named_function_choice(tmp_path: Path):
    with FakeOpenAIServer(default="Nothing to save.") as srv:
        model = OpenAICompatModel("gpt-fake", base_url=srv.base_url, api_key="k", max_retries=0)
        _session(model, tmp_path / "home", force=True)
        flush = next(r.body for r in srv.requests if _is_flush(r.body))
        main = srv.requests[0].body
    assert flush["tool_choice"] == {"type": "function", "function": {"name": "memory"}}
    assert flush["tools"] == main["tools"] and "tool_choice" not in main
    assert json.dumps(flush["messages"][0]) == json.dumps(main["messages"][0])
