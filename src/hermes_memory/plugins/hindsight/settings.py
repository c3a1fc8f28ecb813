"""Hindsight settings: defaults, hindsight.json and environment overrides, API versions, and how SDK errors are described."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any

from hermes_memory.config import provider_section, read_env_file

log = logging.getLogger("hermes_memory.plugins.hindsight")  # the provider's logger: settings warnings read as its own

NAME = "hindsight"
DEFAULT_LOCAL_URL = "http://localhost:8888"   # hindsight-api's default listen address
BUDGETS = ("low", "mid", "high")
MODES = ("hybrid", "context", "tools")
FACT_TYPES = ("world", "experience", "observation")
APPEND_MIN_VERSION = (0, 5, 0)   # first API version with update_mode="append" (reference)
_DEFAULTS: dict[str, Any] = {
    "api_url": "",
    "api_key": "",
    "bank_id": "hermes",
    "timeout": 120.0,                 # seconds per API call (reference default)
    "recall_budget": "mid",
    "memory_mode": "hybrid",
    "recall_prefetch_method": "recall",
    "recall_max_tokens": 4096,
    "recall_max_input_chars": 800,    # a prefetch query is cut to this many chars (reference)
    "recall_types": ["observation"],  # reference default: consolidated observations only
    "recall_tags": [],
    "recall_tags_match": "any",
    "auto_recall": True,
    "auto_retain": True,
    "retain_async": True,
    "retain_every_n_turns": 1,
    "retain_context": "conversation between Hermes Agent and the User",
    "retain_tags": [],
}
_ENV = {
    "api_url": "HINDSIGHT_API_URL",
    "api_key": "HINDSIGHT_API_KEY",
    "bank_id": "HINDSIGHT_BANK_ID",
    "recall_budget": "HINDSIGHT_BUDGET",
    "timeout": "HINDSIGHT_TIMEOUT",
    "retain_tags": "HINDSIGHT_RETAIN_TAGS",
}


def _as_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in {"1", "true", "yes", "on"}
    return bool(value)


def _as_list(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return [str(v) for v in value]


def _load_settings(home: Path) -> dict[str, Any]:
    """Defaults < ``hindsight/config.json`` < ``config.yaml`` (``hindsight:``, ``memory.hindsight:``) < ``.env`` < environment.

    Values are coerced to their types; an invalid one is logged and replaced by its default.
    """
    settings = dict(_DEFAULTS)
    legacy = home / "hindsight" / "config.json"
    if legacy.exists():
        try:
            data = json.loads(legacy.read_text(encoding="utf-8"))
            if isinstance(data, dict):
                if "apiKey" in data and "api_key" not in data:
                    data["api_key"] = data["apiKey"]
                settings.update({k: v for k, v in data.items() if k in _DEFAULTS and v is not None})
        except (OSError, ValueError) as exc:
            log.warning("hindsight: ignoring %s: %s", legacy, exc)
    section = provider_section(home, NAME)
    if section:
        settings.update({k: v for k, v in section.items() if k in _DEFAULTS and v is not None})
    env_file = read_env_file(home / ".env")
    for key, var in _ENV.items():
        value = os.environ.get(var) or env_file.get(var)
        if value:
            settings[key] = value
    for key in ("timeout",):
        try:
            settings[key] = float(settings[key])
            if settings[key] <= 0:
                raise ValueError
        except (TypeError, ValueError):
            log.warning("hindsight: %s=%r is not a positive number; using %s", key, settings[key], _DEFAULTS[key])
            settings[key] = _DEFAULTS[key]
    for key in ("recall_max_tokens", "recall_max_input_chars", "retain_every_n_turns"):
        try:
            settings[key] = max(1, int(settings[key]))
        except (TypeError, ValueError):
            settings[key] = _DEFAULTS[key]
    for key in ("auto_recall", "auto_retain", "retain_async"):
        settings[key] = _as_bool(settings[key])
    for key in ("recall_types", "recall_tags", "retain_tags"):
        settings[key] = _as_list(settings[key])
    settings["recall_types"] = [t for t in settings["recall_types"] if t in FACT_TYPES] or list(FACT_TYPES)
    if settings["recall_budget"] not in BUDGETS:
        settings["recall_budget"] = "mid"
    if settings["memory_mode"] not in MODES:
        settings["memory_mode"] = "hybrid"
    settings["api_url"] = str(settings["api_url"] or "").rstrip("/")
    return settings


def _version_tuple(text: str) -> tuple[int, ...]:
    """``"1.1.0"`` -> ``(1, 1, 0)``; non-numeric parts count as 0 (``"0.5.0rc1"`` -> ``(0, 5, 0)``)."""
    parts = []
    for piece in str(text).split(".")[:3]:
        match = re.match(r"\d+", piece)
        parts.append(int(match.group()) if match else 0)
    return tuple(parts)


def _client_installed() -> bool:
    """True when ``hindsight-client`` is installed (found, not imported: the SDK takes seconds to import)."""
    import importlib.util

    return importlib.util.find_spec("hindsight_client") is not None


def _describe(exc: BaseException) -> str:
    """One line for a failed SDK call: HTTP status and body where the SDK carries them."""
    status = getattr(exc, "status", None)
    body = getattr(exc, "body", None)
    if status is not None:
        detail = body if isinstance(body, str) else (json.dumps(body) if body else getattr(exc, "reason", ""))
        return f"Hindsight API answered HTTP {status}: {str(detail)[:300]}"
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError, FutureTimeout)):
        return "Hindsight API did not answer in time"
    text = str(exc) or type(exc).__name__
    if "Cannot connect" in text or "Connect call failed" in text or isinstance(exc, ConnectionError):
        return f"cannot reach the Hindsight API: {text[:300]}"
    return f"Hindsight call failed: {text[:300]}"
