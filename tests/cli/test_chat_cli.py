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
from tests.helpers.http import LocalHTTPServer, Reply
from tests.helpers.model_fake import FakeOpenAIServer
from tests.helpers.signals import with_default_sigint

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


def test_run_with_non_utf8_argument_does_not_traceback(tmp_path: Path):
    home = tmp_path / "h"
    with FakeOpenAIServer(["ok"]) as srv:
        _write_config(home, "openai", srv.base_url)
        env = {**os.environ, "FAKE_LLM_KEY": "k", "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}
        proc = subprocess.run([sys.executable.encode(), b"-m", b"hermes_memory", b"--home", str(home).encode(),
                               b"run", b"caf\xe9"], capture_output=True, env=env, timeout=120)
    assert b"Traceback" not in proc.stderr, proc.stderr.decode(errors="replace")
    assert proc.returncode == 0 and proc.stdout.strip() == b"ok"


# -- rich markup in user/model/data text -----------------------------------------------------------

def test_chat_prints_brackets_from_input_data_and_errors_verbatim(tmp_path: Path, monkeypatch):
    home = tmp_path / "h"
    monkeypatch.setenv("FAKE_LLM_KEY", "k")
    (home / "memories").mkdir(parents=True)
    (home / "memories" / "MEMORY.md").write_text("Config lives in [/etc/app] on prod.")
    from tests.helpers.model_fake import FakeHTTPError

    failure = FakeHTTPError(500, {"error": {"message": "upstream [/v1/chat] failed", "type": "server_error"}})
    with FakeOpenAIServer(["I noted [/x] for you.", failure]) as srv:
        _write_config(home, "openai", srv.base_url)
        res = runner.invoke(app, ["--home", str(home), "chat"],
                            input="remember [/x] please\n/search [/nothing]\n/search remember\n/memory\n"
                                  "/[/q]\nfail now\n/quit\n")
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())  # rich wraps long lines at the runner's 80 columns
    assert "no matches for '[/nothing]'" in out
    assert "remember >>>[/x]" in out or ">>>remember<<< [/x]" in out  # the snippet, brackets kept
    assert "[/etc/app]" in out
    assert "unknown command /[/q]" in out
    assert "upstream [/v1/chat] failed" in out


def test_run_model_error_with_brackets_exits_1_verbatim(tmp_path: Path, monkeypatch):
    home = tmp_path / "h"
    monkeypatch.setenv("FAKE_LLM_KEY", "k")
    from tests.helpers.model_fake import FakeHTTPError

    failure = FakeHTTPError(500, {"error": {"message": "upstream [/v1/chat] failed", "type": "server_error"}})
    with FakeOpenAIServer([failure]) as srv:
        _write_config(home, "openai", srv.base_url)
        res = runner.invoke(app, ["--home", str(home), "run", "hello"])
    assert res.exit_code == 1, (res.output, res.exception)
    assert "upstream [/v1/chat] failed" in " ".join(res.output.split())


# -- run --json shape ------------------------------------------------------------------------------

RUN_JSON_KEYS = {"session_id", "text", "finish_reason", "usage", "cache_share", "api_calls", "tool_calls",
                 "compressions"}


def test_run_json_shape_is_stable_and_documented(tmp_path: Path, monkeypatch):
    home = tmp_path / "h"
    monkeypatch.setenv("FAKE_LLM_KEY", "k")
    with FakeOpenAIServer(["Answer."]) as srv:
        _write_config(home, "openai", srv.base_url)
        res = runner.invoke(app, ["--home", str(home), "run", "--json", "hello"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert set(out) == RUN_JSON_KEYS
    assert set(out["usage"]) == {"prompt_tokens", "completion_tokens", "cache_read_tokens", "cache_write_tokens"}
    assert out["text"] == "Answer." and out["finish_reason"] == "stop" and out["api_calls"] == 1
    with sqlite3.connect(home / "state.db") as db:
        assert db.execute("SELECT id FROM sessions").fetchone()[0] == out["session_id"]
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("## Agent (chat / run)", 1)[1].split("\n## ", 1)[0]
    for key in RUN_JSON_KEYS:
        assert f"`{key}`" in section, f"run --json key {key} is not documented in the README"


# -- the no-model instructions name real paths -----------------------------------------------------

def test_no_model_help_names_the_real_env_file(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("HERMES_HOME", raising=False)  # a new user: no HERMES_HOME, --home given
    home = tmp_path / "h"
    res = runner.invoke(app, ["--home", str(home), "run", "hi"])
    assert res.exit_code == 2
    text = " ".join(res.output.split())
    assert str(home / "config.yaml") in text and str(home / ".env") in text
    assert "$HERMES_HOME" not in text  # unset here: following it literally would write /.env


# -- a server that answers 200 with something that is not a model reply -----------------------------

def _raw_server(status: int, content_type: str, body: bytes) -> LocalHTTPServer:
    """127.0.0.1 server answering every request with a fixed status, content type and body."""
    return LocalHTTPServer(fallback=Reply(status, raw=body, content_type=content_type))


def test_run_against_a_non_model_endpoint_exits_1_without_traceback(tmp_path: Path):
    home = tmp_path / "h"
    with _raw_server(200, "text/html", b"<html>proxy login page</html>") as srv:
        _write_config(home, "openai", srv.url + "/v1")
        env = {**os.environ, "FAKE_LLM_KEY": "k"}
        proc = subprocess.run([sys.executable, "-m", "hermes_memory", "--home", str(home), "run", "hi"],
                              capture_output=True, text=True, env=env, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 1 and "base_url" in proc.stderr


def test_missing_key_help_names_the_real_env_file(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("HERMES_HOME", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    home = tmp_path / "h"
    home.mkdir()
    (home / "config.yaml").write_text(yaml.safe_dump({"model": {"provider": "anthropic", "name": "claude-sonnet-4-5"}}))
    res = runner.invoke(app, ["--home", str(home), "run", "hi"])
    assert res.exit_code == 2
    text = " ".join(res.output.split())
    assert "ANTHROPIC_API_KEY" in text and str(home / ".env") in text and "$HERMES_HOME" not in text


# -- Ctrl-C (SIGINT) during `run` ------------------------------------------------------------------

def test_ctrl_c_during_run_ends_the_session_without_traceback(tmp_path: Path):
    import signal
    import threading

    home = tmp_path / "h"
    arrived, release = threading.Event(), threading.Event()

    def slow(body):
        arrived.set()
        release.wait(60)
        return "too late"

    with FakeOpenAIServer([slow]) as srv:
        _write_config(home, "openai", srv.base_url)
        env = {**os.environ, "FAKE_LLM_KEY": "k"}
        proc = subprocess.Popen(with_default_sigint([sys.executable, "-m", "hermes_memory", "--home", str(home), "run",
                                                    "hello"]),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        try:
            assert arrived.wait(60), "the model call never arrived"
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=60)
        finally:
            release.set()
            if proc.poll() is None:
                proc.kill()
    assert "Traceback" not in err, err
    assert proc.returncode == 130
    with sqlite3.connect(home / "state.db") as db:
        (reason,) = db.execute("SELECT end_reason FROM sessions").fetchone()
    assert reason == "interrupted"
