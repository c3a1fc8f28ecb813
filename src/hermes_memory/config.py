"""``config.yaml`` loading and validation (pydantic), plus the ``.env`` secrets file.

Sections and defaults follow the reference Hermes Agent (docs/reference.md §10), so the file
the Hermes Agent writes itself (its whole default config, or the stripped one its ``save_config``
keeps) loads unchanged; keys we do not use are kept, and those nobody uses warn (:mod:`hermes_memory.config_keys`).

* ``memory:``          memory_enabled, user_profile_enabled, memory_char_limit (2200 chars),
                       user_char_limit (1375 chars), nudge_interval (10 user turns, 0 = off),
                       flush_min_turns (6 user turns), provider ("" = built-in only)
* ``compression:``     enabled, threshold (0.50 of the context length; 0 or below: the Hermes
                       Agent's lowest trigger, with a warning), target_ratio (0.20),
                       protect_first_n (3), protect_last_n (20 messages), summary_model (""),
                       threshold_tokens (null), min_tail_user_messages (1),
                       abort_on_summary_failure (false), fallback_on_summary_failure (false)
* ``prompt_caching:``  cache_ttl ("5m" | "1h")
* ``model:``           the main chat model. Our form ``{provider: openai|anthropic, name, base_url,
                       api_key_env, ...}`` and the Hermes Agent's forms are both read: ``model:
                       "<id>"``, ``model: {default: <id>, provider: openrouter|auto|custom|nous|...,
                       base_url, api_key}`` (the id is ``default`` > ``model`` > ``name``; stale
                       root-level ``provider``/``base_url``/``context_length``/``api_base`` fill
                       empty ``model`` keys, as the Hermes Agent does). Provider ids are resolved
                       by :mod:`hermes_memory.llm.reference_providers`.
* ``auxiliary:``       an optional cheaper model for summaries and memory flushes: our flat form
                       (same keys as ``model:``) or the Hermes Agent's per-task form, of which
                       ``auxiliary.compression.{provider, model, base_url, api_key, timeout}`` is used
                       (``provider: auto`` = the main model's service).
* ``sessions:``        synchronous ("full" | "normal": durability of state.db commits)
* ``search:``          embeddings (off | on: local semantic search, the ``embeddings`` extra),
                       threads (1: model threads), semantic_weight and rrf_k (the fusion's;
                       defaults tuned on LoCoMo, :mod:`hermes_memory.sessions.fusion`)
* ``storage:``         backend (sqlite | postgres), url, profile, pool_size: where sessions and curated
                       memory live (:mod:`hermes_memory.storage`; ``HERMES_DATABASE_URL`` overrides)

Values the Hermes Agent tolerates do not refuse the file: a number outside a key's range is clamped
to the nearest bound (``compression.target_ratio`` to 0.10..0.80 and ``compression.protect_first_n``
to >= 0 exactly as the Hermes Agent clamps them), an unknown ``prompt_caching.cache_ttl`` means
``"5m"``, a boolean the Hermes Agent reads loosely is read its way; each such fix adds a warning
(``HermesConfig.warnings``, one line naming the file and the key) that the CLI prints once. A value
neither program accepts raises :class:`~hermes_memory.errors.ConfigError` whose message names the
file, the dotted key and what is allowed (for a YAML boolean where a word belongs, how to quote it:
:mod:`hermes_memory.config_yaml`).
"""

from __future__ import annotations

import copy
import io
import logging
import math
import os
from pathlib import Path
from typing import Any, Literal, cast

import annotated_types
import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, TypeAdapter, ValidationError, field_validator

from hermes_memory.config_keys import unknown_key_warnings
from hermes_memory.config_yaml import describe_error, yaml_bools
from hermes_memory.errors import ConfigError
from hermes_memory.fsutil import atomic_write_text
from hermes_memory.storage import StorageConfig

_log = logging.getLogger(__name__)
DEFAULT_MEMORY_CHAR_LIMIT, DEFAULT_USER_CHAR_LIMIT = 2200, 1375  # chars of MEMORY.md, USER.md: the reference's


class _Section(BaseModel):
    # Unknown keys are kept (the reference agent writes many more) but not validated.
    model_config = ConfigDict(extra="allow", validate_assignment=True)


