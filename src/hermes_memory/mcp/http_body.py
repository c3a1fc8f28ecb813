"""Streamable HTTP: a POST body with a lone surrogate escape is read as U+FFFD, as over stdio.

The SDK parses a body with pydantic's JSON parser, which refuses a lone UTF-16 surrogate escape
such as ``"\\ud800"`` (Node's ``JSON.stringify`` writes one for half of an emoji cut in two) and
answers 400 with a parse error, although the body is JSON that Python reads. Over stdio such a
line is answered (:mod:`hermes_memory.mcp.stdio_lines`); :class:`SurrogateRepair` makes HTTP answer
the same request the same way.
"""

from __future__ import annotations

import json
import re
from typing import Any

from hermes_memory.mcp.stdio_lines import no_constants, repair_line, too_deep, without_surrogates
from mcp import types

# a \uD800-\uDFFF escape; a body without one needs no repair (and is not parsed here)
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def repair_body(body: bytes) -> bytes | None:
    """``body`` re-encoded with each lone surrogate in its strings replaced by U+FFFD; None when it
    needs no repair (no lone surrogate, or not JSON at all, NaN included: the SDK then answers with its parse error)."""
    if not _SURROGATE_ESCAPE.search(body):
        return None
    try:
        parsed = json.loads(body, parse_constant=no_constants)
    except (ValueError, RecursionError):  # RecursionError: refused by invalid_request before this
        return None
    cleaned = without_surrogates(parsed)
    if cleaned == parsed:  # only valid pairs (already one character each after parsing)
        return None
    return json.dumps(cleaned).encode("ascii")


def invalid_request(body: bytes) -> bytes | None:
    """The reply to a body nesting deeper than :data:`~hermes_memory.mcp.stdio_lines.MAX_NESTING`
    (-32600 with its id, or -32700 with id null: :func:`~hermes_memory.mcp.stdio_lines.too_deep`;
    parsing it would overflow Python's recursion), else the JSON-RPC -32600 reply (id null unless
    the body has a string/integer id) for a body that is JSON but no JSON-RPC message (``[1,2]``, ``"x"``, ``{}``) or a request whose id is an object,
    array, float or null, which the SDK answers with -32602 or reads as a notification (HTTP 202, no
    reply); checked as over stdio (:func:`hermes_memory.mcp.stdio_lines.repair_line`). None for
    every message the SDK accepts and for a body that is not JSON (the SDK's -32700 stays)."""
    refusal = too_deep(body.decode("utf-8", errors="replace"), unit="body")
    if refusal is None:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return None
        _, refusal = repair_line(text, unit="body")
        if refusal is None or refusal.error.code != types.INVALID_REQUEST:
            return None
    reply = {**refusal.model_dump(by_alias=True, exclude_none=True), "id": refusal.id}  # id null stays
    return json.dumps(reply).encode("utf-8")


class SurrogateRepair:
    """ASGI wrapper: each POST body is read whole (the SDK reads it whole too) and, where it has a
    lone surrogate escape, handed on repaired by :func:`repair_body` with its content-length fixed;
    a body :func:`invalid_request` refuses (too deep, or no JSON-RPC message) is answered here, 400
    with its JSON-RPC error.
    Other requests, and a body whose client went away while it was sent, pass on untouched."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        received: list[dict[str, Any]] = []
        while True:
            message = await receive()
            received.append(message)
            if message.get("type") != "http.request" or not message.get("more_body", False):
                break
        if received[-1].get("type") == "http.request":
            body = b"".join(m.get("body", b"") for m in received)
            refusal = invalid_request(body)
            if refusal is not None:
                await send({"type": "http.response.start", "status": 400,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(refusal)).encode())]})
                await send({"type": "http.response.body", "body": refusal})
                return
            repaired = repair_body(body)
            if repaired is not None:
                headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"content-length"]
                scope = {**scope, "headers": [*headers, (b"content-length", str(len(repaired)).encode())]}
                received = [{"type": "http.request", "body": repaired, "more_body": False}]

        async def replay() -> dict[str, Any]:
            return received.pop(0) if received else await receive()

        await self.app(scope, replay, send)
