"""The one local HTTP server of the test suite: 127.0.0.1, an ephemeral port, a daemon thread.

Every fake service (model APIs, memory-provider APIs, a hostile web page) is a :class:`LocalHTTPServer`
or a subclass of it. What a test gets:

* a request log: every request, as :class:`Request` (method, path without the query, query, lower-cased
  headers, the JSON body when the content type says JSON, the raw bytes), in :attr:`LocalHTTPServer.requests`
  and filtered with :meth:`LocalHTTPServer.calls`;
* routes: :meth:`LocalHTTPServer.route` with a method and a path pattern, either a template
  (``/v1/files/{id}``, the name lands in ``request.params``) or a regular expression (its groups land in
  ``request.groups``); a trailing slash is optional;
* scripted responses: ``replies`` answered in order, one per request, before any route; then ``fallback``
  (a :class:`Reply`, or a callable ``(request) -> reply``) for every request no route takes;
* fault injection: :meth:`LocalHTTPServer.fail` (answer a status for the next requests under a path) and
  :meth:`LocalHTTPServer.stall` (hold replies, released as soon as the server stops, so no test sleeps);
* clean shutdown: :meth:`LocalHTTPServer.stop` (or leaving the ``with`` block) stops accepting, closes
  every open keep-alive connection and releases stalled handlers; after it a client gets "connection
  refused". ``stop`` may be called twice.

A handler (route, scripted item or fallback) may return a :class:`Reply`, a ``(status, body)`` tuple or a
bare JSON-able body (status 200). A handler raising ``KeyError`` (a required field missing from the
request body) is answered 422, as the services the fakes imitate do.
"""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit


@dataclass
class Request:
    """One request as the server received it. ``headers`` keys are lower-case; ``body`` is the parsed
    JSON (``None`` when the body is empty, not JSON, or its content type is not JSON)."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any = None
    raw: bytes = b""
    target: str = ""  # the request line's target as sent: path plus query string
    params: dict[str, str] = field(default_factory=dict)  # named parts of the matched route
    groups: tuple[str, ...] = field(default_factory=tuple)  # every group of the matched route

    def json(self) -> Any:
        """The body parsed as JSON whatever the content type said (raises ``ValueError`` if it is not)."""
        return json.loads(self.raw or b"null")


@dataclass
class Reply:
    """What the server answers: ``status``; ``body`` sent as JSON, or ``raw`` bytes as they are, with
    ``content_type``; extra ``headers``. Status 204 sends no body."""

    status: int = 200
    body: Any = None
    raw: bytes | None = None
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


def sse(events: list[dict[str, Any]], *, named: bool = True) -> Reply:
    """A complete server-sent-event stream: one ``data:`` line of JSON per event, preceded by an
    ``event:`` line carrying the event's ``type`` when ``named`` and the event has one."""
    text = "".join((f"event: {e['type']}\n" if named and "type" in e else "") + f"data: {json.dumps(e)}\n\n"
                   for e in events)
    return Reply(200, raw=text.encode(), content_type="text/event-stream", headers={"Cache-Control": "no-cache"})


Handler = Callable[[Request], Any]


@dataclass
class _Fault:
    status: int
    body: Any
    times: int | None  # None: until clear_faults()
    path: str


@dataclass
class _Route:
    method: str
    pattern: re.Pattern[str]
    handler: Handler


def _compile(pattern: str) -> re.Pattern[str]:
    regex = re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", pattern)
    return re.compile("^" + regex.rstrip("/") + "/?$")


def as_reply(out: Any) -> Reply:
    """A handler's result as a :class:`Reply` (see the module docstring for what a handler may return)."""
    if isinstance(out, Reply):
        return out
    if isinstance(out, tuple) and len(out) == 2 and isinstance(out[0], int):
        status, body = out
        return body if isinstance(body, Reply) else Reply(status, body)
    return Reply(200, out)


