"""Who may talk to our HTTP servers: the loopback rule, Host/Origin checks and the bearer-token gate.

One module for every HTTP entry point (the MCP endpoint of ``serve --transport http`` and the web
dashboard), so the same request is judged the same way whichever of them it reaches:

* :func:`bind_refusal` -- a bind address other machines can reach needs a token; without one the
  server refuses to start.
* :func:`allowed_names` / :func:`transport_security` / :class:`HostOriginGuard` -- on a loopback
  bind no token is needed, so the ``Host`` and ``Origin`` headers are checked against this
  machine's own names (a web page whose DNS name rebinds to 127.0.0.1 is answered 421 for a
  foreign ``Host`` and 403 for a foreign ``Origin``). The checks are the MCP SDK's own
  (:class:`mcp.server.transport_security.TransportSecurityMiddleware`), fed the same names.
* :class:`BearerTokenGate` -- with a token, ``Authorization: Bearer <token>`` (scheme in any case,
  token exact, compared in constant time); a token in the query string is never accepted.

Nothing heavy is imported at module level: the SDK loads only when a server is built.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import socket
from collections.abc import Callable
from typing import Any

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})

TOKEN_ENV = "HERMES_MCP_TOKEN"
"""Environment variable holding the bearer token (``serve --token`` / ``ui --token``)."""


def is_loopback(host: str) -> bool:
    """True for hosts only this machine can reach (``127.0.0.0/8``, ``::1``, ``localhost``)."""
    if host in LOOPBACK_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def bind_refusal(host: str, token: str | None) -> str | None:
    """Why serving on ``host`` without ``token`` is refused, or ``None`` when it is allowed.

    A loopback bind may go without a token (the Host/Origin checks guard it); any other bind
    address is reachable from other machines and needs one.
    """
    if is_loopback(host) or token:
        return None
    return (f"refusing to serve on {host}: only this machine can reach 127.0.0.1, but {host} is reachable from "
            f"other machines, so a bearer token is required. Pass --token TOKEN (or set {TOKEN_ENV}), "
            "or bind to 127.0.0.1.")


def allowed_names(host: str) -> set[str] | None:
    """The ``Host`` names (without port) a loopback bind on ``host`` answers; ``None`` for other binds.

    ``127.0.0.1``, ``localhost``, ``[::1]`` and the bound name itself (IPv6 in brackets). Other binds
    answer whatever name clients use for this machine, so their Host is not checked (the token is
    their guard).
    """
    if not is_loopback(host):
        return None
    name = host.strip("[]")
    return {"127.0.0.1", "localhost", "[::1]", f"[{name}]" if ":" in name else name}


def transport_security(host: str) -> Any:
    """The MCP SDK's ``TransportSecuritySettings`` for a bind on ``host`` (see :func:`allowed_names`).

    The SDK turns the checks on by itself only for the literal names 127.0.0.1, localhost and ::1;
    this also covers every other loopback spelling (127.0.0.2, ``[::1]``).
    """
    from mcp.server.transport_security import TransportSecuritySettings

    names = allowed_names(host)
    if names is None:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=sorted(f"{n}:*" for n in names),
        allowed_origins=sorted(f"http://{n}:*" for n in names),
    )


class HostOriginGuard:
    """ASGI wrapper applying :func:`transport_security`'s Host/Origin checks to every HTTP request.

    Answers 421 ("Invalid Host header") or 403 ("Invalid Origin header") exactly as the SDK does on
    its MCP endpoint; a non-loopback bind passes everything through.
    """

    def __init__(self, app: Any, host: str) -> None:
        from mcp.server.transport_security import TransportSecurityMiddleware

        self.app = app
        self._check = TransportSecurityMiddleware(transport_security(host))

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") == "http":
            from starlette.requests import Request

            refusal = await self._check.validate_request(Request(scope), is_post=False)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)


def bearer_matches(headers: list[tuple[bytes, bytes]], expected: bytes) -> bool:
    """True when ``headers`` (ASGI form) carry ``Authorization: Bearer <expected>``.

    The scheme is matched case-insensitively (RFC 9110 §11.1), the token exactly and in constant time.
    """
    given = b""
    for name, value in headers:
        if name.lower() == b"authorization":
            scheme, _, credentials = value.partition(b" ")
            given = credentials if scheme.lower() == b"bearer" else b""
            break
    return hmac.compare_digest(given, expected)


class BearerTokenGate:
    """ASGI wrapper that answers 401 unless ``Authorization: Bearer <token>`` matches.

    The scheme is matched case-insensitively (RFC 9110 §11.1: ``bearer`` and ``BEARER`` are the same
    scheme), the token exactly and in constant time. A token in the query string is never accepted.
    ``also_allow(scope)``: an optional second way in (the dashboard's signed-in session cookie).
    """

    def __init__(self, app: Any, token: str, also_allow: Callable[[dict[str, Any]], bool] | None = None) -> None:
        self.app = app
        self._expected = token.encode()
        self._also_allow = also_allow

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") == "http" and not bearer_matches(scope.get("headers", []), self._expected) and not (
            self._also_allow is not None and self._also_allow(scope)
        ):
            body = json.dumps({"error": "missing or wrong bearer token; send 'Authorization: Bearer <token>' "
                               f"(the token given to `hermes-memory serve --token` / {TOKEN_ENV})"}).encode()
            await send({"type": "http.response.start", "status": 401, "headers": [
                (b"content-type", b"application/json"), (b"www-authenticate", b'Bearer realm="hermes-memory"'),
                (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


def bind_socket(host: str, port: int) -> socket.socket:
    """Bind and listen on ``host:port`` (``port=0``: any free port); return the socket.

    Raises :class:`OSError` (e.g. ``EADDRINUSE``) when the address cannot be bound.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(128)
        sock.set_inheritable(True)
    except OSError:
        sock.close()
        raise
    return sock


def base_url(host: str, port: int) -> str:
    """``http://HOST:PORT`` as clients write it (IPv6 in brackets; wildcard binds name this host)."""
    if host in ("0.0.0.0", "::", ""):
        host = socket.gethostname()
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}"
