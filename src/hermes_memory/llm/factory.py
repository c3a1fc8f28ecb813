"""Build the main and auxiliary chat models from ``config.yaml`` (``model:`` / ``auxiliary:``).

The auxiliary model (summaries, memory flushes) falls back to the main model when ``auxiliary:``
names no model; fields left empty in ``auxiliary:`` (provider, base_url, key) are taken from
``model:``, so ``auxiliary: {name: gpt-4o-mini}`` is enough to use a cheaper model of the same
service.

The provider of each section (ours, ``openai``/``anthropic``, or a Hermes Agent id such as
``openrouter``, ``custom``, ``auto``, ``nous``) is resolved to an endpoint, an adapter and a key by
:mod:`hermes_memory.llm.reference_providers`. API key precedence: ``api_key`` in the section > the
variable named by ``api_key_env`` > the provider's usual variables (``OPENAI_API_KEY``,
``ANTHROPIC_API_KEY``, ``OPENROUTER_API_KEY``, ...). ``$HERMES_HOME/.env`` is loaded into the
environment by the CLI before this runs; ``${VAR}`` in ``api_key``/``base_url`` is expanded from
it, as the Hermes Agent does. Optional ``max_retries`` (int, default 2) in
either section is passed to the SDK.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from hermes_memory.config import HermesConfig, ModelConfig
from hermes_memory.errors import ModelNotConfiguredError
from hermes_memory.llm.base import ChatModel
from hermes_memory.llm.reference_providers import PROVIDERS, named_providers, resolve_route

DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
_ENV_REF = re.compile(r"\$\{([^}]+)\}")


def _expand(value: str, env: Mapping[str, str]) -> str:
    """``${VAR}`` references replaced from ``env`` (the Hermes Agent's config syntax); unknown ones kept."""
    return _ENV_REF.sub(lambda m: env.get(m.group(1), m.group(0)), value or "")


def not_configured_help(config_path: str = "$HERMES_HOME/config.yaml", env_path: str = "$HERMES_HOME/.env") -> str:
    """The exact instructions printed when no model is configured (used by ``chat`` and ``run``, which
    pass the resolved ``config.yaml`` and ``.env`` paths of the data home)."""
    return (
        f"no chat model is configured. Add a `model:` section to {config_path}, for example:\n\n"
        "  model:\n"
        "    provider: openai                      # openai (any OpenAI-compatible server) or anthropic\n"
        "    name: gpt-4o-mini                     # the model id the server expects\n"
        "    base_url: http://localhost:11434/v1   # optional: Ollama, vLLM, llama.cpp, LM Studio, OpenRouter\n"
        "    api_key_env: OPENAI_API_KEY           # environment variable holding the key\n\n"
        "  # Anthropic: provider: anthropic, name: claude-sonnet-4-5, key in ANTHROPIC_API_KEY\n"
        "  # The Hermes Agent's form works too: model: {default: anthropic/claude-sonnet-4, provider: openrouter}\n"
        "  # (key in OPENROUTER_API_KEY; also custom + base_url, nous, deepseek, ...)\n\n"
        f"Put the key in the environment or in {env_path} (e.g. OPENAI_API_KEY=sk-...).\n"
        "An optional `auxiliary:` section (same keys) sets a cheaper model for summaries and memory flushes."
    )


def build_model(cfg: ModelConfig, *, env: Mapping[str, str] | None = None, section: str = "model",
                named: Mapping[str, dict[str, Any]] | None = None) -> ChatModel:
    """Return the adapter for one ``ModelConfig``.

    ``cfg.provider`` may be ours (``openai``, ``anthropic``) or a Hermes Agent provider id
    (``openrouter``, ``custom``, ``auto``/empty, ``nous``, ``deepseek``, ... or a name from the
    config's ``providers:``/``custom_providers:``, passed as ``named``); see
    :func:`hermes_memory.llm.reference_providers.resolve_route`. Raises
    :class:`ModelNotConfiguredError` (whose message says how to fix it) when the section names no
    model, the provider cannot be driven, or a key is required and missing.
    """
    env = os.environ if env is None else env
    if not cfg.configured:
        raise ModelNotConfiguredError(not_configured_help())
    api_key = _expand(cfg.api_key, env)
    if unresolved := _ENV_REF.findall(api_key):
        raise ModelNotConfiguredError(f"{section}.api_key refers to ${{{unresolved[0]}}}, which is not set: set it in "
                                      "the environment or in $HERMES_HOME/.env")
    route = resolve_route(cfg.provider, base_url=_expand(cfg.base_url, env), api_key=api_key,
                          api_key_env=cfg.api_key_env, env=env, section=section, named=named)
    extra = cfg.model_extra or {}
    max_retries = int(extra.get("max_retries", 2))
    if route.wire == "anthropic":
        from hermes_memory.llm.anthropic import AnthropicModel

        base = None if route.base_url == PROVIDERS["anthropic"].base_url else route.base_url or None
        return AnthropicModel(cfg.name, base_url=base, api_key=route.api_key,
                              context_length=cfg.context_length, max_tokens=cfg.max_tokens,
                              temperature=cfg.temperature, timeout=cfg.timeout, max_retries=max_retries)
    from hermes_memory.llm.openai_compat import OpenAICompatModel

    return OpenAICompatModel(cfg.name, base_url=route.base_url or None, api_key=route.api_key or None,
                             context_length=cfg.context_length, max_tokens=cfg.max_tokens,
                             temperature=cfg.temperature, timeout=cfg.timeout, max_retries=max_retries,
                             key_env=cfg.api_key_env or route.key_env or DEFAULT_KEY_ENV["openai"])


def auxiliary_config(config: HermesConfig) -> ModelConfig | None:
    """The effective ``auxiliary:`` section (empty fields inherited from ``model:``), or None to reuse main."""
    aux = config.auxiliary
    if not aux.name:
        return None
    main = config.model
    merged = main.model_dump()
    merged.update({k: v for k, v in aux.model_dump().items() if k in aux.model_fields_set and v not in ("", None)})
    if aux.provider and aux.provider != main.provider and "base_url" not in aux.model_fields_set:
        merged["base_url"] = ""
        if "api_key" not in aux.model_fields_set:
            merged["api_key"] = ""
        if "api_key_env" not in aux.model_fields_set:
            merged["api_key_env"] = ""
    return ModelConfig.model_validate(merged)


def build_models(config: HermesConfig, *, env: Mapping[str, str] | None = None) -> tuple[ChatModel, ChatModel]:
    """Return ``(main, auxiliary)``; ``auxiliary is main`` when no auxiliary model is configured.

    Raises :class:`ModelNotConfiguredError` when ``model:`` is not configured or a key is missing.
    """
    named = named_providers(config.model_extra)
    main = build_model(config.model, env=env, section="model", named=named)
    aux_cfg = auxiliary_config(config)
    if aux_cfg is None:
        return main, main
    return main, build_model(aux_cfg, env=env, section="auxiliary", named=named)


def build_summary_model(config: HermesConfig, main: ChatModel, aux: ChatModel, *,
                        env: Mapping[str, str] | None = None) -> ChatModel:
    """The model for compression summaries: ``compression.summary_model`` (a model id on the auxiliary
    model's service) when set, else ``aux``. Raises :class:`ModelNotConfiguredError` like :func:`build_model`."""
    name = config.compression.summary_model.strip()
    if not name or name == aux.name:
        return aux
    base = auxiliary_config(config) or config.model
    return build_model(base.model_copy(update={"name": name}), env=env, section="compression.summary_model",
                       named=named_providers(config.model_extra))
