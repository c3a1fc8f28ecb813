"""Adapter for the Anthropic messages API, on the official ``anthropic`` SDK.

OpenAI-style messages are converted to Anthropic's shape and the reply converted back:

* ``system`` messages become the top-level ``system`` list of text blocks;
* assistant ``tool_calls`` become ``tool_use`` blocks (arguments JSON-decoded into ``input``);
* ``tool`` messages become ``tool_result`` blocks inside a user turn; consecutive same-role
  turns are merged (the API wants user and assistant to alternate);
* ``image_url`` parts become ``image`` blocks (base64 data URLs or plain URLs).

Prompt-cache breakpoints are native: a ``cache_control`` marker on a content part (or on the
message itself, as ``apply_anthropic_cache_control`` puts it for tool results and empty content)
is carried to the corresponding Anthropic block. The service caches the prefix
(tools -> system -> messages) ending at each marked block and reports
``cache_read_input_tokens`` / ``cache_creation_input_tokens``, which become
``Usage.cache_read_tokens`` / ``cache_write_tokens``.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

import anthropic

from hermes_memory.llm.base import (
    ModelAuthError,
    ModelCallError,
    ModelNetworkError,
    ModelRateLimitError,
    ModelRequestError,
    ModelResponse,
    ModelServerError,
    Usage,
    context_length_error,
    forced_tool_name,
    is_context_length_message,
    normalize_tool_schema,
    parse_tool_arguments,
)
from hermes_memory.wording import clause

_STOP_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls",
                 "max_tokens": "length", "refusal": "content_filter", "pause_turn": "stop"}


def _image_block(part: dict[str, Any]) -> dict[str, Any]:
    url = part.get("image_url")
    url = url.get("url", "") if isinstance(url, dict) else str(url or "")
    if url.startswith("data:") and ";base64," in url:
        media, data = url[5:].split(";base64,", 1)
        return {"type": "image", "source": {"type": "base64", "media_type": media, "data": data}}
    return {"type": "image", "source": {"type": "url", "url": url}}


def _content_blocks(content: Any) -> list[dict[str, Any]]:
    """Anthropic blocks for OpenAI content (str / parts / None); cache markers kept on their block."""
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    blocks: list[dict[str, Any]] = []
    for part in content:
        if isinstance(part, str):
            block: dict[str, Any] = {"type": "text", "text": part}
        elif part.get("type") == "text":
            block = {"type": "text", "text": part.get("text", "")}
        elif part.get("type") == "image_url":
            block = _image_block(part)
        else:
            block = {k: v for k, v in part.items() if k != "cache_control"}
        if isinstance(part, dict) and part.get("cache_control"):
            block["cache_control"] = part["cache_control"]
        if block.get("type") == "text" and not str(block.get("text") or "").strip():
            if block.get("cache_control") and blocks:
                blocks[-1]["cache_control"] = block["cache_control"]
            continue  # the API rejects empty and whitespace-only text blocks
        blocks.append(block)
    return blocks


def _mark_last(blocks: list[dict[str, Any]], marker: Any) -> None:
    if marker and blocks:
        blocks[-1]["cache_control"] = marker


def convert_messages(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Convert OpenAI-style ``messages`` to Anthropic ``(system_blocks, messages)``.

    Keys starting with ``_`` are in-process only and dropped. Tool results whose content is a list
    keep their text/image parts. Raises nothing; an empty or whitespace-only turn gets a ``"(empty)"`` text block
    because the API rejects empty content.
    """
    system: list[dict[str, Any]] = []
    out: list[dict[str, Any]] = []

    def push(role: str, blocks: list[dict[str, Any]]) -> None:
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": list(blocks)})

    for msg in messages:
        role = msg.get("role")
        marker = msg.get("cache_control")
        if role == "system":
            blocks = _content_blocks(msg.get("content"))
            _mark_last(blocks, marker)
            system.extend(blocks)
        elif role == "tool":
            content = msg.get("content")
            if not marker and isinstance(content, list):
                marker = next((p["cache_control"] for p in content
                               if isinstance(p, dict) and p.get("cache_control")), None)
            inner = _content_blocks(content)
            for b in inner:
                b.pop("cache_control", None)
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": str(msg.get("tool_call_id") or ""),
                                     "content": inner or [{"type": "text", "text": "(empty)"}]}
            if marker:
                block["cache_control"] = marker
            push("user", [block])
        elif role == "assistant":
            blocks = _content_blocks(msg.get("content"))
            for tc in msg.get("tool_calls") or []:
                fn = tc.get("function") or {}
                blocks.append({"type": "tool_use", "id": tc.get("id") or tc.get("call_id") or "",
                               "name": fn.get("name", ""), "input": parse_tool_arguments(fn.get("arguments"))})
            _mark_last(blocks, marker)
            if not blocks:
                blocks = [{"type": "text", "text": "(empty)"}]
                _mark_last(blocks, marker)
            push("assistant", blocks)
        else:  # user (and anything unknown, shown as user text)
            blocks = _content_blocks(msg.get("content"))
            if not blocks:
                blocks = [{"type": "text", "text": "(empty)"}]
            _mark_last(blocks, marker)
            push("user", blocks)
    if out and out[0]["role"] != "user":
        out.insert(0, {"role": "user", "content": [{"type": "text", "text": "(conversation continues)"}]})
    return system, out


