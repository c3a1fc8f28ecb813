"""Context fencing under its old path: :mod:`hermes_memory.fencing` (the foundation layer, so the
session importers may strip fences too) holds the one definition; every public name is re-exported.
"""

from __future__ import annotations

from hermes_memory.fencing import (
    CONTEXT_NOTE,
    FENCE_CLOSE,
    FENCE_OPEN,
    StreamingContextScrubber,
    build_memory_context_block,
    sanitize_context,
    strip_memory_context,
)

__all__ = [
    "CONTEXT_NOTE",
    "FENCE_CLOSE",
    "FENCE_OPEN",
    "StreamingContextScrubber",
    "build_memory_context_block",
    "sanitize_context",
    "strip_memory_context",
]
