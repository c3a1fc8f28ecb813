"""The test suite's one OpenAI-compatible model service, and the scripted base of every model fake.

:class:`FakeOpenAIServer` serves, on a :class:`~tests.helpers.http.LocalHTTPServer`:

* ``POST .../chat/completions`` in the OpenAI wire format: text answers and ``tool_calls`` (with
  ``finish_reason: tool_calls``), ``usage`` with ``prompt_tokens_details.cached_tokens`` (automatic
  prefix caching: the longest common prefix of whole messages with an earlier request, tool
  definitions first, counts as cached when it reaches 1024 tokens, rounded down to a multiple of 128,
  as the service documents), ``context_length_exceeded`` errors past ``context_limit``, a 401 for
  another key than ``api_key``, and a streamed reply (``chat.completion.chunk`` events) when the
  request asks ``stream: true``;
* ``POST .../embeddings``: deterministic hashed bag-of-words vectors (:func:`embed`), so texts sharing
  words are close and a semantic search over them behaves predictably; honours ``dimensions``;
* ``GET .../models``: one model.

Every model fake (this one, ``tests.helpers.anthropic_fake.FakeAnthropicServer``,
``tests.hooks.fake_gemini.FakeGeminiServer``) plays a script, like ``ScriptedModel``: each chat request
takes the next item, ``str`` (answer text), ``dict`` (an OpenAI-style assistant message, e.g. with
``tool_calls``), :class:`FakeHTTPError`, or a callable ``(request_body) -> item``. When the script is
empty, ``default`` is used; without one the server answers 400 "script exhausted" (never retried by the
SDKs). Requests are logged in ``requests`` (:class:`~tests.helpers.http.Request`), the JSON answers in
``responses``.

Tokens are estimated deterministically: ceil(chars of the block's canonical JSON / 4).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import threading
from dataclasses import dataclass
from typing import Any

from tests.helpers.http import LocalHTTPServer, Reply, Request, sse

EMBEDDING_DIM = 64
"""Default length of :func:`embed` vectors (small: the backends under test accept any dimension)."""


def canon(obj: Any) -> str:
    """Canonical JSON (sorted keys, no spaces): what the fakes count tokens and compare prefixes on."""
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def tokens(obj: Any) -> int:
    """The fakes' token estimate of a string or a JSON value: ceil(chars / 4)."""
    text = obj if isinstance(obj, str) else canon(obj)
    return (len(text) + 3) // 4


def embed(text: str, dim: int = EMBEDDING_DIM) -> list[float]:
    """Deterministic unit vector: each lower-cased word (2+ letters/digits) adds 1 at sha256(word) mod dim;
    a text without such words gets the first unit vector (never the zero vector)."""
    vec = [0.0] * dim
    for word in re.findall(r"[a-z0-9]{2,}", (text or "").lower()):
        vec[int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "big") % dim] += 1.0
    if not any(vec):
        vec[0] = 1.0
    norm = math.sqrt(sum(v * v for v in vec))
    return [v / norm for v in vec]


def summarise_last_user_message(body: dict[str, Any]) -> str:
    """A default chat answer for real backends that summarise: ``"Summary: "`` + the last user text (200 chars)."""
    last = next((m for m in reversed(body.get("messages") or []) if m.get("role") == "user"), {"content": ""})
    content = last.get("content")
    if isinstance(content, list):
        content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return "Summary: " + str(content or "")[:200]


@dataclass
class FakeHTTPError:
    """A scripted error reply: HTTP ``status`` with JSON ``body``."""

    status: int
    body: dict[str, Any]


class ScriptedModelServer(LocalHTTPServer):
    """Base of the model fakes: the script (module doc), an optional key, a context limit, one request at
    a time. Subclasses implement :meth:`handle` and :meth:`error_body`."""

    def __init__(self, script: list[Any] | None = None, *, default: Any = None, api_key: str | None = None,
                 context_limit: int | None = None, model: str = "fake-model") -> None:
        super().__init__(name=type(self).__name__)
        self.script = list(script or [])
        self.default = default
        self.api_key = api_key
        self.context_limit = context_limit
        self.model = model
        self.responses: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self._serial = threading.Lock()

    def add(self, *items: Any) -> None:
        """Append items to the script."""
        with self._lock:
            self.script.extend(items)

    def next_reply(self, body: dict[str, Any]) -> Any:
        """The next script item for a request with this ``body`` (callables are called with it)."""
        with self._lock:
            item = self.script.pop(0) if self.script else self.default
        if item is None:
            return FakeHTTPError(400, self.error_body("invalid_request_error", "fake server script exhausted"))
        if callable(item):
            item = item(body)
        return item

    def dispatch(self, req: Request) -> Any:
        try:
            body = req.json() if req.raw else {}
        except ValueError:
            return Reply(400, {"error": {"message": "body is not JSON"}})
        if not isinstance(body, dict):
            return Reply(400, self.error_body("invalid_request_error", "body is not a JSON object"))
        req.body = body  # whatever content type the client named
        with self._serial:  # one request at a time: the script and the cache accounting are sequential
            return self.handle(req, body)

    def handle(self, req: Request, body: dict[str, Any]) -> Any:
        raise NotImplementedError

    def error_body(self, kind: str, message: str, code: str | None = None) -> dict[str, Any]:
        raise NotImplementedError


