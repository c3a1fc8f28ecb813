"""Adapter for any OpenAI-compatible chat-completions endpoint, on the official ``openai`` SDK.

Works with OpenAI, OpenRouter, Ollama (``http://localhost:11434/v1``), vLLM, llama.cpp server and
LM Studio: set ``base_url`` and, where the server needs one, an API key. Local servers that need
no key get the placeholder ``"not-needed"`` (the SDK refuses an empty key).

Prompt-cache markers (``cache_control``) are stripped: OpenAI-compatible services cache prefixes
automatically; OpenAI reports the cached part in ``usage.prompt_tokens_details.cached_tokens``,
which becomes ``Usage.cache_read_tokens``.
"""

from __future__ import annotations

import copy
import secrets
from typing import Any

import openai

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
    strip_private_keys,
)
from hermes_memory.wording import clause

_WIRE_KEYS = {"role", "content", "tool_calls", "tool_call_id", "name"}


def _clean_message(message: dict[str, Any]) -> dict[str, Any]:
    """OpenAI wire copy of one message: only the chat-completions keys (private keys, cache markers and
    replayed reasoning fields dropped; ``name`` dropped from tool results, which strict servers reject)."""
    msg = {k: v for k, v in strip_private_keys(message).items() if k in _WIRE_KEYS}
    if msg.get("role") == "tool":
        msg.pop("name", None)
    content = msg.get("content")
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict):
                part = {k: v for k, v in part.items() if k != "cache_control"}
            parts.append(part)
        # A system/tool message with a single text part is sent as plain text (widest support).
        if len(parts) == 1 and isinstance(parts[0], dict) and parts[0].get("type") == "text" \
                and msg.get("role") in ("system", "tool", "assistant"):
            msg["content"] = parts[0].get("text", "")
        else:
            msg["content"] = parts
    if msg.get("role") == "assistant" and not msg.get("tool_calls"):
        msg.pop("tool_calls", None)
    return msg


def map_openai_error(exc: Exception) -> Exception:
    """Translate an ``openai`` SDK exception into our error types (see :mod:`hermes_memory.llm.base`)."""
    status = getattr(exc, "status_code", None)
    text = str(exc)
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err: dict[str, Any] = body["error"] if isinstance(body.get("error"), dict) else body
        text = f"{text} {err.get('code', '')} {err.get('message', '')}"
    if isinstance(exc, openai.APITimeoutError):
        return ModelNetworkError(f"model call timed out: {clause(exc)}. Check base_url and that the server is up.")
    if isinstance(exc, openai.APIConnectionError):
        return ModelNetworkError(f"cannot reach the model server: {clause(exc)}. Check model.base_url and that the server is running.")
    if isinstance(exc, openai.APIStatusError) and is_context_length_message(status, text):
        return context_length_error(text.strip(), status)
    if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        return ModelAuthError(f"the model service refused the API key ({status}): {clause(exc)}. "
                              "Check the key in the variable named by model.api_key_env.", status_code=status)
    if isinstance(exc, openai.RateLimitError):
        return ModelRateLimitError(f"rate limited by the model service: {exc}", status_code=status)
    if isinstance(exc, openai.InternalServerError):
        return ModelServerError(f"the model service failed ({status}): {exc}", status_code=status)
    if isinstance(exc, openai.APIStatusError):
        return ModelRequestError(f"the model service rejected the request ({status}): {exc}", status_code=status)
    return ModelCallError(f"model call failed: {exc}")


def _malformed(exc: Exception) -> ModelCallError:
    return ModelCallError(f"the model service sent a reply that is not a chat completion ({type(exc).__name__}: "
                          f"{str(exc)[:200]}). Check that model.base_url points at an OpenAI-compatible API "
                          "(it usually ends in /v1) and not at a web page or proxy.")


