"""Messages the SDK's own parser cannot read (stdio lines, HTTP bodies): every one gets a reply, never a hang."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.mcp.helpers import HttpServer, child_env, serve_argv

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
SURROGATE_SEARCH = ('{"jsonrpc":"2.0","id":7,"method":"tools/call",'
                    '"params":{"name":"session_search","arguments":{"query":"\\ud800 test"}}}')
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
REPLY_WAIT_S = 60  # a hang detector, not a speed requirement


class RawClient:
    """Writes raw lines to a real ``serve --transport stdio`` and reads its replies with a timeout."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.replies: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.replies.put(line)

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def reply(self) -> dict[str, Any]:
        try:
            line = self.replies.get(timeout=REPLY_WAIT_S)
        except queue.Empty:
            raise AssertionError(f"no reply within {REPLY_WAIT_S} s (the server dropped the line)") from None
        return json.loads(line)


@contextmanager
def raw_stdio(home: Path) -> Iterator[RawClient]:
    proc = subprocess.Popen(serve_argv(home), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, encoding="utf-8", env=child_env())
    try:
        client = RawClient(proc)
        client.send(json.dumps(INIT))
        assert client.reply()["result"]["serverInfo"]["name"] == "hermes-memory"
        client.send(json.dumps(INITIALIZED))
        yield client
        assert proc.stdin is not None
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_lone_surrogate_escape_in_a_request_gets_its_answer_and_the_next_request_too(hermes_home: Path) -> None:
    """Node's JSON.stringify writes lone surrogates as ``\\ud800``; the SDK's parser rejects that line
    and used to drop it silently, so the client waited forever. It is answered (the surrogate read as
    U+FFFD) and the server keeps serving."""
    with raw_stdio(hermes_home) as client:
        client.send(SURROGATE_SEARCH)
        answer = client.reply()
        assert answer["id"] == 7 and "result" in answer, answer
        assert answer["result"]["isError"] is False, answer
        assert json.loads(answer["result"]["content"][0]["text"])["query"] == "\ufffd test"
        client.send(json.dumps({"jsonrpc": "2.0", "id": 8, "method": "tools/list"}))
        listed = client.reply()
        assert listed["id"] == 8 and "memory" in {t["name"] for t in listed["result"]["tools"]}


def test_lines_that_are_not_json_rpc_get_an_error_reply_with_their_id_when_it_can_be_read(hermes_home: Path) -> None:
    """JSON-RPC 2.0 section 5.1: invalid JSON is a parse error (-32700) with id null; valid JSON that is not a
    request is an invalid request (-32600) carrying its id when it has a usable one."""
    cases = [
        ("this is not json", -32700, None),
        ('{"jsonrpc":"2.0","id":3,"method":"tools/list"', -32700, None),  # cut short
        ('{"jsonrpc":"2.0","id":4}', -32600, 4),
        ('{"id":"five","method":"tools/list"}', -32600, "five"),  # no "jsonrpc"
        ('[1, 2]', -32600, None),
        ('{"jsonrpc":"2.0","id":{"no":"objects"},"method":"tools/list"}', -32600, None),
    ]
    with raw_stdio(hermes_home) as client:
        for line, code, id_ in cases:
            client.send(line)
            answer = client.reply()
            assert answer["jsonrpc"] == "2.0" and answer["id"] == id_, (line, answer)
            assert answer["error"]["code"] == code, (line, answer)
            assert answer["error"]["message"], (line, answer)
        client.send(json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}))
        assert client.reply()["id"] == 9


