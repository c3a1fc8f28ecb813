"""The lines a stdio client sends, made fit for the SDK's reader; the ones that cannot be get a JSON-RPC error.

The SDK's stdio reader parses each line with pydantic's JSON parser, which rejects a lone UTF-16
surrogate escape such as ``"\\ud800"`` (Node's ``JSON.stringify`` writes one for half of an emoji cut
in two), and drops every line it cannot parse without a reply: the client then waits forever. Here
every line is checked first:

- a line the SDK parses goes through unchanged;
- a line Python's :func:`json.loads` reads (it accepts lone surrogates) whose strings, with each lone
  surrogate replaced by U+FFFD, form a JSON-RPC message goes through re-encoded;
- anything else never reaches the SDK and is answered here: invalid JSON with a parse error
  (-32700) and id null, valid JSON that is no JSON-RPC message with an invalid-request error (-32600)
  carrying its id where it has a usable one (JSON-RPC 2.0 section 5.1; the README says so for `serve`);
- a line whose arrays and objects nest deeper than :data:`MAX_NESTING` levels is refused before any
  parser sees it (Python's recursive parser and walks would raise ``RecursionError`` and end the
  server): -32600 with its id where the top level reads as a request, else -32700 with id null.
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO

import anyio
import mcp_types as types
from anyio.abc import ObjectSendStream
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.message import SessionMessage

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

MAX_NESTING = 128
"""Deepest nesting of arrays and objects a message may have, its own top-level object counted
(a tool's arguments sit at level 3). Chosen below the depth pydantic's JSON parser (the SDK's
reader) still accepts, so every message within it parses, and far below Python's recursion limit
(1,000 frames), so :func:`json.loads` and the recursive walks here never overflow."""

# a JSON string (escapes included) or one bracket; an unterminated string ends the scan
_NESTING_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|"|[\[\]{}]')


def nesting_depth(text: str, limit: int = MAX_NESTING) -> tuple[int, str | None]:
    """How deep ``text``'s arrays and objects nest, brackets inside JSON strings not counted, and,
    when that is over ``limit``, the top level with every nested value cut out (``{"id": 77,
    "params": null}``: JSON :func:`json.loads` reads without recursing, to find the id by), else
    ``None``. Linear in ``len(text)``; a text with at most ``limit`` brackets is not scanned."""
    if text.count("[") + text.count("{") <= limit:
        return 0, None
    depth = deepest = 0
    kept: list[str] = []  # the top level, nested values replaced by null
    start = 0  # where the text not yet copied to ``kept`` begins (while at depth 0 or 1)
    for match in _NESTING_TOKEN.finditer(text):
        token = match.group()
        if token == '"':
            break  # unterminated string: not JSON; the depth so far stands
        if token[0] == '"':
            continue
        if token in "[{":
            depth += 1
            deepest = max(deepest, depth)
            if depth == 2:
                kept.append(text[start:match.start()])
                kept.append("null")
        else:
            if depth == 2:
                start = match.end()
            depth -= 1
    if deepest <= limit:
        return deepest, None
    if depth <= 1:
        kept.append(text[start:])
    return deepest, "".join(kept)


def too_deep(text: str, unit: str = "line") -> types.JSONRPCError | None:
    """The JSON-RPC error for ``text`` when it nests deeper than :data:`MAX_NESTING`, else ``None``:
    -32600 with the request's id when its top level (nested values cut out) is an object with a
    usable id, else -32700 with id null. ``unit`` as in :func:`repair_line`. Never raises."""
    depth, top = nesting_depth(text)
    if top is None:
        return None
    try:
        id_ = _usable_id(json.loads(top, parse_constant=no_constants))
    except ValueError:
        id_ = None
    message = (f"the {unit} nests arrays and objects {depth:,} levels deep; "
               f"at most {MAX_NESTING} are read")
    if id_ is None:
        return _error(None, types.PARSE_ERROR, f"Parse error: {message}")
    return _error(id_, types.INVALID_REQUEST, f"Invalid Request: {message}")


def no_constants(name: str) -> Any:
    """``parse_constant`` for :func:`json.loads`: NaN and (-)Infinity are no JSON; raises ValueError."""
    raise ValueError(f"{name} is not JSON")


def without_surrogates(value: Any) -> Any:
    """``value`` (parsed JSON) with every UTF-16 surrogate in its strings and keys replaced by U+FFFD."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [without_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {without_surrogates(k): without_surrogates(v) for k, v in value.items()}
    return value


def _usable_id(value: Any) -> int | str | None:
    """The request id in a parsed line when it is one JSON-RPC allows (a string or an integer), else None."""
    if not isinstance(value, dict):
        return None
    id_ = value.get("id")
    if isinstance(id_, str) or (isinstance(id_, int) and not isinstance(id_, bool)):
        return id_
    return None


def _error(id_: int | str | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=id_, error=types.ErrorData(code=code, message=message))


def repair_line(line: str, unit: str = "line") -> tuple[str | None, types.JSONRPCError | None]:
    """Check one line read from stdin (its newline may still be on it), or one HTTP body.

    Returns ``(line_for_the_sdk, None)`` when the SDK's reader can take the line (unchanged when it
    already could; re-encoded JSON with lone surrogates replaced by U+FFFD when that is what made it
    unparseable), else ``(None, error)``: the JSON-RPC error to send back instead (-32700 with id
    null for invalid JSON, -32600 with the line's id where it has a usable one). ``unit``: what the
    error messages call the text (``"line"`` over stdio, ``"body"`` over HTTP). A text nesting
    deeper than :data:`MAX_NESTING` is refused first (:func:`too_deep`). Never raises.
    """
    line_out, error, _ = _checked(line, unit)
    return line_out, error


def _checked(line: str, unit: str) -> tuple[str | None, types.JSONRPCError | None, types.JSONRPCMessage | None]:
    """:func:`repair_line`, plus the message the SDK will read from the line (``None`` when refused)."""
    refusal = too_deep(line, unit)
    if refusal is not None:
        return None, refusal, None
    try:
        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError:
        pass
    else:
        # a cheap test first: most notifications carry no "id" anywhere
        if not (isinstance(message, types.JSONRPCNotification) and '"id"' in line):
            return line, None, message
        refusal = _bad_id(json.loads(line), message)
        return (None, refusal, None) if refusal else (line, None, message)
    try:
        parsed = json.loads(line, parse_constant=no_constants)
    except (ValueError, RecursionError) as exc:  # RecursionError: not reached within MAX_NESTING
        return None, _error(None, types.PARSE_ERROR, f"Parse error: the {unit} is not JSON ({exc}); "
                                                     f"send one JSON-RPC message per {unit}"), None
    cleaned = without_surrogates(parsed)
    try:
        message = types.jsonrpc_message_adapter.validate_python(cleaned, by_name=False)
    except ValueError:
        return None, _error(_usable_id(cleaned), types.INVALID_REQUEST,
                            f'Invalid Request: the {unit} is JSON but no JSON-RPC 2.0 message (it needs "jsonrpc": '
                            '"2.0" and a "method", or a "result"/"error" with an "id")'), None
    refusal = _bad_id(cleaned, message)
    return (None, refusal, None) if refusal else (json.dumps(cleaned) + "\n", None, message)


def _bad_id(parsed: Any, message: types.JSONRPCMessage) -> types.JSONRPCError | None:
    """The error for a request whose ``id`` is no string or integer (null, a float, an object).

    The SDK would read it as a notification (its ``id`` ignored) and never answer; the client, which
    sent an id, waits for an answer.
    """
    if isinstance(message, types.JSONRPCNotification) and isinstance(parsed, dict) and "id" in parsed:
        return _error(None, types.INVALID_REQUEST,
                      f'Invalid Request: "id" must be a string or an integer, not {json.dumps(parsed["id"])[:40]}')
    return None


EOF_GRACE_S = 30.0
"""Seconds the stdio server goes on after the client closed stdin, to answer the requests it had
already read (the SDK would cancel them at once: their writes done, their answers lost); a
request still running then is cancelled and answered with the SDK's "Connection closed" error."""


class CheckedStdin:
    """The stdin the SDK's stdio reader iterates (``async for line in stdin``): lines, checked by :func:`repair_line`.

    ``binary``: the byte stream to read (decoded as UTF-8, undecodable bytes as U+FFFD, as the SDK
    does). Errors for refused lines are sent on the stream given to :meth:`attach` (the SDK's write
    stream, so replies never interleave with its own writes); until it is attached they wait.

    End of input is held back until every request read has been answered (or cancelled by the
    client's ``notifications/cancelled``), at most :data:`EOF_GRACE_S` seconds: the SDK cancels
    the requests still running when its reader ends. Answers are seen on the stream
    :meth:`answering` returns, which the server must write on.
    """

    def __init__(self, binary: BinaryIO) -> None:
        self._text = anyio.wrap_file(io.TextIOWrapper(binary, encoding="utf-8", errors="replace"))
        self._replies: ObjectSendStream[SessionMessage] | None = None
        self._attached = anyio.Event()
        self._unanswered: Counter[Any] = Counter()  # request id -> requests read with it, not answered
        self._answered = anyio.Event()  # set (and replaced) whenever an answer goes out

    def attach(self, write_stream: ObjectSendStream[SessionMessage]) -> None:
        """Send error replies on ``write_stream`` from now on."""
        self._replies = write_stream
        self._attached.set()

    def answering(self, write_stream: Any) -> _AnswerWatch:
        """``write_stream`` (the SDK's), wrapped so that the answers sent on it are counted."""
        return _AnswerWatch(write_stream, self._settle)

    def _settle(self, request_id: Any) -> None:
        request_id = _correlated(request_id)
        if self._unanswered[request_id] > 0:
            self._unanswered[request_id] -= 1
            if not self._unanswered[request_id]:
                del self._unanswered[request_id]
            self._answered.set()
            self._answered = anyio.Event()

    def _note(self, message: types.JSONRPCMessage) -> None:
        if isinstance(message, types.JSONRPCRequest):
            self._unanswered[_correlated(message.id)] += 1
        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            self._settle((message.params or {}).get("requestId"))  # the SDK never answers it

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for raw in self._text:
            line, error, message = _checked(raw, "line")
            if line is not None:
                if message is not None:
                    self._note(message)
                yield line
                continue
            assert error is not None
            await self._attached.wait()
            assert self._replies is not None
            try:
                await self._replies.send(SessionMessage(error))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return  # the session is over: nobody to answer
        with anyio.move_on_after(EOF_GRACE_S):
            while self._unanswered:
                await self._answered.wait()


def _correlated(request_id: Any) -> Any:
    """``request_id`` as the SDK correlates it (:func:`mcp.shared.dispatcher.coerce_request_id`: the
    string ``"7"`` and the integer 7 are one id), so a ``notifications/cancelled`` that names a
    request with the other type settles it as the SDK cancels it, instead of holding end of input
    for :data:`EOF_GRACE_S`. Anything not a string or an integer is kept as it is."""
    if isinstance(request_id, str | int) and not isinstance(request_id, bool):
        return coerce_request_id(request_id)
    return request_id


class _AnswerWatch:
    """A write stream that tells ``on_answer(id)`` after each response or error it has sent."""

    def __init__(self, inner: Any, on_answer: Callable[[Any], None]) -> None:
        self._inner = inner
        self._on_answer = on_answer

    async def send(self, item: SessionMessage, /) -> None:
        await self._inner.send(item)
        if isinstance(item.message, types.JSONRPCResponse | types.JSONRPCError):
            self._on_answer(item.message.id)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _AnswerWatch:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        return await self._inner.__aexit__(*exc)


@contextmanager
def claimed_stdin() -> Iterator[BinaryIO]:
    """Stdin's bytes on a private descriptor while fd 0 points at the null device (restored on exit).

    So tool handlers and the processes they start read EOF instead of stealing protocol lines, as
    the SDK's own stdio transport arranges when it reads stdin itself. Where descriptors cannot be
    duplicated (or on Windows) yields ``sys.stdin.buffer`` as it is.
    """
    if sys.platform == "win32":
        yield sys.stdin.buffer
        return
    import fcntl

    try:
        private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError:
        yield sys.stdin.buffer
        return
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(null, 0)
        finally:
            os.close(null)
    except OSError:
        yield sys.stdin.buffer  # fd 0 still is the wire (private is kept open for the worker thread)
        return
    try:
        # closefd=False: the SDK reads on a worker thread that may still block on this descriptor
        # after the session ends; closing it could recycle the number under that read.
        yield os.fdopen(private, "rb", closefd=False)
    finally:
        os.dup2(private, 0)
