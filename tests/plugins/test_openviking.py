"""OpenViking provider (httpx) against a fake OpenViking server on 127.0.0.1 (tests/plugins/fakes/openviking.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from hermes_memory.plugins import openviking
from hermes_memory.plugins.openviking import OpenVikingProvider, forget_uri_problem
from tests.helpers.http import closed_port_url
from tests.helpers.values import present
from tests.plugins.fakes.openviking import FakeOpenViking
from tests.plugins.helpers.openviking import ENV, configure, make


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ENV:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture()
def server() -> Iterator[FakeOpenViking]:
    with FakeOpenViking(user="alice") as srv:
        yield srv


def call(p: OpenVikingProvider, tool: str, **args: object) -> dict:
    return json.loads(p.handle_tool_call(tool, args))


def test_register_and_plugin_yaml() -> None:
    got = []

    class Ctx:
        def register_memory_provider(self, provider):
            got.append(provider)

    openviking.register(Ctx())
    assert [p.name for p in got] == ["openviking"]
    meta = yaml.safe_load((Path(openviking.__file__).parent / "plugin.yaml").read_text())
    assert meta["name"] == "openviking" and meta["description"] and meta["version"]


def test_is_available_is_configuration_only(server: FakeOpenViking, hermes_home: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    p = OpenVikingProvider()
    assert not p.is_available() and "OPENVIKING_URL" in p.unavailable_reason()
    monkeypatch.setenv("OPENVIKING_URL", "http://user:pw@127.0.0.1:1933")
    assert not p.is_available() and "user info" in p.unavailable_reason()
    monkeypatch.setenv("OPENVIKING_URL", "ftp://127.0.0.1")
    assert "http(s)" in p.unavailable_reason()
    monkeypatch.setenv("OPENVIKING_URL", server.url)
    assert p.is_available()
    p.initialize("s1", hermes_home=str(hermes_home), platform="cli", agent_context="primary")
    assert server.requests == []


def test_remember_search_read_browse_forget(server: FakeOpenViking, hermes_home: Path) -> None:
    configure(hermes_home, server.url)
    p = make(hermes_home)
    assert len(p.get_tool_schemas()) == 6
    stored = call(p, "viking_remember", content="Alice keeps three beehives in her garden")
    uri = stored["uri"]
    assert stored["status"] == "stored"
    assert uri.startswith("viking://user/alice/memories/preferences/mem_") and uri.endswith(".md")
    write = server.calls("POST", "/content/write")[-1].body
    assert write == {"uri": uri, "content": "Alice keeps three beehives in her garden", "mode": "create"}

    found = call(p, "viking_search", query="how many beehives?")
    assert found["total"] == 1 and found["results"][0]["uri"] == uri
    assert set(found["results"][0]) == {"uri", "type", "score", "abstract", "related"}
    assert server.calls("POST", "/search/find")[-1].body == {"query": "how many beehives?", "limit": 10}

    read = call(p, "viking_read", uri=uri, level="full")
    assert read == {"uri": uri, "level": "full", "content": "Alice keeps three beehives in her garden"}
    over = call(p, "viking_read", uri=uri)  # overview of a file falls back to content/read
    assert over["content"].startswith("Alice keeps")
    folder = call(p, "viking_read", uri="viking://user/alice/memories", level="abstract")
    assert folder["content"].startswith("# viking://user/alice/memories")

    listing = call(p, "viking_browse", action="list", path="viking://user/alice/memories")
    assert listing["entries"] == [{"name": "preferences", "uri": "viking://user/alice/memories/preferences",
                                   "type": "dir", "abstract": ""}]
    assert call(p, "viking_browse", action="stat", path=uri)["entry"]["isDir"] is False
    assert len(call(p, "viking_browse", action="tree", path="viking://user")["entries"]) == 1

    assert call(p, "viking_forget", uri=uri) == {"status": "forgotten", "uri": uri}
    delete = server.calls("DELETE", "/api/v1/fs")[-1]
    assert delete.query == {"uri": uri, "recursive": "false"}
    assert call(p, "viking_search", query="beehives")["total"] == 0


def test_deep_search_uses_the_session_and_scope(server: FakeOpenViking, hermes_home: Path) -> None:
    configure(hermes_home, server.url)
    p = make(hermes_home, session="deep-1")
    server.files["viking://resources/docs/intro.md"] = "OpenViking stores context as files"
    p.sync_turn("tell me about context files", "sure", session_id="deep-1")
    out = call(p, "viking_search", query="context files", mode="deep", scope="viking://resources", limit=3)
    assert out["results"][0]["uri"] == "viking://resources/docs/intro.md"
    body = server.calls("POST", "/search/search")[-1].body
    assert body == {"query": "context files", "limit": 3, "target_uri": "viking://resources", "session_id": "deep-1"}


def test_read_several_uris_caps_each(server: FakeOpenViking, hermes_home: Path) -> None:
    configure(hermes_home, server.url)
    p = make(hermes_home)
    for i in range(3):
        server.files[f"viking://resources/big{i}.md"] = "x" * 9000
    out = call(p, "viking_read", uris=[f"viking://resources/big{i}.md" for i in range(3)], level="full")
    assert [len(r["content"]) for r in out["results"]] == [2500 + len("\n…[truncated]")] * 3
    one = call(p, "viking_read", uri="viking://resources/big0.md", level="full")
    assert len(one["content"]) == 8000 + len("\n…[truncated]")
    assert "at most 3" in call(p, "viking_read", uris=["viking://a"] * 4)["error"]
    assert "not a viking:// URI" in call(p, "viking_read", uri="/etc/passwd")["error"]


def test_forget_refuses_anything_but_user_memory_files(server: FakeOpenViking, hermes_home: Path) -> None:
    configure(hermes_home, server.url)
    p = make(hermes_home)
    for uri in ("viking://resources/docs/a.md", "viking://user/alice/memories/preferences",
                "viking://user/alice/memories/.overview.md", "viking://user/alice/memories/x.md?v=1"):
        assert forget_uri_problem(uri)
        assert "error" in call(p, "viking_forget", uri=uri)
    assert forget_uri_problem("viking://user/alice/peers/hermes/memories/events/e1.md") == ""
    assert server.calls("DELETE") == []


def test_add_resource_remote_and_local(server: FakeOpenViking, hermes_home: Path, tmp_path: Path) -> None:
    configure(hermes_home, server.url)
    p = make(hermes_home)
    out = call(p, "viking_add_resource", url="https://example.org/guide", reason="docs")
    assert out == {"status": "added", "root_uri": "viking://resources/guide"}
    assert server.resources[-1]["path"] == "https://example.org/guide" and server.resources[-1]["reason"] == "docs"
    doc = tmp_path / "notes.txt"
    doc.write_text("local notes about pipelines")
    out = call(p, "viking_add_resource", url=str(doc), parent="viking://resources/mine")
    assert out["root_uri"] == "viking://resources/mine/notes_txt"
    (upload,) = server.calls("POST", "/temp_upload")
    assert upload.headers["content-type"].startswith("multipart/form-data") and b"local notes" in upload.raw
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "a.md").write_text("alpha")
    out = call(p, "viking_add_resource", url=str(folder), to="viking://resources/proj")
    assert out["root_uri"] == "viking://resources/proj"
    assert server.uploads[server.resources[-1]["temp_file_id"]][0] == "proj.zip"
    assert "either 'to' or 'parent'" in call(p, "viking_add_resource", url="https://x.org", to="a", parent="b")["error"]
    assert "does not exist" in call(p, "viking_add_resource", url=str(tmp_path / "missing"))["error"]


def test_prefetch_profile_once_and_recall(server: FakeOpenViking, hermes_home: Path) -> None:
    configure(hermes_home, server.url, recall_limit=3)
    server.files["viking://user/alice/memories/profile.md"] = "Alice, beekeeper, lives in Ghent"
    server.files["viking://user/alice/memories/entities/bees.md"] = "The hives are painted blue"
    p = make(hermes_home)
    block = p.prefetch("what colour are the hives?")
    assert block.startswith("## OpenViking Context\n### User profile\nAlice, beekeeper")
    assert "- [memory] viking://user/alice/memories/entities/bees.md: The hives are painted blue" in block
    assert present(p.recall_status())["count"] == 1
    find = server.calls("POST", "/search/find")[-1].body
    assert find["limit"] == 3 and find["score_threshold"] == 0.15
    again = p.prefetch("what colour are the hives?")
    assert "User profile" not in again and "painted blue" in again  # profile once per session
    n = len(server.requests)
    assert p.prefetch("ok") == "" and p.prefetch("hey") == ""
    assert len(server.requests) == n


def test_sync_turn_registers_the_session_then_sends_parts(server: FakeOpenViking, hermes_home: Path) -> None:
    configure(hermes_home, server.url)
    p = make(hermes_home, session="sess-1")
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "earlier"}, {"role": "assistant", "content": "old"},
        {"role": "user", "content": "run the build"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": "{\"cmd\": \"make\"}"}},
            {"id": "c2", "type": "function", "function": {"name": "viking_search", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "build ok"},
        {"role": "tool", "tool_call_id": "c2", "content": "[]"},
        {"role": "assistant", "content": "The build passed."},
    ]
    p.sync_turn("run the build", "The build passed.", session_id="sess-1", messages=messages)
    paths = [r.path for r in server.requests]
    assert paths == ["/api/v1/sessions", "/api/v1/sessions/sess-1/messages/batch"]
    assert server.requests[0].body == {"session_id": "sess-1"}
    sent = server.sessions["sess-1"]["messages"]
    assert sent[0] == {"role": "user", "parts": [{"type": "text", "text": "run the build"}]}
    assert sent[1]["parts"] == [{"type": "tool", "tool_id": "c1", "tool_name": "terminal",
                                 "tool_input": "{\"cmd\": \"make\"}", "tool_status": "completed",
                                 "tool_output": "build ok"}]  # the recall tool call is dropped
    assert sent[2] == {"role": "assistant", "parts": [{"type": "text", "text": "The build passed."}]}
    p.sync_turn("second turn here", "ok", session_id="sess-1")
    assert len([r for r in server.requests if r.path == "/api/v1/sessions"]) == 1  # registered once


def test_per_message_fallback_without_batch_route(hermes_home: Path) -> None:
    with FakeOpenViking(batch_route=False) as srv:
        configure(hermes_home, srv.url)
        p = make(hermes_home, session="old-server")
        p.sync_turn("hello there friend", "hi", session_id="old-server")
        assert [m["role"] for m in srv.sessions["old-server"]["messages"]] == ["user", "assistant"]
        assert len(srv.calls("POST", "/messages")) == 3  # batch 404 + two single messages


def test_session_end_commits_and_switch_moves_writes(server: FakeOpenViking, hermes_home: Path) -> None:
    configure(hermes_home, server.url)
    p = make(hermes_home, session="A")
    p.on_session_end([])  # nothing sent yet: no commit
    assert server.calls("POST", "/commit") == []
    p.sync_turn("I adopted a greyhound named Pixel", "Lovely!", session_id="A")
    p.on_session_switch("B", parent_session_id="A")
    assert [r.path for r in server.calls("POST", "/commit")] == ["/api/v1/sessions/A/commit"]
    assert server.calls("POST", "/commit")[0].body == {"keep_recent_count": 0}
    p.sync_turn("Pixel likes long walks", "Noted.", session_id="B")
    assert server.sessions["B"]["messages"][0]["parts"][0]["text"] == "Pixel likes long walks"
    registered = [r.body["session_id"] for r in server.requests if r.path == "/api/v1/sessions"]
    assert registered == ["A", "B"]  # B was registered before its first message
    b_first = next(i for i, r in enumerate(server.requests) if "/sessions/B/" in r.path)
    b_reg = next(i for i, r in enumerate(server.requests) if r.path == "/api/v1/sessions" and r.body["session_id"] == "B")
    assert b_reg < b_first
    p.on_session_end([])
    assert server.calls("POST", "/commit")[-1].path == "/api/v1/sessions/B/commit"
    # the fake's commit "extracts" user text into memories, which recall then finds
    assert "greyhound" in p.prefetch("what is my greyhound called?")


def test_rewound_switch_does_not_commit(server: FakeOpenViking, hermes_home: Path) -> None:
    configure(hermes_home, server.url)
    p = make(hermes_home, session="A")
    p.sync_turn("some turn text", "ok", session_id="A")
    p.on_session_switch("A2", parent_session_id="A", rewound=True)
    assert server.calls("POST", "/commit") == []


def test_memory_write_mirror(server: FakeOpenViking, hermes_home: Path) -> None:
    configure(hermes_home, server.url, agent="hermes")
    p = make(hermes_home)
    p.on_memory_write("add", "user", "Prefers metric units")
    p.on_memory_write("replace", "memory", "Project uses uv")
    p.on_memory_write("remove", "memory", "gone")
    uris = [r.body["uri"] for r in server.calls("POST", "/content/write")]
    assert uris[0].startswith("viking://user/alice/peers/hermes/memories/preferences/mem_")
    assert uris[1].startswith("viking://user/alice/peers/hermes/memories/patterns/mem_")
    assert len(uris) == 2
    assert server.requests[-1].headers["x-openviking-actor-peer"] == "hermes"


@pytest.mark.parametrize("context", ["subagent", "cron", "flush"])
def test_non_primary_contexts_never_write(server: FakeOpenViking, hermes_home: Path, context: str) -> None:
    configure(hermes_home, server.url)
    p = make(hermes_home, context=context)
    p.sync_turn("a long user message", "reply", session_id="s1")
    p.on_memory_write("add", "user", "x")
    p.on_session_switch("s2")
    p.on_session_end([])
    for tool, args in (("viking_remember", {"content": "x"}),
                       ("viking_forget", {"uri": "viking://user/alice/memories/a.md"}),
                       ("viking_add_resource", {"url": "https://example.org"})):
        assert context in call(p, tool, **args)["error"]
    writes = [r for r in server.requests if r.method != "GET" and "/search/" not in r.path]
    assert writes == []
    assert call(p, "viking_search", query="anything")["total"] == 0  # reads still work


def test_error_envelope_becomes_a_tool_error(server: FakeOpenViking, hermes_home: Path) -> None:
    configure(hermes_home, server.url)
    p = make(hermes_home)
    server.fail(500, {"status": "error", "error": {"code": "INTERNAL", "message": "vector index corrupt"}}, times=None)
    err = call(p, "viking_search", query="anything")
    assert "HTTP 500" in err["error"] and "INTERNAL: vector index corrupt" in err["error"]
    assert err["tool"] == "viking_search"
    assert p.prefetch("anything at all") == ""
    assert present(p.recall_status())["ok"] is False
    p.sync_turn("user text here", "ok", session_id="s1")
    assert "vector index corrupt" in present(p.recall_status())["write_error"]
    server.clear_faults()
    missing = call(p, "viking_read", uri="viking://user/alice/memories/none.md", level="full")
    assert "NOT_FOUND" in missing["error"]


def test_trusted_mode_and_api_key_headers(hermes_home: Path) -> None:
    with FakeOpenViking(api_key="ov-key") as srv:
        configure(hermes_home, srv.url)
        p = make(hermes_home)
        assert "HTTP 401" in call(p, "viking_search", query="x")["error"]
        (hermes_home / ".env").write_text("OPENVIKING_API_KEY=ov-key\n")
        q = make(hermes_home)
        assert call(q, "viking_search", query="unknown words")["total"] == 0
        headers = srv.requests[-1].headers
        assert headers["x-api-key"] == "ov-key" and headers["authorization"] == "Bearer ov-key"
        assert headers["user-agent"].startswith("hermes-memory-openviking/")
    with FakeOpenViking() as srv:  # trusted mode: identity headers instead of a key
        (hermes_home / ".env").write_text("")
        configure(hermes_home, srv.url, account="acme", user="bob")
        assert call(make(hermes_home), "viking_search", query="unknown words")["total"] == 0
        headers = srv.requests[-1].headers
        assert headers["x-openviking-account"] == "acme" and headers["x-openviking-user"] == "bob"
        assert "x-api-key" not in headers


def test_timeout(server: FakeOpenViking, hermes_home: Path) -> None:
    configure(hermes_home, server.url, timeout=0.3, recall_timeout_seconds=0.3)
    p = make(hermes_home)
    server.stall(3)
    assert "within 0.3 s" in call(p, "viking_search", query="slow")["error"]
    assert p.prefetch("slow recall query") == ""
    p.sync_turn("slow write text", "ok", session_id="s1")
    assert "within 0.3 s" in present(p.recall_status())["write_error"]


def test_backend_down(hermes_home: Path) -> None:
    url = closed_port_url()  # nothing listens on that port
    configure(hermes_home, url)
    p = make(hermes_home)
    assert p.is_available()
    assert "cannot reach OpenViking" in call(p, "viking_browse", action="list")["error"]
    assert "cannot reach OpenViking" in call(p, "viking_remember", content="x")["error"]
    assert p.prefetch("is anybody there?") == ""
    p.sync_turn("a message", "reply", session_id="s1")
    p.on_memory_write("add", "user", "x")
    p.on_session_switch("s2")
    p.on_session_end([])
    p.shutdown()


def test_bad_tool_arguments(server: FakeOpenViking, hermes_home: Path) -> None:
    configure(hermes_home, server.url)
    p = make(hermes_home)
    assert "non-empty 'query'" in call(p, "viking_search")["error"]
    assert "mode must be" in call(p, "viking_search", query="x", mode="turbo")["error"]
    assert "scope must be" in call(p, "viking_search", query="x", scope="/tmp")["error"]
    assert "action must be" in call(p, "viking_browse", action="rm")["error"]
    assert "unknown OpenViking tool" in call(p, "viking_nope")["error"]
    assert server.requests == []


def test_config_schema_and_wizard_section(hermes_home: Path, tmp_path: Path) -> None:
    p = OpenVikingProvider()
    fields = {f.key: f for f in p.get_config_schema()}
    assert fields["api_key"].secret and fields["api_key"].env_var == "OPENVIKING_API_KEY"
    assert fields["endpoint"].required
    other = tmp_path / "wizard-home"
    other.mkdir()
    (other / "config.yaml").write_text(yaml.safe_dump({"openviking": {"endpoint": "http://127.0.0.1:1933",
                                                                       "user": "bob"}}))
    assert not OpenVikingProvider().is_available()  # $HERMES_HOME has no endpoint
    q = OpenVikingProvider(hermes_home=str(other))
    assert q.is_available()
    q.initialize("s", hermes_home=str(other), platform="cli", agent_context="primary")
    assert q._settings["user"] == "bob" and q._settings["endpoint"] == "http://127.0.0.1:1933"


def test_B17_failed_recall_is_not_cached_as_empty(server: FakeOpenViking, hermes_home: Path) -> None:
    configure(hermes_home, server.url)
    server.files["viking://user/alice/memories/entities/wifi.md"] = "The office wifi password rotates on Mondays"
    p = make(hermes_home)
    server.files["viking://user/alice/memories/profile.md"] = "Alice, office manager"
    server.fail(503, {"status": "error", "error": {"code": "UNAVAILABLE", "message": "warming up"}},
                times=None, path="/api/v1/")
    assert p.prefetch("when does the wifi password rotate?") == ""
    server.clear_faults()
    block = p.prefetch("when does the wifi password rotate?")
    assert "Mondays" in block and "Alice, office manager" in block  # neither recall nor profile was cached


def test_sync_turn_with_a_new_session_id_moves_writes_there(server: FakeOpenViking, hermes_home: Path) -> None:
    configure(hermes_home, server.url)
    p = make(hermes_home, session="A")
    p.sync_turn("first session words", "ok", session_id="A")
    p.sync_turn("second session words", "ok", session_id="B")  # no on_session_switch call
    assert [r.path for r in server.calls("POST", "/commit")] == ["/api/v1/sessions/A/commit"]
    assert server.sessions["B"]["messages"][0]["parts"][0]["text"] == "second session words"
    assert server.sessions["A"]["commits"] == 1 and server.sessions["B"]["commits"] == 0


def test_wizard_discovery_and_a_manager_turn(server: FakeOpenViking, hermes_home: Path) -> None:
    """The setup wizard configures it non-interactively, `providers list` shows it available, and a
    MemoryManager turn (prefetch, tool routing, sync on the worker, session switch, shutdown) uses it."""
    from typer.testing import CliRunner

    from hermes_memory.cli.main import app
    from hermes_memory.config import load_config
    from hermes_memory.providers.manager import create_memory_manager

    runner = CliRunner()
    home = ["--home", str(hermes_home)]
    r = runner.invoke(app, [*home, "memory", "setup", "--provider", "openviking", "--set", f"endpoint={server.url}",
                            "--set", "user=alice", "--yes"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, [*home, "providers", "list", "--json"])
    info = next(i for i in json.loads(r.output) if i["name"] == "openviking")
    assert info["available"] and info["source"] == "bundled" and info["description"].startswith("OpenViking")

    server.files["viking://user/alice/memories/entities/car.md"] = "The car is a green Volvo estate"
    manager = create_memory_manager(load_config(hermes_home / "config.yaml"), str(hermes_home))
    manager.initialize_all("m-1", hermes_home=str(hermes_home))
    assert "green Volvo" in manager.prefetch_all("which car do we drive?", session_id="m-1")
    assert "viking_search" in manager.get_all_tool_names()
    assert json.loads(manager.handle_tool_call("viking_search", {"query": "Volvo estate"}))["total"] == 1
    manager.sync_all("We also own a red bicycle", "Noted.", session_id="m-1")
    assert manager.flush_pending(10)
    manager.on_session_switch("m-2", parent_session_id="m-1")
    assert server.sessions["m-1"]["commits"] == 1
    manager.shutdown_all()
    assert manager.errors == {}

# -- the real backend --------------------------------------------------------------------------------------
# openviking-server 0.5.2 from PyPI (its own venv, see tests/backends.py), local vector DB and file store,
# embeddings and VLM from a local OpenAI-compatible endpoint started here (tests/helpers/model_fake.py).


@pytest.fixture(scope="module")
def real_openviking(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    import subprocess

    from tests import backends
    from tests.helpers.model_fake import FakeOpenAIServer, summarise_last_user_message

    exe = backends.ensure("openviking")
    root = tmp_path_factory.mktemp("openviking-real")
    with FakeOpenAIServer(default=summarise_last_user_message) as models:
        conf = root / "ov.conf"
        conf.write_text(json.dumps({
            "storage": {"workspace": str(root / "data"), "vectordb": {"name": "context", "backend": "local"},
                        "agfs": {"backend": "local"}},
            "embedding": {"dense": {"provider": "openai", "api_base": models.base_url, "api_key": "local",
                                    "model": "hash-embed", "dimension": models.dim}},
            "vlm": {"provider": "openai", "api_base": models.base_url, "api_key": "local", "model": "echo"},
        }))
        port = backends.free_port()
        log = root / "server.log"
        with log.open("wb") as fh:
            proc = subprocess.Popen([str(exe), "--config", str(conf), "--host", "127.0.0.1", "--port", str(port)],
                                    cwd=root, env=backends.server_env(root), stdout=fh, stderr=subprocess.STDOUT)
        try:
            backends.wait_http(f"http://127.0.0.1:{port}/health", proc, log)
            yield f"http://127.0.0.1:{port}"
        finally:
            backends.stop(proc)


def _eventually(fn, deadline_s: float = 120.0):
    """Poll ``fn`` until it returns a truthy value (the server indexes writes in the background)."""
    import time

    end = time.monotonic() + deadline_s
    while True:
        value = fn()
        if value or time.monotonic() > end:
            return value
        time.sleep(0.5)


@pytest.mark.slow
@pytest.mark.timeout(1800)  # a first run installs the backend's venv from PyPI (minutes)
def test_real_server_tools_prefetch_sync_and_switch(real_openviking: str, hermes_home: Path) -> None:
    configure(hermes_home, real_openviking, timeout=60, recall_timeout_seconds=30, recall_score_threshold=0.0)
    p = make(hermes_home, session="real-A")
    stored = call(p, "viking_remember", content="Marta keeps three beehives behind the greenhouse")
    uri = stored["uri"]
    assert uri.startswith("viking://user/default/memories/preferences/mem_"), stored

    hit = _eventually(lambda: [r for r in call(p, "viking_search", query="beehives greenhouse")["results"]
                               if r["uri"] == uri])
    assert hit and hit[0]["type"] == "memory"
    assert call(p, "viking_read", uri=uri, level="full")["content"] == "Marta keeps three beehives behind the greenhouse"
    names = [e["name"] for e in call(p, "viking_browse", action="list",
                                     path="viking://user/default/memories/preferences")["entries"]]
    assert uri.rsplit("/", 1)[-1] in names
    assert "beehives" in p.prefetch("how many beehives does Marta keep?")

    # sync: the session is registered, then the turn lands in it
    p.sync_turn("My greyhound is called Pixel", "Lovely name!", session_id="real-A")
    assert present(p.recall_status())["write_error"] is None
    info = p._request("GET", "/api/v1/sessions/real-A")
    assert info["message_count"] == 2
    # switch: the old session is committed, writes move to the new one
    p.on_session_switch("real-B", parent_session_id="real-A")
    assert p._request("GET", "/api/v1/sessions/real-A")["commit_count"] == 1
    p.sync_turn("Pixel is four years old", "Noted.", session_id="real-B")
    assert p._request("GET", "/api/v1/sessions/real-B")["message_count"] == 2
    assert present(p.recall_status())["write_error"] is None

    # a local file becomes a resource (uploaded, parsed and summarised by the server with the local model)
    doc = hermes_home / "kayak.md"
    doc.write_text("Kayak maintenance: rinse with fresh water after every trip.")
    added = call(p, "viking_add_resource", url=str(doc), reason="care guide", wait=True, timeout=120)
    assert added == {"status": "added", "root_uri": "viking://resources/kayak"}, added
    assert _eventually(lambda: [r for r in call(p, "viking_search", query="kayak rinse fresh water")["results"]
                                if r["uri"].startswith("viking://resources/kayak")])
    assert call(p, "viking_read", uri="viking://resources/kayak", level="abstract")["content"]

    # forget, then the file is gone and reading it is a clear tool error from the server
    assert call(p, "viking_forget", uri=uri)["status"] == "forgotten"
    err = call(p, "viking_read", uri=uri, level="full")["error"]
    assert "NOT_FOUND" in err
    p.shutdown()
