"""Where each ``model.provider`` value goes: endpoint, adapter, key, and what to set when it can't go anywhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_memory.config import load_config
from hermes_memory.errors import ModelNotConfiguredError
from hermes_memory.llm.anthropic import AnthropicModel
from hermes_memory.llm.factory import build_model, build_models
from hermes_memory.llm.openai_compat import OpenAICompatModel
from hermes_memory.llm.reference_providers import OPENROUTER_BASE_URL, resolve_route


def route(provider: str, env: dict[str, str], *, base_url: str = "", api_key_env: str = "", section: str = "model"):
    return resolve_route(provider, env=env, base_url=base_url, api_key="", api_key_env=api_key_env, section=section)


def test_auto_takes_base_url_first_then_the_first_key_found_in_order() -> None:
    assert route("auto", {}, base_url="http://127.0.0.1:9/v1").base_url == "http://127.0.0.1:9/v1"
    both = {"OPENAI_API_KEY": "sk-o", "OPENROUTER_API_KEY": "sk-or", "DEEPSEEK_API_KEY": "sk-d"}
    r = route("", both)
    assert (r.provider, r.base_url, r.api_key) == ("openrouter", OPENROUTER_BASE_URL, "sk-or")
    r = route("auto", {"OPENAI_API_KEY": "sk-o", "DEEPSEEK_API_KEY": "sk-d"})
    assert (r.provider, r.api_key) == ("openai", "sk-o")
    r = route("auto", {"DEEPSEEK_API_KEY": "sk-d"})
    assert (r.provider, r.base_url, r.api_key) == ("deepseek", "https://api.deepseek.com/v1", "sk-d")
    with pytest.raises(ModelNotConfiguredError, match="OPENROUTER_API_KEY.*auth.json"):
        route("auto", {})


def test_openrouter_key_and_base_url_precedence() -> None:
    r = route("openrouter", {"OPENAI_API_KEY": "sk-o"})
    assert (r.base_url, r.api_key, r.wire) == (OPENROUTER_BASE_URL, "sk-o", "openai")
    env = {"OPENAI_API_KEY": "sk-o", "OPENROUTER_API_KEY": "sk-or", "OPENROUTER_BASE_URL": "http://proxy/v1"}
    assert (route("openrouter", env).api_key, route("openrouter", env).base_url) == ("sk-or", "http://proxy/v1")
    r = route("OpenRouter", env, base_url="http://127.0.0.1:1/v1")
    assert (r.base_url, r.api_key) == ("http://127.0.0.1:1/v1", "sk-or")
    with pytest.raises(ModelNotConfiguredError, match="set MY_KEY"):  # the named variable wins, and is unset
        route("openrouter", env, api_key_env="MY_KEY")
    with pytest.raises(ModelNotConfiguredError, match="OPENROUTER_API_KEY"):
        route("openrouter", {})


def test_custom_needs_a_base_url_and_no_key() -> None:
    with pytest.raises(ModelNotConfiguredError, match=r"model\.base_url.*CUSTOM_BASE_URL"):
        route("vllm", {})
    r = route("ollama", {}, base_url="http://localhost:11434/v1/")
    assert (r.provider, r.base_url, r.api_key) == ("custom", "http://localhost:11434/v1", "")


def test_unknown_and_undrivable_providers_say_what_to_set() -> None:
    with pytest.raises(ModelNotConfiguredError, match=r"'nonsense' is not a provider we know.*openrouter.*custom"):
        route("nonsense", {})
    with pytest.raises(ModelNotConfiguredError, match=r"auxiliary\.provider 'bedrock'.*AWS SDK"):
        route("bedrock", {}, section="auxiliary")
    with pytest.raises(ModelNotConfiguredError, match=r"model\.api_key.*NOUS_API_KEY"):
        route("nous", {})
    assert route("nous", {"NOUS_API_KEY": "k"}).base_url == "https://inference-api.nousresearch.com/v1"


def test_named_custom_provider_of_the_reference_config(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("model: {default: local-model, provider: my-box}\n"
                    "providers:\n  my-box: {base_url: 'http://127.0.0.1:8/v1', key_env: BOX_KEY}\n"
                    "custom_providers:\n  - {name: Other, base_url: 'http://127.0.0.1:7/v1'}\n")
    main, aux = build_models(load_config(path), env={"BOX_KEY": "sk-box"})
    assert isinstance(main, OpenAICompatModel) and aux is main
    assert str(main._client.base_url).rstrip("/") == "http://127.0.0.1:8/v1" and main._client.api_key == "sk-box"
    other = build_model(load_config(path).model.model_copy(update={"provider": "other"}), env={},
                        named={"other": {"base_url": "http://127.0.0.1:7/v1"}})
    assert isinstance(other, OpenAICompatModel)
    assert str(other._client.base_url).rstrip("/") == "http://127.0.0.1:7/v1"


def test_anthropic_wire_providers_and_env_references_in_api_key(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("model: {default: MiniMax-M2, provider: minimax, api_key: '${MM_KEY}'}\n")
    model = build_model(load_config(path).model, env={"MM_KEY": "sk-mm"})
    assert isinstance(model, AnthropicModel)
    assert str(model._client.base_url).rstrip("/") == "https://api.minimax.io/anthropic"
    assert model._client.api_key == "sk-mm"
    with pytest.raises(ModelNotConfiguredError, match=r"model\.api_key refers to \$\{MM_KEY\}"):
        build_model(load_config(path).model, env={})