def _jsonrpc_body(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of a streamable-HTTP answer (plain JSON or one SSE `data:` event)."""
    if response.headers.get("content-type", "").startswith("application/json"):
        return response.json()
    for line in response.text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            return json.loads(line[5:])
    raise AssertionError(f"no JSON-RPC message in {response.text!r}")


def _initialised_session(http: httpx.Client, url: str) -> dict[str, str]:
    """Initialise an MCP session over streamable HTTP at ``url``; the headers every later request of it sends."""
    init = http.post(url, content=json.dumps(INIT), headers=MCP_HEADERS)
    assert init.status_code == 200, init.text
    headers = {**MCP_HEADERS, "mcp-session-id": init.headers["mcp-session-id"],
               "mcp-protocol-version": _jsonrpc_body(init)["result"]["protocolVersion"]}
    assert http.post(url, content=json.dumps(INITIALIZED), headers=headers).status_code == 202
    return headers


def test_http_answers_a_lone_surrogate_escape_like_stdio_instead_of_a_parse_error(hermes_home: Path) -> None:
    """The SDK's HTTP transport answered the same body with 400 and -32700 although it is JSON Python
    reads; it is answered as over stdio, and bodies that are not JSON still get the SDK's parse error."""
    with HttpServer(hermes_home) as srv, httpx.Client(timeout=REPLY_WAIT_S) as http:
        headers = _initialised_session(http, srv.url)
        found = http.post(srv.url, content=SURROGATE_SEARCH, headers=headers)
        assert found.status_code == 200, found.text
        answer = _jsonrpc_body(found)
        assert answer["id"] == 7 and answer["result"]["isError"] is False, answer
        assert json.loads(answer["result"]["content"][0]["text"])["query"] == "\ufffd test"
        broken = http.post(srv.url, content="not json", headers=headers)
        assert broken.status_code == 400 and _jsonrpc_body(broken)["error"]["code"] == -32700
        listed = http.post(srv.url, content=json.dumps({"jsonrpc": "2.0", "id": 8, "method": "tools/list"}),
                           headers=headers)
        assert _jsonrpc_body(listed)["id"] == 8


def test_http_answers_json_that_is_no_json_rpc_message_with_invalid_request_and_id_null(hermes_home: Path) -> None:
    """The SDK answered ``[1,2]``, ``"x"`` and ``{}`` with -32602 and a request with an object or array
    id with 202 and no reply; JSON-RPC 2.0 says -32600 with id null, and the message speaks of the
    body (it said "the line", stdio's wording). Valid requests still answered."""
    with HttpServer(hermes_home) as srv, httpx.Client(timeout=REPLY_WAIT_S) as http:
        headers = _initialised_session(http, srv.url)
        for body in ("[1, 2]", '"x"', "{}", '{"jsonrpc":"2.0","id":{"no":"objects"},"method":"tools/list"}',
                     '{"jsonrpc":"2.0","id":[1],"method":"tools/list"}'):
            refused = http.post(srv.url, content=body, headers=headers)
            assert refused.status_code == 400, (body, refused.status_code, refused.text)
            error = _jsonrpc_body(refused)
            assert error["error"]["code"] == -32600 and error["id"] is None, (body, error)
            assert "line" not in error["error"]["message"], (body, error)  # stdio's wording: a body here
            if '"id"' not in body:
                assert error["error"]["message"].startswith("Invalid Request: the body is JSON"), (body, error)
        listed = http.post(srv.url, content=json.dumps({"jsonrpc": "2.0", "id": 8, "method": "tools/list"}),
                           headers=headers)
        assert listed.status_code == 200 and _jsonrpc_body(listed)["id"] == 8


def _deep_search(id_: int, depth: int) -> str:
    """A ``session_search`` call whose query is ``depth`` nested arrays (the whole message nests ``depth + 4``)."""
    query = "[" * depth + "]" * depth
    return (f'{{"jsonrpc":"2.0","id":{id_},"method":"tools/call","params":{{"name":"session_search",'
            f'"arguments":{{"query":{query}}}}}}}')


def test_a_line_nested_100000_deep_is_refused_with_its_id_and_the_server_goes_on(hermes_home: Path) -> None:
    """Python's recursive JSON parser raised RecursionError on such a line and the server exited 1,
    the line and every later one unanswered. It is refused with -32600 and its id (read from its top
    level), a line nested that deep without a readable id gets -32700, and the next request is answered."""
    with raw_stdio(hermes_home) as client:
        client.send(_deep_search(77, 100_000))
        refused = client.reply()
        assert refused["id"] == 77 and refused["error"]["code"] == -32600, refused
        assert "128" in refused["error"]["message"], refused
        client.send("[" * 100_000 + "]" * 100_000)
        bare = client.reply()
        assert bare["id"] is None and bare["error"]["code"] == -32700, bare
        client.send(json.dumps({"jsonrpc": "2.0", "id": 78, "method": "tools/list"}))
        assert client.reply()["id"] == 78


def test_a_line_within_the_nesting_limit_is_still_served(hermes_home: Path) -> None:
    """The limit refuses only what is deeper than 128 levels: a request nested 120 deep reaches the
    tool (whose schema refuses a list query with -32602, naming the field)."""
    with raw_stdio(hermes_home) as client:
        client.send(_deep_search(5, 120))
        answer = client.reply()
        assert answer["id"] == 5 and answer["error"]["code"] == -32602, answer
        assert "query" in answer["error"]["message"], answer


def test_http_refuses_a_body_nested_100000_deep_with_400_and_serves_the_next(hermes_home: Path) -> None:
    """The same body over HTTP raised RecursionError in the surrogate repair and got a 500; it gets
    400 with a JSON-RPC error carrying its id, and the server goes on serving."""
    with HttpServer(hermes_home) as srv, httpx.Client(timeout=REPLY_WAIT_S) as http:
        headers = _initialised_session(http, srv.url)
        deep = _deep_search(77, 100_000)
        for body in (deep, deep.replace("session_search", "session_search\\ud800")):  # the repair path too
            refused = http.post(srv.url, content=body, headers=headers)
            assert refused.status_code == 400, (refused.status_code, refused.text[:300])
            error = _jsonrpc_body(refused)
            assert error["id"] == 77 and error["error"]["code"] == -32600, error
        listed = http.post(srv.url, content=json.dumps({"jsonrpc": "2.0", "id": 78, "method": "tools/list"}),
                           headers=headers)
        assert listed.status_code == 200 and _jsonrpc_body(listed)["id"] == 78
        assert srv.proc is not None and srv.proc.poll() is None
