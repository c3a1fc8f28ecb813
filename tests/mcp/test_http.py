"""The memory server over streamable HTTP on 127.0.0.1, driven by the official SDK client."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
from pathlib import Path

import anyio
import httpx
import pytest
from starlette.testclient import TestClient

from hermes_memory.config import load_config
from hermes_memory.home import HermesHome
from hermes_memory.mcp.server import HTTP_PATH, URI_MEMORY_MD, URI_SNAPSHOT, MemoryServer
from hermes_memory.memory import MemoryStore
from tests.mcp.helpers import (
    PY,
    HttpServer,
    assert_refused_without_writing,
    call,
    child_env,
    http_session,
    import_claude_code_transcript,
    read_text,
    serve_argv,
)

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def test_http_lists_tools_and_resources_round_trips_memory_and_searches_sessions(hermes_home: Path) -> None:
    import_claude_code_transcript(hermes_home)
    with HttpServer(hermes_home) as srv:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp", srv.url)
        assert srv.info["tools"] == ["memory", "session_search"]

        async def main() -> None:
            async with http_session(srv.url) as s:
                assert {t.name for t in (await s.list_tools()).tools} == {"memory", "session_search"}
                uris = {str(r.uri) for r in (await s.list_resources()).resources}
                assert URI_SNAPSHOT in uris and URI_MEMORY_MD in uris
                r = await call(s, "memory", {"action": "add", "target": "memory", "content": "Over HTTP"})
                assert r["success"] is True and r["message"] == "Entry added."
                r = await call(s, "memory", {"action": "replace", "target": "memory", "old_text": "HTTP",
                                             "content": "Over streamable HTTP"})
                assert r["success"] is True
                assert "Over streamable HTTP" in await read_text(s, URI_MEMORY_MD)
                r = await call(s, "memory", {"action": "remove", "target": "memory", "old_text": "streamable"})
                assert r["success"] is True
                await assert_refused_without_writing(s, hermes_home)
                found = await call(s, "session_search", {"query": "pgbouncer restart"})
                assert found["success"] is True and found["count"] >= 1
                assert "pgbouncer" in json.dumps(found["results"][0]["hits"]).lower()

        anyio.run(main)
    assert MemoryStore(hermes_home / "memories").memory_entries == []


def test_http_sessions_each_get_their_own_frozen_snapshot(hermes_home: Path) -> None:
    MemoryStore(hermes_home / "memories").add("memory", "Known at server start")
    with HttpServer(hermes_home) as srv:

        async def main() -> None:
            async with http_session(srv.url) as first:
                snap1 = await read_text(first, URI_SNAPSHOT)
                async with http_session(srv.url) as second:
                    r = await call(second, "memory", {"action": "add", "target": "memory", "content": "Added later"})
                    assert r["success"] is True
                    assert "Added later" not in await read_text(second, URI_SNAPSHOT)
                assert await read_text(first, URI_SNAPSHOT) == snap1
                assert "Known at server start" in snap1 and "Added later" not in snap1
                assert "Added later" in await read_text(first, URI_MEMORY_MD)
            async with http_session(srv.url) as third:  # a new client session starts from the current files
                assert "Added later" in await read_text(third, URI_SNAPSHOT)

        anyio.run(main)


def test_binding_all_interfaces_without_a_token_is_refused(hermes_home: Path) -> None:
    env = child_env()
    env.pop("HERMES_MCP_TOKEN", None)
    proc = subprocess.run(serve_argv(hermes_home, "--host", "0.0.0.0", "--port", "0", transport="http"),
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 2
    assert "--token" in proc.stderr and "0.0.0.0" in proc.stderr
    assert proc.stdout == ""


def test_a_token_protected_server_refuses_requests_without_the_token(hermes_home: Path) -> None:
    token = "s3cret-token-for-test"
    with HttpServer(hermes_home, "--token", token) as srv:
        assert srv.info["token_required"] is True
        assert token not in srv.stdout_text  # client snippets read it from the environment instead
        assert "HERMES_MCP_TOKEN" in srv.info["clients"]["Codex CLI"]["text"]
        no_token = httpx.post(srv.url, json=INIT, headers=MCP_HEADERS, timeout=30)
        assert no_token.status_code == 401
        wrong = httpx.post(srv.url, json=INIT, headers={**MCP_HEADERS, "Authorization": "Bearer nope"}, timeout=30)
        assert wrong.status_code == 401

        async def main() -> None:
            async with http_session(srv.url, token=token) as s:
                r = await call(s, "memory", {"action": "add", "target": "memory", "content": "Behind a token"})
                assert r["success"] is True

        anyio.run(main)
    assert "Behind a token" in MemoryStore(hermes_home / "memories").memory_entries


def test_a_busy_port_is_refused_with_a_hint(hermes_home: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        proc = subprocess.run(serve_argv(hermes_home, "--port", str(port), transport="http"),
                              capture_output=True, text=True, env=child_env(), timeout=120)
    assert proc.returncode == 1
    assert "already in use" in proc.stderr and "--port" in proc.stderr


def test_readme_run_command_answers_initialize_and_tools_list(tmp_path: Path) -> None:
    """`hermes-memory serve --transport http` (what `make run` runs) from a fresh home, as a user would."""
    script = Path(PY).parent / "hermes-memory"
    assert script.exists(), f"console script missing next to {PY}; install the project (make test does)"
    fresh = tmp_path / "fresh-home"
    assert not fresh.exists()
    env = child_env(HERMES_HOME=str(fresh), HERMES_MCP_PORT="0")  # port 0: the suite may run in parallel
    env.pop("HERMES_MCP_TOKEN", None)
    with HttpServer(tmp_path, argv=[str(script), "serve", "--transport", "http"], env=env, json_output=False) as srv:
        printed = srv.stdout_text
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp", srv.url)
        # Ready-to-paste configuration for the four clients, all pointing at the printed URL.
        assert f"claude mcp add --scope user --transport http hermes-memory {srv.url}" in printed
        cursor = printed.split("# Cursor", 1)[1].split("# Codex CLI", 1)[0]
        assert json.loads(cursor.split("\n", 1)[1]) == {"mcpServers": {"hermes-memory": {"url": srv.url}}}
        assert f'[mcp_servers.hermes-memory]\nurl = "{srv.url}"' in printed
        desktop = json.loads(printed.split("# Claude Desktop", 1)[1].split("\n", 1)[1].split("\n\nServing;")[0])
        entry = desktop["mcpServers"]["hermes-memory"]
        assert os.path.isabs(entry["command"])
        assert entry["args"][-3:] == ["serve", "--transport", "stdio"]
        assert str(fresh) in entry["args"]

        # Raw MCP over HTTP, no SDK: initialize, initialized, tools/list on the printed URL.
        with httpx.Client(timeout=30) as client:
            init = client.post(srv.url, json=INIT, headers=MCP_HEADERS)
            assert init.status_code == 200, init.text
            sid = init.headers["mcp-session-id"]
            body = _jsonrpc_body(init)
            assert body["result"]["serverInfo"]["name"] == "hermes-memory"
            headers = {**MCP_HEADERS, "mcp-session-id": sid,
                       "mcp-protocol-version": body["result"]["protocolVersion"]}
            note = client.post(srv.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                               headers=headers)
            assert note.status_code == 202
            listed = client.post(srv.url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=headers)
            names = [t["name"] for t in _jsonrpc_body(listed)["result"]["tools"]]
            assert "memory" in names and "session_search" in names
    assert (fresh / "memories").is_dir()


def _jsonrpc_body(response: httpx.Response) -> dict:
    """The JSON-RPC message of a streamable-HTTP answer (plain JSON or one SSE `data:` event)."""
    if response.headers.get("content-type", "").startswith("application/json"):
        return response.json()
    for line in response.text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            return json.loads(line[5:])
    raise AssertionError(f"no JSON-RPC message in {response.text!r}")


@pytest.mark.slow
def test_two_http_sessions_and_a_stdio_client_writing_at_once_lose_nothing(hermes_home: Path) -> None:
    (hermes_home / "config.yaml").write_text("memory:\n  memory_char_limit: 100000\n", encoding="utf-8")
    n = 15
    with HttpServer(hermes_home) as srv:

        async def writer(label: str, session_factory) -> None:
            async with session_factory() as s:
                for i in range(n):
                    r = await call(s, "memory", {"action": "add", "target": "memory", "content": f"{label} entry {i}"})
                    assert r["success"] is True, r

        async def main() -> None:
            from tests.mcp.helpers import stdio_session

            async with anyio.create_task_group() as tg:
                tg.start_soon(writer, "http-a", lambda: http_session(srv.url))
                tg.start_soon(writer, "http-b", lambda: http_session(srv.url))
                tg.start_soon(writer, "stdio-c", lambda: stdio_session(hermes_home))

        anyio.run(main)
    entries = MemoryStore(hermes_home / "memories").memory_entries
    expected = {f"{label} entry {i}" for label in ("http-a", "http-b", "stdio-c") for i in range(n)}
    assert set(entries) == expected and len(entries) == len(expected)


@pytest.mark.parametrize("host", ["127.0.0.2", "::1", "[::1]", "localhost", "127.0.0.1"])
def test_dns_rebinding_protection_covers_every_loopback_bind_address(hermes_home: Path, host: str) -> None:
    """A loopback bind needs no token, so the Host/Origin checks are its only guard against a web page
    whose name rebinds to this machine; the SDK switched them on only for three literal spellings."""
    server = MemoryServer(HermesHome(hermes_home), load_config(hermes_home / "config.yaml"))
    try:
        app = server.http_app(host=host, token=None)
        name = host if host.startswith("[") or ":" not in host else f"[{host}]"
        with TestClient(app, base_url=f"http://{name}:8765") as client:
            ok = client.post(HTTP_PATH, json=INIT, headers=MCP_HEADERS)
            assert ok.status_code == 200, ok.text
            rebound = client.post(HTTP_PATH, json=INIT, headers={**MCP_HEADERS, "Host": "evil.example:8765"})
            assert rebound.status_code == 421
            foreign = client.post(HTTP_PATH, json=INIT, headers={**MCP_HEADERS, "Origin": "http://evil.example"})
            assert foreign.status_code == 403
    finally:
        server.close()


def test_the_bearer_scheme_is_case_insensitive_but_the_token_is_not(hermes_home: Path) -> None:
    """RFC 9110 §11.1: the auth scheme is case-insensitive, so `bearer TOKEN` must be accepted."""
    server = MemoryServer(HermesHome(hermes_home), load_config(hermes_home / "config.yaml"))
    try:
        app = server.http_app(host="0.0.0.0", token="Tok-123")
        with TestClient(app, base_url="http://127.0.0.1:8765") as client:
            for scheme in ("Bearer", "bearer", "BEARER"):
                r = client.post(HTTP_PATH, json=INIT, headers={**MCP_HEADERS, "Authorization": f"{scheme} Tok-123"})
                assert r.status_code == 200, (scheme, r.text)
            for value in ("Bearer tok-123", "Bearer Tok-12", "Tok-123", "Basic Tok-123", "Bearer Tok-123x"):
                r = client.post(HTTP_PATH, json=INIT, headers={**MCP_HEADERS, "Authorization": value})
                assert r.status_code == 401, value
            assert client.post(f"{HTTP_PATH}?token=Tok-123", json=INIT, headers=MCP_HEADERS).status_code == 401
    finally:
        server.close()
