"""A local Anthropic Messages API for the official SDK and Claude Code, with prompt caching counted.

``POST /v1/messages`` (and ``/v1/messages/count_tokens``) on a :class:`~tests.helpers.http.LocalHTTPServer`:
``tool_use`` / ``tool_result`` blocks, validation of the conversation shape the real API refuses, streamed
replies (server-sent events) when the request asks ``stream: true``, and prompt caching counted the way
the service documents it: the cacheable prefix is tools -> system -> messages; each block carrying
``cache_control`` is a breakpoint that writes the prefix ending there (if it reaches the minimum cacheable
length); a later request reads the longest previously written prefix found at a block boundary up to 20
blocks before one of its breakpoints; at most 4 breakpoints; a ``tool_choice`` other than the default
``auto`` keys the message blocks, so changing it keeps the cached tools and system prompt but not the
cached messages, as the service documents.

The script is the one of every model fake (``tests.helpers.model_fake``): OpenAI-style items (``str``,
an assistant ``dict`` with ``tool_calls``, :class:`~tests.helpers.model_fake.FakeHTTPError`, callables),
translated to Anthropic content blocks.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from tests.helpers.http import Request, sse
from tests.helpers.model_fake import FakeHTTPError, ScriptedModelServer, canon, tokens


class FakeAnthropicServer(ScriptedModelServer):
    """Anthropic messages on ``{url}/v1/messages`` with prompt-cache accounting (see module doc).

    ``min_cacheable_tokens`` (default 1024, the documented minimum for Sonnet/Opus models) is the
    shortest prefix a breakpoint caches. ``lookback_blocks`` (20) is how far before a breakpoint the
    service looks for an earlier cached prefix. Entries never expire (tests run well inside 5 minutes).
    """

    def __init__(self, *args: Any, min_cacheable_tokens: int = 1024, lookback_blocks: int = 20,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.min_cacheable_tokens = min_cacheable_tokens
        self.lookback_blocks = lookback_blocks
        self._cache: dict[str, int] = {}
        self._messages_start = 0  # index of the first message block in the last request's prefix

    def error_body(self, kind: str, message: str, code: str | None = None) -> dict[str, Any]:
        return {"type": "error", "error": {"type": kind, "message": message}}

    # -- request validation (the real API rejects these shapes) ---------------------------------
    def _validate(self, body: dict[str, Any]) -> str | None:
        if not isinstance(body.get("max_tokens"), int):
            return "max_tokens: Field required"
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return "messages: at least one message is required"
        if messages[0].get("role") != "user":
            return "messages: first message must use the \"user\" role"
        pending: set[str] = set()
        for i, msg in enumerate(messages):
            role = msg.get("role")
            if role not in ("user", "assistant"):
                return f"messages.{i}.role: Input should be 'user' or 'assistant'"
            if i and messages[i - 1].get("role") == role:
                return f"messages.{i}: roles must alternate between \"user\" and \"assistant\""
            content = msg.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            if not blocks:
                return f"messages.{i}: all messages must have non-empty content"
            uses: set[str] = set()
            results: set[str] = set()
            texts = [b.get("text") or "" for b in blocks if b.get("type") == "text"]
            if texts and not any(t.strip() for t in texts) and any(texts):
                # measured on the service: [' '] and ['\n'] are refused, [' ', 'real'] is accepted
                return f"messages.{i}: text content blocks must contain non-whitespace text"
            for block in blocks:
                if block.get("type") == "text" and not block.get("text"):
                    return f"messages.{i}: text content blocks must be non-empty"
                if block.get("type") == "tool_result":
                    results.add(str(block.get("tool_use_id")))
                if block.get("type") == "tool_use":
                    if role != "assistant" or not isinstance(block.get("input"), dict):
                        return f"messages.{i}: tool_use blocks belong to assistant messages and need an object input"
                    uses.add(str(block.get("id")))
            if role == "user":
                if results - pending:
                    return (f"messages.{i}: unexpected `tool_use_id` found in `tool_result` blocks: "
                            f"{sorted(results - pending)}. Each `tool_result` block must have a corresponding "
                            "`tool_use` block in the previous message.")
                if pending - results:
                    return (f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately "
                            f"after: {sorted(pending - results)}")
                pending = set()
            else:
                if results:
                    return f"messages.{i}: tool_result blocks belong to user messages"
                pending = uses
        if pending:
            return "the final assistant message has tool_use blocks without results"
        return None

    def _blocks(self, body: dict[str, Any]) -> list[tuple[str, bool]]:
        """The cacheable prefix as (canonical block without marker, has_breakpoint), in prefix order."""
        out: list[tuple[str, bool]] = []

        def add(tag: str, block: dict[str, Any]) -> None:
            marker = "cache_control" in block
            out.append((tag + canon({k: v for k, v in block.items() if k != "cache_control"}), marker))

        for tool in body.get("tools") or []:
            add("tool:", tool)
        system = body.get("system")
        if isinstance(system, str):
            add("system:", {"type": "text", "text": system})
        else:
            for block in system or []:
                add("system:", block)
        self._messages_start = len(out)
        for i, msg in enumerate(body.get("messages") or []):
            content = msg.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            for block in blocks:
                add(f"{msg.get('role')}{i}:", block)
        return out

    def handle(self, req: Request, body: dict[str, Any]) -> Any:
        path = req.path  # without the query: Claude Code posts to /v1/messages?beta=true
        if path.rstrip("/") == "/v1/messages/count_tokens":
            return 200, {"input_tokens": sum(tokens(c) for c, _ in self._blocks(body))}
        if path.rstrip("/") != "/v1/messages":
            return 404, self.error_body("not_found_error", f"unknown path {path}")
        keys = {req.headers.get("x-api-key", ""), req.headers.get("authorization", "").removeprefix("Bearer ")}
        if self.api_key is not None and self.api_key not in keys:  # SDK versions send either header
            return 401, self.error_body("authentication_error", "invalid x-api-key")
        problem = self._validate(body)
        if problem:
            return 400, self.error_body("invalid_request_error", problem)
        blocks = self._blocks(body)
        breakpoints = [i for i, (_, marked) in enumerate(blocks) if marked]
        if len(breakpoints) > 4:
            return 400, self.error_body("invalid_request_error",
                                        f"A maximum of 4 blocks with cache_control may be provided. Found {len(breakpoints)}.")
        cum_tokens: list[int] = []
        hashes: list[str] = []
        h = hashlib.sha256((body.get("model") or "").encode())
        choice = body.get("tool_choice") or {"type": "auto"}
        total = 0
        for k, (block, _) in enumerate(blocks):
            if k == self._messages_start:  # tool_choice invalidates message blocks only
                h.update(("tool_choice:" + canon(choice)).encode())
            h.update(block.encode())
            hashes.append(h.copy().hexdigest())
            total += tokens(block)
            cum_tokens.append(total)
        if self.context_limit is not None and total > self.context_limit:
            return 400, self.error_body("invalid_request_error",
                                        f"prompt is too long: {total} tokens > {self.context_limit} maximum")
        read_end = -1
        for b in breakpoints:
            for j in range(b, max(-1, b - self.lookback_blocks - 1), -1):
                if hashes[j] in self._cache:
                    read_end = max(read_end, j)
                    break
        read = cum_tokens[read_end] if read_end >= 0 else 0
        write = 0
        for b in breakpoints:
            if cum_tokens[b] >= self.min_cacheable_tokens and hashes[b] not in self._cache:
                self._cache[hashes[b]] = cum_tokens[b]
                write = max(write, cum_tokens[b] - read)
        reply = self.next_reply(body)
        if isinstance(reply, FakeHTTPError):
            return reply.status, reply.body
        message: dict[str, Any] = {"role": "assistant", "content": reply} if isinstance(reply, str) else dict(reply)
        content: list[dict[str, Any]] = []
        if message.get("content"):
            content.append({"type": "text", "text": message["content"]})
        for tc in message.get("tool_calls") or []:
            fn = tc.get("function") or {}
            args = fn.get("arguments") or "{}"
            content.append({"type": "tool_use", "id": tc.get("id") or f"toolu_{next(self._ids)}",
                            "name": fn.get("name"), "input": json.loads(args) if isinstance(args, str) else args})
        output = tokens(canon(content))
        out = {
            "id": f"msg_{next(self._ids)}", "type": "message", "role": "assistant",
            "model": body.get("model", self.model), "content": content,
            "stop_reason": "tool_use" if message.get("tool_calls") else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": total - read - write, "output_tokens": output,
                      "cache_creation_input_tokens": write, "cache_read_input_tokens": read},
        }
        self.responses.append(out)
        if body.get("stream"):
            return sse(_sse_events(out))
        return 200, out


def _sse_events(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The streaming form of a complete Anthropic ``message`` (the event sequence the API documents:
    message_start, per block start/delta/stop, message_delta with the stop reason, message_stop)."""
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for i, block in enumerate(message["content"]):
        if block["type"] == "text":
            events.append({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}})
            events.append({"type": "content_block_delta", "index": i,
                           "delta": {"type": "text_delta", "text": block["text"]}})
        else:
            events.append({"type": "content_block_start", "index": i,
                           "content_block": {**block, "input": {}}})
            events.append({"type": "content_block_delta", "index": i,
                           "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}})
        events.append({"type": "content_block_stop", "index": i})
    events.append({"type": "message_delta", "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                   "usage": {"output_tokens": usage["output_tokens"]}})
    events.append({"type": "message_stop"})
    return events
