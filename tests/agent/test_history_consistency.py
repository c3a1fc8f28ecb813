"""The conversation history stays one the model accepts when a turn goes wrong: a tool call interrupted by
Ctrl-C still gets a result, a malformed model reply is a model error, a whitespace-only reply does not wedge
an Anthropic session, tool calls without ids get unique ids that pair with their results, and a session left
with an unanswered tool call can be resumed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hermes_memory.agent import Agent
from hermes_memory.llm.anthropic import AnthropicModel
from hermes_memory.llm.openai_compat import OpenAICompatModel
from hermes_memory.sessions.db import SessionDB
from hermes_memory.testing import FakeProvider, assistant_tool_calls, tool_call
from tests.helpers.anthropic_fake import FakeAnthropicServer
from tests.helpers.http import LocalHTTPServer, Reply
from tests.helpers.model_fake import FakeOpenAIServer
from tests.helpers.signals import sigint_raises_keyboard_interrupt


def _unanswered_tool_calls(messages: list[dict]) -> list[str]:
    """Ids of assistant tool calls with no tool result before the next user/assistant message."""
    pending: list[str] = []
    orphans: list[str] = []
    for m in messages:
        if m["role"] == "tool":
            if m.get("tool_call_id") in pending:
                pending.remove(m["tool_call_id"])
            continue
        orphans += pending
        pending = [c["id"] for c in m.get("tool_calls") or []]
    return orphans + pending


# -- Ctrl-C while a tool runs ----------------------------------------------------------------------

class _InterruptingProvider(FakeProvider):
    """A provider whose tool is still running when the user presses Ctrl-C (SIGINT to this process:
    the main thread, waiting for the tool, gets the KeyboardInterrupt as it would in chat)."""

    def handle_tool_call(self, tool_name, args, **kwargs):
        import signal
        import time

        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)  # the caller has been interrupted long before this returns
        return "{}"


def test_interrupted_tool_call_leaves_a_result_for_every_call_and_the_next_turn_works(hermes_home: Path):
    calls = assistant_tool_calls(tool_call("slow_lookup", {"q": "x"}, call_id="toolu_a"),
                                 tool_call("slow_lookup", {"q": "y"}, call_id="toolu_b"))
    with FakeAnthropicServer([calls, "Back again."]) as srv:
        model = AnthropicModel("fake-model", base_url=srv.url, api_key="k", max_retries=0)
        agent = Agent(model, home=hermes_home, provider=_InterruptingProvider("ext", tools=["slow_lookup"]))
        with sigint_raises_keyboard_interrupt(), pytest.raises(KeyboardInterrupt):
            agent.run_turn("look it up")
        assert _unanswered_tool_calls(agent.messages) == []
        stored = agent.db.get_messages_as_conversation(agent.session_id)
        assert _unanswered_tool_calls(stored) == []
        result = agent.run_turn("never mind")  # the fake server rejects tool_use without tool_result
        assert result.text == "Back again."
        sid = agent.session_id
        agent.close()
    resumed = SessionDB(hermes_home / "state.db").get_messages_as_conversation(sid)
    assert _unanswered_tool_calls(resumed) == []


# -- a server that answers 200 with something that is not a model reply -----------------------------

def _raw_server(status: int, content_type: str, body: bytes) -> LocalHTTPServer:
    """127.0.0.1 server answering every request with a fixed status, content type and body."""
    return LocalHTTPServer(fallback=Reply(status, raw=body, content_type=content_type))


MALFORMED = [
    (200, "text/html", b"<html>proxy login page</html>"),
    (200, "application/json", b"{not json"),
    (200, "application/json", b"{}"),
]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize(("status", "ctype", "body"), MALFORMED)
def test_malformed_reply_is_a_model_error_and_history_stays_consistent(hermes_home: Path, provider, status, ctype,
                                                                       body):
    from hermes_memory.errors import ModelError

    with _raw_server(status, ctype, body) as srv:
        model = (OpenAICompatModel("m", base_url=srv.url + "/v1", max_retries=0) if provider == "openai"
                 else AnthropicModel("m", base_url=srv.url, api_key="k", max_retries=0))
        agent = Agent(model, home=hermes_home)
        with pytest.raises(ModelError, match="base_url"):
            agent.run_turn("hi")
        stored = agent.db.get_messages_as_conversation(agent.session_id)
        history = list(agent.messages)
        sessions = agent.db.session_count()
        agent.close()
    # the first turn got no answer: no one-message session is left behind (issue 14), and the live
    # history agrees with state.db
    assert stored == [] and history == [] and sessions == 0


# -- whitespace-only text (Anthropic refuses it, and a stored one would be replayed every turn) ------

def test_whitespace_only_reply_or_message_does_not_wedge_an_anthropic_session(hermes_home: Path):
    with FakeAnthropicServer(["\n", "second", "third"]) as srv:
        agent = Agent(AnthropicModel("fake-model", base_url=srv.url, api_key="k", max_retries=0), home=hermes_home)
        agent.run_turn("first")  # the model answers with a lone newline, which is stored
        assert agent.run_turn("next").text == "second"  # replaying it must not be refused
        assert agent.run_turn("   ").text == "third"
        agent.close()


# -- tool calls without an id (llama.cpp server, ggml-org/llama.cpp#11992) ---------------------------

def test_tool_calls_without_id_get_unique_ids_that_pair_with_their_results(hermes_home: Path):
    no_ids = {"role": "assistant", "content": None, "tool_calls": [
        {"type": "function", "function": {"name": "session_search", "arguments": '{"query": "a"}'}},
        {"id": "", "type": "function", "function": {"name": "session_search", "arguments": '{"query": "b"}'}},
    ]}
    with FakeOpenAIServer([no_ids, "done", "again"]) as srv:
        agent = Agent(OpenAICompatModel("m", base_url=srv.base_url, max_retries=0), home=hermes_home)
        agent.run_turn("search twice")
        agent.run_turn("and now")
        stored = agent.db.get_messages_as_conversation(agent.session_id)
        agent.close()
    ids = [c["id"] for c in stored[1]["tool_calls"]]
    assert all(isinstance(i, str) and i for i in ids) and len(set(ids)) == 2
    assert [m["tool_call_id"] for m in stored if m["role"] == "tool"] == ids
    replayed = srv.requests[-1].body["messages"]
    assert [c["id"] for c in replayed[2]["tool_calls"]] == ids


# -- resuming a session a killed process left with an unanswered tool call --------------------------

def test_resume_of_a_session_with_an_unanswered_tool_call_can_continue(hermes_home: Path):
    db = SessionDB(hermes_home / "state.db")
    db.create_session("20250101_000000_abcdef", source="cli", model="fake-model", system_prompt="You are helpful.")
    db.append_message("20250101_000000_abcdef", "user", "look something up")
    db.append_message("20250101_000000_abcdef", "assistant", None,  # then the terminal was closed (SIGHUP)
                      tool_calls=[{"id": "toolu_lost", "type": "function",
                                   "function": {"name": "session_search", "arguments": "{}"}}])
    with FakeAnthropicServer(["Continuing."]) as srv:
        agent = Agent(AnthropicModel("fake-model", base_url=srv.url, api_key="k", max_retries=0),
                      home=hermes_home, resume="20250101_000000")
        assert agent.run_turn("are you there?").text == "Continuing."
        agent.close()
