"""The ``ChatModel`` protocol shared by every model adapter, its value types and its errors.

Messages and tools are OpenAI-style on both sides of the protocol, whatever the wire format:

* ``messages``: ``[{"role": "system"|"user"|"assistant"|"tool", "content": str | [parts] | None,
  "tool_calls": [...], "tool_call_id": ...}]``. Content parts and messages may carry an Anthropic
  ``cache_control`` marker (added by ``context.apply_anthropic_cache_control``); adapters that do
  not support prompt-cache breakpoints drop them.
* ``tools``: bare function schemas ``{"name", "description", "parameters"}`` or the wrapped form
  ``{"type": "function", "function": {...}}``.
* The reply is an OpenAI-style assistant message: ``{"role": "assistant", "content": str | None,
  "tool_calls": [{"id", "type": "function", "function": {"name", "arguments": <JSON str>}}]}``.

Token counts are in tokens as reported by the service. ``Usage.prompt_tokens`` is *all* input
tokens of the call, cached or not (OpenAI reports it this way; for Anthropic the adapter adds
``input_tokens + cache_read_input_tokens + cache_creation_input_tokens``), so the share of input
served from the prompt cache is ``cache_read_tokens / prompt_tokens``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from hermes_memory.errors import (  # noqa: F401 - the Model*Error family is re-exported from here
    ContextLengthError,
    ModelAuthError,
    ModelCallError,
    ModelError,
    ModelNetworkError,
    ModelRateLimitError,
    ModelRequestError,
    ModelServerError,
)


@dataclass
class Usage:
    """Token counts of one model call (tokens; see module doc for what ``prompt_tokens`` includes)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )

    @property
    def cache_share(self) -> float:
        """Fraction (0..1) of input tokens served from the prompt cache; 0.0 without input."""
        return self.cache_read_tokens / self.prompt_tokens if self.prompt_tokens else 0.0

    def as_dict(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
        }


@dataclass
class ModelResponse:
    """One model reply: the assistant ``message`` (OpenAI-style dict), its ``usage`` and why it stopped.

    ``finish_reason`` uses OpenAI's words: ``"stop"``, ``"tool_calls"``, ``"length"``,
    ``"content_filter"`` (Anthropic stop reasons are mapped onto them).
    """

    message: dict[str, Any]
    usage: Usage = field(default_factory=Usage)
    finish_reason: str = "stop"
    model: str = ""

    @property
    def content(self) -> str:
        """The reply text (``""`` when the model only called tools)."""
        return message_text(self.message)

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        return list(self.message.get("tool_calls") or [])


@runtime_checkable
class ChatModel(Protocol):
    """What the agent needs from a chat model.

    ``complete`` sends ``messages`` (and ``tools`` when given) and returns a :class:`ModelResponse`.
    Options understood by every adapter: ``max_tokens`` (int), ``temperature`` (float),
    ``tool_choice``: ``"auto"``/``"none"``/``"required"``, or one tool forced by name (``{"name": N}``,
    or either wire form: OpenAI ``{"type": "function", "function": {"name": N}}``, Anthropic
    ``{"type": "tool", "name": N}``; see :func:`forced_tool_name`). It raises
    :class:`~hermes_memory.errors.ContextLengthError` when the prompt does not fit the model's
    window and a :class:`ModelCallError` subclass (``kind`` = ``auth``, ``network``,
    ``rate_limit``, ``server``, ``bad_request``) for every other failure.
    """

    name: str
    context_length: int
    supports_cache_control: bool

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                 **opts: Any) -> ModelResponse: ...


# -- errors --------------------------------------------------------------------------------------

# Phrases services use when a prompt is over the window (OpenAI, vLLM, llama.cpp, Ollama, Anthropic).
_CONTEXT_PATTERNS = re.compile(
    r"context[_ ]length|maximum context|context window|prompt is too long|too many tokens|"
    r"exceeds? the (?:model'?s? )?(?:maximum|context)|input is too long|request_too_large|"
    r"reduce the length",
    re.IGNORECASE,
)


def is_context_length_message(status_code: int | None, text: str) -> bool:
    """True when an error (HTTP ``status_code`` and body/message ``text``) says the prompt is too long."""
    if status_code == 413:
        return True
    return bool(text) and bool(_CONTEXT_PATTERNS.search(text))


def context_length_error(message: str, status_code: int | None = None) -> ContextLengthError:
    err = ContextLengthError(f"the prompt does not fit the model's context window: {message}")
    err.status_code = status_code
    return err


# -- message helpers -------------------------------------------------------------------------------

def message_text(message: dict[str, Any]) -> str:
    """Plain text of a message whose content is a string, a list of parts, or None."""
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return str(content)


def normalize_tool_schema(tool: dict[str, Any]) -> dict[str, Any]:
    """Return the bare ``{"name", "description", "parameters"}`` form of an OpenAI tool schema."""
    if tool.get("type") == "function" and isinstance(tool.get("function"), dict):
        tool = tool["function"]
    return {
        "name": tool["name"],
        "description": tool.get("description", ""),
        "parameters": tool.get("parameters") or {"type": "object", "properties": {}},
    }


def forced_tool_name(tool_choice: Any) -> str | None:
    """The tool name a ``tool_choice`` option forces, or ``None`` (``"auto"``, ``"none"``,
    ``"required"``, ``None`` or an unrecognised value).

    Accepted forms: ``{"name": N}``, OpenAI's ``{"type": "function", "function": {"name": N}}`` and
    Anthropic's ``{"type": "tool", "name": N}``. Each adapter writes its own wire form from the name.
    """
    if not isinstance(tool_choice, dict):
        return None
    fn = tool_choice.get("function")
    name = fn.get("name") if isinstance(fn, dict) else tool_choice.get("name")
    return name if isinstance(name, str) and name else None


def parse_tool_arguments(arguments: Any) -> dict[str, Any]:
    """Decode a tool call's ``arguments`` (JSON string or dict). Invalid JSON -> ``{}``-free error dict.

    Returns the decoded object; a non-object or undecodable string gives
    ``{"__invalid_arguments__": <raw>}`` so callers can report the problem to the model.
    """
    if isinstance(arguments, dict):
        return arguments
    if arguments in (None, ""):
        return {}
    try:
        value = json.loads(arguments)
    except (TypeError, ValueError):
        return {"__invalid_arguments__": str(arguments)}
    return value if isinstance(value, dict) else {"__invalid_arguments__": str(arguments)}


def strip_private_keys(message: dict[str, Any]) -> dict[str, Any]:
    """Copy of ``message`` without in-process keys (those starting with ``_``, e.g. ``_flush_sentinel``)."""
    return {k: v for k, v in message.items() if not k.startswith("_")}
