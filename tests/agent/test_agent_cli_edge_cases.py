"""Review of the agent loop and the ``chat`` / ``run`` CLI as a new user would drive them.

Each test pins a defect found by hand (tmux session against the fake servers) before its fix.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from hermes_memory.agent import Agent
from hermes_memory.cli.main import app
from hermes_memory.errors import ContextLengthError
from hermes_memory.llm.anthropic import AnthropicModel
from hermes_memory.llm.openai_compat import OpenAICompatModel
from hermes_memory.sessions.db import SessionDB
from hermes_memory.testing import FakeProvider, assistant_tool_calls, tool_call
from tests.agent.helpers import RoutingModel, config
from tests.helpers.anthropic_fake import FakeAnthropicServer
from tests.helpers.http import LocalHTTPServer, Reply
from tests.helpers.model_fake import FakeOpenAIServer
from tests.helpers.signals import sigint_raises_keyboard_interrupt, with_default_sigint

runner = CliRunner()


def _write_config(home: Path, provider: str, base_url: str, **extra) -> None:
    home.mkdir(parents=True, exist_ok=True)
    cfg = {"model": {"provider": provider, "name": "fake-model", "base_url": base_url, "api_key_env": "FAKE_LLM_KEY",
                     "max_retries": 0, "context_length": 32000, **extra}}
    (home / "config.yaml").write_text(yaml.safe_dump(cfg))


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


# -- memory tool intercept: model-supplied internals ---------------------------------------------

def test_memory_call_with_extra_origin_and_store_args_still_writes(hermes_home: Path):
    args = {"action": "add", "target": "user", "content": "User drinks green tea.", "origin": "foreground",
            "store": "/tmp/elsewhere"}
    model = RoutingModel([assistant_tool_calls(tool_call("memory", args)), "Noted."])
    agent = Agent(model, home=hermes_home)
    agent.run_turn("I drink green tea")
    result = json.loads(next(m for m in agent.messages if m["role"] == "tool")["content"])
    assert result.get("success") is True, result
    assert "green tea" in (hermes_home / "memories" / "USER.md").read_text()
    agent.close()


def test_background_review_cannot_lift_its_add_only_origin_by_passing_origin(hermes_home: Path):
    (hermes_home / "memories").mkdir(exist_ok=True)
    (hermes_home / "memories" / "MEMORY.md").write_text("Keep this entry.")
    calls = assistant_tool_calls(
        tool_call("memory", {"action": "remove", "target": "memory", "old_text": "Keep", "origin": "foreground"}),
        tool_call("memory", {"action": "add", "target": "user", "content": "User prefers metric units.",
                             "origin": "foreground"}),
    )
    replies = iter([calls, "Done."])
    model = RoutingModel()
    model.handlers["review"] = lambda messages, tools: next(replies)
    agent = Agent(model, home=hermes_home, config=config(memory={"nudge_interval": 1}))
    assert agent.run_turn("I use metric units").review_ran
    assert (hermes_home / "memories" / "MEMORY.md").read_text() == "Keep this entry."
    assert "metric units" in (hermes_home / "memories" / "USER.md").read_text()  # the review was not aborted
    assert len(model.requests_of("review")) == 2
    agent.close()


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


# -- a context-length error that compression cannot cure -------------------------------------------

def test_context_length_error_twice_says_how_to_fix_it(hermes_home: Path):
    too_long = ContextLengthError("prompt is too long: 9000 tokens > 8000 maximum")
    model = RoutingModel(context_length=200_000)
    agent = Agent(model, home=hermes_home)
    agent.run_turn("first")
    model.script = [too_long, too_long]
    with pytest.raises(ContextLengthError) as err:
        agent.run_turn("second")
    message = str(err.value)
    assert "model.context_length" in message and "200,000" in message and "/new" in message
    assert "retries once" not in message  # it already did
    stored = agent.db.get_messages_as_conversation(agent.session_id)
    assert [m["role"] for m in stored] == ["user", "assistant", "user"]
    agent.close()


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


# -- Ctrl-C during the flush at exit ---------------------------------------------------------------

def test_interrupted_exit_flush_still_ends_the_session_and_shuts_providers_down(hermes_home: Path):
    ext = FakeProvider("ext")
    model = RoutingModel(["a", "b"], flush=KeyboardInterrupt())
    agent = Agent(model, home=hermes_home, provider=ext, config=config(memory={"flush_min_turns": 1}))
    agent.run_turn("first")
    agent.run_turn("second")
    with pytest.raises(KeyboardInterrupt):
        agent.close()
    assert model.kinds[-1] == "flush"
    row = SessionDB(hermes_home / "state.db").get_session(agent.session_id)
    assert row["end_reason"] == "user_exit"
    assert ext.called("on_session_end") and ext.called("shutdown")
    assert all(not m.get("_flush_sentinel") for m in agent.messages)


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


def test_run_against_a_non_model_endpoint_exits_1_without_traceback(tmp_path: Path):
    home = tmp_path / "h"
    with _raw_server(200, "text/html", b"<html>proxy login page</html>") as srv:
        _write_config(home, "openai", srv.url + "/v1")
        env = {**os.environ, "FAKE_LLM_KEY": "k"}
        proc = subprocess.run([sys.executable, "-m", "hermes_memory", "--home", str(home), "run", "hi"],
                              capture_output=True, text=True, env=env, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 1 and "base_url" in proc.stderr


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


def test_resume_with_undecodable_bytes_is_a_clear_not_found(hermes_home: Path):
    from hermes_memory.errors import SessionStoreError

    bad = b"caf\xe9".decode("utf-8", "surrogateescape")  # chat --resume $'caf\xe9' or /resume with such bytes
    with pytest.raises(SessionStoreError, match="no session matches"):
        Agent(RoutingModel(), home=hermes_home, resume=bad)
    agent = Agent(RoutingModel(), home=hermes_home)
    with pytest.raises(SessionStoreError, match="no session matches"):
        agent.resume(bad)
    agent.close()
