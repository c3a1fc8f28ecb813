"""Which MCP streamable-HTTP sessions are still open, learnt from the HTTP traffic itself.

The memory server keeps a state per client session (its frozen snapshot, its stores). The SDK's
:class:`mcp.server.streamable_http_manager.StreamableHTTPSessionManager` ends a session when the
client sends ``DELETE`` (the end of a client's ``streamable_http_client`` block), when it has had
no request in flight for ``session_idle_timeout`` seconds (a public attribute of the manager), or
when the server stops; after that the id answers ``404``. The SDK has no public list of its open
sessions, so :class:`SessionWatch`, an ASGI wrapper around the SDK's app, follows the same rules
from the requests and responses that pass through it:

* a response that carries an ``mcp-session-id`` header (the answer to ``initialize``) opens a session;
* a request with that header is in flight until its response ends (a GET event stream included);
* a ``DELETE`` answered 2xx, or any answer ``404``, ends it (``on_end(session_id)`` is called);
* a session with nothing in flight for ``idle_timeout`` seconds counts as ended (the SDK has
  terminated it); ``idle_timeout`` ``None`` (the SDK's "never") keeps it until DELETE.

Times are :func:`time.monotonic` seconds.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

logger = logging.getLogger(__name__)

SESSION_HEADER = b"mcp-session-id"
"""The streamable-HTTP session header (MCP specification, transport "Session Management")."""


@dataclass
class _Seen:
    in_flight: int = 0
    last: float = 0.0


def _header(headers: Any, name: bytes) -> str | None:
    for key, value in headers or ():
        if key.lower() == name:
            return bytes(value).decode("latin-1") or None
    return None


class SessionWatch:
    """ASGI wrapper around the SDK's streamable-HTTP app that knows which sessions are open.

    ``on_end(session_id)`` is called (on the event loop; it must not block) once per session that
    ends by ``DELETE`` or is refused with ``404``; it never breaks a request (a raising callback is
    logged). ``idle_timeout``: the SDK's ``session_idle_timeout`` (seconds, or ``None``).
    ``clock``: a seconds clock (tests pass their own).
    """

    def __init__(self, app: Any, on_end: Callable[[str], None], idle_timeout: float | None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.app = app
        self.on_end = on_end
        self.idle_timeout = idle_timeout
        self._clock = clock
        self._seen: dict[str, _Seen] = {}
        self._mutex = threading.Lock()  # the event loop writes, the server's worker threads read

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        sid = _header(scope.get("headers"), SESSION_HEADER)
        answer: dict[str, Any] = {}

        async def watch(message: dict[str, Any]) -> None:
            if message.get("type") == "http.response.start":
                answer["status"] = int(message.get("status", 0))
                answer["sid"] = _header(message.get("headers"), SESSION_HEADER)
            await send(message)

        if sid is not None:
            with self._mutex:
                if sid in self._seen:
                    self._seen[sid].in_flight += 1
        try:
            await self.app(scope, receive, watch)
        finally:
            self._finished(sid, str(scope.get("method", "")).upper(), answer.get("status"), answer.get("sid"))

    def _finished(self, sid: str | None, method: str, status: int | None, opened: str | None) -> None:
        now = self._clock()
        with self._mutex:
            if sid is None:
                if opened is not None and status is not None and status < 400:
                    self._seen.setdefault(opened, _Seen()).last = now
                return
            seen = self._seen.get(sid)
            if seen is not None:
                seen.in_flight = max(0, seen.in_flight - 1)
                seen.last = now
            ended = status == 404 or (method == "DELETE" and status is not None and 200 <= status < 300)
            if ended:
                self._seen.pop(sid, None)
        if ended:
            try:
                self.on_end(sid)
            except Exception:  # a failing callback never breaks the client's request
                logger.exception("ending the state of MCP session %s failed", sid[:16])

    def is_open(self, session_id: str) -> bool:
        """True while the SDK still holds ``session_id`` open by the rules of the module doc."""
        with self._mutex:
            seen = self._seen.get(session_id)
            return seen is not None and self._open(seen, self._clock())

    def _open(self, seen: _Seen, now: float) -> bool:
        return seen.in_flight > 0 or self.idle_timeout is None or now - seen.last < self.idle_timeout

    def open_ids(self) -> set[str]:
        """The ids of the sessions still open (:meth:`is_open`); ended ones are forgotten here."""
        now = self._clock()
        with self._mutex:
            for sid in [s for s, seen in self._seen.items() if not self._open(seen, now)]:
                del self._seen[sid]
            return set(self._seen)
