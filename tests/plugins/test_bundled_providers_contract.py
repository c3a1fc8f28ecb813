"""The provider contract, checked on every bundled external provider (each against its own fake).

The ABC's rules (providers/base.py): no hook ever raises, whatever shape the history it is handed has;
a tool call with a badly typed argument answers ``{"error": ...}`` naming the argument instead of raising;
``shutdown()`` leaves no thread of the provider behind.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.plugins.mem0 import Mem0Provider
from hermes_memory.plugins.retaindb import RetainDBProvider
from hermes_memory.providers.base import MemoryProvider
from tests.helpers.http import LocalHTTPServer
from tests.plugins.fakes.hindsight import FakeHindsight
from tests.plugins.fakes.honcho import FakeHoncho
from tests.plugins.fakes.mem0 import FakeMem0
from tests.plugins.fakes.openviking import FakeOpenViking
from tests.plugins.fakes.retaindb import FakeRetainDB
from tests.plugins.fakes.supermemory import FakeSupermemory
from tests.plugins.helpers import byterover as t_brv
from tests.plugins.helpers import hindsight as t_hs
from tests.plugins.helpers import honcho as t_honcho
from tests.plugins.helpers import mem0 as t_mem0
from tests.plugins.helpers import openviking as t_ov
from tests.plugins.helpers import retaindb as t_rdb
from tests.plugins.helpers import supermemory as t_sm

PROVIDERS = ["mem0", "honcho", "supermemory", "retaindb", "hindsight", "openviking", "byterover"]


@pytest.fixture()
def build(hermes_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """``build(name)`` → a primary-context provider initialised against its fake backend (stopped after)."""
    servers: list[Any] = []
    made: list[Any] = []

    def _build(name: str) -> Any:
        srv: LocalHTTPServer | None
        p: MemoryProvider
        if name == "mem0":
            srv = FakeMem0(api_key=t_mem0.KEY).start()
            p = t_mem0.make(hermes_home, monkeypatch, srv.url)
        elif name == "honcho":
            srv = FakeHoncho(api_key=t_honcho.KEY).start()
            p = t_honcho.make(hermes_home, monkeypatch, srv.url)
        elif name == "supermemory":
            srv = FakeSupermemory(api_key=t_sm.KEY).start()
            p = t_sm.make(hermes_home, monkeypatch, srv.url)
        elif name == "retaindb":
            srv = FakeRetainDB(api_key=t_rdb.KEY).start()
            p = t_rdb.make(hermes_home, monkeypatch, srv.url)
        elif name == "hindsight":
            for var in ("HINDSIGHT_API_URL", "HINDSIGHT_API_KEY", "HINDSIGHT_BANK_ID", "HINDSIGHT_TIMEOUT"):
                monkeypatch.delenv(var, raising=False)
            srv = FakeHindsight().start()
            t_hs.configure(hermes_home, srv.url)
            p = t_hs.make([], hermes_home)
        elif name == "openviking":
            for var in t_ov.ENV:
                monkeypatch.delenv(var, raising=False)
            srv = FakeOpenViking(user="alice").start()
            t_ov.configure(hermes_home, srv.url)
            p = t_ov.make(hermes_home)
        else:
            bindir = tmp_path / "bin"
            bindir.mkdir(exist_ok=True)
            exe = bindir / "brv"
            exe.write_text(f"#!{sys.executable}\n" + t_brv.FAKE.read_text(encoding="utf-8"), encoding="utf-8")
            exe.chmod(0o755)
            monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
            monkeypatch.setenv("FAKE_BRV_LOG", str(tmp_path / "brv.jsonl"))
            monkeypatch.delenv("BRV_PATH", raising=False)
            srv = None
            p = t_brv.make(hermes_home)
        servers.append(srv)
        made.append(p)
        _build.server = srv  # type: ignore[attr-defined]  # the fake behind the provider built last
        return p

    yield _build
    for p in made:
        p.shutdown()
    for srv in servers:
        if srv is not None:
            srv.stop()


ODD_HISTORIES: list[Any] = [
    None,
    [],
    [None],
    ["a bare string instead of a message"],
    [{"role": "user"}],
    [{"content": "a message without a role, long enough to count"}],
    [{"role": "user", "content": [{"type": "text", "text": "multi-part content from a vision model"}]}],
    [{"role": "user", "content": "what did we decide about the database?"}, 42,
     {"role": "assistant", "content": "Postgres 16, with nightly backups 🙂"}],
]


@pytest.mark.parametrize("name", PROVIDERS)
def test_history_hooks_never_raise_on_odd_message_shapes(build: Any, name: str) -> None:
    p = build(name)
    for history in ODD_HISTORIES:
        p.sync_turn("what did we decide about the database?", "Postgres 16.", messages=history)
        p.on_pre_compress(history)
        p.on_session_end(history)


def test_openviking_sync_turn_never_raises_on_an_unsendable_session_id(build: Any) -> None:
    """A session id httpx cannot put in a URL is a failed write (recorded), not an exception out of the hook."""
    p = build("openviking")
    p.sync_turn("remember that the deploy key rotates monthly", "Noted.", session_id="s" * 70_000)
    assert p._last_write_error


@pytest.mark.parametrize(("name", "tool", "field"), [
    ("openviking", "viking_read", "uri"),
    ("retaindb", "retaindb_read_file", "file_id"),
    ("retaindb", "retaindb_forget", "memory_id"),
])
def test_an_id_too_long_for_a_url_is_a_tool_error(build: Any, name: str, tool: str, field: str) -> None:
    """httpx raises InvalidURL (not an HTTPError) for a URL over 65536 chars: it must become a tool error."""
    p = build(name)
    value = ("viking://resources/" if name == "openviking" else "") + "x" * 70_000
    out = json.loads(p.handle_tool_call(tool, {field: value}))
    assert "error" in out, out


BAD_NUMBERS: list[tuple[str, str, dict[str, Any], str]] = [
    ("mem0", "mem0_search", {"query": "database", "top_k": "many"}, "top_k"),
    ("honcho", "honcho_search", {"query": "database", "max_tokens": "lots"}, "max_tokens"),
    ("supermemory", "supermemory_search", {"query": "database", "limit": "ten"}, "limit"),
    ("retaindb", "retaindb_search", {"query": "database", "top_k": "many"}, "top_k"),
    ("retaindb", "retaindb_search", {"query": "database", "top_k": ["x"]}, "top_k"),
    ("retaindb", "retaindb_list_files", {"limit": "all"}, "limit"),
    ("retaindb", "retaindb_remember", {"content": "likes tea", "importance": "high"}, "importance"),
]


@pytest.mark.parametrize(("name", "tool", "args", "field"), BAD_NUMBERS,
                         ids=[f"{t}-{f}-{type(a[f]).__name__}" for _, t, a, f in BAD_NUMBERS])
def test_a_badly_typed_number_argument_is_a_tool_error_naming_it(build: Any, name: str, tool: str,
                                                                  args: dict[str, Any], field: str) -> None:
    p = build(name)
    out = json.loads(p.handle_tool_call(tool, args))
    assert field in out["error"], out


def test_hindsight_a_prefetch_cancelled_by_a_session_switch_dies_quietly(build: Any) -> None:
    """The switch cancels the queued future; the worker must not then crash setting its result."""
    crashes: list[BaseException] = []
    old_hook = threading.excepthook

    def record(args: threading.ExceptHookArgs) -> None:
        if args.exc_value is not None:
            crashes.append(args.exc_value)

    threading.excepthook = record
    try:
        p = build("hindsight")
        for i in range(5):
            p.queue_prefetch(f"what do you remember about project number {i}?")
            p.on_session_switch(f"s-next-{i}")
        for t in [t for t in threading.enumerate() if t.name == "hindsight-prefetch"]:
            t.join(10)
    finally:
        threading.excepthook = old_hook
    assert crashes == []


def test_hindsight_shutdown_leaves_no_loop_or_executor_threads(build: Any) -> None:
    p = build("hindsight")
    before = set(threading.enumerate())
    assert "error" not in json.loads(p.handle_tool_call("hindsight_recall", {"query": "anything about tea"}))
    started = [t for t in threading.enumerate() if t not in before]
    assert started  # the client's loop (and its executor) are running
    p.shutdown()
    for t in started:
        t.join(5)
    assert [t.name for t in started if t.is_alive()] == []


@pytest.mark.parametrize("top_k", ["3", 3.0, 3])
def test_a_number_sent_as_a_string_or_float_is_still_accepted(build: Any, top_k: Any) -> None:
    p = build("retaindb")
    assert "error" not in json.loads(p.handle_tool_call("retaindb_search", {"query": "database", "top_k": top_k}))


def test_byterover_text_with_a_nul_byte_is_an_error_not_an_exception(build: Any) -> None:
    """subprocess refuses arguments containing NUL with ValueError (not OSError): tools and hooks must survive it."""
    p = build("byterover")
    assert "error" in json.loads(p.handle_tool_call("brv_curate", {"content": "pasted binary \x00 junk"}))
    assert "error" in json.loads(p.handle_tool_call("brv_query", {"query": "what was \x00 pasted"}))
    assert p.prefetch("what did I paste here \x00 yesterday?") == ""
    p.sync_turn("I pasted this binary \x00 blob by mistake", "No problem.")
    p.on_memory_write("add", "user", "name \x00 Ada")
    p.on_pre_compress([{"role": "user", "content": "binary \x00 text from a file"}])
    assert p.recall_status()["ok"] is False


@pytest.mark.parametrize(("name", "tool", "args", "field"), [
    ("openviking", "viking_read", {"uris": 7}, "uris"),
    ("openviking", "viking_read", {"uris": {"a": "viking://resources/x"}}, "uris"),
    ("hindsight", "hindsight_retain", {"content": "likes tea", "tags": 5}, "tags"),
    ("hindsight", "hindsight_retain", {"content": "likes tea", "tags": {"kind": "pref"}}, "tags"),
])
def test_a_list_argument_of_the_wrong_type_is_a_tool_error_naming_it(build: Any, name: str, tool: str,
                                                                      args: dict[str, Any], field: str) -> None:
    p = build(name)
    out = json.loads(p.handle_tool_call(tool, args))
    assert field in out["error"], out


@pytest.mark.parametrize("hostile_id", ["../memories?user_id=alice", "x/../../memories?user_id=alice"])
def test_mem0_selfhosted_a_memory_id_cannot_reach_another_route(hermes_home: Path, monkeypatch: pytest.MonkeyPatch,
                                                                hostile_id: str) -> None:
    """A model-supplied id is one path segment: '../memories?user_id=alice' must not become
    DELETE /memories?user_id=alice (the server's delete-everything route)."""
    fake = FakeMem0(api_key=t_mem0.KEY).start()
    try:
        monkeypatch.setenv("MEM0_API_KEY", t_mem0.KEY)
        monkeypatch.setenv("MEM0_HOST", fake.url)
        monkeypatch.delenv("MEM0_MODE", raising=False)
        p = Mem0Provider()
        p.initialize("sess-1", hermes_home=str(hermes_home), platform="cli", agent_context="primary", user_id="alice")
        assert "error" not in json.loads(p.handle_tool_call("mem0_add", {"content": "Alice speaks Portuguese"}))
        out = json.loads(p.handle_tool_call("mem0_delete", {"memory_id": hostile_id}))
        update = json.loads(p.handle_tool_call("mem0_update", {"memory_id": hostile_id, "text": "gone"}))
        p.shutdown()
    finally:
        fake.stop()
    assert "error" in out and "error" in update
    assert [m["memory"] for m in fake.memories.values()] == ["Alice speaks Portuguese"]
    assert fake.calls("DELETE", "^/memories$") == []


@pytest.mark.parametrize(("tool", "field"), [("retaindb_forget", "memory_id"), ("retaindb_delete_file", "file_id"),
                                             ("retaindb_read_file", "file_id")])
def test_retaindb_an_id_stays_one_path_segment(build: Any, tool: str, field: str) -> None:
    p = build("retaindb")
    seen = len(build.server.calls())
    json.loads(p.handle_tool_call(tool, {field: "../memory/profile/carol?x=1"}))
    paths = [r.path for r in build.server.calls()[seen:]]
    assert paths and not any(path.startswith("/v1/memory/profile") for path in paths), paths


def test_honcho_a_conclusion_id_stays_one_path_segment(build: Any) -> None:
    """honcho-ai does not escape ids it puts in a path: '../../peers/x?y=1' reached DELETE /v3/workspaces/peers/x."""
    p = build("honcho")
    seen = len(build.server.calls())
    out = json.loads(p.handle_tool_call("honcho_conclude", {"delete_id": "../../peers/x?y=1"}))
    deletes = [r for r in build.server.calls()[seen:] if r.method == "DELETE"]
    assert "error" in out
    assert deletes and all(r.path.startswith("/v3/workspaces/ws1/") and not r.query for r in deletes), \
        [(r.path, r.query) for r in deletes]


@pytest.mark.parametrize("target", ["env_file", "home_dir", "other_env"])
def test_openviking_add_resource_refuses_to_upload_secrets(build: Any, hermes_home: Path, tmp_path: Path,
                                                           target: str) -> None:
    """viking_add_resource uploads local paths; the secrets file (or a folder holding it) must never leave."""
    (hermes_home / ".env").write_text("OPENAI_API_KEY=sk-live-very-secret-value-1234567890\n")
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / ".env.local").write_text("TOKEN=abc\n")
    path = {"env_file": hermes_home / ".env", "home_dir": hermes_home,
            "other_env": tmp_path / "proj" / ".env.local"}[target]
    p = build("openviking")
    out = json.loads(p.handle_tool_call("viking_add_resource", {"url": str(path)}))
    assert "error" in out, out
    assert build.server.calls(path_re="temp_upload") == []


