"""``hermes-memory serve``: the memory server for other agents, over MCP (stdio or streamable HTTP).

Over stdio nothing but protocol goes to stdout (logs go to stderr). Over HTTP the command prints,
for humans, the URL and ready-to-paste configuration for Claude Code, Cursor, Codex CLI and
Claude Desktop (``--json``: the same as one JSON object), then serves until Ctrl-C.
"""

from __future__ import annotations

import errno
import functools
import signal
import socket
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from hermes_memory.cli.common import EXIT_REFUSED, EXIT_USAGE, fail, print_json, state

if TYPE_CHECKING:
    from hermes_memory.mcp.server import MemoryServer

PORT_ENV = "HERMES_MCP_PORT"


class Transport(StrEnum):
    stdio = "stdio"
    http = "http"


def _stdio_command(home: Path, user_id: str | None) -> list[str]:
    """argv that starts this server over stdio on ``home``, with absolute paths."""
    script = Path(sys.executable).parent / "hermes-memory"
    base = [str(script)] if script.exists() else [sys.executable, "-m", "hermes_memory"]
    argv = [*base, "--home", str(home), "serve", "--transport", "stdio"]
    if user_id:
        argv += ["--user-id", user_id]
    return argv


def listen(host: str, port: int, port_env: str) -> socket.socket:
    """Bind and listen on ``host:port``; on failure print why (a busy port names ``--port`` and
    ``port_env``) and exit 1."""
    from hermes_memory.httpguard import bind_socket

    try:
        return bind_socket(host, port)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            fail(f"port {port} on {host} is already in use. Pass --port N (0 picks a free port) "
                 f"or set {port_env}.", EXIT_REFUSED)
        fail(f"cannot listen on {host}:{port}: {exc}", EXIT_REFUSED)


def _exit_on_sigterm(signum: int, frame: object) -> None:
    """SIGTERM ends the server like Ctrl-C does: shut the provider down, close state.db, exit 0."""
    raise SystemExit(0)


def register(app: typer.Typer) -> None:
    """Add ``serve`` to ``app``."""

    @app.command("serve")
    def serve(
        ctx: typer.Context,
        transport: Annotated[Transport, typer.Option("--transport", "-t", help="stdio (a client starts the server) "
                                                     "or http (streamable HTTP, one server for many clients).")] = Transport.stdio,
        host: Annotated[str, typer.Option("--host", help="HTTP bind address. Anything but loopback needs --token.")] = "127.0.0.1",
        port: Annotated[int, typer.Option("--port", "-p", envvar=PORT_ENV, min=0, max=65535,
                                          help="HTTP port (0 = any free port).")] = 8765,
        token: Annotated[str | None, typer.Option("--token", envvar="HERMES_MCP_TOKEN", show_default=False,
                                                  help="Bearer token every HTTP request must carry.")] = None,
        user_id: Annotated[str | None, typer.Option("--user-id", help="Serve this user's own USER.md profile "
                                                    "(MEMORY.md stays shared). Without it clients may pass user_id per call.")] = None,
        as_json: Annotated[bool, typer.Option("--json", help="HTTP: print the URL and client configuration as JSON.")] = False,
        dashboard: Annotated[bool, typer.Option("--dashboard/--no-dashboard", help="HTTP: serve the web dashboard "
                                                "at / beside the MCP endpoint (same port and token).")] = True,
    ) -> None:
        """Serve memory, session search and the provider's tools to MCP clients (HTTP: and the dashboard at /)."""
        from hermes_memory.httpguard import bind_refusal
        from hermes_memory.mcp.server import MemoryServer

        st = state(ctx)
        token = (token or "").strip() or None
        refusal = bind_refusal(host, token) if transport is Transport.http else None
        if refusal:
            fail(refusal, EXIT_USAGE)
        home, config = st.home, st.config
        try:
            server = MemoryServer(home, config, user_id=user_id)
        except ValueError as exc:
            fail(f"--user-id {user_id!r}: {exc}", EXIT_USAGE)

        signal.signal(signal.SIGTERM, _exit_on_sigterm)
        try:
            if transport is Transport.stdio:
                _serve_stdio(server)
            else:
                _serve_http(server, host=host, port=port, token=token, user_id=user_id, as_json=as_json,
                            dashboard=dashboard)
        finally:
            server.close()  # also when a signal interrupts start-up (close is idempotent)


