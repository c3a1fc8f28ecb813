"""A compression's session rotation is one unit (issue 13 §3).

The rotation creates the child, writes the compacted history into it, then ends the parent. A
SessionDB that fails at any of those steps must leave the agent on the old session, still open,
with every message of the turn saved there; the turn completes uncompressed, and a later turn
rotates once the database works again.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest

from hermes_memory.agent import Agent
from hermes_memory.sessions.db import SessionDB
from tests.agent.helpers import RoutingModel, config
from tests.helpers.values import present

LONG = "The deployment pipeline has several stages and each one logs a lot of detail. " * 6


class FailingDB(SessionDB):
    """A real SessionDB whose rotation step ``fail_at`` raises while ``armed`` (a full disk, say)."""

    fail_at = ""
    armed = True

    def _fault(self, step: str) -> None:
        if self.armed and self.fail_at == step:
            raise sqlite3.OperationalError(f"database or disk is full ({step})")

    def set_session_title(self, session_id, title):
        self._fault("set_session_title")
        return super().set_session_title(session_id, title)

    def get_next_title_in_lineage(self, base_title):
        self._fault("get_next_title_in_lineage")
        return super().get_next_title_in_lineage(base_title)

    def create_session(self, session_id=None, *args, **kwargs):
        if kwargs.get("parent_session_id"):
            self._fault("create_session")
        return super().create_session(session_id, *args, **kwargs)

    def append_messages(self, session_id, messages):
        self._fault("append_messages")
        return super().append_messages(session_id, messages)

    def end_session(self, session_id, reason):
        if reason == "compression":
            self._fault("end_session")
        return super().end_session(session_id, reason)


STEPS = ["set_session_title", "get_next_title_in_lineage", "create_session", "append_messages", "end_session"]


def _agent(home: Path, step: str) -> tuple[Agent, RoutingModel, FailingDB]:
    db = FailingDB(home / "state.db")
    db.fail_at = step
    model = RoutingModel(summary="SUMMARY: a long talk about the deployment pipeline.", context_length=8000)
    cfg = config(memory={"flush_min_turns": 2, "nudge_interval": 0},
                 compression={"threshold": 0.5, "protect_first_n": 1, "protect_last_n": 4})
    home.mkdir(parents=True, exist_ok=True)
    return Agent(model, home=home, config=cfg, session_db=db), model, db


@pytest.mark.parametrize("step", STEPS)
def test_a_failed_rotation_keeps_the_old_session_open_and_the_next_turns_work(
        tmp_path: Path, step: str, caplog: pytest.LogCaptureFixture):
    agent, model, db = _agent(tmp_path / "home", step)
    first = agent.session_id
    caplog.set_level(logging.WARNING, logger="hermes_memory.agent.loop")
    for i in range(40):
        result = agent.run_turn(f"turn {i}: {LONG}")
        if "summary" in model.kinds:
            break
    assert "summary" in model.kinds, "the conversation never tried to compress"
    # the turn completed, uncompressed, in the old session, which is still open and the only one
    assert result.compressions == 0 and result.session_id == first == agent.session_id
    assert present(db.get_session(first))["ended_at"] is None
    assert [s["id"] for s in db.list_sessions()] == [first]
    assert len(db.get_messages(first)) == len(agent.messages)
    assert agent.compressor.compression_count == 0
    assert any("could not rotate session" in r.getMessage() and step in r.getMessage() for r in caplog.records)
    # one attempt per turn: the failure is not retried (and paid for) again within the turn
    assert model.kinds.count("summary") == 1
    # the next turn works in the same session (and may try again)
    summaries = model.kinds.count("summary")
    again = agent.run_turn("still there?")
    assert again.session_id == first and db.get_messages(first)[-1]["content"] == again.text
    assert model.kinds.count("summary") == summaries + 1
    # once the database works again, the next turn rotates: child first, then the parent ends
    db.armed = False
    done = agent.run_turn("and now?")
    assert done.compressions == 1 and done.session_id != first
    child = present(db.get_session(done.session_id))
    assert child["parent_session_id"] == first and child["ended_at"] is None
    assert present(db.get_session(first))["end_reason"] == "compression"
    assert len(db.get_messages(done.session_id)) == len(agent.messages)
    agent.close()


def test_a_rotation_that_fails_after_creating_the_child_leaves_no_child_behind(tmp_path: Path):
    agent, model, db = _agent(tmp_path / "home", "end_session")
    for i in range(40):
        agent.run_turn(f"turn {i}: {LONG}")
        if "summary" in model.kinds:
            break
    rows = db.conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
    orphans = db.conn.execute("SELECT count(*) FROM messages WHERE session_id != ?", (agent.session_id,)).fetchone()[0]
    assert rows == 1 and orphans == 0
    agent.close()


def test_manual_compress_of_a_short_session_shrinks_it_and_rotates(tmp_path: Path):
    """``/compress`` on a 61-message, ~11K-token session at a 128K window: 61 -> 13, one summary."""
    home = tmp_path / "home"
    home.mkdir()
    model = RoutingModel(summary="SUMMARY: a long talk about the deployment pipeline.")
    agent = Agent(model, home=home, config=config(memory={"flush_min_turns": 0, "nudge_interval": 0}))
    first = agent.session_id
    paragraph = "we talked about the deployment pipeline and its stages. " * 13
    for i in range(30):
        agent.run_turn(f"turn {i}: {paragraph}")
    assert len(agent.messages) == 60
    assert agent.compress_context(reason="manual", force=True)
    assert model.kinds.count("summary") == 1
    assert len(agent.messages) == 12 and agent.session_id != first  # + the system prompt: 13
    assert agent.messages[-1]["content"] == agent.db.get_messages(first)[-1]["content"]
    assert len(agent.db.get_messages(agent.session_id)) == 12
    agent.close()
