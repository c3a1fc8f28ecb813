"""Honcho settings: defaults (the reference plugin's), honcho.json and environment overrides, reasoning levels and message splitting."""

from __future__ import annotations

import ipaddress
import logging
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from hermes_memory.config import home_env, provider_section, read_json_settings
from hermes_memory.home import resolve_home

log = logging.getLogger("hermes_memory.plugins.honcho")  # the provider's logger: settings warnings read as its own

LEVELS = ("minimal", "low", "medium", "high", "max")
RECALL_MODES = ("hybrid", "context", "tools")
DEFAULTS: dict[str, Any] = {
    "enabled": None,  # None: enabled when a key or a base URL is set (reference)
    "baseUrl": "",
    "environment": "production",
    "workspace": "hermes",
    "aiPeer": "hermes",
    "peerName": "",
    "saveMessages": True,
    "writeFrequency": "async",
    "messageMaxChars": 25_000,
    "contextTokens": None,
    "recallMode": "hybrid",
    "injectionFrequency": "every-turn",
    "contextCadence": 1,
    "dialecticCadence": 1,
    "dialecticDepth": 1,
    "dialecticReasoningLevel": "low",
    "dialecticMaxChars": 600,
    "dialecticMaxInputChars": 10_000,
    "reasoningHeuristic": True,
    "reasoningLevelCap": "high",
    "timeout": 8.0,  # seconds per request, the reference's default
}
SEARCH_TOKENS_DEFAULT, SEARCH_TOKENS_CAP = 800, 2000
SNIPPET_CHARS = 1200
PLACEHOLDER_KEY = "local-no-auth"  # sent to loopback/private servers: the SDK refuses an empty key
COLD_PROMPT = ("Summarize what you know about this user: who they are, what they are working on, and "
               "their preferences. Relevant to: ")
EMPTY_CARD_HINT = ("The peer card is empty. Honcho fills it from observed messages: check that observation "
                   "is on for this peer, that enough turns have been saved, and that the server is 3.x or newer.")


def _home(hermes_home: str | os.PathLike[str] | None = None) -> Path:
    return Path(hermes_home) if hermes_home else resolve_home()


def file_settings(home: Path) -> dict[str, Any]:
    """Settings from files: ``$HERMES_HOME/honcho.json`` (the reference agent's file, still honoured) overlaid
    by its ``config.yaml`` sections (``honcho:``, then ``memory.honcho:``). Empty values (``None``, ``""``) are dropped."""
    merged = {**read_json_settings(home / "honcho.json"), **provider_section(home, "honcho")}
    return {k: v for k, v in merged.items() if v not in (None, "")}


def sanitize_id(value: str, fallback: str = "default") -> str:
    """Honcho ids keep ``[A-Za-z0-9_-]``; other characters become ``-`` (reference)."""
    cleaned = re.sub(r"[^A-Za-z0-9_-]", "-", str(value or "").strip()).strip("-")
    return cleaned[:100] or fallback


def is_local_url(url: str) -> bool:
    """True for loopback, RFC 1918, CGNAT (100.64/10) and link-local hosts, and ``localhost``."""
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_private or ip.is_link_local or ip in ipaddress.ip_network("100.64.0.0/10")