def _serve_stdio(server: MemoryServer) -> None:
    """Serve one client over stdio until stdin reaches EOF (exit 0), SIGTERM (exit 0) or SIGINT (exit 130).

    The SDK reads stdin on a worker thread that no signal can interrupt, and both cancellation and
    interpreter exit wait for that thread, so after a signal the server would live until the client
    closed stdin (MCP clients send SIGTERM precisely when it does not). The signals are received by
    the event loop itself; on one the server is closed (provider shut down, ``state.db`` closed),
    stderr flushed, and the process leaves with ``os._exit``.
    """
    import os

    import anyio

    async def until_eof_or_signal() -> None:
        async def on_signal() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                async for signum in signals:
                    try:
                        server.close()
                    finally:
                        sys.stderr.flush()
                        os._exit(130 if signum == signal.SIGINT else 0)

        async with anyio.create_task_group() as tg:
            tg.start_soon(on_signal)
            await server.run_stdio()
            tg.cancel_scope.cancel()

    anyio.run(until_eof_or_signal)


def _serve_http(server: MemoryServer, *, host: str, port: int, token: str | None, user_id: str | None,
                as_json: bool, dashboard: bool = True) -> None:
    """Bind, print the URL and client configuration, then serve until Ctrl-C / SIGTERM."""
    import anyio

    from hermes_memory.mcp.clients import all_snippets
    from hermes_memory.mcp.server import endpoint_url

    home = server.home
    with listen(host, port, PORT_ENV) as sock:
        bound_port = sock.getsockname()[1]
        url = endpoint_url(host, bound_port)
        snippets = all_snippets(url, token=bool(token), stdio_command=_stdio_command(home.root, user_id))
        tools = [t.name for t in server.tool_list()]
        # Everything that imports is done before the URL is announced: a client may stop the server
        # (SIGTERM) as soon as it reads the URL, and a signal inside an import breaks it with a traceback.
        app = server.http_app(host=host, token=token)
        dashboard_url = None
        if dashboard:
            from hermes_memory.httpguard import base_url
            from hermes_memory.mcp.server import HTTP_PATH
            from hermes_memory.web.app import mount_beside_mcp

            app = mount_beside_mcp(server, app, host=host, token=token, mcp_path=HTTP_PATH)
            dashboard_url = base_url(host, bound_port) + "/"
        http = server.http_server(host=host, token=token, app=app)
        anyio.run(functools.partial(_announce_and_serve, server, sock, http, host=host, token=token, url=url,
                                    bound_port=bound_port, tools=tools, snippets=snippets, as_json=as_json,
                                    dashboard_url=dashboard_url))


async def _announce_and_serve(server: MemoryServer, sock: Any, http: Any, *, host: str, token: str | None, url: str,
                              bound_port: int, tools: list[str], snippets: list[Any], as_json: bool,
                              dashboard_url: str | None = None) -> None:
    """Print the URL and client configuration (or JSON), then serve until Ctrl-C / SIGTERM."""
    home = server.home
    if as_json:
        print_json({"url": url, "transport": "http", "host": host, "port": bound_port, "home": str(home.root),
                    "token_required": bool(token), "tools": tools, "dashboard": dashboard_url,
                    "clients": {s.client: s.as_dict() for s in snippets}})
    else:
        out = [
            "hermes-memory MCP server (streamable HTTP)",
            f"URL:   {url}",
            f"home:  {home.root}",
            f"tools: {', '.join(tools)}",
            *([f"dashboard: {dashboard_url} (open it in a browser)"] if dashboard_url else []),
            "auth:  " + ("bearer token required (clients read it from $HERMES_MCP_TOKEN)" if token
                         else "none (loopback only)"),
            "",
            "Add it to your agent (paste one):",
        ]
        for s in snippets:
            out += ["", f"# {s.client} — {s.where}", s.text]
        out += ["", "Serving; press Ctrl-C to stop.", ""]
        sys.stdout.write("\n".join(out))
        sys.stdout.flush()
    await server.serve_http(sock, host=host, token=token, http_server=http)
