"""A small threaded HTTP server on 127.0.0.1 for contract fakes: routes, a request log, fault injection.

Subclasses register routes with :meth:`FakeHTTPServer.route` (method + regex on the path); a handler gets
a :class:`Req` and returns ``(status, json_payload)``. Every request is logged in ``requests``.

Fault injection (set by tests, applies to paths containing ``match``, default every path):

* ``fail(status, payload, match="")``: answer with that status and JSON instead of the route;
* ``delay(seconds, match="")``: sleep before answering (to trip client timeouts);
* ``stop()``: close the socket, so the backend is down (connection refused).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Req:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any = None
    raw: bytes = b""
    groups: tuple[str, ...] = field(default_factory=tuple)


Handler = Callable[[Req], tuple[int, Any]]


class FakeHTTPServer:
    """Base for the Hindsight and OpenViking fakes. Use as a context manager or start()/stop()."""

    def __init__(self) -> None:
        self.requests: list[Req] = []
        self._routes: list[tuple[str, re.Pattern[str], Handler]] = []
        self._faults: list[tuple[str, int, Any]] = []
        self._delays: list[tuple[str, float]] = []
        self._lock = threading.Lock()
        fake = self

        class _H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body: Any = None
                if raw and "json" in (self.headers.get("Content-Type") or ""):
                    try:
                        body = json.loads(raw)
                    except ValueError:
                        body = None
                req = Req(self.command, parts.path, {k: v[-1] for k, v in parse_qs(parts.query).items()},
                          {k.lower(): v for k, v in self.headers.items()}, body, raw)
                with fake._lock:
                    fake.requests.append(req)
                    delays = [s for m, s in fake._delays if m in parts.path]
                    faults = [(st, pl) for m, st, pl in fake._faults if m in parts.path]
                for seconds in delays:
                    time.sleep(seconds)
                if faults:
                    status, payload = faults[0]
                else:
                    status, payload = fake._dispatch(req)
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = _handle

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _H)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._running = False

    # -- routes and faults ----------------------------------------------------------------------
    def route(self, method: str, pattern: str, handler: Handler) -> None:
        self._routes.append((method, re.compile(f"^{pattern}$"), handler))

    def _dispatch(self, req: Req) -> tuple[int, Any]:
        for method, rx, handler in self._routes:
            m = rx.match(req.path)
            if m and method == req.method:
                req.groups = m.groups()
                return handler(req)
        return self.not_found(req)

    def not_found(self, req: Req) -> tuple[int, Any]:
        return 404, {"detail": f"no route {req.method} {req.path}"}

    def fail(self, status: int, payload: Any, match: str = "") -> None:
        with self._lock:
            self._faults.append((match, status, payload))

    def delay(self, seconds: float, match: str = "") -> None:
        with self._lock:
            self._delays.append((match, seconds))

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()
            self._delays.clear()

    def calls(self, method: str | None = None, path_contains: str = "") -> list[Req]:
        with self._lock:
            return [r for r in self.requests if (method is None or r.method == method) and path_contains in r.path]

    # -- lifecycle -------------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FakeHTTPServer:
        self._thread.start()
        self._running = True
        return self

    def stop(self) -> None:
        if self._running:
            self._httpd.shutdown()
            self._running = False
        self._httpd.server_close()

    def __enter__(self) -> FakeHTTPServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
