"""``hermes-memory ui``: the web dashboard on its own, in the browser.

Binds (127.0.0.1 by default, any other address only with a token), prints the URL, opens it in
the default browser unless ``--no-open``, and serves until Ctrl-C / SIGTERM. The same dashboard
is also served by ``serve --transport http`` at ``/``.
"""

from __future__ import annotations

import signal
import sys
import threading
import webbrowser
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import typer

from hermes_memory.cli.common import EXIT_USAGE, fail, print_json, state
from hermes_memory.cli.serve import _exit_on_sigterm as exit_on_sigterm
from hermes_memory.cli.serve import listen

if TYPE_CHECKING:
    from hermes_memory.mcp.server import MemoryServer

PORT_ENV = "HERMES_UI_PORT"
DEFAULT_PORT = 8766
"""Default TCP port of ``hermes-memory ui`` (``serve --transport http`` uses 8765)."""


def register(app: typer.Typer) -> None:
    """Add ``ui`` to ``app``."""

    @app.command("ui")
    def ui(
        ctx: typer.Context,
        host: Annotated[str, typer.Option("--host", help="Bind address. Anything but loopback needs --token.")] = "127.0.0.1",
        port: Annotated[int, typer.Option("--port", "-p", envvar=PORT_ENV, min=0, max=65535,
                                          help="Port (0 = any free port).")] = DEFAULT_PORT,
        token: Annotated[str | None, typer.Option("--token", envvar="HERMES_MCP_TOKEN", show_default=False,
                                                  help="Token the browser signs in with once.")] = None,
        user_id: Annotated[str | None, typer.Option("--user-id", help="Show and edit only this user's USER.md profile.")] = None,
        no_open: Annotated[bool, typer.Option("--no-open", help="Do not open a browser.")] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print the URL as JSON.")] = False,
    ) -> None:
        """Open the dashboard: memory, sessions, insights and providers of this home."""
        from hermes_memory.httpguard import base_url, bind_refusal
        from hermes_memory.mcp.server import MemoryServer

        token = (token or "").strip() or None
        refusal = bind_refusal(host, token)
        if refusal:
            fail(refusal, EXIT_USAGE)
        st = state(ctx)
        try:
            server = MemoryServer(st.home, st.config, user_id=user_id)
        except ValueError as exc:
            fail(f"--user-id {user_id!r}: {exc}", EXIT_USAGE)
        signal.signal(signal.SIGTERM, exit_on_sigterm)
        try:
            with listen(host, port, PORT_ENV) as sock:
                url = base_url(host, sock.getsockname()[1]) + "/"
                http = _server(server, host=host, token=token)
                if as_json:
                    print_json({"url": url, "home": str(st.home.root), "token_required": bool(token)})
                else:
                    sys.stdout.write(f"hermes-memory dashboard\nURL:  {url}\nhome: {st.home.root}\n"
                                     + ("sign in once with the token\n" if token else "")
                                     + "Serving; press Ctrl-C to stop.\n")
                    sys.stdout.flush()
                if not no_open:
                    threading.Timer(0.5, webbrowser.open, args=(url,)).start()
                anyio.run(_serve, http, sock)
        finally:
            server.close()


async def _serve(http: Any, sock: Any) -> None:
    await http.serve(sockets=[sock])


def _server(server: MemoryServer, *, host: str, token: str | None) -> Any:
    """A loaded ``uvicorn.Server`` for the dashboard alone (every import done before the URL is printed)."""
    from hermes_memory.web.app import dashboard_app

    return server.http_server(host=host, token=token, app=dashboard_app(server, host=host, token=token))
