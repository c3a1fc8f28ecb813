"""SessionWatch follows the SDK's session rules from the HTTP traffic: opened by the answer that
carries ``mcp-session-id``, ended by a 2xx DELETE or a 404, counted ended after the SDK's idle
timeout with nothing in flight (a held-open request keeps it open)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from hermes_memory.config import load_config
from hermes_memory.home import HermesHome
from hermes_memory.mcp.http_sessions import SessionWatch
from hermes_memory.mcp.server import MemoryServer
from tests.mcp.helpers import (
    http_session,
    serving_in_thread,
)


class _App:
    """An ASGI app answering each request with the status (and session header) a test sets."""

    def __init__(self) -> None:
        self.status = 200
        self.new_session: str | None = None
        self.hold: anyio.Event | None = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if self.hold is not None:
            await self.hold.wait()
        headers = [(b"mcp-session-id", self.new_session.encode())] if self.new_session else []
        await send({"type": "http.response.start", "status": self.status, "headers": headers})
        await send({"type": "http.response.body", "body": b""})


def _request(method: str = "POST", sid: str | None = None) -> dict[str, Any]:
    return {"type": "http", "method": method, "headers": [(b"mcp-session-id", sid.encode())] if sid else []}


async def _send(message: dict[str, Any]) -> None:
    return None


def test_sessions_open_end_by_delete_or_404_and_expire_when_idle() -> None:
    now = [100.0]
    ended: list[str] = []
    app = _App()
    watch = SessionWatch(app, ended.append, idle_timeout=60.0, clock=lambda: now[0])

    async def scenario() -> None:
        for sid in ("a", "b", "c"):
            app.new_session = sid  # the answer to initialize names the new session
            await watch(_request(), None, _send)
        app.new_session = None
        assert watch.open_ids() == {"a", "b", "c"}
        app.status = 200
        await watch(_request("DELETE", "a"), None, _send)
        app.status = 404
        await watch(_request("POST", "b"), None, _send)
        assert ended == ["a", "b"] and watch.open_ids() == {"c"}
        app.status, app.hold = 200, anyio.Event()
        async with anyio.create_task_group() as tg:  # a GET event stream held open on "c"
            tg.start_soon(watch, _request("GET", "c"), None, _send)
            await anyio.sleep(0.05)
            now[0] += 3600
            assert watch.is_open("c")  # in flight: the SDK does not reap it
            app.hold.set()
        assert watch.is_open("c")  # the stream just ended: idle time starts now
        now[0] += 61
        assert not watch.is_open("c") and watch.open_ids() == set()

    anyio.run(scenario)


def test_a_failing_callback_never_breaks_the_request_and_unknown_ids_are_not_opened() -> None:
    def boom(sid: str) -> None:
        raise RuntimeError("callback failed")

    app = _App()
    watch = SessionWatch(app, boom, idle_timeout=None)

    async def scenario() -> None:
        app.status = 404
        await watch(_request("POST", "gone"), None, _send)  # logged, not raised
        app.status = 400
        app.new_session = "refused"
        await watch(_request(), None, _send)  # a refused initialize opens nothing
        assert watch.open_ids() == set()

    anyio.run(scenario)


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