class MemoryConfig(_Section):
    """``memory:`` section. Limits are in characters, delimiters included."""

    memory_enabled: bool = True
    user_profile_enabled: bool = True
    memory_char_limit: int = Field(DEFAULT_MEMORY_CHAR_LIMIT, ge=100, le=1_000_000)
    user_char_limit: int = Field(DEFAULT_USER_CHAR_LIMIT, ge=100, le=1_000_000)
    nudge_interval: int = Field(10, ge=0)
    flush_min_turns: int = Field(6, ge=0)
    provider: str = ""


class CompressionConfig(_Section):
    """``compression:`` section. ``threshold`` and ``target_ratio`` are fractions."""

    enabled: bool = True
    threshold: float = Field(0.50, ge=0.0, le=1.0)  # 0: the reference's lowest trigger, not "never"
    # 0.10..0.80: the bounds the Hermes Agent's ContextCompressor clamps summary_target_ratio to.
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
    server, LM Studio, OpenRouter), ``anthropic``, or a Hermes Agent provider id (``openrouter``,
    ``custom``, ``auto``, ``nous``, ``deepseek``, ...; lower-cased); ``""`` means ``auto``. ``name``
    is the model id (filled from the Hermes Agent's ``default``). The API key is read from
    ``api_key`` or the environment variable named by ``api_key_env`` (else the provider's usual
    variable). ``context_length`` and ``max_tokens`` are in tokens, ``timeout`` in seconds.
    """

    provider: str = ""
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
        """True when a model id is set (the provider may be left to ``auto``)."""
        return bool(self.name)


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


class SearchConfig(_Section):
    """``search:`` section (ours; the reference has none). ``embeddings``: ``on`` adds local
    semantic search to relevance search (needs ``pip install 'hermes-memory[embeddings]'``;
    vectors are computed in the background by ``serve``/``chat`` or ``sessions reindex``); ``off``
    (default) keeps search exactly lexical. ``threads``: CPU threads of the embedding model.
    ``semantic_weight`` / ``rrf_k``: the fusion's weight of the cosine order and its
    reciprocal-rank constant (``None`` = the values tuned on LoCoMo conversations 0-2,
    :data:`hermes_memory.sessions.fusion.SEMANTIC_WEIGHT` / ``RRF_K``)."""

    embeddings: bool = False
    threads: int = Field(1, ge=1, le=64)
    semantic_weight: float | None = Field(None, ge=0.0, le=100.0)
    rrf_k: float | None = Field(None, ge=0.0, le=10_000.0)

    @field_validator("embeddings", mode="before")
    @classmethod
    def _on_off(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lower() in ("on", "off"):
            return value.strip().lower() == "on"
        return value


class HermesConfig(BaseModel):
    """The whole ``config.yaml``. Unknown top-level sections are preserved in ``model_extra``.

    ``warnings`` lists the values that were clamped or read the Hermes Agent's way while loading
    (one line each, naming the file and the dotted key); empty for defaults.
    """

    model_config = ConfigDict(extra="allow")

    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    compression: CompressionConfig = Field(default_factory=CompressionConfig)
    prompt_caching: PromptCachingConfig = Field(default_factory=PromptCachingConfig)
    model: ModelConfig = Field(default_factory=ModelConfig)
    auxiliary: ModelConfig = Field(default_factory=ModelConfig)
    session_search: SessionSearchConfig = Field(default_factory=SessionSearchConfig)
    sessions: SessionsConfig = Field(default_factory=SessionsConfig)
    search: SearchConfig = Field(default_factory=SearchConfig)
    storage: StorageConfig = Field(default_factory=StorageConfig)
    _warnings: list[str] = PrivateAttr(default_factory=list)

    @property
    def warnings(self) -> list[str]:
        return list(self._warnings)


_SECTIONS: dict[str, type[BaseModel]] = {
    "memory": MemoryConfig, "compression": CompressionConfig, "prompt_caching": PromptCachingConfig,
    "model": ModelConfig, "auxiliary": ModelConfig, "session_search": SessionSearchConfig,
    "sessions": SessionsConfig, "search": SearchConfig, "storage": StorageConfig,
}

# Keys whose clamp is the Hermes Agent's own (agent/context_compressor.py, agent/agent_init.py).
_REFERENCE_CLAMPS = {"compression.target_ratio", "compression.protect_first_n"}
# Booleans the Hermes Agent reads as ``str(v).lower() in {"true", "1", "yes"}`` ...
_REFERENCE_STR_BOOLS = {"compression.enabled", "compression.abort_on_summary_failure"}
# ... and as Python truthiness.
_REFERENCE_TRUTHY_BOOLS = {"memory.memory_enabled", "memory.user_profile_enabled"}
_BOOL = TypeAdapter(bool)


def _bounds(field: Any) -> tuple[float | None, float | None]:
    lo = hi = cast("float | None", None)
    for m in field.metadata:  # the numeric fields' bounds are numbers (Field(ge=..., le=...))
        if isinstance(m, annotated_types.Ge):
            lo = cast(float, m.ge)
        elif isinstance(m, annotated_types.Le):
            hi = cast(float, m.le)
    return lo, hi


def _clamp_numbers(name: str, cls: type[BaseModel], raw: dict[str, Any], path: Path, warnings: list[str]) -> None:
    """Clamp convertible numbers outside a field's inclusive bounds to the bound (with a warning).

    Values that do not convert, or break an exclusive bound (``model.timeout <= 0``), are left for
    validation to refuse.
    """
    for key, field in cls.model_fields.items():
        if raw.get(key) is None or isinstance(raw[key], bool):
            continue
        lo, hi = _bounds(field)
        if (lo is None and hi is None) or field.annotation is None:
            continue
        try:
            value = TypeAdapter(field.annotation).validate_python(raw[key])
        except ValidationError:
            continue
        if not isinstance(value, int | float) or not math.isfinite(value):
            continue
        new = lo if lo is not None and value < lo else hi if hi is not None and value > hi else value
        if new == value:
            continue
        dotted = f"{name}.{key}"
        why = ("the Hermes Agent clamps it the same way" if dotted in _REFERENCE_CLAMPS
               else f"allowed: {'' if lo is None else lo}..{'' if hi is None else hi}")
        side = "below the minimum" if new == lo else "above the maximum"
        warnings.append(f"{path}: {dotted}: {raw[key]!r} is {side}; using {new} ({why})")
        raw[key] = new


def _threshold_floor(raw: dict[str, Any], path: Path, warnings: list[str]) -> None:
    """``compression.threshold`` 0 or below: the Hermes Agent compresses at its lowest trigger then
    (never "never", never an error), so it becomes 0, which the compressor reads that way."""
    value = raw.get("threshold")
    if isinstance(value, int | float) and not isinstance(value, bool) and value <= 0:
        warnings.append(f"{path}: compression.threshold: {value!r} is not above 0; compressing at the Hermes "
                        "Agent's lowest trigger (75% of a window under 512K tokens, at least 64,000 tokens), "
                        "as it does; compression.enabled: false turns compression off")
        raw["threshold"] = 0.0


def _nulls_to_defaults(name: str, cls: type[BaseModel], raw: dict[str, Any], path: Path, warnings: list[str]) -> None:
    """An empty value (``key:`` / ``null``) of a field that takes no null means its default (with a warning)."""
    for key, field in cls.model_fields.items():
        if key in raw and raw[key] is None and not _accepts_none(field.annotation):
            default = field.get_default(call_default_factory=True)
            if name in ("model", "auxiliary") and default == "":
                raw.pop(key)  # an empty provider/base_url/key is the same as none: nothing to warn about
                continue
            warnings.append(f"{path}: {name}.{key} is empty; using the default {default!r}")
            raw.pop(key)


def _accepts_none(annotation: Any) -> bool:
    try:
        TypeAdapter(annotation).validate_python(None)
    except ValidationError:
        return False
    return True


def _loose_bools(name: str, raw: dict[str, Any], path: Path, warnings: list[str]) -> None:
    for key, value in list(raw.items()):
        dotted = f"{name}.{key}"
        if value is None or dotted not in _REFERENCE_STR_BOOLS | _REFERENCE_TRUTHY_BOOLS:
            continue
        try:
            _BOOL.validate_python(value)
            continue
        except ValidationError:
            pass
        new = (str(value).lower() in {"true", "1", "yes"}) if dotted in _REFERENCE_STR_BOOLS else bool(value)
        warnings.append(f"{path}: {dotted}: {value!r} is not a boolean; read as {str(new).lower()}, "
                        "as the Hermes Agent reads it (write true or false)")
        raw[key] = new


def _model_section(name: str, value: Any, path: Path, warnings: list[str]) -> dict[str, Any]:
    """A ``model:``-like value in our shape: the Hermes Agent's string / ``default`` forms mapped."""
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        return {"name": value.strip()}
    if not isinstance(value, dict):
        raise ConfigError(f"invalid configuration in {path}:\n  {name}: must be a model id (a string) or a mapping "
                          f"(default/name, provider, base_url, api_key, ...); got {type(value).__name__} {value!r}")
    out = dict(value)
    for alias in ("default", "model", "name"):  # the Hermes Agent's precedence
        candidate = out.get(alias)
        if isinstance(candidate, str) and candidate.strip():
            out["name"] = candidate.strip()
            break
    else:
        if out.get("name") is None:
            out.pop("name", None)
    provider = out.get("provider")
    if provider is not None:
        if isinstance(provider, str):
            out["provider"] = provider.strip().lower()
        else:
            warnings.append(f"{path}: {name}.provider: {provider!r} is not a provider name; using auto "
                            "(as the Hermes Agent does)")
            out["provider"] = ""
    if not out.get("base_url") and isinstance(out.get("api_base"), str):
        out["base_url"] = out["api_base"]
    return out


def _auxiliary_section(value: Any, path: Path, warnings: list[str]) -> dict[str, Any]:
    out = _model_section("auxiliary", value, path, warnings)
    task = out.get("compression")
    if out.get("name") or not isinstance(task, dict):
        return out
    model = task.get("model")
    if not isinstance(model, str) or not model.strip():
        return out  # provider "auto" with no model: the main model does summaries
    provider = task.get("provider")
    out["name"] = model.strip()
    out["provider"] = "" if not isinstance(provider, str) or provider.strip().lower() in ("", "auto", "main") \
        else provider.strip().lower()
    for key in ("base_url", "api_key"):
        if isinstance(task.get(key), str) and task[key].strip():
            out[key] = task[key].strip()
    if isinstance(task.get("timeout"), int | float) and not isinstance(task["timeout"], bool) and task["timeout"] > 0:
        out["timeout"] = task["timeout"]
    return out


def _prepare(data: dict[str, Any], path: Path) -> tuple[dict[str, Any], list[str]]:
    """Map the Hermes Agent's forms onto ours and clamp tolerated values; returns a new dict and warnings."""
    data = copy.deepcopy(data)
    warnings: list[str] = []
    model = data.get("model")
    if not isinstance(model, dict):
        model = {} if model in (None, "") else {"default": model} if isinstance(model, str) else model
    if isinstance(model, dict):
        model = dict(model)
        for key in ("provider", "base_url", "context_length"):  # stale root keys fill empty model keys
            if data.get(key) and not model.get(key):
                model[key] = data[key]
        if data.get("api_base") and not model.get("base_url"):
            model["base_url"] = data["api_base"]
    data["model"] = _model_section("model", model, path, warnings)
    data["auxiliary"] = _auxiliary_section(data.get("auxiliary"), path, warnings)
    for name, cls in _SECTIONS.items():
        section = data.get(name)
        if section is None:
            data[name] = {}
            continue
        if not isinstance(section, dict):
            continue  # validation names the key and the expected mapping
        section = data[name] = dict(section)
        _nulls_to_defaults(name, cls, section, path, warnings)
        yaml_bools(name, cls, section, path, warnings)
        _loose_bools(name, section, path, warnings)
        if name == "compression":
            _threshold_floor(section, path, warnings)
        _clamp_numbers(name, cls, section, path, warnings)
    caching = data["prompt_caching"]
    ttl = caching.get("cache_ttl") if isinstance(caching, dict) else None
    if ttl is not None and ttl not in ("5m", "1h"):
        warnings.append(f"{path}: prompt_caching.cache_ttl: {ttl!r} is not '5m' or '1h'; using '5m' "
                        "(as the Hermes Agent does)")
        caching["cache_ttl"] = "5m"
    return data, warnings


def _validate(data: Any, path: Path) -> HermesConfig:
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must hold a mapping of sections (memory:, compression:, ...), got {type(data).__name__}")
    prepared, warnings = _prepare(data, path)
    try:
        cfg = HermesConfig.model_validate(prepared)
    except ValidationError as exc:
        raise ConfigError(describe_error(path, exc)) from exc
    cfg._warnings = warnings
    for line in warnings:
        _log.debug("config: %s", line)
    return cfg


def load_config(path: str | os.PathLike[str] | None) -> HermesConfig:
    """Load and validate ``config.yaml``; never writes it.

    A missing file (or ``path=None``) gives the defaults. Tolerated values are fixed and listed in
    ``.warnings`` (see the module docstring). Raises :class:`ConfigError` naming the file, the dotted
    key and the allowed values when YAML is malformed or a value is invalid.
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
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {exc}") from exc
    cfg = _validate({} if data is None else data, path)
    cfg._warnings += unknown_key_warnings(data or {}, text, path, {n: c.model_fields for n, c in _SECTIONS.items()})
    return cfg


def _guess_mapping_indent(text: str) -> int:
    """Indentation (spaces) of the first nested mapping key in ``text``; 2 when there is none."""
    parent = None
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        if not stripped or stripped.startswith("#"):
            continue
        depth = len(line) - len(stripped)
        if parent is not None and depth > parent and not stripped.startswith("- ") and ":" in stripped:
            return depth - parent
        parent = depth if stripped.rstrip().endswith(":") and not stripped.startswith("- ") else None
    return 2


def _round_trip_yaml(text: str) -> tuple[Any, Any]:
    """``(yaml, document)`` for a round-trip edit of ``text`` keeping comments, quotes and indentation.

    ``null`` is written as ``null`` (PyYAML's spelling, which the Hermes Agent's files use).
    """
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.util import load_yaml_guess_indent

    rt = YAML(typ="rt")
    rt.preserve_quotes = True
    rt.representer.add_representer(
        type(None), lambda rep, _none: rep.represent_scalar("tag:yaml.org,2002:null", "null"))
    if not text.strip():
        return rt, CommentedMap()
    _, seq_indent, seq_offset = load_yaml_guess_indent(text)
    mapping = _guess_mapping_indent(text)
    rt.indent(mapping=mapping, sequence=seq_indent or mapping, offset=seq_offset or 0)
    return rt, rt.load(text)


def update_config(path: str | os.PathLike[str], updates: dict[str, Any]) -> HermesConfig:
    """Set dotted keys (``{"memory.provider": "mem0", "mem0.user_id": "x"}``) in ``config.yaml``.

    Only those keys change: the file is edited round-trip (ruamel.yaml), so every other key, comment,
    quote style and the indentation stay as they were (the Hermes Agent's own file included). The
    result is validated *before* anything is written, and the edited text is re-read to prove that
    nothing but ``updates`` changed; either failing raises :class:`ConfigError` and leaves the file
    byte-identical. The write is atomic and keeps the file's mode (0600 for a new file). Returns the
    validated config.
    """
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import YAMLError as RuamelError

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig") if path.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    try:
        before = yaml.safe_load(text) or {}
        rt, doc = _round_trip_yaml(text)
    except (yaml.YAMLError, RuamelError) as exc:
        raise ConfigError(f"{path} is not valid YAML: {exc}") from exc
    if doc is None:
        doc = CommentedMap()
    if not isinstance(doc, dict) or not isinstance(before, dict):
        raise ConfigError(f"{path} must hold a mapping of sections (memory:, compression:, ...); not changing it")
    expected = copy.deepcopy(before)
    for dotted, value in updates.items():
        *parents, leaf = dotted.split(".")
        for tree, new_map in ((doc, CommentedMap), (expected, dict)):
            node = tree
            for part in parents:
                if not isinstance(node.get(part), dict):
                    node[part] = new_map()
                node = node[part]
            node[leaf] = value
    buf = io.StringIO()
    rt.dump(doc, buf)
    new_text = buf.getvalue()
    if yaml.safe_load(new_text) != expected:
        raise ConfigError(f"{path}: could not set {', '.join(updates)} without changing other keys; "
                          "the file was left as it was: edit it by hand")
    cfg = _validate(expected, path)
    mode = (path.stat().st_mode & 0o777) if path.exists() else 0o600
    atomic_write_text(path, new_text, mode)
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
    atomic_write_text(path, "\n".join(out) + "\n", 0o600)


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
