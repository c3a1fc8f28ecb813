"""``hermes-memory ui``: the web dashboard on its own, in the browser.

Binds (127.0.0.1 by default, any other address only with a token), prints the URL, opens it in
the default browser unless ``--no-open``, and serves until Ctrl-C / SIGTERM. The same dashboard
is also served by ``serve --transport http`` at ``/``.

A configured external provider that fails to load (unknown, broken import, not available) does
not stop the dashboard: a user opens it precisely to see what is wrong. It starts on built-in
memory only and shows the provider's error on every page (and in ``/api/providers``); the MCP
server (``serve``) still refuses to start then, since its clients would silently lose the
provider's tools.
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
from hermes_memory.config import HermesConfig
from hermes_memory.errors import ProviderError

if TYPE_CHECKING:
    from hermes_memory.mcp.server import MemoryServer
    from hermes_memory.web.data import ProviderProblem

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
        """Open the dashboard: memory, sessions, insights and providers of this home (it starts even when the configured provider fails to load, and shows why)."""
        from hermes_memory.httpguard import base_url, bind_refusal
        from hermes_memory.mcp.server import MemoryServer
        from hermes_memory.web.data import ProviderProblem

        token = (token or "").strip() or None
        refusal = bind_refusal(host, token)
        if refusal:
            fail(refusal, EXIT_USAGE)
        st = state(ctx)
        provider_error: str | None = None
        try:
            try:
                server = MemoryServer(st.home, st.config, user_id=user_id)
            except ProviderError as exc:  # shown in the dashboard instead of refusing to start
                provider_error = str(exc)
                server = MemoryServer(st.home, _without_provider(st.config), user_id=user_id)
        except ValueError as exc:
            fail(f"--user-id {user_id!r}: {exc}", EXIT_USAGE)
        signal.signal(signal.SIGTERM, exit_on_sigterm)
        try:
            with listen(host, port, PORT_ENV) as sock:
                url = base_url(host, sock.getsockname()[1]) + "/"
                http = _server(server, host=host, token=token,
                               problem=ProviderProblem(st.config.memory.provider.strip(), provider_error)
                               if provider_error else None)
                if as_json:
                    print_json({"url": url, "home": str(st.home.root), "token_required": bool(token),
                                "provider_error": provider_error})
                else:
                    sys.stdout.write(f"hermes-memory dashboard\nURL:  {url}\nhome: {st.home.root}\n"
                                     + ("sign in once with the token\n" if token else "")
                                     + (f"provider: {provider_error}\n  (built-in memory only until it "
                                        "is fixed; the dashboard shows this too)\n" if provider_error else "")
                                     + "Serving; press Ctrl-C to stop.\n")
                    sys.stdout.flush()
                if not no_open:
                    threading.Timer(0.5, webbrowser.open, args=(url,)).start()
                anyio.run(_serve, http, sock)
        finally:
            server.close()


def _without_provider(config: HermesConfig) -> HermesConfig:
    """``config`` with ``memory.provider`` empty (built-in memory only), the rest as it was."""
    return config.model_copy(update={"memory": config.memory.model_copy(update={"provider": ""})})


async def _serve(http: Any, sock: Any) -> None:
    await http.serve(sockets=[sock])


def _server(server: MemoryServer, *, host: str, token: str | None, problem: ProviderProblem | None) -> Any:
    """A loaded ``uvicorn.Server`` for the dashboard alone (every import done before the URL is printed)."""
    from hermes_memory.web.app import dashboard_app

    return server.http_server(host=host, token=token,
                              app=dashboard_app(server, host=host, token=token, provider_problem=problem))
