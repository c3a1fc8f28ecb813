"""Anthropic prompt-cache breakpoints, the reference's ``system_and_3`` strategy.

Anthropic caches the longest request prefix that ends at a ``cache_control`` breakpoint written by
an earlier request; at most 4 breakpoints are allowed per request. The reference agent
(docs/reference.md §8) marks the system message and the last 3 non-system messages, so each
turn reads the whole previous turn from the cache and writes the new tail. This only pays off if
the system prompt does not change mid-session, which is why memory is a *frozen snapshot*.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

#: Most breakpoints Anthropic accepts in one request.
MAX_BREAKPOINTS = 4
_VALID_TTLS = ("5m", "1h")


def cache_marker(cache_ttl: str = "5m") -> dict[str, str]:
    """The breakpoint value: ``{"type": "ephemeral"}``, plus ``"ttl": "1h"`` for the 1-hour cache.

    Raises ``ValueError`` for a TTL other than ``"5m"`` or ``"1h"``.
    """
    if cache_ttl not in _VALID_TTLS:
        raise ValueError(f"cache_ttl must be '5m' or '1h', got {cache_ttl!r}; set prompt_caching.cache_ttl")
    marker = {"type": "ephemeral"}
    if cache_ttl == "1h":
        marker["ttl"] = "1h"
    return marker


def _strip_markers(message: dict[str, Any]) -> None:
    message.pop("cache_control", None)
    content = message.get("content")
    if isinstance(content, list):
        for part in content:
            if isinstance(part, dict):
                part.pop("cache_control", None)


def _mark(message: dict[str, Any], marker: dict[str, str], native_anthropic: bool) -> None:
    content = message.get("content")
    if (native_anthropic and message.get("role") == "tool") or content is None or content == "" or content == []:
        message["cache_control"] = dict(marker)
    elif isinstance(content, str):
        message["content"] = [{"type": "text", "text": content, "cache_control": dict(marker)}]
    elif isinstance(content, list):
        last = content[-1]
        if isinstance(last, dict):
            last["cache_control"] = dict(marker)
        else:  # a bare string part: wrap it so it can carry the marker
            content[-1] = {"type": "text", "text": str(last), "cache_control": dict(marker)}
    else:
        message["cache_control"] = dict(marker)


def apply_anthropic_cache_control(
    messages: Sequence[Mapping[str, Any]], cache_ttl: str = "5m", native_anthropic: bool = False
) -> list[dict[str, Any]]:
    """Return a deep copy of ``messages`` with at most 4 ``cache_control`` breakpoints.

    * message 0, if it is the system message, gets one breakpoint;
    * the last ``4 - used`` non-system messages get the others (no system message -> last 4).

    A string content becomes ``[{"type": "text", "text": ..., "cache_control": marker}]``; a list
    content gets the marker on its last part; ``None``/empty content, and (with
    ``native_anthropic=True``) tool-result messages, get a top-level ``cache_control`` key.
    Existing markers are removed first, so applying it twice gives the same result. The input is
    never mutated. ``cache_ttl`` is ``"5m"`` or ``"1h"`` (``ValueError`` otherwise).
    """
    marker = cache_marker(cache_ttl)
    out = [copy.deepcopy(dict(m)) for m in messages]
    for message in out:
        _strip_markers(message)
    used = 0
    if out and out[0].get("role") == "system":
        _mark(out[0], marker, native_anthropic)
        used = 1
    remaining = MAX_BREAKPOINTS - used
    for message in reversed(out):
        if remaining <= 0:
            break
        if message.get("role") == "system":
            continue
        _mark(message, marker, native_anthropic)
        remaining -= 1
    return out
