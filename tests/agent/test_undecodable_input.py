"""Input bytes that are not UTF-8 (a terminal in another encoding, a pasted binary) reach the model without a
crash, and resuming a session id made of them is a clear not-found.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_memory.agent import Agent
from hermes_memory.llm.openai_compat import OpenAICompatModel
from tests.agent.helpers import RoutingModel
from tests.helpers.model_fake import FakeOpenAIServer

# -- non-UTF-8 terminal input ----------------------------------------------------------------------

def test_undecodable_input_bytes_reach_the_model_without_a_crash(hermes_home: Path):
    text = b"caf\xe9 and \xff".decode("utf-8", "surrogateescape")  # what input()/argv give for bad bytes
    with FakeOpenAIServer(["fine"]) as srv:
        agent = Agent(OpenAICompatModel("fake-model", base_url=srv.base_url, max_retries=0), home=hermes_home)
        assert agent.run_turn(text).text == "fine"
        sent = srv.requests[0].body["messages"][-1]["content"]
        stored = agent.db.get_messages_as_conversation(agent.session_id)[0]["content"]
        agent.close()
    assert sent.startswith("caf") and sent == stored  # history, SessionDB and the wire agree


def test_resume_with_undecodable_bytes_is_a_clear_not_found(hermes_home: Path):
    from hermes_memory.errors import SessionStoreError

    bad = b"caf\xe9".decode("utf-8", "surrogateescape")  # chat --resume $'caf\xe9' or /resume with such bytes
    with pytest.raises(SessionStoreError, match="no session matches"):
        Agent(RoutingModel(), home=hermes_home, resume=bad)
    agent = Agent(RoutingModel(), home=hermes_home)
    with pytest.raises(SessionStoreError, match="no session matches"):
        agent.resume(bad)
    agent.close()
