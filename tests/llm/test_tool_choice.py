"""``tool_choice`` through both adapters and the real SDKs: each accepted form reaches the wire right."""

from __future__ import annotations

import pytest

from hermes_memory.llm.anthropic import AnthropicModel
from hermes_memory.llm.base import forced_tool_name
from hermes_memory.llm.openai_compat import OpenAICompatModel
from tests.helpers.anthropic_fake import FakeAnthropicServer
from tests.helpers.model_fake import FakeOpenAIServer

TOOLS = [{"name": "memory", "description": "save", "parameters": {"type": "object", "properties": {}}},
         {"name": "session_search", "description": "find", "parameters": {"type": "object", "properties": {}}}]
NAMED = [{"name": "memory"}, {"type": "function", "function": {"name": "memory"}}, {"type": "tool", "name": "memory"}]


@pytest.mark.parametrize("choice", NAMED)
def test_every_named_form_is_recognised(choice):
    assert forced_tool_name(choice) == "memory"


@pytest.mark.parametrize("choice", ["auto", "none", "required", None, {}, {"type": "any"}, {"function": "memory"}])
def test_other_values_force_nothing(choice):
    assert forced_tool_name(choice) is None


@pytest.mark.parametrize(("choice", "wire"), [
    (NAMED[0], {"type": "tool", "name": "memory"}), (NAMED[1], {"type": "tool", "name": "memory"}),
    (NAMED[2], {"type": "tool", "name": "memory"}), ("required", {"type": "any"}), ("none", {"type": "none"}),
    ("auto", None), (None, None)])
def test_anthropic_wire(choice, wire):
    with FakeAnthropicServer(default="ok") as srv:
        AnthropicModel("m", base_url=srv.url, api_key="k", max_retries=0).complete(
            [{"role": "user", "content": "hi"}], tools=TOOLS, tool_choice=choice)
        body = srv.requests[-1].body
    assert body.get("tool_choice") == wire and [t["name"] for t in body["tools"]] == ["memory", "session_search"]


@pytest.mark.parametrize(("choice", "wire"), [
    (NAMED[0], {"type": "function", "function": {"name": "memory"}}),
    (NAMED[2], {"type": "function", "function": {"name": "memory"}}),
    ("required", "required"), ("none", "none"), ("auto", "auto"), (None, None),
    ({"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": [{"type": "function", "function": {
        "name": "memory"}}]}},) * 2])  # another OpenAI form goes through as given
def test_openai_wire(choice, wire):
    with FakeOpenAIServer(default="ok") as srv:
        OpenAICompatModel("m", base_url=srv.base_url, api_key="k", max_retries=0).complete(
            [{"role": "user", "content": "hi"}], tools=TOOLS, tool_choice=choice)
        body = srv.requests[-1].body
    assert body.get("tool_choice") == wire
