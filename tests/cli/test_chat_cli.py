"""``chat`` and ``run`` through the CLI, against local servers speaking the OpenAI / Anthropic wire formats."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import yaml
from typer.testing import CliRunner

from hermes_memory.cli.main import app
from hermes_memory.testing import assistant_tool_calls, tool_call
from tests.helpers.anthropic_fake import FakeAnthropicServer
from tests.helpers.model_fake import FakeOpenAIServer

runner = CliRunner()


def _write_config(home: Path, provider: str, base_url: str, **extra) -> None:
    home.mkdir(parents=True, exist_ok=True)
    cfg = {"model": {"provider": provider, "name": "fake-model", "base_url": base_url, "api_key_env": "FAKE_LLM_KEY",
                     "max_retries": 0, "context_length": 32000, **extra}}
    (home / "config.yaml").write_text(yaml.safe_dump(cfg))


def test_no_model_configured_exits_2_with_instructions(tmp_path: Path):
    for args in (["run", "hello"], ["chat"]):
        res = runner.invoke(app, ["--home", str(tmp_path / "h"), *args])
        assert res.exit_code == 2, res.output
        for needle in ("config.yaml", "model:", "provider:", "name:", "base_url:", "api_key_env:", "OPENAI_API_KEY"):
            assert needle in res.output


def test_missing_key_exits_2_naming_the_variable(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("FAKE_LLM_KEY", raising=False)
    home = tmp_path / "h"
    _write_config(home, "anthropic", "http://127.0.0.1:9")
    res = runner.invoke(app, ["--home", str(home), "run", "hello"])
    assert res.exit_code == 2 and "FAKE_LLM_KEY" in res.output


def test_run_in_a_subprocess_from_a_fresh_home_leaves_session_messages_and_tokens(tmp_path: Path):
    home = tmp_path / "fresh-home"
    call = tool_call("memory", {"action": "add", "target": "user", "content": "User's timezone is CET."})
    with FakeOpenAIServer([assistant_tool_calls(call), "Noted: you are on CET."], api_key="sk-local") as srv:
        _write_config(home, "openai", srv.base_url)
        env = {**os.environ, "FAKE_LLM_KEY": "sk-local", "HERMES_HOME": str(tmp_path / "unused")}
        proc = subprocess.run([sys.executable, "-m", "hermes_memory", "--home", str(home), "run", "--json",
                               "I live in Berlin, remember my timezone"], capture_output=True, text=True, env=env,
                              timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["text"] == "Noted: you are on CET." and out["tool_calls"] == 1 and out["api_calls"] == 2
    served_prompt = sum(r["usage"]["prompt_tokens"] for r in srv.responses)
    served_completion = sum(r["usage"]["completion_tokens"] for r in srv.responses)
    assert out["usage"]["prompt_tokens"] == served_prompt
    with sqlite3.connect(home / "state.db") as db:
        db.row_factory = sqlite3.Row
        session = db.execute("SELECT * FROM sessions").fetchone()
        messages = db.execute("SELECT role, content, tool_calls, tool_call_id FROM messages ORDER BY id").fetchall()
    assert session["id"] == out["session_id"] and session["end_reason"] == "user_exit"
    assert session["input_tokens"] == served_prompt and session["output_tokens"] == served_completion
    assert session["api_call_count"] == 2 and session["message_count"] == 4 and session["tool_call_count"] == 1
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert json.loads(messages[1]["tool_calls"])[0]["function"]["name"] == "memory"
    assert "CET" in (home / "memories" / "USER.md").read_text()
    headers = srv.requests[0].headers
    assert headers["authorization"] == "Bearer sk-local"


def test_run_plain_output_with_anthropic(tmp_path: Path, monkeypatch):
    home = tmp_path / "h"
    monkeypatch.setenv("FAKE_LLM_KEY", "ant-key")
    with FakeAnthropicServer(["Plain answer."], api_key="ant-key") as srv:
        _write_config(home, "anthropic", srv.url)
        res = runner.invoke(app, ["--home", str(home), "run", "hello"])
    assert res.exit_code == 0, res.output
    assert res.output.strip() == "Plain answer."
    body = srv.requests[0].body
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}


def test_chat_repl_slash_commands_and_footer(tmp_path: Path, monkeypatch):
    home = tmp_path / "h"
    monkeypatch.setenv("FAKE_LLM_KEY", "k")
    call = tool_call("memory", {"action": "add", "target": "memory", "content": "Project codename is Heron."})
    with FakeOpenAIServer([assistant_tool_calls(call), "Saved the codename.", "Second session answer."]) as srv:
        _write_config(home, "openai", srv.base_url)
        res = runner.invoke(app, ["--home", str(home), "chat"],
                            input="the codename is Heron\n/memory\n/search codename\n/bogus\n/new\nhello again\n/quit\n")
    assert res.exit_code == 0, res.output
    out = res.output
    assert "Saved the codename." in out and "Second session answer." in out
    assert "Project codename is Heron." in out  # /memory shows the live file
    assert "from cache" in out and "tokens in" in out
    assert "unknown command /bogus" in out
    assert "snippet" in out and ">>>codename<<<" in out  # /search found the first message
    with sqlite3.connect(home / "state.db") as db:
        rows = db.execute("SELECT end_reason FROM sessions ORDER BY started_at").fetchall()
    assert [r[0] for r in rows] == ["new_session", "user_exit"]
    # the second session's system prompt carries the memory written in the first
    assert "Project codename is Heron." in srv.requests[-1].body["messages"][0]["content"]


def test_chat_resume_continues_with_tool_history(tmp_path: Path, monkeypatch):
    home = tmp_path / "h"
    monkeypatch.setenv("FAKE_LLM_KEY", "k")
    call = tool_call("memory", {"action": "add", "target": "user", "content": "User likes rye bread."}, call_id="c9")
    with FakeOpenAIServer([assistant_tool_calls(call), "Saved.", "You like rye bread."]) as srv:
        _write_config(home, "openai", srv.base_url)
        first = runner.invoke(app, ["--home", str(home), "run", "--json", "I like rye bread"])
        sid = json.loads(first.output)["session_id"]
        res = runner.invoke(app, ["--home", str(home), "chat", "--resume", sid], input="what bread do I like?\n")
    assert res.exit_code == 0, res.output
    assert "resumed" in res.output and "You like rye bread." in res.output
    sent = srv.requests[-1].body["messages"]
    assert any(m.get("tool_calls") and m["tool_calls"][0]["id"] == "c9" for m in sent)
    assert any(m["role"] == "tool" and m["tool_call_id"] == "c9" for m in sent)
    missing = runner.invoke(app, ["--home", str(home), "chat", "--resume", "no-such-session"], input="")
    assert missing.exit_code == 1 and "sessions list" in missing.output


def test_run_model_failure_exits_1(tmp_path: Path, monkeypatch):
    home = tmp_path / "h"
    monkeypatch.setenv("FAKE_LLM_KEY", "wrong")
    with FakeOpenAIServer(["never"], api_key="right") as srv:
        _write_config(home, "openai", srv.base_url)
        res = runner.invoke(app, ["--home", str(home), "run", "hello"])
    assert res.exit_code == 1 and "API key" in res.output


def test_configured_provider_that_cannot_load_is_reported_not_dropped(tmp_path: Path, monkeypatch):
    home = tmp_path / "h"
    monkeypatch.setenv("FAKE_LLM_KEY", "k")
    with FakeOpenAIServer(["never"]) as srv:
        _write_config(home, "openai", srv.base_url)
        cfg = yaml.safe_load((home / "config.yaml").read_text())
        cfg["memory"] = {"provider": "no-such-provider"}
        (home / "config.yaml").write_text(yaml.safe_dump(cfg))
        res = runner.invoke(app, ["--home", str(home), "run", "hello"])
    assert res.exit_code == 1 and "no-such-provider" in res.output
    assert srv.requests == []
