"""Review of the MCP server as another agent's operator uses it: defects found by attacking it."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import anyio
import pytest
from starlette.testclient import TestClient

from hermes_memory.config import load_config
from hermes_memory.home import HermesHome
from hermes_memory.mcp.server import HTTP_PATH, MemoryServer
from tests.helpers.signals import with_default_sigint
from tests.mcp.helpers import (
    call,
    child_env,
    http_session,
    install_notes_plugin,
    serve_argv,
    serving_in_thread,
    stdio_session,
)

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.mark.parametrize(("signame", "code"), [("SIGTERM", 0), ("SIGINT", 130)])
def test_stdio_server_exits_on_a_signal_while_its_client_keeps_stdin_open(
        hermes_home: Path, signame: str, code: int) -> None:
    """MCP clients stop a stdio server with SIGTERM when closing stdin is not enough; the SDK's stdin
    reader thread is blocked in read() and used to keep the process alive forever after the signal."""
    install_notes_plugin(hermes_home)
    proc = subprocess.Popen(with_default_sigint(serve_argv(hermes_home)), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=child_env(), text=True)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(INIT) + "\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["result"]["serverInfo"]["name"] == "hermes-memory"
        proc.send_signal(getattr(signal, signame))
        try:
            rc = proc.wait(timeout=60)  # a hang detector, not a speed requirement
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            pytest.fail(f"stdio server still running 60 s after {signame} (stdin still open)")
        assert rc == code, proc.stderr.read() if proc.stderr else ""
        assert proc.stdout.read() == ""  # nothing but protocol on stdout
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream:
                stream.close()
    assert (hermes_home / "shutdown.log").read_text() == "shutdown\n"  # the provider was shut down


def test_a_per_call_user_profile_is_not_mirrored_into_the_shared_provider(hermes_home: Path) -> None:
    """The provider is shared by every client (it was initialised for the server's user), so mirroring
    user_id=alice's USER.md writes into it let client B read Alice's profile through provider tools."""
    install_notes_plugin(hermes_home)

    async def main() -> None:
        async with stdio_session(hermes_home) as s:
            r = await call(s, "memory", {"action": "add", "target": "user", "content": "Alice is allergic to penicillin",
                                         "user_id": "alice"})
            assert r["success"] is True
            r = await call(s, "memory", {"action": "replace", "target": "user", "old_text": "penicillin",
                                         "content": "Alice is allergic to penicillin and latex", "user_id": "alice"})
            assert r["success"] is True
            r = await call(s, "memory", {"target": "user", "user_id": "alice",
                                         "operations": [{"action": "add", "content": "Alice lives in Lyon"}]})
            assert r["success"] is True
            for args in ({"action": "add", "target": "user", "content": "Default user prefers tabs"},
                         {"action": "add", "target": "memory", "content": "Shared note from alice's client",
                          "user_id": "alice"}):
                assert (await call(s, "memory", args))["success"] is True

    anyio.run(main)
    assert "Alice is allergic" in (hermes_home / "memories" / "users" / "alice" / "USER.md").read_text()
    mirrored = [json.loads(line) for line in (hermes_home / "mirrored.jsonl").read_text().splitlines()]
    assert mirrored == [["add", "user", "Default user prefers tabs"],
                        ["add", "memory", "Shared note from alice's client"]]


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


def test_a_live_http_session_keeps_its_state_however_many_sessions_ended(hermes_home: Path, monkeypatch) -> None:
    """Per-session states are capped; a session the SDK ended (the client's DELETE) gives its state
    up at once, so a live session's frozen snapshot is never dropped because many short sessions
    came and went. A real server on 127.0.0.1 and the SDK's own client, no SDK private read."""
    import hermes_memory.mcp.server as server_mod

    monkeypatch.setattr(server_mod, "MAX_CLIENT_SESSIONS", 3)
    server = MemoryServer(HermesHome(hermes_home), load_config(hermes_home / "config.yaml"))
    try:
        with serving_in_thread(server) as url:
            async def scenario() -> None:
                async with http_session(url) as first:
                    await first.list_tools()
                    [key] = server.client_states()[0][:1]
                    state = server._clients[key]
                    for _ in range(10):  # ten sessions open, are used and end
                        async with http_session(url) as short:
                            await short.list_tools()
                            assert len(server.client_states()) == 2
                        with anyio.fail_after(30):  # a hang detector: the DELETE's answer ends it
                            while len(server.client_states()) > 1:
                                await anyio.sleep(0.02)
                    await first.list_tools()
                    assert [k for k, _, _ in server.client_states()] == [key]
                    assert server._clients[key] is state  # the same frozen snapshot, never re-taken

            anyio.run(scenario)
    finally:
        server.close()