def test_hindsight_a_prefetch_queued_just_before_shutdown_starts_no_new_client(build: Any) -> None:
    """The prefetch thread used to create a fresh client (loop thread + aiohttp session) after shutdown."""
    p = build("hindsight")
    before = set(threading.enumerate())
    for _ in range(5):
        p.initialize("s1", hermes_home=str(p._home), platform="cli", agent_context="primary")
        p.queue_prefetch("what do you remember about my project?")
        p.shutdown()
        for t in [t for t in threading.enumerate() if t.name == "hindsight-prefetch"]:
            t.join(10)
    assert p._client is None
    left = [t for t in threading.enumerate() if t not in before and t.name.startswith(("hindsight", "asyncio"))]
    for t in left:
        t.join(5)
    assert [t.name for t in left if t.is_alive()] == []


@pytest.mark.parametrize("setting", [{"agent": "hermès"}, {"user": "Zoë"}])
def test_openviking_a_non_ascii_identity_is_a_clear_error_not_an_exception(hermes_home: Path,
                                                                           monkeypatch: pytest.MonkeyPatch,
                                                                           setting: dict[str, str]) -> None:
    """Account, user and agent travel in HTTP headers, which are ASCII only; the platform's user_id may not be."""
    for var in t_ov.ENV:
        monkeypatch.delenv(var, raising=False)
    with FakeOpenViking(user="alice") as srv:
        t_ov.configure(hermes_home, srv.url, **setting)
        p = t_ov.make(hermes_home)
        out = json.loads(p.handle_tool_call("viking_search", {"query": "green tea"}))
        assert p.prefetch("what about green tea?") == ""
        p.sync_turn("I like green tea a lot", "Noted.")
        p.on_memory_write("add", "user", "likes green tea")
        p.shutdown()
    key = next(iter(setting))
    assert key in out["error"] and "ASCII" in out["error"], out


@pytest.mark.parametrize("user_id", ["eve/../bob", ".."])
def test_retaindb_a_platform_user_id_stays_one_path_segment(hermes_home: Path, monkeypatch: pytest.MonkeyPatch,
                                                            user_id: str) -> None:
    """user_id comes from the platform (a gateway username can be anything): 'eve/../bob' read bob's profile."""
    srv = FakeRetainDB(api_key=t_rdb.KEY).start()
    try:
        monkeypatch.setenv("RETAINDB_API_KEY", t_rdb.KEY)
        monkeypatch.setenv("RETAINDB_BASE_URL", srv.url)
        p = RetainDBProvider()
        p.initialize("s1", hermes_home=str(hermes_home), platform="cli", agent_context="primary",
                     user_id=user_id)
        p.handle_tool_call("retaindb_profile", {})
        p.prefetch("what do you know about my plans for the weekend?")
        p.shutdown()
    finally:
        srv.stop()
    profile_paths = [r.path for r in srv.calls() if "/profile/" in r.path]
    assert profile_paths and not any(path.startswith("/v1/memory/profile/bob") for path in profile_paths), profile_paths
