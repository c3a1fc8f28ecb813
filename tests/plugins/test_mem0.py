"""Mem0 provider: contract tests against a fake Platform API, and the real mem0 library in oss mode."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import pytest

from hermes_memory.plugins.mem0 import Mem0Provider, load_settings
from hermes_memory.providers.manager import MemoryManager
from tests.helpers.http import closed_port_url
from tests.helpers.model_fake import EMBEDDING_DIM, FakeOpenAIServer
from tests.plugins.fakes.base import configure
from tests.plugins.fakes.cli import listed, wizard
from tests.plugins.fakes.mem0 import FakeMem0
from tests.plugins.helpers.mem0 import KEY, make


@pytest.fixture
def fake() -> Iterator[FakeMem0]:
    server = FakeMem0(api_key=KEY).start()
    yield server
    server.stop()


def call(p: Mem0Provider, tool: str, **args: object) -> dict:
    return json.loads(p.handle_tool_call(tool, args))


def test_every_tool_round_trips_through_the_platform_api(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url)
    assert [t["name"] for t in p.get_tool_schemas()] == ["mem0_search", "mem0_add", "mem0_update", "mem0_delete"]

    added = call(p, "mem0_add", content="Alice drinks green tea every morning")
    assert added["result"] == "Fact queued for storage." and added["event_id"]
    body = fake.calls("POST", "/v3/memories/add/")[-1].body
    assert body["messages"] == [{"role": "user", "content": "Alice drinks green tea every morning"}]
    assert body["user_id"] == "alice" and body["agent_id"] == "hermes" and body["infer"] is False
    assert body["metadata"] == {"channel": "cli"}
    assert fake.calls("GET", "/v1/ping/")[0].headers["authorization"] == f"Token {KEY}"

    found = call(p, "mem0_search", query="green tea", top_k=3)
    assert found["count"] == 1 and found["results"][0]["memory"].startswith("Alice drinks")
    search = fake.calls("POST", "/memories/search/")[-1].body
    assert search["filters"] == {"user_id": "alice"} and search["top_k"] == 3
    mid = found["results"][0]["id"]

    assert call(p, "mem0_update", memory_id=mid, text="Alice drinks oolong tea")["result"] == "Memory updated."
    assert fake.memories[mid]["memory"] == "Alice drinks oolong tea"
    assert call(p, "mem0_delete", memory_id=mid)["result"] == "Memory deleted."
    assert fake.memories == {}
    assert call(p, "mem0_search", query="tea")["count"] == 0
    p.shutdown()


def test_selfhosted_server_contract(hermes_home, monkeypatch, fake):
    monkeypatch.setenv("MEM0_API_KEY", KEY)
    monkeypatch.setenv("MEM0_HOST", fake.url)
    monkeypatch.delenv("MEM0_MODE", raising=False)
    p = Mem0Provider()
    assert p.is_available()
    p.initialize("sess-1", hermes_home=str(hermes_home), platform="cli", agent_context="primary", user_id="alice")
    assert p.settings["mode"] == "selfhosted"
    assert call(p, "mem0_add", content="Alice speaks Portuguese") == {"result": "Fact stored."}
    req = fake.calls("POST", "^/memories$")[-1]
    assert req.headers["x-api-key"] == KEY and req.body["infer"] is False and req.body["user_id"] == "alice"
    mid = call(p, "mem0_search", query="Portuguese")["results"][0]["id"]
    assert fake.calls("POST", "^/search$")[-1].body == {"query": "Portuguese", "top_k": 10,
                                                        "filters": {"user_id": "alice"}}
    assert call(p, "mem0_update", memory_id=mid, text="Alice speaks Spanish")["result"] == "Memory updated."
    p.sync_turn("I also speak French.", "Très bien!")
    assert call(p, "mem0_delete", memory_id=mid)["result"] == "Memory deleted."
    assert [m["memory"] for m in fake.memories.values()] == ["I also speak French.", "Très bien!"]
    assert fake.calls("GET", "/v1/ping/") == []  # no Platform client involved
    assert "HTTP 404" in call(p, "mem0_delete", memory_id="missing")["error"]


def test_missing_arguments_and_unknown_memory_give_clear_errors(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url)
    assert call(p, "mem0_search", query=" ")["error"] == "query is required"
    assert call(p, "mem0_add")["error"] == "content is required"
    assert "required" in call(p, "mem0_update", memory_id="x")["error"]
    err = call(p, "mem0_delete", memory_id="no-such-id")["error"]
    assert "mem0 delete failed" in err and "not found" in err.lower()
    assert "unknown tool" in call(p, "mem0_nope")["error"]


def test_prefetch_returns_what_on_turn_start_found(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url)
    call(p, "mem0_add", content="Alice's cat is called Miso")
    p.on_turn_start(1, "what is my cat called")
    block = p.prefetch("what is my cat called")
    assert block == "## Mem0 Memory\n- Alice's cat is called Miso"
    assert p.prefetch("ok") == ""  # trivial prompts are not recalled
    assert p.recall_status() == {"ok": True, "count": 1}


def test_sync_turn_adds_both_messages_cut_at_a_sentence(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url, sync_max_chars=30, sync_infer=False)
    p.sync_turn("I moved to Lisbon. It was a long trip over the sea.", "Welcome to Lisbon!", session_id="sess-1")
    body = fake.calls("POST", "/v3/memories/add/")[-1].body
    assert body["messages"] == [{"role": "user", "content": "I moved to Lisbon."},
                                {"role": "assistant", "content": "Welcome to Lisbon!"}]
    assert body["metadata"] == {"channel": "cli", "session_id": "sess-1"} and body["infer"] is False


def test_session_end_sends_nothing_more_and_shutdown_joins_the_search(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url)
    p.sync_turn("I like jazz", "Noted")
    writes = len(fake.calls("POST", "/memories/add/"))
    p.on_turn_start(2, "what music do I like")
    p.on_session_end([{"role": "user", "content": "I like jazz"}])  # turns were stored at sync time
    p.shutdown()
    assert len(fake.calls("POST", "/memories/add/")) == writes == 1
    assert not [t for t in threading.enumerate() if t.name == "mem0-prefetch"]
    assert fake.calls("POST", "/memories/search/")[-1].body["query"] == "what music do I like"


def test_session_switch_moves_writes_to_the_new_session(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url)
    p.on_session_switch("sess-2", parent_session_id="sess-1")
    p.sync_turn("I like jazz", "Noted", session_id="")
    assert fake.calls("POST", "/v3/memories/add/")[-1].body["metadata"]["session_id"] == "sess-2"


@pytest.mark.parametrize("ctx", ["subagent", "cron", "flush"])
def test_only_the_primary_context_writes(hermes_home, monkeypatch, fake, ctx):
    p = make(hermes_home, monkeypatch, fake.url, agent_context=ctx)
    p.sync_turn("I like jazz", "Noted")
    assert "only the primary agent" in call(p, "mem0_add", content="x")["error"]
    assert fake.calls("POST", "/memories/add/") == []
    assert "results" in call(p, "mem0_search", query="jazz")  # reads still work


def test_server_error_becomes_a_tool_error_and_an_empty_prefetch(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url)
    call(p, "mem0_search", query="warm up")  # client created (ping) before the faults
    fake.fail(503, times=3, path="/v3/memories")
    err = call(p, "mem0_search", query="tea")["error"]
    assert err.startswith("mem0 search failed")
    assert p.prefetch("what tea do I like") == ""
    assert p.recall_status()["ok"] is False
    p.sync_turn("hello there friend", "hi")  # does not raise
    assert call(p, "mem0_search", query="tea")["count"] == 0  # recovered


def test_timeout_becomes_a_tool_error(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url)
    call(p, "mem0_search", query="warm up")
    fake.stall(5.0, path="/v3/memories/search")
    assert "timed out" in call(p, "mem0_search", query="tea")["error"].lower()
    assert p.prefetch("what tea do I like") == ""


def test_server_down_never_raises_out_of_hooks(hermes_home, monkeypatch):
    p = make(hermes_home, monkeypatch, closed_port_url())
    assert "error" in call(p, "mem0_search", query="tea")
    assert "error" in call(p, "mem0_add", content="fact")
    p.on_turn_start(1, "what tea do I like")
    assert p.prefetch("what tea do I like") == ""
    p.sync_turn("u", "a")
    p.on_session_switch("s2")
    p.shutdown()


def test_breaker_pauses_after_five_consecutive_failures(hermes_home, monkeypatch):
    p = make(hermes_home, monkeypatch, closed_port_url())
    for _ in range(5):
        assert "failed" in call(p, "mem0_search", query="tea")["error"]
    assert "paused" in call(p, "mem0_search", query="tea")["error"]


def test_availability_needs_a_key_or_an_oss_vector_store(hermes_home, monkeypatch):
    monkeypatch.delenv("MEM0_API_KEY", raising=False)
    p = Mem0Provider()
    assert not p.is_available() and "MEM0_API_KEY" in p.unavailable_reason()
    (hermes_home / ".env").write_text(f"MEM0_API_KEY={KEY}\n")
    assert p.is_available()
    (hermes_home / ".env").unlink()
    configure(hermes_home, "mem0", {"mode": "oss"})
    assert "oss.vector_store" in p.unavailable_reason()
    configure(hermes_home, "mem0", {"oss.vector_store": {"provider": "qdrant", "config": {}}})
    assert p.is_available()
    secret = [f for f in p.get_config_schema() if f.secret]
    assert [(f.key, f.env_var) for f in secret] == [("api_key", "MEM0_API_KEY")]


def test_config_yaml_section_wins_over_the_reference_json_and_env(hermes_home, monkeypatch):
    (hermes_home / "mem0.json").write_text(json.dumps({"user_id": "from-json", "agent_id": "json-agent"}))
    configure(hermes_home, "mem0", {"user_id": "from-yaml", "host": ""})
    monkeypatch.setenv("MEM0_USER_ID", "from-env")
    monkeypatch.setenv("MEM0_AGENT_ID", "env-agent")
    s = load_settings(hermes_home)
    assert (s["user_id"], s["agent_id"]) == ("from-yaml", "json-agent")


@pytest.mark.slow
def test_real_mem0_library_offline_add_search_and_prefetch(hermes_home, tmp_path):
    """mem0.Memory in process: embedded Qdrant on disk, embeddings from a local endpoint, no LLM (infer=False)."""
    emb = FakeOpenAIServer().start()
    try:
        oss = {
            "vector_store": {"provider": "qdrant", "config": {
                "path": str(tmp_path / "qdrant"), "collection_name": "hermes_test", "embedding_model_dims": EMBEDDING_DIM}},
            "embedder": {"provider": "openai", "config": {
                "api_key": "unused", "openai_base_url": emb.base_url, "model": "hash", "embedding_dims": EMBEDDING_DIM}},
            "llm": {"provider": "openai", "config": {"api_key": "unused", "openai_base_url": emb.base_url,
                                                     "model": "never-called"}},
        }
        p = Mem0Provider()
        configure(hermes_home, "mem0", {"mode": "oss", "oss": oss, "sync_infer": False})
        assert p.is_available()
        p.initialize("s1", hermes_home=str(hermes_home), platform="cli", agent_context="primary", user_id="bob")
        assert call(p, "mem0_add", content="Bob keeps bees on his rooftop in Porto") == {"result": "Fact stored."}
        p.sync_turn("My sister Ana plays the cello", "That sounds lovely")
        hits = call(p, "mem0_search", query="bees rooftop")
        assert hits["results"][0]["memory"] == "Bob keeps bees on his rooftop in Porto"
        block = p.prefetch("who plays the cello")
        assert block.startswith("## Mem0 Memory\n") and "- My sister Ana plays the cello" in block
        mid = hits["results"][0]["id"]
        assert call(p, "mem0_update", memory_id=mid, text="Bob keeps bees in Braga")["result"] == "Memory updated."
        assert call(p, "mem0_search", query="bees Braga")["results"][0]["memory"] == "Bob keeps bees in Braga"
        assert call(p, "mem0_delete", memory_id=mid)["result"] == "Memory deleted."
        assert all(r["id"] != mid for r in call(p, "mem0_search", query="bees")["results"])
        assert emb.calls("POST", "/v1/embeddings") and not emb.calls("POST", "/chat/completions")
        p.shutdown()

        # a stuck embeddings endpoint: the call is bounded by the provider's timeout
        configure(hermes_home, "mem0", {"timeout": 0.5})
        slow = Mem0Provider()
        slow.initialize("s2", hermes_home=str(hermes_home), platform="cli", agent_context="primary", user_id="bob")
        emb.stall(10.0)
        assert "did not finish within 0.5s" in call(slow, "mem0_search", query="bees")["error"]
        assert slow.prefetch("who keeps bees") == ""
    finally:
        emb.stop()


def test_setup_wizard_configures_mem0_and_providers_list_shows_it_available(hermes_home, monkeypatch):
    monkeypatch.delenv("MEM0_API_KEY", raising=False)  # restored after the wizard exports it
    assert listed(hermes_home, "mem0")["available"] is False
    out = wizard(hermes_home, "mem0", "api_key=m0-wizard-key", "user_id=alice", "timeout=2.5")
    assert out["env"] == ["MEM0_API_KEY"] and out["config"]["mem0.user_id"] == "alice"
    assert listed(hermes_home, "mem0") == {"available": True, "active": True, "reason": ""}
    p = Mem0Provider(hermes_home=hermes_home)
    p.initialize("s", hermes_home=str(hermes_home), platform="cli", agent_context="primary")
    assert (p.settings["api_key"], p.user_id, p.settings["timeout"]) == ("m0-wizard-key", "alice", 2.5)


def test_a_turn_through_the_memory_manager_recalls_and_survives_a_dead_server(hermes_home, monkeypatch, fake):
    for url, alive in ((fake.url, True), (closed_port_url(), False)):
        p = make(hermes_home, monkeypatch, url)
        m = MemoryManager(prefetch_timeout=5.0)
        assert m.add_provider(p)
        m.initialize_all("sess-1", hermes_home=str(hermes_home), agent_context="primary", user_id="alice")
        added = json.loads(m.handle_tool_call("mem0_add", {"content": "Alice drinks green tea"}))
        assert ("error" in added) is not alive
        m.on_turn_start(1, "what tea do I drink")
        message = m.build_user_message("what tea do I drink")
        assert message.startswith("what tea do I drink")
        assert ("Alice drinks green tea" in message) is alive
        m.sync_all("I also like matcha", "Noted")
        assert m.flush_pending(10)
        m.shutdown_all()