class OpenAICompatModel:
    """``ChatModel`` over ``POST {base_url}/chat/completions``.

    ``name`` is the model id sent to the server; ``context_length`` (tokens) is what the agent's
    compressor budgets against; ``max_tokens`` caps each reply. ``max_retries`` is passed to the
    SDK (which retries connection errors, 408/409/429 and 5xx with backoff). ``tool_choice``
    forcing one tool is sent as ``{"type": "function", "function": {"name": N}}``; OpenAI's
    caching documentation does not say whether that keeps the cached prefix, so
    ``forced_tool_choice_keeps_message_cache`` is False (not claimed).
    """

    supports_cache_control = False
    forced_tool_choice_keeps_message_cache = False

    def __init__(self, name: str, *, base_url: str | None = None, api_key: str | None = None,
                 context_length: int = 128_000, max_tokens: int = 4096, temperature: float | None = None,
                 timeout: float = 120.0, max_retries: int = 2, client: Any = None,
                 key_env: str | None = None) -> None:
        self.name = name
        #: Without a key, a 401/403 names this unset variable (``model.api_key_env``) in its message.
        self._missing_key_env = None if api_key else (key_env or "OPENAI_API_KEY")
        self.context_length = context_length
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.base_url = base_url or None
        self._client = client or openai.OpenAI(
            api_key=api_key or "not-needed", base_url=self.base_url, timeout=timeout, max_retries=max_retries,
        )

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                 **opts: Any) -> ModelResponse:
        """One chat-completions call; see :class:`hermes_memory.llm.base.ChatModel`."""
        kwargs: dict[str, Any] = {
            "model": self.name,
            "messages": [_clean_message(m) for m in messages],
            "max_tokens": int(opts.get("max_tokens") or self.max_tokens),
        }
        temperature = opts.get("temperature", self.temperature)
        if temperature is not None:
            kwargs["temperature"] = temperature
        if tools:
            kwargs["tools"] = [{"type": "function", "function": normalize_tool_schema(t)} for t in tools]
            choice = opts.get("tool_choice")
            forced = forced_tool_name(choice)
            if forced:
                kwargs["tool_choice"] = {"type": "function", "function": {"name": forced}}
            elif choice:  # "auto" / "none" / "required", or another wire form (e.g. allowed_tools) as given
                kwargs["tool_choice"] = choice
        try:
            resp = self._client.chat.completions.create(**kwargs)
        except openai.OpenAIError as exc:
            err = map_openai_error(exc)
            if isinstance(err, ModelAuthError) and self._missing_key_env:
                err = ModelAuthError(
                    f"the model server at {self.base_url} requires an API key ({err.status_code}) but none was "
                    f"sent: {self._missing_key_env} is not set. Put it in the environment or in $HERMES_HOME/.env "
                    "(or name another variable with model.api_key_env).", status_code=err.status_code)
            raise err from exc
        except ValueError as exc:  # the body was not JSON (the SDK's json.loads)
            raise _malformed(exc) from exc
        try:
            return self._to_response(resp)
        except (AttributeError, TypeError, ValueError, KeyError) as exc:  # e.g. an HTML page parsed as str
            raise _malformed(exc) from exc

    def _to_response(self, resp: Any) -> ModelResponse:
        if not resp.choices:
            raise ModelCallError("the model service returned no choices. Check that model.base_url points at an "
                                 "OpenAI-compatible API (it usually ends in /v1).")
        choice = resp.choices[0]
        msg = choice.message
        message: dict[str, Any] = {"role": "assistant", "content": msg.content}
        if msg.tool_calls:
            # Some servers (llama.cpp, ggml-org/llama.cpp#11992) send calls without an id; results are
            # paired with calls by id, so each gets a unique one.
            message["tool_calls"] = [
                {"id": tc.id or f"call_{secrets.token_hex(8)}", "type": "function",
                 "function": {"name": tc.function.name, "arguments": tc.function.arguments or "{}"}}
                for tc in msg.tool_calls
            ]
        usage = Usage()
        if resp.usage is not None:
            cached = 0
            details = getattr(resp.usage, "prompt_tokens_details", None)
            if details is not None:
                cached = int(getattr(details, "cached_tokens", 0) or 0)
            usage = Usage(int(resp.usage.prompt_tokens or 0), int(resp.usage.completion_tokens or 0), cached, 0)
        return ModelResponse(message=copy.deepcopy(message), usage=usage,
                             finish_reason=choice.finish_reason or "stop", model=resp.model or self.name)