class LocalHTTPServer:
    """A threading HTTP/1.1 server on 127.0.0.1:<ephemeral port>; a context manager (see module doc).

    ``replies``: scripted responses, one per request in order; ``fallback``: the answer when neither a
    scripted reply nor a route matches (default 404 with a JSON error naming the method and path).
    Subclasses override :meth:`dispatch` (e.g. to check an API key before the routes).
    """

    def __init__(self, *, name: str = "fake", replies: list[Any] | None = None, fallback: Any = None) -> None:
        self.name = name
        self.requests: list[Request] = []
        self.replies: list[Any] = list(replies or [])
        self.fallback = fallback
        self._routes: list[_Route] = []
        self._faults: list[_Fault] = []
        self._stalls: list[tuple[float, str]] = []
        self._release = threading.Event()
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._address: tuple[str, int] | None = None

    # -- routes, scripted replies, faults -------------------------------------------------------------
    def route(self, method: str, pattern: str, handler: Handler) -> None:
        """Answer ``method`` requests whose path matches ``pattern`` (a ``{name}`` template or a regex)."""
        self._routes.append(_Route(method.upper(), _compile(pattern), handler))

    def queue(self, *replies: Any) -> None:
        """Append scripted replies (each a :class:`Reply`, a handler result or a callable of the request)."""
        with self._lock:
            self.replies.extend(replies)

    def fail(self, status: int = 500, body: Any = None, *, times: int | None = 1, path: str = "") -> None:
        """Answer ``status`` (with ``body``, default a JSON error) to the next ``times`` requests whose path
        starts with ``path``; ``times=None`` keeps failing until :meth:`clear_faults`."""
        if body is None:
            body = {"error": f"injected failure {status}", "message": "injected failure"}
        with self._lock:
            self._faults.append(_Fault(status, body, times, path))

    def stall(self, seconds: float = 5.0, path: str = "") -> None:
        """Hold every reply under ``path`` for ``seconds`` (released at once by :meth:`stop`): for timeouts."""
        with self._lock:
            self._stalls.append((seconds, path))

    def clear_faults(self) -> None:
        """Forget every :meth:`fail` and :meth:`stall`."""
        with self._lock:
            self._faults.clear()
            self._stalls.clear()

    def calls(self, method: str | None = None, path_re: str = "") -> list[Request]:
        """The logged requests with that method (any when ``None``) whose path contains a match of ``path_re``."""
        with self._lock:
            return [r for r in self.requests
                    if (method is None or r.method == method.upper()) and re.search(path_re, r.path)]

    # -- lifecycle -----------------------------------------------------------------------------------
    @property
    def port(self) -> int:
        assert self._address is not None, f"{self.name} server not started"
        return self._address[1]

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` (no trailing slash)."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Self:
        """Bind 127.0.0.1:0 and serve in a daemon thread; returns ``self``."""
        server = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def setup(self) -> None:
                super().setup()
                with server._lock:
                    server._connections.add(self.connection)

            def finish(self) -> None:
                with server._lock:
                    server._connections.discard(self.connection)
                try:
                    super().finish()
                except OSError:
                    pass  # the connection was closed under us by stop()

            def _handle(self) -> None:
                server._serve(self)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _handle

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

        self._release.clear()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        host, port = self._httpd.server_address[:2]
        self._address = (str(host), int(port))
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                        name=f"fake-{self.name}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, close open connections and release stalled replies. Idempotent."""
        self._release.set()
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.server_close()
        with self._lock:
            connections = list(self._connections)
            self._connections.clear()
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- answering -----------------------------------------------------------------------------------
    def dispatch(self, req: Request) -> Any:
        """The answer to ``req`` when no fault applies: the next scripted reply, else a route, else
        :meth:`not_found`. Returns anything :func:`as_reply` accepts."""
        with self._lock:
            item = self.replies.pop(0) if self.replies else None
        if item is not None:
            return item(req) if callable(item) else item
        for route in self._routes:
            if route.method != req.method:
                continue
            m = route.pattern.match(req.path)
            if m:
                req.params, req.groups = m.groupdict(), m.groups()
                try:
                    return route.handler(req)
                except KeyError as exc:
                    return Reply(422, {"error": f"missing field {exc}", "detail": f"missing field {exc}"})
        return self.not_found(req)

    def not_found(self, req: Request) -> Any:
        """What a request no scripted reply or route takes gets: ``fallback``, else 404."""
        if self.fallback is not None:
            return self.fallback(req) if callable(self.fallback) else self.fallback
        return Reply(404, {"error": f"no route {req.method} {req.path}", "detail": "Not Found"})

    def _serve(self, h: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(h.path)
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        body: Any = None
        if raw and "json" in (h.headers.get("Content-Type") or ""):
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
        query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        req = Request(h.command, parts.path, query, {k.lower(): v for k, v in h.headers.items()}, body, raw,
                      target=h.path)
        with self._lock:
            self.requests.append(req)
            fault = next((f for f in self._faults if parts.path.startswith(f.path)), None)
            if fault is not None and fault.times is not None:
                fault.times -= 1
                if fault.times <= 0:
                    self._faults.remove(fault)
            stall = next((s for s, p in self._stalls if parts.path.startswith(p)), 0.0)
        if stall:
            self._release.wait(stall)
        if fault is not None:
            reply = Reply(fault.status, fault.body)
        else:
            try:
                reply = as_reply(self.dispatch(req))
            except Exception as exc:  # a broken fake must show in the test, not hang the client
                reply = Reply(500, {"error": f"fake {self.name} raised {type(exc).__name__}: {exc}"})
        self._send(h, reply)

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, reply: Reply) -> None:
        if reply.status == 204:
            payload = b""
        elif reply.raw is not None:
            payload = reply.raw
        else:
            payload = json.dumps(reply.body).encode()
        try:
            h.send_response(reply.status)
            if reply.status != 204:
                h.send_header("Content-Type", reply.content_type)
            for key, value in reply.headers.items():
                h.send_header(key, value)
            h.send_header("Content-Length", str(len(payload)))
            h.end_headers()
            if payload and h.command != "HEAD":
                h.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)


def closed_port_url() -> str:
    """``http://127.0.0.1:<port>`` of a port nothing listens on (bound, then closed): connections are refused."""
    return f"http://127.0.0.1:{free_port()}"


def free_port() -> int:
    """A 127.0.0.1 TCP port that was free a moment ago (bound to port 0, then released), for a child process."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
