"""Supermemory provider: contract tests against a fake Supermemory API on 127.0.0.1 (real SDK client)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from hermes_memory.plugins.supermemory import SupermemoryProvider, detect_category, sdk_problem
from hermes_memory.providers.manager import MemoryManager
from tests.helpers.http import closed_port_url
from tests.plugins.fakes.base import configure
from tests.plugins.fakes.cli import listed, wizard
from tests.plugins.fakes.supermemory import FakeSupermemory
from tests.plugins.helpers.supermemory import KEY, make


@pytest.fixture
def fake() -> Iterator[FakeSupermemory]:
    server = FakeSupermemory(api_key=KEY).start()
    yield server
    server.stop()


def call(p: SupermemoryProvider, tool: str, **args: object) -> dict:
    return json.loads(p.handle_tool_call(tool, args))


def test_tools_and_aliases_round_trip_in_camel_case(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url)
    assert p.container_tag == "hermes_ada"
    names = [t["name"] for t in p.get_tool_schemas()]
    assert names == ["supermemory_store", "supermemory_search", "supermemory_forget", "supermemory_profile",
                     "supermemory-save", "supermemory-search", "supermemory-forget", "supermemory-profile"]

    saved = call(p, "supermemory_store", content="I prefer window seats on long flights",
                 metadata={"source": "chat", "topic": "travel"})
    assert saved["saved"] is True and saved["preview"] == "I prefer window seats on long flights"
    req = fake.calls("POST", "/v3/documents")[-1]
    assert req.headers["authorization"] == f"Bearer {KEY}" and req.headers["x-sm-source"] == "hermes"
    assert req.body["containerTags"] == ["hermes_ada"] and "entityContext" in req.body
    assert req.body["metadata"] == {"topic": "travel", "type": "preference"}  # source dropped, type detected
    call(p, "supermemory-save", content="The team decided to use Postgres")
    assert fake.calls("POST", "/v3/documents")[-1].body["metadata"] == {"type": "decision"}

    found = call(p, "supermemory_search", query="window seats", limit=50)
    assert found["count"] == 1 and found["results"][0]["content"].startswith("I prefer window")
    assert found["results"][0]["similarity"] == 100
    assert fake.calls("POST", "/v4/search")[-1].body == {"q": "window seats", "containerTag": "hermes_ada",
                                                         "limit": 20, "searchMode": "hybrid"}
    assert call(p, "supermemory-search", query="postgres")["count"] == 1

    fake.profiles["hermes_ada"] = {"static": ["Lives in Oslo"], "dynamic": ["Planning a trip"]}
    prof = call(p, "supermemory_profile")
    assert prof == {"profile": "## Stable facts\n- Lives in Oslo\n\n## Recent context\n- Planning a trip",
                    "static_count": 1, "dynamic_count": 1}

    gone = call(p, "supermemory_forget", query="Postgres team")
    assert gone["success"] is True
    assert [m["memory"] for m in fake.memories.values()] == ["I prefer window seats on long flights"]
    only = next(iter(fake.memories))
    assert call(p, "supermemory-forget", id=only) == {"success": True, "message": "Memory forgotten.", "id": only}
    assert fake.calls("DELETE", "/v4/memories")[-1].body == {"containerTag": "hermes_ada", "id": only}
    assert call(p, "supermemory_forget", query="nothing here")["success"] is False


def test_argument_errors_and_container_whitelist(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url, enable_custom_container_tags=True, custom_containers=["work"])
    assert call(p, "supermemory_store", content="")["error"] == "content is required"
    assert call(p, "supermemory_search", query=" ")["error"] == "query is required"
    assert call(p, "supermemory_forget")["error"] == "give id or query"
    assert "not allowed" in call(p, "supermemory_search", query="x", container_tag="secret")["error"]
    call(p, "supermemory_store", content="Quarterly report due Friday", container_tag="work")
    assert fake.calls("POST", "/v3/documents")[-1].body["containerTags"] == ["work"]
    schema = p.get_tool_schemas()[0]["parameters"]["properties"]["container_tag"]
    assert schema["enum"] == ["hermes_ada", "work"]
    assert "HTTP 404" in call(p, "supermemory_forget", id="mem_missing")["error"]


def test_prefetch_profile_facts_on_first_turn_then_only_hits(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url, profile_frequency=3)
    call(p, "supermemory_store", content="Ada's dog is named Pixel")
    fake.profiles["hermes_ada"] = {"static": ["Ada is a nurse"], "dynamic": ["Ada's dog is named Pixel"]}
    p.on_turn_start(1, "what is my dog called")
    first = p.prefetch("what is my dog called")
    assert first.startswith("<supermemory-context>\n## User profile\n- Ada is a nurse\n- Ada's dog is named Pixel\n")
    assert first.endswith("</supermemory-context>")
    assert first.count("Pixel") == 1  # the hit duplicates a profile fact and is dropped
    assert fake.calls("POST", "/v4/profile")[-1].body == {"containerTag": "hermes_ada", "q": "what is my dog called"}
    p.on_turn_start(2, "what is my dog called")
    second = p.prefetch("what is my dog called")
    assert "User profile" not in second
    assert "- Ada's dog is named Pixel (just now, 40%)" in second
    p.on_turn_start(3, "dog")
    assert "## User profile" in p.prefetch("dog")  # every profile_frequency-th turn
    assert p.prefetch("thanks") == ""


def test_session_end_sends_the_cleaned_conversation(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url)
    p.sync_turn("<supermemory-context>\nold\n</supermemory-context>\nI start a new job Monday", "Good luck!")
    assert fake.conversations == []  # sync only buffers
    history = [{"role": "system", "content": "sys"},
               {"role": "user", "content": "<memory-context>x</memory-context>I start a new job Monday"},
               {"role": "assistant", "content": "Good luck!"}]
    p.on_session_end(history)
    [conv] = fake.conversations
    assert conv["conversationId"] == "sess-1" and conv["containerTags"] == ["hermes_ada"]
    assert conv["messages"] == [{"role": "user", "content": "I start a new job Monday"},
                                {"role": "assistant", "content": "Good luck!"}]
    assert conv["metadata"] == {"sm_source": "hermes", "type": "full_session", "session_id": "sess-1",
                                "message_count": 2}
    p.on_session_end([{"role": "user", "content": "ok"}, {"role": "assistant", "content": "bye"}])
    assert len(fake.conversations) == 1  # trivial sessions are skipped


def test_session_switch_flushes_partial_and_moves_writes(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url)
    p.sync_turn("My sister lives in Rome", "Nice")
    p.on_session_switch("sess-2", parent_session_id="sess-1")
    p.sync_turn("She is a chef", "Tasty")
    p.shutdown()
    assert [(c["conversationId"], c["metadata"]["type"], c["messages"][0]["content"]) for c in fake.conversations] \
        == [("sess-1", "partial", "My sister lives in Rome"), ("sess-2", "partial", "She is a chef")]


def test_memory_write_mirror(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url)
    p.on_memory_write("add", "user", "Prefers tea over coffee")
    p.on_memory_write("replace", "user", "ignored")
    p.shutdown()
    [doc] = fake.documents.values()
    assert doc["content"] == "Prefers tea over coffee"
    assert doc["metadata"] == {"target": "user", "type": "explicit_memory"}


@pytest.mark.parametrize("ctx", ["subagent", "cron", "flush"])
def test_only_the_primary_context_writes(hermes_home, monkeypatch, fake, ctx):
    p = make(hermes_home, monkeypatch, fake.url, agent_context=ctx)
    p.sync_turn("I like jazz", "ok")
    p.on_session_end([{"role": "user", "content": "I like jazz a lot"}])
    p.on_memory_write("add", "user", "fact")
    assert "only the primary agent" in call(p, "supermemory_store", content="x")["error"]
    p.shutdown()
    assert fake.documents == {} and fake.conversations == []
    assert "results" in call(p, "supermemory_search", query="jazz")


def test_server_error_is_a_tool_error_and_hooks_survive(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url)
    fake.fail(500, times=3)
    assert call(p, "supermemory_search", query="x")["error"] == \
        "supermemory: InternalServerError (HTTP 500): injected failure"
    assert p.prefetch("what do I like") == ""
    assert p.recall_status()["ok"] is False
    p.sync_turn("I like jazz", "ok")
    p.on_session_end([{"role": "user", "content": "I like jazz"}])  # 500: logged, not raised
    assert fake.conversations == []


def test_timeout_is_a_tool_error(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url)
    fake.stall(5.0)
    assert call(p, "supermemory_profile")["error"] == "supermemory: request timed out"
    assert p.prefetch("what do I like") == ""


def test_server_down_never_raises_out_of_hooks(hermes_home, monkeypatch):
    p = make(hermes_home, monkeypatch, closed_port_url())
    assert "APIConnectionError" in call(p, "supermemory_search", query="x")["error"]
    assert p.prefetch("what do I like") == ""
    p.sync_turn("I like jazz", "ok")
    p.on_session_switch("s2")
    p.on_memory_write("add", "user", "fact")
    p.on_session_end([{"role": "user", "content": "I like jazz"}])
    p.shutdown()


def test_availability_ranges_and_default_tag_guard(hermes_home, monkeypatch):
    monkeypatch.delenv("SUPERMEMORY_API_KEY", raising=False)
    p = SupermemoryProvider()
    assert "SUPERMEMORY_API_KEY" in p.unavailable_reason()
    monkeypatch.setenv("SUPERMEMORY_API_KEY", KEY)
    assert p.is_available()
    configure(hermes_home, "supermemory", {"container_tag": "default", "api_timeout": 99, "max_recall_results": 0})
    assert "#27226" in p.unavailable_reason()
    p.initialize("s", hermes_home=str(hermes_home), platform="cli", agent_context="primary")
    assert p.settings["api_timeout"] == 15.0 and p.settings["max_recall_results"] == 1
    assert detect_category("We chose Rust") == "decision" and detect_category("hmm") == "other"


def test_the_sdk_major_version_is_checked_without_importing_it():
    assert sdk_problem("supermemory", 3) == ""
    assert "needs supermemory 5.x" in sdk_problem("supermemory", 5)  # the 5.x SDK speaks another API
    assert "not installed" in sdk_problem("no-such-distribution-xyz", 1)


def test_setup_wizard_configures_supermemory_and_providers_list_shows_it_available(hermes_home, monkeypatch):
    monkeypatch.delenv("SUPERMEMORY_API_KEY", raising=False)  # restored after the wizard exports it
    assert listed(hermes_home, "supermemory")["available"] is False
    out = wizard(hermes_home, "supermemory", "api_key=sm-wizard", "container_tag=team-a", "search_mode=memories")
    assert out["env"] == ["SUPERMEMORY_API_KEY"] and out["config"]["supermemory.container_tag"] == "team-a"
    assert listed(hermes_home, "supermemory") == {"available": True, "active": True, "reason": ""}
    p = SupermemoryProvider(hermes_home=hermes_home)
    p.initialize("s", hermes_home=str(hermes_home), platform="cli", agent_context="primary")
    assert (p.settings["api_key"], p.container_tag, p.settings["search_mode"]) == ("sm-wizard", "team_a", "memories")


def test_a_turn_through_the_memory_manager_recalls_and_survives_a_dead_server(hermes_home, monkeypatch, fake):
    for url, alive in ((fake.url, True), (closed_port_url(), False)):
        p = make(hermes_home, monkeypatch, url)
        m = MemoryManager(prefetch_timeout=5.0)
        assert m.add_provider(p)
        m.initialize_all("sess-1", hermes_home=str(hermes_home), agent_context="primary", agent_identity="ada")
        saved = json.loads(m.handle_tool_call("supermemory_store", {"content": "Ada rides a red bicycle"}))
        assert ("error" in saved) is not alive
        m.on_turn_start(1, "what bicycle do I ride")
        message = m.build_user_message("what bicycle do I ride")
        assert message.startswith("what bicycle do I ride")
        assert ("Ada rides a red bicycle" in message) is alive
        m.sync_all("I bought a helmet", "Stay safe")
        assert m.flush_pending(10)
        m.on_session_end([{"role": "user", "content": "I bought a helmet"}, {"role": "assistant", "content": "Stay safe"}])
        m.shutdown_all()
    assert [c["metadata"]["type"] for c in fake.conversations] == ["full_session"]