class FakeOpenAIServer(ScriptedModelServer):
    """OpenAI chat completions, embeddings and models under ``{url}/v1`` (any path ending in the route).

    ``api_key``: when set, other bearer tokens get 401. ``context_limit`` (tokens): longer prompts get
    400 ``context_length_exceeded``. ``embedding_dim``: the length of embedding vectors when the request
    names no ``dimensions``.
    """

    def __init__(self, *args: Any, embedding_dim: int = EMBEDDING_DIM, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.embedding_dim = embedding_dim
        self._seen: list[list[str]] = []

    @property
    def base_url(self) -> str:
        """``{url}/v1``: what an OpenAI client takes as ``base_url``."""
        return self.url + "/v1"

    @property
    def dim(self) -> int:
        return self.embedding_dim

    def error_body(self, kind: str, message: str, code: str | None = None) -> dict[str, Any]:
        return {"error": {"message": message, "type": kind, "param": None, "code": code}}

    def handle(self, req: Request, body: dict[str, Any]) -> Any:
        path = req.path.rstrip("/")
        if req.method == "GET" and path.endswith("/models"):
            return 200, {"object": "list", "data": [{"id": self.model, "object": "model", "created": 0,
                                                     "owned_by": "fake"}]}
        if req.method != "POST" or not (path.endswith("/chat/completions") or path.endswith("/embeddings")):
            return 404, self.error_body("invalid_request_error", f"unknown path {req.method} {req.path}")
        if self.api_key is not None and req.headers.get("authorization", "") != f"Bearer {self.api_key}":
            return 401, self.error_body("invalid_request_error", "Incorrect API key provided.", "invalid_api_key")
        if path.endswith("/embeddings"):
            return self._embeddings(body)
        return self._chat(body)

    def _embeddings(self, body: dict[str, Any]) -> Any:
        inputs = body.get("input")
        inputs = [inputs] if isinstance(inputs, str) else list(inputs or [])
        dim = int(body.get("dimensions") or self.embedding_dim)
        data = [{"object": "embedding", "index": i, "embedding": embed(str(t), dim)} for i, t in enumerate(inputs)]
        return 200, {"object": "list", "data": data, "model": body.get("model", self.model),
                     "usage": {"prompt_tokens": len(inputs), "total_tokens": len(inputs)}}

    def _chat(self, body: dict[str, Any]) -> Any:
        messages = body.get("messages") or []
        if not isinstance(messages, list) or not messages:
            return 400, self.error_body("invalid_request_error", "'messages' must be a non-empty array")
        pieces = [canon(m) for m in messages]
        prompt = tokens(canon(body.get("tools") or [])) + sum(tokens(p) for p in pieces)
        if self.context_limit is not None and prompt > self.context_limit:
            return 400, self.error_body(
                "invalid_request_error",
                f"This model's maximum context length is {self.context_limit} tokens. However, your messages "
                f"resulted in {prompt} tokens. Please reduce the length of the messages.",
                "context_length_exceeded")
        cached = 0
        pieces = [canon(body.get("tools") or []), *pieces]  # the tool definitions lead the cached prefix
        for earlier in self._seen:
            n = 0
            for a, b in zip(earlier, pieces, strict=False):
                if a != b:
                    break
                n += tokens(a)
            cached = max(cached, n)
        cached = (cached // 128) * 128 if cached >= 1024 else 0
        self._seen.append(pieces)
        reply = self.next_reply(body)
        if isinstance(reply, FakeHTTPError):
            return reply.status, reply.body
        message = {"role": "assistant", "content": reply} if isinstance(reply, str) else dict(reply)
        message.setdefault("role", "assistant")
        message.setdefault("content", None)
        completion = tokens((message.get("content") or "") + canon(message.get("tool_calls") or []))
        out = {
            "id": f"chatcmpl-{next(self._ids)}", "object": "chat.completion", "created": 0,
            "model": body.get("model", self.model),
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion, "prompt_tokens_details": {"cached_tokens": cached}},
        }
        self.responses.append(out)
        if body.get("stream"):
            return _chunks(out, with_usage=bool((body.get("stream_options") or {}).get("include_usage")))
        return 200, out


def _chunks(completion: dict[str, Any], *, with_usage: bool) -> Reply:
    """The streamed form of a complete chat ``completion``: a role chunk, one content chunk, one chunk per
    tool call, a finish chunk, the usage chunk when asked (``stream_options.include_usage``), ``[DONE]``."""
    choice = completion["choices"][0]
    message = choice["message"]
    head = {k: completion[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

    events = [chunk({"role": "assistant", "content": ""})]
    if message.get("content"):
        events.append(chunk({"content": message["content"]}))
    for i, call in enumerate(message.get("tool_calls") or []):
        events.append(chunk({"tool_calls": [{"index": i, **call}]}))
    events.append(chunk({}, choice["finish_reason"]))
    if with_usage:
        events.append({**head, "choices": [], "usage": completion["usage"]})
    reply = sse(events, named=False)
    assert reply.raw is not None
    reply.raw += b"data: [DONE]\n\n"
    return reply
