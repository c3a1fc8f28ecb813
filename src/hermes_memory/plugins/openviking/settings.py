"""OpenViking settings: defaults, the environment variables that override them, limits taken from the reference plugin, and the checks on endpoints, URIs and uploaded paths."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from hermes_memory.config import provider_section, read_env_file
from hermes_memory.errors import ProviderError

NAME = "openviking"
VERSION = "0.1.0"
DEFAULT_ENDPOINT = "http://127.0.0.1:1933"   # openviking-server's default listen address
READ_CAPS = {"abstract": 1200, "overview": 4000, "full": 8000}   # chars per level (reference)
BATCH_FULL_CAP = 2500          # chars per item when several URIs are read in full (reference)
BROWSE_MAX = 50                # entries returned by viking_browse (reference)
MIN_RECALL_CHARS = 5           # shorter prompts are not recalled (reference)
L2_BONUS = 0.12                # ranking bonus of concrete L2 leaves over directory summaries (reference)
BATCH_SIZE = 100               # messages per messages/batch request (reference)
PLAIN_PART_CHARS = 4000        # per side, plain-text fallback of a turn (reference)
RECALL_TOOLS = {"viking_search", "viking_read", "viking_browse"}   # never re-ingested (reference)
_DEFAULTS: dict[str, Any] = {
    "endpoint": "",
    "api_key": "",
    "account": "default",
    "user": "default",
    "agent": "",
    "timeout": 30.0,
    "recall_timeout_seconds": 4.0,
    "recall_limit": 6,
    "recall_score_threshold": 0.15,
    "recall_max_injected_chars": 4000,
    "recall_full_read_limit": 2,
    "profile_max_chars": 6000,
}
_ENV = {
    "endpoint": ("OPENVIKING_URL", "OPENVIKING_ENDPOINT"),
    "api_key": ("OPENVIKING_API_KEY",),
    "account": ("OPENVIKING_ACCOUNT",),
    "user": ("OPENVIKING_USER",),
    "agent": ("OPENVIKING_ACTOR_PEER_ID", "OPENVIKING_AGENT"),
}


class OpenVikingError(ProviderError):
    """An OpenViking call failed; the message says how (HTTP status and server error, timeout, unreachable)."""


def validate_endpoint(url: str) -> str:
    """Return ``url`` without a trailing slash, or raise ``ValueError`` saying what is wrong.

    Only ``http``/``https`` with a host; no user info, query or fragment (credentials never travel in URLs).
    """
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"OpenViking endpoint {url!r} must be an http(s) URL such as {DEFAULT_ENDPOINT}")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise ValueError(f"OpenViking endpoint {url!r} must not carry user info, a query or a fragment")
    return url.strip().rstrip("/")


def _load_settings(home: Path) -> dict[str, Any]:
    """Defaults < ``config.yaml`` (``openviking:``, ``memory.openviking:``) < ``$HERMES_HOME/.env`` < environment."""
    settings = dict(_DEFAULTS)
    section = provider_section(home, NAME)
    if section:
        settings.update({k: v for k, v in section.items() if k in _DEFAULTS and v is not None})
    env_file = read_env_file(home / ".env")
    for key, names in _ENV.items():
        for var in names:
            value = os.environ.get(var) or env_file.get(var)
            if value:
                settings[key] = value
                break
    for key in ("timeout", "recall_timeout_seconds", "recall_score_threshold"):
        try:
            settings[key] = float(settings[key])
        except (TypeError, ValueError):
            settings[key] = float(_DEFAULTS[key])
    for key in ("recall_limit", "recall_max_injected_chars", "recall_full_read_limit", "profile_max_chars"):
        try:
            settings[key] = max(0, int(settings[key]))
        except (TypeError, ValueError):
            settings[key] = _DEFAULTS[key]
    for key in ("endpoint", "api_key", "account", "user", "agent"):
        settings[key] = str(settings[key] or "").strip()
    return settings


def _is_remote(url: str) -> bool:
    return url.startswith(("http://", "https://", "git://", "ssh://", "git@"))


def forget_uri_problem(uri: str) -> str:
    """Why ``uri`` may not be forgotten (``""`` when it may): only concrete ``.md`` user memory files."""
    if "?" in uri or "#" in uri:
        return "the URI must not carry a query or fragment"
    if not uri.startswith("viking://user/") or "/memories/" not in uri:
        return "only user memory files (viking://user/[<uid>/][peers/<p>/]memories/...) can be forgotten"
    name = uri.rsplit("/", 1)[-1]
    if not name.endswith(".md"):
        return "only a concrete .md memory file can be forgotten, not a directory"
    if name in (".abstract.md", ".overview.md"):
        return "generated .abstract.md / .overview.md summaries cannot be forgotten"
    return ""


def _holds_secrets(path: Path, home: Path) -> bool:
    """True when ``path`` is a ``.env*`` file (the home's secrets file included) or a folder holding one."""
    resolved = path.resolve()
    if resolved.is_dir():
        return (home / ".env").resolve().is_relative_to(resolved) or any(resolved.rglob(".env*"))
    return resolved.name.lower().startswith(".env") or resolved == (home / ".env").resolve()
