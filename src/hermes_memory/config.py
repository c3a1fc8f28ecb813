"""``config.yaml`` loading and validation (pydantic), plus the ``.env`` secrets file.

Sections and defaults follow the reference Hermes agent (reference-behaviour.md §10), so an
existing ``config.yaml`` loads unchanged; sections and keys we do not know are kept and ignored.

* ``memory:``          memory_enabled, user_profile_enabled, memory_char_limit (2200 chars),
                       user_char_limit (1375 chars), nudge_interval (10 user turns, 0 = off),
                       flush_min_turns (6 user turns), provider ("" = built-in only)
* ``compression:``     enabled, threshold (0.50 of the context length), target_ratio (0.20),
                       protect_first_n (3), protect_last_n (20 messages), summary_model (""),
                       threshold_tokens (null), min_tail_user_messages (1),
                       abort_on_summary_failure (false), fallback_on_summary_failure (false)
* ``prompt_caching:``  cache_ttl ("5m" | "1h")
* ``model:``           the main chat model (provider openai|anthropic, name, base_url, ...)
* ``auxiliary:``       an optional cheaper model for summaries and memory flushes
* ``sessions:``        synchronous ("full" | "normal": durability of state.db commits)

A bad value raises :class:`~hermes_memory.errors.ConfigError` whose message names the file, the
dotted key and what is allowed.
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from hermes_memory.errors import ConfigError

_log = logging.getLogger(__name__)


class _Section(BaseModel):
    # Unknown keys are kept (the reference agent writes many more) but not validated.
    model_config = ConfigDict(extra="allow", validate_assignment=True)


class MemoryConfig(_Section):
    """``memory:`` section. Limits are in characters, delimiters included."""

    memory_enabled: bool = True
    user_profile_enabled: bool = True
    memory_char_limit: int = Field(2200, ge=100, le=1_000_000)
    user_char_limit: int = Field(1375, ge=100, le=1_000_000)
    nudge_interval: int = Field(10, ge=0)
    flush_min_turns: int = Field(6, ge=0)
    provider: str = ""


class CompressionConfig(_Section):
    """``compression:`` section. ``threshold`` and ``target_ratio`` are fractions."""

    enabled: bool = True
    threshold: float = Field(0.50, gt=0.0, le=1.0)
    target_ratio: float = Field(0.20, ge=0.10, le=0.80)
    protect_first_n: int = Field(3, ge=0)
    protect_last_n: int = Field(20, ge=1)
    summary_model: str = ""
    threshold_tokens: int | None = Field(None, ge=1)
    min_tail_user_messages: int = Field(1, ge=0)
    abort_on_summary_failure: bool = False
    # Opt-in (failure case B29): when the summariser fails or replies empty, insert the LLM-free
    # summary instead of aborting. Off by default, so a failed summary never cuts turns.
    fallback_on_summary_failure: bool = False


class PromptCachingConfig(_Section):
    """``prompt_caching:`` section. ``cache_ttl`` is the Anthropic breakpoint lifetime."""

    cache_ttl: Literal["5m", "1h"] = "5m"


class ModelConfig(_Section):
    """``model:`` (main chat model) and ``auxiliary:`` (summaries, flushes) sections.

    ``provider`` is ``openai`` (any OpenAI-compatible endpoint: OpenAI, Ollama, vLLM, llama.cpp
    server, LM Studio, OpenRouter) or ``anthropic``; ``""`` means not configured. The API key is
    read from ``api_key`` or, preferably, the environment variable named by ``api_key_env``.
    ``context_length`` is in tokens.
    """

    provider: Literal["", "openai", "anthropic"] = ""
    name: str = ""
    base_url: str = ""
    api_key: str = ""
    api_key_env: str = ""
    context_length: int = Field(128_000, ge=1024)
    max_tokens: int = Field(4096, ge=1)
    temperature: float | None = Field(None, ge=0.0, le=2.0)
    timeout: float = Field(120.0, gt=0)

    @property
    def configured(self) -> bool:
        return bool(self.provider and self.name)


class SessionSearchConfig(_Section):
    """``session_search:`` section. ``summarize`` asks the auxiliary model to summarise top hits."""

    summarize: bool = False


class SessionsConfig(_Section):
    """``sessions:`` section (the reference's own keys, auto_prune etc., are kept). ``synchronous``:
    ``full`` fsyncs every state.db commit; ``normal`` is faster but may lose the last commits on a
    power cut or OS crash (WAL still prevents corruption)."""

    synchronous: Literal["full", "normal"] = "full"

    @field_validator("synchronous", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value


class HermesConfig(BaseModel):
    """The whole ``config.yaml``. Unknown top-level sections are preserved in ``model_extra``."""

    model_config = ConfigDict(extra="allow")

    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    compression: CompressionConfig = Field(default_factory=CompressionConfig)
    prompt_caching: PromptCachingConfig = Field(default_factory=PromptCachingConfig)
    model: ModelConfig = Field(default_factory=ModelConfig)
    auxiliary: ModelConfig = Field(default_factory=ModelConfig)
    session_search: SessionSearchConfig = Field(default_factory=SessionSearchConfig)
    sessions: SessionsConfig = Field(default_factory=SessionsConfig)


def _describe_error(path: Path, err: ValidationError) -> str:
    lines = [f"invalid configuration in {path}:"]
    for item in err.errors():
        key = ".".join(str(p) for p in item["loc"])
        ctx = item.get("ctx") or {}
        allowed = ""
        if "expected" in ctx:
            allowed = f" (allowed: {ctx['expected']})"
        elif item["type"].startswith(("greater", "less")):
            allowed = f" (allowed: {item['msg'].lower().replace('input should be ', '')})"
        lines.append(f"  {key}: {item['msg']}{allowed}; got {item.get('input')!r}")
    lines.append("Fix the value in that file or delete the key to use the default.")
    return "\n".join(lines)


def load_config(path: str | os.PathLike[str] | None) -> HermesConfig:
    """Load and validate ``config.yaml``.

    A missing file (or ``path=None``) gives the defaults. Raises :class:`ConfigError` naming the
    file, the dotted key and the allowed values when YAML is malformed or a value is invalid.
    """
    if path is None:
        return HermesConfig()
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return HermesConfig()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must hold a mapping of sections (memory:, compression:, ...), got {type(data).__name__}")
    for section in ("memory", "compression", "prompt_caching", "model", "auxiliary", "session_search"):
        if data.get(section) is None and section in data:
            data[section] = {}
    try:
        return HermesConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_describe_error(path, exc)) from exc


def _atomic_write_text(path: Path, text: str, mode: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def update_config(path: str | os.PathLike[str], updates: dict[str, Any]) -> HermesConfig:
    """Set dotted keys (``{"memory.provider": "mem0", "mem0.user_id": "x"}``) in ``config.yaml``.

    Other keys and sections are preserved. The result is validated *before* anything is written
    (a bad value raises :class:`ConfigError` and leaves the file byte-identical); the write is
    atomic. Returns the validated config.
    """
    path = Path(path)
    data: dict[str, Any] = {}
    if path.exists():
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8-sig")) or {}
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path} is not valid YAML: {exc}") from exc
    for dotted, value in updates.items():
        node = data
        *parents, leaf = dotted.split(".")
        for part in parents:
            if not isinstance(node.get(part), dict):
                node[part] = {}
            node = node[part]
        node[leaf] = value
    try:
        cfg = HermesConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_describe_error(path, exc)) from exc
    _atomic_write_text(path, yaml.safe_dump(data, sort_keys=False, allow_unicode=True), 0o600)
    return cfg


def read_env_file(path: str | os.PathLike[str]) -> dict[str, str]:
    """Parse a ``.env`` file (``KEY=value`` lines, ``#`` comments, optional quotes). Missing → ``{}``."""
    from dotenv import dotenv_values

    path = Path(path)
    if not path.exists():
        return {}
    return {k: v for k, v in dotenv_values(path).items() if v is not None}


def write_env_values(path: str | os.PathLike[str], values: dict[str, str]) -> None:
    """Set ``KEY=value`` lines in ``.env`` (mode 0600), keeping other lines; atomic write.

    Raises :class:`ConfigError` for a key that is not a valid environment variable name or a
    value containing a newline.
    """
    path = Path(path)
    for key, value in values.items():
        if not key or not (key[0].isalpha() or key[0] == "_") or not all(c.isalnum() or c == "_" for c in key):
            raise ConfigError(f"invalid environment variable name {key!r}: use letters, digits and _")
        if "\n" in value or "\r" in value:
            raise ConfigError(f"value for {key} contains a newline; secrets must be one line")
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    remaining = dict(values)
    out: list[str] = []
    for line in lines:
        key = line.split("=", 1)[0].strip().removeprefix("export ").strip()
        if key in remaining:
            out.append(f"{key}={_quote_env(remaining.pop(key))}")
        else:
            out.append(line)
    out.extend(f"{k}={_quote_env(v)}" for k, v in remaining.items())
    _atomic_write_text(path, "\n".join(out) + "\n", 0o600)


def _quote_env(value: str) -> str:
    if value and all(c.isalnum() or c in "-_./:@+=" for c in value):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def load_env_into_process(path: str | os.PathLike[str]) -> None:
    """Export ``.env`` values into ``os.environ`` without overriding variables already set."""
    for key, value in read_env_file(path).items():
        os.environ.setdefault(key, value)


# -- settings of external memory providers (used by the bundled plugins) -----------------------


def provider_section(home: str | os.PathLike[str], name: str) -> dict[str, Any]:
    """One provider's settings from ``<home>/config.yaml``.

    The top-level ``<name>:`` section (where ``memory setup`` writes) overlaid by ``memory.<name>:``
    (the reference agent's location, which wins). Returns ``{}`` when the file or both sections are
    absent. A broken ``config.yaml`` is logged and ignored (``{}``): a provider must not fail a turn
    over it; ``memory status`` reports the file's error.
    """
    try:
        cfg = load_config(Path(home) / "config.yaml")
    except ConfigError as exc:
        _log.warning("%s: ignoring config.yaml: %s", name, exc)
        return {}
    merged: dict[str, Any] = {}
    for section in ((cfg.model_extra or {}).get(name), (cfg.memory.model_extra or {}).get(name)):
        if isinstance(section, dict):
            merged.update(section)
    return merged


def read_json_settings(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A JSON object of settings (the reference agent's ``<home>/<provider>.json``); ``{}`` when absent,
    unreadable or not an object."""
    import json

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def home_env(name: str, home: str | os.PathLike[str]) -> str:
    """Environment variable ``name``, else its value in ``<home>/.env``, else ``""``."""
    return os.environ.get(name) or read_env_file(Path(home) / ".env").get(name, "")
