"""Chat models: the ``ChatModel`` protocol and adapters on the official SDKs.

``build_models(config)`` gives the main and auxiliary models from ``config.yaml``; the adapters
are :class:`~hermes_memory.llm.openai_compat.OpenAICompatModel` (any OpenAI-compatible endpoint)
and :class:`~hermes_memory.llm.anthropic.AnthropicModel` (native prompt-cache breakpoints).
"""

from hermes_memory.llm.base import (
    ChatModel,
    ModelAuthError,
    ModelCallError,
    ModelNetworkError,
    ModelRateLimitError,
    ModelRequestError,
    ModelResponse,
    ModelServerError,
    Usage,
)
from hermes_memory.llm.factory import build_model, build_models, not_configured_help

__all__ = [
    "ChatModel", "ModelAuthError", "ModelCallError", "ModelNetworkError", "ModelRateLimitError",
    "ModelRequestError", "ModelResponse", "ModelServerError", "Usage", "build_model", "build_models",
    "not_configured_help",
]
