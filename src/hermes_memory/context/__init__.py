"""Layer 3: context compression, token estimation and prompt-cache breakpoints.

Imports only the foundation (``errors``, ``config``, ``redact``); never ``sessions``, ``agent`` or ``cli``.
One module per compaction step: ``messages`` (SDK objects to dicts), ``prune`` (phase 1), ``plan``
(where to cut), ``markers``/``transcript``/``summary`` (the summary), ``assemble`` (head + summary +
tail), ``tool_pairs``, ``cooldown``; ``compressor`` orchestrates them.
"""

from hermes_memory.context.caching import apply_anthropic_cache_control, cache_marker
from hermes_memory.context.compressor import (
    CompressionPlan,
    ContextCompressor,
    SummarizerError,
    SummaryAuthError,
    SummaryNetworkError,
    SummaryRateLimitError,
    classify_summary_error,
    normalize_messages,
    normalize_tool_call,
    prune_tool_outputs,
    sanitize_tool_pairs,
    shorten_tool_arguments,
)
from hermes_memory.context.summary import (
    END_MARKER,
    SUMMARY_PREFIX,
    TEMPLATE_SECTIONS,
    build_fallback_summary,
    build_summary_prompt,
    serialize_turns,
    split_summary,
)
from hermes_memory.context.tokens import (
    IMAGE_TOKENS,
    content_text,
    estimate_message_tokens,
    estimate_messages_tokens_rough,
    estimate_request_tokens,
    estimate_tokens_rough,
)

__all__ = [
    "END_MARKER",
    "IMAGE_TOKENS",
    "SUMMARY_PREFIX",
    "TEMPLATE_SECTIONS",
    "CompressionPlan",
    "ContextCompressor",
    "SummarizerError",
    "SummaryAuthError",
    "SummaryNetworkError",
    "SummaryRateLimitError",
    "apply_anthropic_cache_control",
    "build_fallback_summary",
    "build_summary_prompt",
    "cache_marker",
    "classify_summary_error",
    "content_text",
    "estimate_message_tokens",
    "estimate_messages_tokens_rough",
    "estimate_request_tokens",
    "estimate_tokens_rough",
    "normalize_messages",
    "normalize_tool_call",
    "prune_tool_outputs",
    "sanitize_tool_pairs",
    "serialize_turns",
    "shorten_tool_arguments",
    "split_summary",
]
