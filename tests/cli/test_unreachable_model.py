"""``run`` / ``chat`` against a model nobody answers for leave no one-message session behind (issue 14).

A user who runs ``hermes-memory run "..."`` with a wrong ``base_url`` gets an error and expects
``sessions list`` to show nothing new: the session created for a turn the model never answered is
removed. A session that already holds an answered turn keeps every message, the failed one included.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import yaml
from typer.testing import CliRunner

from hermes_memory.agent import Agent
from hermes_memory.cli.main import app
from hermes_memory.errors import ModelError
from hermes_memory.testing import ScriptedModel, assistant_tool_calls, tool_call
from tests.agent.helpers import config
from tests.helpers.http import closed_port_url


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    cfg = {"model": {"provider": "openai", "name": "fake-model", "base_url": closed_port_url() + "/v1",
                     "api_key_env": "FAKE_LLM_KEY", "max_retries": 0, "timeout": 5}}
    (home / "config.yaml").write_text(yaml.safe_dump(cfg))
    return home


def _counts(home: Path) -> tuple[int, int]:
    if not (home / "state.db").exists():
        return 0, 0
    with sqlite3.connect(home / "state.db") as db:
        return (db.execute("SELECT count(*) FROM sessions").fetchone()[0],
                db.execute("SELECT count(*) FROM messages").fetchone()[0])


def test_run_against_a_dead_port_exits_1_and_leaves_no_session(tmp_path: Path):
    home = _home(tmp_path)
    env = {**os.environ, "FAKE_LLM_KEY": "k", "HERMES_HOME": str(tmp_path / "unused")}
    proc = subprocess.run([sys.executable, "-m", "hermes_memory", "--home", str(home), "run", "hello there"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 1 and proc.stdout == ""
    assert "cannot reach the model server" in proc.stderr and "nothing was saved" in proc.stderr
    assert ".." not in proc.stderr.replace("...", ""), proc.stderr  # the SDK's "Connection error." + our "."
    assert _counts(home) == (0, 0)
    listed = subprocess.run([sys.executable, "-m", "hermes_memory", "--home", str(home), "sessions", "list"],
                            capture_output=True, text=True, env=env, timeout=120)
    assert listed.returncode == 0 and "hello there" not in listed.stdout


def test_chat_against_a_dead_port_saves_nothing_and_says_so(tmp_path: Path, monkeypatch):
    home = _home(tmp_path)
    monkeypatch.setenv("FAKE_LLM_KEY", "k")
    res = CliRunner().invoke(app, ["--home", str(home), "chat"], input="hello\nare you there?\n/quit\n")
    assert res.exit_code == 0, res.output
    assert "model error" in res.output and "nothing saved" in res.output
    assert _counts(home) == (0, 0)


def test_a_first_turn_that_failed_leaves_the_agent_usable(hermes_home: Path):
    model = ScriptedModel([ModelError("connection refused"), "Hello!"])
    agent = Agent(model, home=hermes_home, config=config())
    try:
        agent.run_turn("hi")
    except ModelError:
        pass
    assert not agent.session_stored and agent.messages == [] and agent.db.get_session(agent.session_id) is None
    result = agent.run_turn("hi again")
    stored = agent.db.get_messages(result.session_id)
    assert [(m["role"], m["content"]) for m in stored] == [("user", "hi again"), ("assistant", "Hello!")]
    agent.close()
    assert agent.db.session_count() == 1


def test_a_session_with_an_answer_keeps_the_failed_turn(hermes_home: Path):
    # an answered tool call in the first turn counts as an answer: the session stays
    model = ScriptedModel([assistant_tool_calls(tool_call("session_search", {"query": "x"})),
                           ModelError("server went away")])
    agent = Agent(model, home=hermes_home, config=config())
    try:
        agent.run_turn("look something up")
    except ModelError:
        pass
    assert agent.session_stored
    assert [m["role"] for m in agent.db.get_messages(agent.session_id)] == ["user", "assistant", "tool"]
    # and a later turn's failure keeps its user message, as before
    model.add("ok", ModelError("down again"))
    agent.run_turn("next")
    try:
        agent.run_turn("and again")
    except ModelError:
        pass
    assert agent.db.get_messages(agent.session_id)[-1]["content"] == "and again"
    agent.close()
