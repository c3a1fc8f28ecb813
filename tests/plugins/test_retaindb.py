"""RetainDB provider: contract tests against a fake RetainDB API on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from hermes_memory.plugins.retaindb import RetainDBProvider, load_settings
from hermes_memory.providers.manager import MemoryManager
from tests.helpers.http import closed_port_url
from tests.plugins.fakes.cli import listed, wizard
from tests.plugins.fakes.retaindb import FakeRetainDB
from tests.plugins.helpers.retaindb import KEY, make


@pytest.fixture
def fake() -> Iterator[FakeRetainDB]:
    server = FakeRetainDB(api_key=KEY).start()
    yield server
    server.stop()


def call(p: RetainDBProvider, tool: str, **args: object) -> dict:
    return json.loads(p.handle_tool_call(tool, args))


def test_memory_tools_round_trip(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url)
    assert len(p.get_tool_schemas()) == 10
    stored = call(p, "retaindb_remember", content="Carol is allergic to peanuts", memory_type="preference",
                  importance=0.9)
    mid = stored["id"]
    req = fake.calls("POST", "^/v1/memory$")[-1]
    assert req.body == {"project": "proj-x", "user_id": "carol", "session_id": "sess-1",
                        "content": "Carol is allergic to peanuts", "memory_type": "preference", "importance": 0.9,
                        "write_mode": "sync"}
    assert req.headers["authorization"] == f"Bearer {KEY}" and req.headers["x-api-key"] == KEY
    assert req.headers["x-sdk-runtime"] == "hermes-plugin"

    assert call(p, "retaindb_profile") == {"memories": [{"id": mid, "content": "Carol is allergic to peanuts"}]}
    hits = call(p, "retaindb_search", query="peanuts allergy", top_k=50)
    assert hits["results"][0]["id"] == mid and fake.calls("POST", "/v1/memory/search")[-1].body["top_k"] == 20
    ctx = call(p, "retaindb_context", query="peanuts")
    assert ctx["context"] == "- Carol is allergic to peanuts" and ctx["raw"]["results"][0]["id"] == mid
    assert fake.calls("POST", "/v1/context/query")[-1].body["max_tokens"] == 1200
    assert call(p, "retaindb_forget", memory_id=mid) == {"deleted": True, "id": mid}
    assert fake.memories == {}


def test_bad_arguments_are_refused_with_a_clear_error(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url)
    assert call(p, "retaindb_search")["error"] == "query is required"
    assert call(p, "retaindb_remember", content=" ")["error"] == "content is required"
    assert "memory_type must be one of" in call(p, "retaindb_remember", content="x", memory_type="gossip")["error"]
    assert "between 0 and 1" in call(p, "retaindb_remember", content="x", importance=3)["error"]
    assert call(p, "retaindb_read_file")["error"] == "file_id is required"
    assert "HTTP 404" in call(p, "retaindb_forget", memory_id="mem_missing")["error"]
    assert fake.memories == {}


def test_file_tools_round_trip(hermes_home, monkeypatch, fake, tmp_path):
    p = make(hermes_home, monkeypatch, fake.url)
    doc = tmp_path / "notes.md"
    doc.write_text("# Trip\nCarol visits Kyoto in April.\n")
    up = call(p, "retaindb_upload_file", local_path=str(doc), scope="user", ingest=True)
    fid = up["file"]["id"]
    assert fake.files[fid]["path"] == "/notes.md" and fake.files[fid]["scope"] == "USER"
    assert fake.files[fid]["ingested"] == {"user_id": "carol", "agent_id": "hermes"}
    assert [f["id"] for f in call(p, "retaindb_list_files", prefix="/no")["files"]] == [fid]
    read = call(p, "retaindb_read_file", file_id=fid)
    assert read["content"] == "# Trip\nCarol visits Kyoto in April.\n" and read["file"]["name"] == "notes.md"
    assert call(p, "retaindb_ingest_file", file_id=fid) == {"ok": True, "file_id": fid}
    assert call(p, "retaindb_delete_file", file_id=fid) == {"deleted": True}
    assert fake.files == {}

    blob = tmp_path / "photo.bin"
    blob.write_bytes(bytes(range(256)))
    fid = call(p, "retaindb_upload_file", local_path=str(blob))["file"]["id"]
    assert "binary file" in call(p, "retaindb_read_file", file_id=fid)["note"]


def test_upload_refuses_secret_files(hermes_home, monkeypatch, fake, tmp_path):
    p = make(hermes_home, monkeypatch, fake.url)
    (hermes_home / ".env").write_text("RETAINDB_API_KEY=x\n")
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "config").write_text("Host *\n")
    for path in (hermes_home / ".env", tmp_path / ".ssh" / "config"):
        assert "refusing to upload" in call(p, "retaindb_upload_file", local_path=str(path))["error"]
    assert "no such file" in call(p, "retaindb_upload_file", local_path=str(tmp_path / "nope.txt"))["error"]
    assert fake.calls("POST", "/v1/files") == []


def test_legacy_routes_are_used_when_the_primary_ones_are_missing(hermes_home, monkeypatch):
    legacy = FakeRetainDB(api_key=KEY, legacy_only=True).start()
    try:
        p = make(hermes_home, monkeypatch, legacy.url)
        mid = call(p, "retaindb_remember", content="Carol runs marathons")["id"]
        assert call(p, "retaindb_profile")["memories"][0]["content"] == "Carol runs marathons"
        assert call(p, "retaindb_forget", memory_id=mid)["deleted"] is True
        assert legacy.calls("POST", "^/v1/memories$") and legacy.calls("GET", "^/v1/memories$")
    finally:
        legacy.stop()


def test_prefetch_serves_context_synthesis_and_agent_model(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url)
    call(p, "retaindb_remember", content="Carol plays the violin")
    fake.agent_model = {"memory_count": 3, "persona": "patient tutor", "persistent_instructions": ["cite sources"],
                        "working_style": "brief"}
    p.queue_prefetch("does Carol play violin")
    block = p.prefetch("does Carol play violin")
    assert block == ("[RetainDB Context]\n- Carol plays the violin\n\n"
                     "[RetainDB User Synthesis]\n(low) The user: Carol plays the violin\n\n"
                     "[RetainDB Agent Self-Model]\nPersona: patient tutor\n- cite sources\nWorking style: brief")
    assert len(fake.calls("POST", "/ask")) == 1  # served from the queued batch, not fetched twice
    assert fake.calls("POST", "/ask")[-1].body == {"project": "proj-x", "query": "does Carol play violin",
                                                   "reasoning_level": "low"}
    assert p.prefetch("thanks") == ""
    assert p.recall_status() == {"ok": True, "errors": []}
    p.queue_prefetch("anything else about Carol?")  # after this turn: the next turn serves this batch
    p.on_session_switch("sess-2")  # ...unless the session changes: stale recall is dropped
    p.prefetch("does Carol play violin")
    assert [c.body["query"] for c in fake.calls("POST", "/ask")][-1] == "does Carol play violin"


def test_sync_turn_ingests_the_session_and_switch_moves_writes(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url)
    p.sync_turn("I adopted a puppy", "Congratulations!")
    p.on_session_switch("sess-2", parent_session_id="sess-1")
    p.sync_turn("His name is Rex", "Great name")
    assert [(s["session_id"], [m["content"] for m in s["messages"]]) for s in fake.sessions] == [
        ("sess-1", ["I adopted a puppy", "Congratulations!"]), ("sess-2", ["His name is Rex", "Great name"])]
    assert all(s["write_mode"] == "sync" and s["user_id"] == "carol" for s in fake.sessions)
    assert p.pending() == []


def test_session_end_retries_what_is_still_queued(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url)
    fake.fail(503, times=1, path="/v1/memory/ingest")
    p.sync_turn("last words", "goodbye")
    assert len(p.pending()) == 1 and fake.sessions == []
    p.on_session_end([{"role": "user", "content": "last words"}, {"role": "assistant", "content": "goodbye"}])
    assert p.pending() == [] and [m["content"] for m in fake.sessions[0]["messages"]] == ["last words", "goodbye"]


def test_memory_write_mirror_types_user_facts_as_preferences(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url)
    p.on_memory_write("add", "user", "Prefers metric units")
    p.on_memory_write("add", "memory", "Project uses Python 3.11")
    p.on_memory_write("remove", "memory", "old fact")
    assert sorted((m["content"], m["memory_type"]) for m in fake.memories.values()) == [
        ("Prefers metric units", "preference"), ("Project uses Python 3.11", "factual")]


@pytest.mark.parametrize("ctx", ["subagent", "cron", "flush"])
def test_only_the_primary_context_writes(hermes_home, monkeypatch, fake, ctx):
    p = make(hermes_home, monkeypatch, fake.url, agent_context=ctx)
    p.sync_turn("u", "a")
    p.on_memory_write("add", "user", "fact")
    assert "only the primary agent" in call(p, "retaindb_remember", content="x")["error"]
    assert "results" in call(p, "retaindb_search", query="x")
    assert fake.sessions == [] and fake.memories == {} and p.pending() == []


def test_server_error_is_a_tool_error_and_the_turn_stays_queued(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url)
    fake.fail(500, times=1, path="/v1/memory/search")
    assert call(p, "retaindb_search", query="x")["error"] == \
        "retaindb: POST /v1/memory/search returned HTTP 500: injected failure"
    fake.fail(502, times=1, path="/v1/memory/ingest")
    p.sync_turn("first turn", "reply one")
    [row] = p.pending()
    assert "HTTP 502" in row["last_error"]
    p.sync_turn("second turn", "reply two")  # drains the kept row first, in order
    assert [s["messages"][0]["content"] for s in fake.sessions] == ["first turn", "second turn"]
    assert p.pending() == []


def test_timeout_is_a_tool_error_and_an_empty_prefetch(hermes_home, monkeypatch, fake):
    p = make(hermes_home, monkeypatch, fake.url)
    fake.stall(5.0)
    assert "timed out" in call(p, "retaindb_profile")["error"]
    assert p.prefetch("what do I like") == ""
    assert p.recall_status()["ok"] is False


def test_server_down_keeps_turns_until_it_is_back(hermes_home, monkeypatch, fake):
    down = make(hermes_home, monkeypatch, closed_port_url())
    assert "error" in call(down, "retaindb_search", query="x")
    down.queue_prefetch("what do I like")
    assert down.prefetch("what do I like") == ""
    down.sync_turn("remember the milk", "ok, noted")
    down.on_memory_write("add", "user", "fact")
    down.shutdown()
    assert len(RetainDBProvider.pending(down)) == 1
    up = make(hermes_home, monkeypatch, fake.url)  # initialize replays the queue
    up.shutdown()
    assert [m["content"] for m in fake.sessions[0]["messages"]] == ["remember the milk", "ok, noted"]
    assert up.pending() == []


def test_soul_md_seeds_the_agent_identity_once(hermes_home, monkeypatch, fake):
    (hermes_home / "SOUL.md").write_text("You are Hermes, a careful research assistant.\n")
    make(hermes_home, monkeypatch, fake.url).shutdown()
    make(hermes_home, monkeypatch, fake.url).shutdown()  # same content: not sent again
    assert fake.seeds == [{"agent": "hermes", "project": "proj-x", "source": "soul_md",
                           "content": "You are Hermes, a careful research assistant."}]
    (hermes_home / "SOUL.md").write_text("You are Hermes, now terse.\n")
    make(hermes_home, monkeypatch, fake.url, agent_context="subagent").shutdown()  # subagents never seed
    make(hermes_home, monkeypatch, fake.url).shutdown()
    assert [s["content"] for s in fake.seeds][-1] == "You are Hermes, now terse." and len(fake.seeds) == 2


def test_availability_and_schema(hermes_home, monkeypatch):
    monkeypatch.delenv("RETAINDB_API_KEY", raising=False)
    p = RetainDBProvider()
    assert not p.is_available() and "RETAINDB_API_KEY" in p.unavailable_reason()
    (hermes_home / ".env").write_text("RETAINDB_API_KEY=abc\n")
    assert p.is_available()
    assert [(f.key, f.env_var) for f in p.get_config_schema() if f.secret] == [("api_key", "RETAINDB_API_KEY")]


def test_setup_wizard_configures_retaindb_and_providers_list_shows_it_available(hermes_home, monkeypatch):
    monkeypatch.delenv("RETAINDB_API_KEY", raising=False)  # restored after the wizard exports it
    monkeypatch.delenv("RETAINDB_BASE_URL", raising=False)
    assert listed(hermes_home, "retaindb")["available"] is False
    out = wizard(hermes_home, "retaindb", "api_key=rdb-wizard", "project=acme")
    assert out["env"] == ["RETAINDB_API_KEY"] and out["config"]["retaindb.project"] == "acme"
    assert listed(hermes_home, "retaindb") == {"available": True, "active": True, "reason": ""}
    s = load_settings(hermes_home)
    assert (s["api_key"], s["project"], s["base_url"]) == ("rdb-wizard", "acme", "https://api.retaindb.com")


def test_a_turn_through_the_memory_manager_recalls_and_survives_a_dead_server(hermes_home, monkeypatch, fake):
    for url, alive in ((fake.url, True), (closed_port_url(), False)):
        p = make(hermes_home, monkeypatch, url)
        m = MemoryManager(prefetch_timeout=5.0)
        assert m.add_provider(p)
        m.initialize_all("sess-1", hermes_home=str(hermes_home), agent_context="primary", user_id="carol")
        stored = json.loads(m.handle_tool_call("retaindb_remember", {"content": "Carol grows tomatoes"}))
        assert ("error" in stored) is not alive
        m.queue_prefetch_all("what does Carol grow")
        assert m.flush_pending(10)
        message = m.build_user_message("what does Carol grow")
        assert message.startswith("what does Carol grow")
        assert ("Carol grows tomatoes" in message) is alive
        m.sync_all("Also basil", "Lovely")
        assert m.flush_pending(10)
        m.shutdown_all()
    assert [s["messages"][0]["content"] for s in fake.sessions] == ["Also basil"]
