"""Honcho provider: contract tests against a fake Honcho v3 API on 127.0.0.1, through the real honcho-ai SDK."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from hermes_memory.plugins.honcho import (
    PLACEHOLDER_KEY,
    HonchoProvider,
    auto_level,
    load_settings,
    split_message,
)
from hermes_memory.providers.manager import MemoryManager
from tests.helpers.http import closed_port_url
from tests.plugins.fakes.base import configure
from tests.plugins.fakes.cli import listed, wizard
from tests.plugins.fakes.honcho import FakeHoncho
from tests.plugins.helpers.honcho import KEY, make


@pytest.fixture
def fake() -> Iterator[FakeHoncho]:
    server = FakeHoncho(api_key=KEY).start()
    yield server
    server.stop()


def call(p: HonchoProvider, tool: str, **args: object) -> dict:
    return json.loads(p.handle_tool_call(tool, args))


def test_every_tool_round_trips_through_the_sdk(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url, reasoningLevelCap="medium")
    assert p.session_id == "sess-1" and p.user_peer_id == "dana" and p.ai_peer_id == "hermes"
    assert [t["name"] for t in p.get_tool_schemas()] == [
        "honcho_profile", "honcho_search", "honcho_reasoning", "honcho_context", "honcho_conclude"]

    empty = call(p, "honcho_profile")
    assert empty["result"] == [] and "observation" in empty["hint"]
    assert call(p, "honcho_profile", card=["Works as a pilot", " ", "Has two kids"]) == {
        "result": "Peer card updated (2 facts)", "card": ["Works as a pilot", "Has two kids"]}
    assert fake.cards[("dana", "dana")] == ["Works as a pilot", "Has two kids"]
    assert call(p, "honcho_profile", peer="user") == {"result": ["Works as a pilot", "Has two kids"]}
    assert fake.calls("GET", "/card")[-1].headers["authorization"] == f"Bearer {KEY}"

    saved = call(p, "honcho_conclude", conclusion="Dana is afraid of heights")
    assert saved["result"] == "Conclusion saved." and saved["id"] in fake.conclusions
    assert fake.conclusions[saved["id"]] | {"id": "x", "created_at": "t"} == {
        "id": "x", "content": "Dana is afraid of heights", "observer_id": "hermes", "observed_id": "dana",
        "session_id": "sess-1", "created_at": "t"}

    answer = call(p, "honcho_reasoning", query="What is Dana afraid of?", reasoning_level="max")
    assert answer == {"result": "(medium) dana: Dana is afraid of heights", "reasoning_level": "medium"}
    chat = fake.calls("POST", "/peers/hermes/chat")[-1].body
    assert chat["target"] == "dana" and chat["reasoning_level"] == "medium" and chat["stream"] is False

    p.sync_turn("I fly to Nairobi on Tuesday", "Safe travels!")
    hits = call(p, "honcho_search", query="Nairobi flight", max_tokens=5000)
    assert hits == {"result": "[dana · sess-1] I fly to Nairobi on Tuesday", "count": 1}
    assert fake.calls("POST", "/peers/dana/search")[-1].body["limit"] == 20  # 2000 tokens * 4 // 300, capped

    fake.summaries["sess-1"] = "Dana is planning travel."
    ctx = call(p, "honcho_context")
    assert ctx == {"summary": "Dana is planning travel.", "representation": "Dana is afraid of heights",
                   "card": ["Works as a pilot", "Has two kids"],
                   "recent_messages": [{"peer": "dana", "content": "I fly to Nairobi on Tuesday"},
                                       {"peer": "hermes", "content": "Safe travels!"}]}

    assert call(p, "honcho_conclude", delete_id=saved["id"]) == {"result": "Conclusion deleted.", "id": saved["id"]}
    assert fake.conclusions == {}


def test_tool_argument_errors(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url)
    assert "exactly one" in call(p, "honcho_conclude")["error"]
    assert "exactly one" in call(p, "honcho_conclude", conclusion="a", delete_id="b")["error"]
    assert call(p, "honcho_search")["error"] == "query is required"
    assert "reasoning_level must be one of" in call(p, "honcho_reasoning", query="q", reasoning_level="ultra")["error"]
    assert call(p, "honcho_profile", card="not a list")["error"] == "card must be a list of strings"
    assert "HTTP 404" in call(p, "honcho_conclude", delete_id="c_missing")["error"]
    assert "unknown tool" in call(p, "honcho_nope")["error"]


def test_recall_modes_decide_tools_and_injection(hermes_home, monkeypatch, fake):
    fake_conclusion = {"id": "c1", "content": "Dana likes chess", "observer_id": "hermes", "observed_id": "dana",
                       "session_id": None, "created_at": "2026-01-01T00:00:00+00:00"}
    fake.conclusions["c1"] = fake_conclusion
    ctx_only = make(hermes_home, monkeypatch, fake.url, recallMode="context")
    assert ctx_only.get_tool_schemas() == [] and "no tools" in ctx_only.system_prompt_block()
    assert "tools are off" in call(ctx_only, "honcho_search", query="chess")["error"]
    ctx_only.on_turn_start(1, "what games do I like")
    block = ctx_only.prefetch("what games do I like")
    assert "### What I know about dana\nDana likes chess" in block
    assert "### Honcho's read on this turn\n(low) dana: Dana likes chess" in block

    tools_only = make(hermes_home, monkeypatch, fake.url, recallMode="tools")
    assert len(tools_only.get_tool_schemas()) == 5 and tools_only.prefetch("what games do I like") == ""

    hybrid = make(hermes_home, monkeypatch, fake.url, recallMode="auto")
    assert hybrid.settings["recallMode"] == "hybrid"
    assert len(hybrid.get_tool_schemas()) == 5 and "Dana likes chess" in hybrid.prefetch("what games do I like")


def test_cadences_and_first_turn_injection_limit_calls(hermes_home, monkeypatch, fake):
    fake.conclusions["c1"] = {"id": "c1", "content": "Dana sails", "observer_id": "hermes", "observed_id": "dana",
                              "session_id": None, "created_at": "2026-01-01T00:00:00+00:00"}
    p = make(hermes_home, monkeypatch, fake.url, contextCadence=2, dialecticCadence=3)
    blocks, chats_by_turn = [], []
    for turn in range(1, 7):
        p.on_turn_start(turn, "tell me about my hobbies")
        blocks.append(p.prefetch("tell me about my hobbies"))
        p.queue_prefetch("tell me about my hobbies")  # after the turn, as the manager does
        assert p.wait_for_background(5.0)
        chats_by_turn.append(len(fake.calls("POST", "/chat")))
    assert len(fake.calls("GET", "/context")) == 3  # turns 1, 3, 5
    # turn 1 runs the cold dialectic at once; the next ones (turns 4 and 7) are queued after turns 3 and 6
    assert chats_by_turn == [1, 1, 2, 2, 2, 3]
    assert fake.calls("POST", "/chat")[0].body["query"].startswith("Summarize what you know about this user")
    assert fake.calls("POST", "/chat")[1].body["query"] == "tell me about my hobbies"
    assert all("Dana sails" in b for b in blocks)  # cached pieces are reused between refreshes

    first = make(hermes_home, monkeypatch, fake.url, injectionFrequency="first-turn")
    first.on_turn_start(1, "tell me about my hobbies")
    assert first.prefetch("tell me about my hobbies")
    first.on_turn_start(2, "and my job?")
    assert first.prefetch("and my job?") == ""
    assert first.prefetch("ok") == ""


def test_manual_reasoning_restarts_the_dialectic_cadence(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url, dialecticCadence=2)
    p.on_turn_start(1, "hello there, what do you know")
    p.prefetch("hello there, what do you know")  # auto dialectic at turn 1
    p.on_turn_start(3, "q")
    call(p, "honcho_reasoning", query="what does Dana do?")  # manual at turn 3
    p.prefetch("what does Dana do for a living")  # served from the cache
    p.queue_prefetch("what does Dana do for a living")  # turn 4 is 1 < 2 turns after the manual call
    assert p.wait_for_background(5.0)
    assert len(fake.calls("POST", "/chat")) == 2
    p.on_turn_start(4, "q")
    p.queue_prefetch("what does Dana do for a living")  # turn 5: due again
    assert p.wait_for_background(5.0)
    assert len(fake.calls("POST", "/chat")) == 3


def test_reasoning_level_heuristic_and_cap(hermes_home, monkeypatch, fake):
    assert auto_level("short", "low", "high") == "low"
    assert auto_level("x" * 120, "low", "high") == "medium"
    assert auto_level("x" * 400, "low", "high") == "high"
    assert auto_level("x" * 400, "medium", "high") == "high"  # +2 would be max: capped
    assert auto_level("x" * 400, "low", "high", heuristic=False) == "low"
    p = make(hermes_home, monkeypatch, fake.url, reasoningLevelCap="low")
    p.on_turn_start(2, "q")
    p.prefetch("why " * 120)
    assert fake.calls("POST", "/chat")[-1].body["reasoning_level"] == "low"


def test_context_token_budget_truncates_injection(hermes_home, monkeypatch, fake):
    fake.conclusions["c1"] = {"id": "c1", "content": "Dana " + "likes long walks " * 50, "observer_id": "hermes",
                              "observed_id": "dana", "session_id": None, "created_at": "2026-01-01T00:00:00+00:00"}
    p = make(hermes_home, monkeypatch, fake.url, contextTokens=25)
    p.on_turn_start(1, "what do I like")
    assert len(p.prefetch("what do I like")) == 100
    assert fake.calls("GET", "/context")[-1].query["tokens"] == "25"


def test_sync_turn_writes_chunked_messages_to_the_session(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url, messageMaxChars=40)
    p.sync_turn("First paragraph is short.\n\nSecond paragraph is a little longer than that.", "Noted.")
    assert fake.messages("sess-1") == [
        ("dana", "First paragraph is short."),
        ("dana", "[continued] Second paragraph is a little"),
        ("dana", "[continued] longer than that."),
        ("hermes", "Noted.")]
    peers = fake.sessions["sess-1"]["peers"]
    assert peers["dana"] == {"observe_me": True, "observe_others": False}
    assert peers["hermes"] == {"observe_me": True, "observe_others": True}
    assert all(len(c) <= 40 for c in split_message("word " * 100, 40))


def test_write_frequency_session_and_every_n_turns(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url, writeFrequency="session")
    p.sync_turn("one", "1")
    p.sync_turn("two", "2")
    assert fake.messages("sess-1") == []
    p.on_session_end([])
    assert [c for _, c in fake.messages("sess-1")] == ["one", "1", "two", "2"]

    q = make(hermes_home, monkeypatch, fake.url, writeFrequency=2)
    q.on_session_switch("sess-2")
    q.sync_turn("three", "3")
    assert fake.messages("sess-2") == []
    q.sync_turn("four", "4")
    assert [c for _, c in fake.messages("sess-2")] == ["three", "3", "four", "4"]


def test_session_switch_flushes_old_and_moves_writes(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url, writeFrequency="session")
    p.sync_turn("before the switch", "ok")
    p.on_session_switch("sess-2", parent_session_id="sess-1")
    p.sync_turn("after the switch", "ok")
    p.shutdown()
    assert [c for _, c in fake.messages("sess-1")] == ["before the switch", "ok"]
    assert [c for _, c in fake.messages("sess-2")] == ["after the switch", "ok"]


def test_memory_write_becomes_a_conclusion(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url)
    p.on_memory_write("add", "user", "Dana prefers aisle seats")
    p.on_memory_write("add", "memory", "not about the user")
    p.shutdown()
    assert fake.about("dana") == ["Dana prefers aisle seats"]


@pytest.mark.parametrize("ctx", ["subagent", "cron", "flush"])
def test_only_the_primary_context_writes(hermes_home, monkeypatch, fake, ctx):
    p = make(hermes_home, monkeypatch, fake.url, agent_context=ctx)
    p.sync_turn("secret", "ok")
    p.on_memory_write("add", "user", "fact")
    p.on_session_end([])
    p.shutdown()
    assert fake.sessions == {} and fake.conclusions == {}
    if ctx == "subagent":
        assert "only the primary agent" in call(p, "honcho_conclude", conclusion="x")["error"]
        assert len(p.get_tool_schemas()) == 5
    else:  # cron and flush forks disable the provider entirely
        assert p.get_tool_schemas() == [] and p.system_prompt_block() == ""
        assert p.prefetch("what do I like") == ""


def test_server_error_is_a_tool_error_and_messages_stay_buffered(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url)
    call(p, "honcho_profile")  # workspace and peers exist
    fake.fail(503, times=10, path="/v3/workspaces/ws1/peers/dana/card")
    assert call(p, "honcho_profile")["error"].startswith("honcho: ServerError (HTTP 503)")
    fake.fail(500, times=1, path="/v3/workspaces/ws1/sessions")
    p.sync_turn("kept for later", "ok")  # the failed flush keeps the messages
    assert fake.messages("sess-1") == []
    p.sync_turn("next turn", "ok")
    assert [c for _, c in fake.messages("sess-1")] == ["kept for later", "ok", "next turn", "ok"]
    fake.fail(500, times=2, path="/v3/workspaces/ws1/")
    p.on_turn_start(1, "what do I like")
    assert p.prefetch("what do I like") == ""
    assert p.recall_status()["ok"] is False
    fake.fail(500, times=1, path="/v3/workspaces/ws1/peers/hermes/chat")
    p.queue_prefetch("what do I like")  # fails in the background...
    assert p.wait_for_background(5.0)
    p.on_turn_start(2, "what do I like")
    p.queue_prefetch("what do I like")  # ...so it is retried after the next turn, not cached as empty
    assert p.wait_for_background(5.0)
    assert len(fake.calls("POST", "/chat")) == 3  # turn-1 prefetch, failed background run, its retry


def test_timeout_is_a_tool_error(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url)
    fake.stall(5.0)
    assert "TimeoutError" in call(p, "honcho_search", query="x")["error"]
    assert p.prefetch("what do I like") == ""


def test_server_down_never_raises_out_of_hooks(hermes_home, monkeypatch):
    p = make(hermes_home, monkeypatch, closed_port_url())
    assert "ConnectionError" in call(p, "honcho_reasoning", query="x")["error"]
    p.on_turn_start(1, "what do I like")
    assert p.prefetch("what do I like") == ""
    p.queue_prefetch("what do I like")
    assert p.wait_for_background(5.0)
    p.on_turn_start(2, "what do I like")
    assert p.prefetch("what do I like") == ""
    p.sync_turn("u", "a")
    p.on_memory_write("add", "user", "fact")
    p.on_session_switch("s2")
    p.on_session_end([])
    p.shutdown()


def test_local_server_without_key_gets_a_placeholder(hermes_home, monkeypatch):
    server = FakeHoncho(api_key=PLACEHOLDER_KEY).start()
    try:
        monkeypatch.delenv("HONCHO_API_KEY", raising=False)
        p = HonchoProvider()
        assert not p.is_available() and "HONCHO_API_KEY" in p.unavailable_reason()
        configure(hermes_home, "honcho", {"baseUrl": server.url, "peerName": "eve"})
        assert p.is_available()
        p.initialize("s1", hermes_home=str(hermes_home), platform="cli", agent_context="primary")
        assert call(p, "honcho_profile", card=["Likes tea"])["card"] == ["Likes tea"]
    finally:
        server.stop()


def test_host_block_overrides_root_keys_and_enabled_false(hermes_home, monkeypatch):
    monkeypatch.setenv("HONCHO_API_KEY", KEY)
    (hermes_home / "honcho.json").write_text(json.dumps({
        "workspace": "root-ws", "recallMode": "tools", "hosts": {"hermes": {"workspace": "host-ws"}}}))
    s = load_settings(hermes_home)
    assert s["workspace"] == "host-ws" and s["recallMode"] == "tools" and s["apiKey"] == KEY
    (hermes_home / "honcho.json").write_text(json.dumps({"enabled": False}))
    assert "disabled" in HonchoProvider().unavailable_reason()
    secret = [(f.key, f.env_var) for f in HonchoProvider().get_config_schema() if f.secret]
    assert secret == [("apiKey", "HONCHO_API_KEY")]


def test_setup_wizard_configures_honcho_and_providers_list_shows_it_available(hermes_home, monkeypatch):
    monkeypatch.delenv("HONCHO_API_KEY", raising=False)  # restored after the wizard exports it
    assert listed(hermes_home, "honcho")["available"] is False
    out = wizard(hermes_home, "honcho", "apiKey=hk-wizard", "recallMode=tools", "dialecticCadence=3",
                 "reasoningLevelCap=medium", "peerName=dana")
    assert out["env"] == ["HONCHO_API_KEY"] and out["config"]["honcho.recallMode"] == "tools"
    assert listed(hermes_home, "honcho") == {"available": True, "active": True, "reason": ""}
    p = HonchoProvider(hermes_home=hermes_home)
    p.initialize("s", hermes_home=str(hermes_home), platform="cli", agent_context="primary")
    s = p.settings
    assert (s["apiKey"], s["recallMode"], s["dialecticCadence"], s["reasoningLevelCap"], p.user_peer_id) == (
        "hk-wizard", "tools", 3, "medium", "dana")


def test_a_turn_through_the_memory_manager_recalls_and_survives_a_dead_server(hermes_home, monkeypatch, fake):
    for url, alive in ((fake.url, True), (closed_port_url(), False)):
        p = make(hermes_home, monkeypatch, url)
        m = MemoryManager(prefetch_timeout=5.0)
        assert m.add_provider(p)
        m.initialize_all("sess-1", hermes_home=str(hermes_home), agent_context="primary")
        saved = json.loads(m.handle_tool_call("honcho_conclude", {"conclusion": "Dana collects stamps"}))
        assert ("error" in saved) is not alive
        m.on_turn_start(1, "what do I collect")
        message = m.build_user_message("what do I collect")
        assert message.startswith("what do I collect")
        assert ("Dana collects stamps" in message) is alive
        m.sync_all("I started a new album", "Nice")
        assert m.flush_pending(10)
        m.shutdown_all()
    assert [c for _, c in fake.messages("sess-1")] == ["I started a new album", "Nice"]