def convert_tools(tools: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """OpenAI tool schemas -> Anthropic ``{"name", "description", "input_schema"}``."""
    result = []
    for tool in tools or []:
        bare = normalize_tool_schema(tool)
        result.append({"name": bare["name"], "description": bare["description"], "input_schema": bare["parameters"]})
    return result


def map_anthropic_error(exc: Exception) -> Exception:
    """Translate an ``anthropic`` SDK exception into our error types."""
    status = getattr(exc, "status_code", None)
    text = str(exc)
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err: dict[str, Any] = body["error"] if isinstance(body.get("error"), dict) else body
        text = f"{text} {err.get('type', '')} {err.get('message', '')}"
    if isinstance(exc, anthropic.APITimeoutError):
        return ModelNetworkError(f"model call timed out: {clause(exc)}. Check base_url and that the service is up.")
    if isinstance(exc, anthropic.APIConnectionError):
        return ModelNetworkError(f"cannot reach the Anthropic API: {clause(exc)}. Check model.base_url and the network.")
    if isinstance(exc, anthropic.APIStatusError) and is_context_length_message(status, text):
        return context_length_error(text.strip(), status)
    if isinstance(exc, (anthropic.AuthenticationError, anthropic.PermissionDeniedError)):
        return ModelAuthError(f"the Anthropic API refused the key ({status}): {clause(exc)}. "
                              "Set ANTHROPIC_API_KEY or the variable named by model.api_key_env.", status_code=status)
    if isinstance(exc, anthropic.RateLimitError):
        return ModelRateLimitError(f"rate limited by the Anthropic API: {exc}", status_code=status)
    if isinstance(exc, anthropic.APIStatusError) and (status or 0) >= 500:
        return ModelServerError(f"the Anthropic API failed ({status}): {exc}", status_code=status)
    if isinstance(exc, anthropic.APIStatusError):
        return ModelRequestError(f"the Anthropic API rejected the request ({status}): {exc}", status_code=status)
    return ModelCallError(f"model call failed: {exc}")


def _malformed(exc: Exception) -> ModelCallError:
    return ModelCallError(f"the Anthropic API sent a reply that is not a message ({type(exc).__name__}: "
                          f"{str(exc)[:200]}). Check that model.base_url points at the messages API (without "
                          "/v1: the SDK adds it) and not at a web page or proxy.")


class AnthropicModel:
    """``ChatModel`` over ``POST {base_url}/v1/messages``. ``supports_cache_control`` is True.

    ``tool_choice`` forcing one tool (see :func:`~hermes_memory.llm.base.forced_tool_name`) is sent
    as ``{"type": "tool", "name": N}``. The service documents that a changed ``tool_choice`` keeps
    the cached tools and system prompt but not the cached messages, so
    ``forced_tool_choice_keeps_message_cache`` is False.

    ``context_length`` (tokens) is what the compressor budgets against; ``max_tokens`` caps each
    reply (the API requires it). ``max_retries`` is passed to the SDK.
    """

    supports_cache_control = True
    forced_tool_choice_keeps_message_cache = False

    def __init__(self, name: str, *, base_url: str | None = None, api_key: str | None = None,
                 context_length: int = 200_000, max_tokens: int = 4096, temperature: float | None = None,
                 timeout: float = 120.0, max_retries: int = 2, client: Any = None) -> None:
        self.name = name
        self.context_length = context_length
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.base_url = base_url or None
        self._client = client or anthropic.Anthropic(
            api_key=api_key or None, base_url=self.base_url, timeout=timeout, max_retries=max_retries,
        )
        # Recent SDK releases dropped ``temperature`` from messages.create (the models ignore it);
        # older ones accept it. Send it only where the installed SDK knows it.
        try:
            params = inspect.signature(self._client.messages.create).parameters
            self._accepts_temperature = "temperature" in params or any(
                p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
        except (TypeError, ValueError):
            self._accepts_temperature = False

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                 **opts: Any) -> ModelResponse:
        """One messages call; see :class:`hermes_memory.llm.base.ChatModel`."""
        system, converted = convert_messages(messages)
        kwargs: dict[str, Any] = {
            "model": self.name,
            "messages": converted,
            "max_tokens": int(opts.get("max_tokens") or self.max_tokens),
        }
        if system:
            kwargs["system"] = system
        temperature = opts.get("temperature", self.temperature)
        if temperature is not None and self._accepts_temperature:
            kwargs["temperature"] = min(float(temperature), 1.0)
        if tools:
            kwargs["tools"] = convert_tools(tools)
            choice = opts.get("tool_choice")
            forced = forced_tool_name(choice)
            if forced:
                # The service caches tools -> system -> messages; a tool_choice other than the
                # default invalidates the cached *message* blocks (tools and system stay cached).
                kwargs["tool_choice"] = {"type": "tool", "name": forced}
            elif choice == "required":
                kwargs["tool_choice"] = {"type": "any"}
            elif choice == "none":
                kwargs["tool_choice"] = {"type": "none"}
        try:
            resp = self._client.messages.create(**kwargs)
        except anthropic.AnthropicError as exc:
            raise map_anthropic_error(exc) from exc
        except ValueError as exc:  # the body was not JSON (the SDK's json.loads)
            raise _malformed(exc) from exc
        try:
            return self._to_response(resp)
        except (AttributeError, TypeError, ValueError, KeyError) as exc:  # e.g. an HTML page parsed as str
            raise _malformed(exc) from exc

    def _to_response(self, resp: Any) -> ModelResponse:
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        for block in resp.content:
            btype = getattr(block, "type", "")
            if btype == "text":
                texts.append(block.text)
            elif btype == "tool_use":
                calls.append({"id": block.id, "type": "function",
                              "function": {"name": block.name,
                                           "arguments": json.dumps(block.input, ensure_ascii=False)}})
        message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or (None if calls else "")}
        if calls:
            message["tool_calls"] = calls
        u = resp.usage
        read = int(getattr(u, "cache_read_input_tokens", 0) or 0)
        write = int(getattr(u, "cache_creation_input_tokens", 0) or 0)
        usage = Usage(int(u.input_tokens or 0) + read + write, int(u.output_tokens or 0), read, write)
        return ModelResponse(message=message, usage=usage,
                             finish_reason=_STOP_REASONS.get(resp.stop_reason or "end_turn", "stop"),
                             model=resp.model or self.name)
