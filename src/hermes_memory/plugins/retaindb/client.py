"""RetainDB settings and HTTP client: defaults, retaindb.json and environment overrides, the paths never uploaded, and one JSON request with the legacy-route fallback."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx

from hermes_memory.config import home_env, provider_section, read_json_settings
from hermes_memory.errors import ProviderError
from hermes_memory.home import resolve_home

DEFAULT_BASE_URL = "https://api.retaindb.com"
DEFAULTS: dict[str, Any] = {"base_url": DEFAULT_BASE_URL, "project": "", "timeout": 10.0, "agent_id": "hermes"}
MEMORY_TYPES = ("factual", "preference", "goal", "instruction", "event", "opinion")
FILE_SCOPES = ("USER", "PROJECT", "ORG")
READ_LIMIT_CHARS = 32_000  # retaindb_read_file text cap (reference)
REPLAY_LIMIT = 200  # pending rows replayed at initialize (reference)
# Files the upload tool refuses to read: secrets and key material.
BLOCKED_NAMES = {".env", ".netrc", ".pgpass", "id_rsa", "id_ed25519", "id_ecdsa", "credentials"}
BLOCKED_DIRS = {".ssh", ".aws", ".gnupg", ".kube", ".docker"}
BLOCKED_SUFFIXES = (".pem", ".key", ".p12", ".pfx")


def _home(hermes_home: str | os.PathLike[str] | None = None) -> Path:
    return Path(hermes_home) if hermes_home else resolve_home()


def file_settings(home: Path) -> dict[str, Any]:
    """Settings from files: ``$HERMES_HOME/retaindb.json`` (the reference agent's file, still honoured) overlaid
    by its ``config.yaml`` sections (``retaindb:``, then ``memory.retaindb:``). Empty values (``None``, ``""``) are dropped."""
    merged = {**read_json_settings(home / "retaindb.json"), **provider_section(home, "retaindb")}
    return {k: v for k, v in merged.items() if v not in (None, "")}


def load_settings(hermes_home: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Defaults < files (:func:`file_settings`) < environment (``RETAINDB_*``). No network."""
    home = _home(hermes_home)
    out = dict(DEFAULTS)
    out.update(file_settings(home))
    if url := home_env("RETAINDB_BASE_URL", home):
        out["base_url"] = url
    out["base_url"] = out.get("base_url") or DEFAULT_BASE_URL
    if project := home_env("RETAINDB_PROJECT", home):
        out["project"] = project
    out["project"] = out["project"] or "default"
    out["api_key"] = home_env("RETAINDB_API_KEY", home)
    return out


class RetainDBError(ProviderError):
    """A RetainDB request failed; ``str()`` names the route, the status and the server's message."""


class _Client:
    """Thin ``httpx`` client for the routes the reference plugin calls (docs/providers.md §5.4)."""

    def __init__(self, base_url: str, api_key: str, project: str, timeout: float) -> None:
        self.project = project
        self.api_key = api_key
        self.http = httpx.Client(base_url=base_url.rstrip("/"), timeout=timeout, headers={
            "Authorization": f"Bearer {api_key}", "x-sdk-runtime": "hermes-plugin"})

    def request(self, method: str, path: str, *, json_body: Any = None, params: dict[str, Any] | None = None,
                files: Any = None, data: Any = None, raw: bool = False) -> Any:
        headers = {"X-API-Key": self.api_key} if path.startswith(("/v1/memory", "/v1/context")) else {}
        try:
            resp = self.http.request(method, path, json=json_body, params=params, files=files, data=data,
                                     headers=headers)
        except httpx.TimeoutException as exc:
            raise RetainDBError(f"{method} {path} timed out after {self.http.timeout.read}s") from exc
        except (httpx.HTTPError, httpx.InvalidURL) as exc:  # InvalidURL (URL too long...) is no HTTPError
            raise RetainDBError(f"{method} {path} failed: {type(exc).__name__}: {exc}") from exc
        if resp.status_code >= 400:
            message = resp.text[:300]
            try:
                body = resp.json()
                if isinstance(body, dict):
                    message = str(body.get("message") or body.get("error") or message)
            except ValueError:
                pass
            raise RetainDBError(f"{method} {path} returned HTTP {resp.status_code}: {message}")
        if raw:
            return resp
        if not resp.content:
            return {}
        try:
            return resp.json()
        except ValueError:
            return {"raw": resp.text}

    def with_fallback(self, method: str, primary: str, legacy: str, **kw: Any) -> Any:
        """Call ``primary``; on 404/405 (an older server) retry once on the ``legacy`` route."""
        try:
            return self.request(method, primary, **kw)
        except RetainDBError as exc:
            if "HTTP 404" not in str(exc) and "HTTP 405" not in str(exc):
                raise
            return self.request(method, legacy, **kw)

    def close(self) -> None:
        self.http.close()