def load_settings(hermes_home: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Defaults < file root keys (:func:`file_settings`) < their ``hosts.<host>`` block; environment fills what is unset.

    Returns camelCase keys plus ``apiKey``. ``recallMode`` is normalised (``auto`` -> ``hybrid``),
    levels and cadences are validated (bad values fall back to the default with a warning).
    """
    home = _home(hermes_home)
    data = file_settings(home)
    host = home_env("HERMES_HONCHO_HOST", home) or "hermes"
    out = dict(DEFAULTS)
    out.update({k: v for k, v in data.items() if k != "hosts" and v is not None})
    block = (data.get("hosts") or {}).get(host) if isinstance(data.get("hosts"), dict) else None
    if isinstance(block, dict):
        out.update({k: v for k, v in block.items() if v is not None})
    if isinstance(out.get("endpoint"), dict) and not out.get("baseUrl"):
        out["baseUrl"] = out["endpoint"].get("baseUrl", "")
    out["apiKey"] = str(out.get("apiKey") or home_env("HONCHO_API_KEY", home))
    out["baseUrl"] = str(out.get("baseUrl") or home_env("HONCHO_BASE_URL", home) or home_env("HONCHO_URL", home))
    if env_name := home_env("HONCHO_ENVIRONMENT", home):
        out["environment"] = env_name
    if "timeout" not in data and "requestTimeout" not in data and (t := home_env("HONCHO_TIMEOUT", home)):
        out["timeout"] = t
    out["timeout"] = _number(out.get("requestTimeout", out["timeout"]), float, DEFAULTS["timeout"], 0.05)
    mode = str(out.get("recallMode") or "hybrid").lower()
    out["recallMode"] = "hybrid" if mode == "auto" else mode if mode in RECALL_MODES else _warn(
        "recallMode", mode, "hybrid")
    inj = str(out.get("injectionFrequency") or "every-turn")
    out["injectionFrequency"] = inj if inj in ("every-turn", "first-turn") else _warn(
        "injectionFrequency", inj, "every-turn")
    for key in ("dialecticReasoningLevel", "reasoningLevelCap"):
        if out[key] not in LEVELS:
            out[key] = _warn(key, out[key], DEFAULTS[key])
    for key in ("contextCadence", "dialecticCadence", "messageMaxChars", "dialecticMaxChars",
                "dialecticMaxInputChars"):
        out[key] = _number(out[key], int, DEFAULTS[key], 1)
    if out.get("contextTokens") is not None:
        out["contextTokens"] = _number(out["contextTokens"], int, None, 1)
    if out.get("enabled") is None:
        out["enabled"] = bool(out["apiKey"] or out["baseUrl"])
    return out


def _warn(key: str, value: Any, default: Any) -> Any:
    log.warning("honcho settings: %s=%r is not valid; using %r", key, value, default)
    return default


def _number(value: Any, kind: type, default: Any, minimum: float) -> Any:
    try:
        number = kind(value)
    except (TypeError, ValueError):
        return _warn("number", value, default)
    return number if number >= minimum else _warn("number", value, default)


def cap_level(level: str, cap: str) -> str:
    """``level`` lowered to ``cap`` when above it (order: minimal < low < medium < high < max)."""
    level = level if level in LEVELS else "low"
    return LEVELS[min(LEVELS.index(level), LEVELS.index(cap if cap in LEVELS else "high"))]


def auto_level(query: str, base: str, cap: str, heuristic: bool = True) -> str:
    """Dialectic level for ``query``: ``base`` +1 at >= 120 chars, +2 at >= 400 (reference), capped at ``cap``."""
    idx = LEVELS.index(base if base in LEVELS else "low")
    if heuristic:
        idx += 2 if len(query) >= 400 else 1 if len(query) >= 120 else 0
    return cap_level(LEVELS[min(idx, len(LEVELS) - 1)], cap)


def split_message(text: str, limit: int) -> list[str]:
    """Chunks of at most ``limit`` chars, split at a paragraph, else a sentence, else a word boundary.

    Continuation chunks start with ``[continued] `` (counted in the limit).
    """
    text = text.strip()
    prefix = "[continued] "
    if len(text) <= limit:
        return [text] if text else []
    chunks: list[str] = []
    rest = text
    while rest:
        room = limit - (len(prefix) if chunks else 0)
        if len(rest) <= room:
            piece, rest = rest, ""
        else:
            window = rest[:room]
            cut = window.rfind("\n\n")
            if cut <= room // 4:
                ends = [m.end() for m in re.finditer(r"[.!?](\s)", window)]
                cut = ends[-1] if ends and ends[-1] > room // 4 else rest.rfind(" ", 0, room + 1)
            if cut <= 0:
                cut = room
            piece, rest = rest[:cut].rstrip(), rest[cut:].lstrip()
        chunks.append((prefix if chunks else "") + piece)
    return chunks
