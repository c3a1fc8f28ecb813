"""A small JSON HTTP server on 127.0.0.1 for provider contract tests.

Each fake service subclasses :class:`FakeService`, registers its documented routes with
:meth:`FakeService.route`, and keeps its state in plain dicts. Every request is recorded
(method, path, query, headers, JSON body) so a test can assert what the client sent.

Fault injection, applied to the next matching requests:

* ``fail(status, times=1, path_prefix="")``  answer ``status`` with a JSON error body;
* ``stall(seconds, path_prefix="")``        hold the reply for ``seconds`` (or until :meth:`stop`),
  for timeout tests.

A test never sleeps: a stalled handler is released as soon as the server stops.
"""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from hermes_memory.config import update_config


@dataclass
class Request:
    """One request as the fake received it."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any
    raw: bytes = b""


@dataclass
class Reply:
    """What a route handler returns: a status, a JSON-able body (or raw bytes) and headers."""

    status: int = 200
    body: Any = None
    raw: bytes | None = None
    content_type: str = "application/json"


Handler = Callable[[Request, dict[str, str]], Any]


@dataclass
class _Fault:
    status: int
    times: int
    prefix: str


@dataclass
class _Route:
    method: str
    pattern: re.Pattern[str]
    handler: Handler


@dataclass
class FakeService:
    """Base of the fake services: routing, request log, fault injection, start/stop."""

    name: str = "fake"
    requests: list[Request] = field(default_factory=list)
    _routes: list[_Route] = field(default_factory=list)
    _faults: list[_Fault] = field(default_factory=list)
    _stalls: list[tuple[float, str]] = field(default_factory=list)
    _release: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    # -- routing -----------------------------------------------------------------------------
    def route(self, method: str, template: str, handler: Handler) -> None:
        """Register ``handler`` for ``method`` and a path template like ``/v1/files/{id}``."""
        regex = "^" + re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", template) + "/?$"
        self._routes.append(_Route(method.upper(), re.compile(regex), handler))

    # -- faults ------------------------------------------------------------------------------
    def fail(self, status: int = 500, times: int = 1, path_prefix: str = "") -> None:
        """Answer the next ``times`` requests under ``path_prefix`` with ``status``."""
        with self._lock:
            self._faults.append(_Fault(status, times, path_prefix))

    def stall(self, seconds: float = 5.0, path_prefix: str = "") -> None:
        """Hold every reply under ``path_prefix`` for ``seconds`` (released early by :meth:`stop`)."""
        with self._lock:
            self._stalls.append((seconds, path_prefix))

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()
            self._stalls.clear()

    def calls(self, method: str | None = None, path_re: str = "") -> list[Request]:
        """Recorded requests, filtered by method and a regex searched in the path."""
        with self._lock:
            return [r for r in self.requests
                    if (method is None or r.method == method.upper()) and re.search(path_re, r.path)]

    # -- lifecycle ---------------------------------------------------------------------------
    @property
    def url(self) -> str:
        assert self._server is not None, "fake server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeService:
        service = self

        class _H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def _handle(self) -> None:
                service._dispatch(self)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _handle

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _H)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), name=f"fake-{self.name}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._release.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    # -- internals ---------------------------------------------------------------------------
    def _dispatch(self, h: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(h.path)
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        ctype = h.headers.get("Content-Type", "")
        body: Any = None
        if raw and "json" in ctype:
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
        query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        req = Request(h.command, parts.path, query, {k.lower(): v for k, v in h.headers.items()}, body, raw)
        with self._lock:
            self.requests.append(req)
            fault = next((f for f in self._faults if parts.path.startswith(f.prefix)), None)
            if fault is not None:
                fault.times -= 1
                if fault.times <= 0:
                    self._faults.remove(fault)
            stall = next((s for s, p in self._stalls if parts.path.startswith(p)), 0.0)
        if stall:
            self._release.wait(stall)
        if fault is not None:
            reply = Reply(fault.status, {"error": f"injected failure {fault.status}", "message": "injected failure"})
        else:
            reply = self._route_request(req)
        self._send(h, reply)

    def _route_request(self, req: Request) -> Reply:
        for route in self._routes:
            if route.method != req.method:
                continue
            m = route.pattern.match(req.path)
            if m:
                try:
                    out = route.handler(req, m.groupdict())
                except KeyError as exc:
                    return Reply(422, {"error": f"missing field {exc}", "detail": f"missing field {exc}"})
                return out if isinstance(out, Reply) else Reply(200, out)
        return Reply(404, {"error": f"no route {req.method} {req.path}", "detail": "Not Found"})

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, reply: Reply) -> None:
        if reply.raw is not None:
            payload = reply.raw
        elif reply.status == 204:
            payload = b""
        else:
            payload = json.dumps(reply.body).encode()
        try:
            h.send_response(reply.status)
            if reply.status != 204:
                h.send_header("Content-Type", reply.content_type)
            h.send_header("Content-Length", str(len(payload)))
            h.end_headers()
            if payload:
                h.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout test)


def closed_port_url() -> str:
    """URL of a 127.0.0.1 port nothing listens on (bound, then closed): connections are refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def words(text: str) -> set[str]:
    """Lower-case word set, used by the fakes for substring-free keyword similarity."""
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def overlap(query: str, text: str) -> float:
    """Share of the query's words found in ``text`` (0..1): the fakes' similarity score."""
    q = words(query)
    return len(q & words(text)) / len(q) if q else 0.0


def configure(home: Path, provider: str, values: dict[str, Any]) -> None:
    """Write provider settings where ``memory setup`` puts them: the ``<provider>:`` section of config.yaml."""
    update_config(home / "config.yaml", {f"{provider}.{k}": v for k, v in values.items()})


TRACKED_PROVIDERS: list = []
"""Providers built by the tests' ``make()`` helpers; tests/plugins/conftest.py shuts them down."""


def track(provider):
    """Register ``provider`` for shutdown after the current test; returns it."""
    TRACKED_PROVIDERS.append(provider)
    return provider
