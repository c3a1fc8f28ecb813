"""The agent loop unchanged on PostgreSQL: a home whose config.yaml says ``storage: postgres``
runs turns, memory tool writes, session_search, a compression with its child session and the
``run`` command, and nothing lands in state.db or memories/ of the home."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import yaml

from hermes_memory.agent import Agent
from hermes_memory.config import load_config
from hermes_memory.testing import assistant_tool_calls, tool_call
from tests.agent.helpers import RoutingModel
from tests.deploy.helpers import cli_env, hermes
from tests.helpers.model_fake import FakeOpenAIServer
from tests.helpers.values import present

LONG = "The deployment pipeline has several stages and each one logs a lot of detail. " * 6


def _pg_home(home: Path, url: str, **sections: dict) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    cfg = {"storage": {"backend": "postgres", "url": url}, **sections}
    (home / "config.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return home


def _local_files(home: Path) -> list[str]:
    return sorted(str(p.relative_to(home)) for p in home.rglob("*")
                  if p.is_file() and (p.name.startswith("state.db") or p.suffix == ".md"))


def test_turns_memory_search_and_compression_rotation_run_on_postgres(tmp_path: Path, pg_url: str) -> None:
    home = _pg_home(tmp_path / "home", pg_url,
                    memory={"flush_min_turns": 2, "nudge_interval": 0},
                    compression={"threshold": 0.5, "protect_first_n": 1, "protect_last_n": 4})
    cfg = load_config(home / "config.yaml")
    remember = {"action": "add", "target": "memory", "content": "The staging database is db-7.internal"}
    model = RoutingModel([assistant_tool_calls(tool_call("memory", remember)), "Saved.", "Fine."])
    agent = Agent(model, home=home, config=cfg)
    assert agent.db.backend == "postgres" and "db-7" not in (present(agent.store).format_for_system_prompt("memory") or "")
    agent.run_turn("Remember that the staging database is db-7.internal")
    agent.run_turn("We restarted pgbouncer on the staging node today")
    first = agent.session_id
    agent.close()

    # A new session on the same home sees the memory in its snapshot and finds the old session.
    search = {"query": "pgbouncer staging"}
    model2 = RoutingModel([assistant_tool_calls(tool_call("session_search", search)), "Found it."],
                          summary="SUMMARY: a long talk about the deployment pipeline.", context_length=8000)
    agent2 = Agent(model2, home=home, config=cfg)
    assert "db-7.internal" in (present(agent2.store).format_for_system_prompt("memory") or "")
    agent2.run_turn("What did we do to pgbouncer?")
    tool_results = [m for m in agent2.messages if m.get("role") == "tool"]
    found = json.loads(tool_results[-1]["content"])
    assert found["success"] is True and first in json.dumps(found)
    second = agent2.session_id
    compressions = 0
    for i in range(40):
        compressions += agent2.run_turn(f"turn {i}: {LONG}").compressions
        if compressions:
            break
    assert compressions == 1 and agent2.session_id != second
    child = present(agent2.db.get_session(agent2.session_id))
    assert child["parent_session_id"] == second and child["ended_at"] is None
    assert present(agent2.db.get_session(second))["end_reason"] == "compression"
    assert len(agent2.db.get_messages(agent2.session_id)) == len(agent2.messages)
    assert agent2.db.get_lineage(agent2.session_id) == [second, agent2.session_id]
    assert agent2.db.get_session_title(agent2.session_id) == f"{agent2.db.get_session_title(second)} #2"
    agent2.close()

    with psycopg.connect(pg_url) as conn:
        ids = {r[0] for r in conn.execute("SELECT id FROM sessions")}
        assert {first, second, child["id"]} <= ids
    assert _local_files(home) == []  # nothing went to state.db or memories/*.md


def test_run_command_answers_and_stores_the_session_in_postgres(tmp_path: Path, pg_url: str) -> None:
    with FakeOpenAIServer(["Answer one.", "Answer two."]) as srv:
        home = _pg_home(tmp_path / "home", pg_url, model={
            "provider": "openai", "name": "fake-model", "base_url": srv.base_url, "api_key_env": "FAKE_LLM_KEY",
            "max_retries": 0, "context_length": 32000})
        env = cli_env(FAKE_LLM_KEY="k")
        r = hermes(home, "run", "--json", "hello there", env=env)
        assert r.returncode == 0, r.stdout + r.stderr
        out = json.loads(r.stdout)
        r2 = hermes(home, "run", "--json", "--resume", out["session_id"], "and again", env=env)
        assert r2.returncode == 0, r2.stdout + r2.stderr
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT role, content FROM messages WHERE session_id = %s ORDER BY id",
                            (out["session_id"],)).fetchall()
    assert [r[0] for r in rows] == ["user", "assistant", "user", "assistant"]
    assert rows[1][1] == "Answer one." and rows[3][1] == "Answer two."
    assert _local_files(home) == []
    listed = hermes(home, "sessions", "list", "--json", env=cli_env())
    assert listed.returncode == 0 and out["session_id"] in listed.stdout, listed.stdout + listed.stderr
