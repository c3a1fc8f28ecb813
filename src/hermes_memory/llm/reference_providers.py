"""Where a ``model.provider`` id goes: ours (``openai``, ``anthropic``) and the Hermes Agent's.

The Hermes Agent (``hermes_cli/auth.py`` ``PROVIDER_REGISTRY``, ``hermes_cli/providers.py`` overlays,
``hermes_cli/runtime_provider.py``) names a provider by id (``openrouter``, ``nous``, ``custom``,
``auto``, ``deepseek``, ...) and finds its endpoint and key itself. :func:`resolve_route` does the
same for the ids whose endpoint speaks the OpenAI chat-completions or the Anthropic messages wire
format, with that provider's default base URL, base-URL variable and key variables (the table is
checked against the installed Hermes Agent by the tests). Providers that can only be reached with
the Hermes Agent's own OAuth login or SDK (ChatGPT/Codex, Copilot, Bedrock, ...) are refused with
a :class:`~hermes_memory.errors.ModelNotConfiguredError` that says what to set instead; nothing is
read from the Hermes Agent's ``auth.json``.

Key precedence for every provider: ``api_key`` in the section > the variable named by
``api_key_env`` > the provider's variables, in the Hermes Agent's order. Base URL: ``base_url`` in
the section > the provider's base-URL variable > its default.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from hermes_memory.errors import ModelNotConfiguredError

Wire = Literal["openai", "anthropic", ""]

OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"


@dataclass(frozen=True)
class ReferenceProvider:
    """One provider: ``wire`` is the adapter (``""`` = we cannot drive it; ``refusal`` says why).

    ``needs_key`` is False for local servers that take no key (LM Studio, ``custom``).
    """

    id: str
    wire: Wire
    base_url: str = ""
    key_env: tuple[str, ...] = ()
    base_url_env: str = ""
    needs_key: bool = True
    refusal: str = ""


def _p(id_: str, wire: Wire, base_url: str = "", key_env: tuple[str, ...] = (), base_url_env: str = "",
       **kw: Any) -> ReferenceProvider:
    return ReferenceProvider(id_, wire, base_url, key_env, base_url_env, **kw)


_OAUTH = ("signs in with the Hermes Agent's OAuth login, which we do not read; set {section}.api_key "
          "(or name a variable with {section}.api_key_env) to a key for {url}")
_REFUSE = "{why}. Use another provider here: e.g. openrouter (OPENROUTER_API_KEY), openai, anthropic or custom"

PROVIDERS: dict[str, ReferenceProvider] = {p.id: p for p in (
    _p("openai", "openai", "", ("OPENAI_API_KEY",)),  # ours: base_url optional (api.openai.com)
    _p("anthropic", "anthropic", "https://api.anthropic.com", ("ANTHROPIC_API_KEY",), "ANTHROPIC_BASE_URL"),
    _p("openrouter", "openai", OPENROUTER_BASE_URL, ("OPENROUTER_API_KEY", "OPENAI_API_KEY"), "OPENROUTER_BASE_URL"),
    _p("custom", "openai", "", (), "CUSTOM_BASE_URL", needs_key=False),
    _p("nous", "openai", "https://inference-api.nousresearch.com/v1", ("NOUS_API_KEY",), refusal=_OAUTH),
    _p("qwen-oauth", "openai", "https://portal.qwen.ai/v1", (), refusal=_OAUTH),
    _p("minimax-oauth", "anthropic", "https://api.minimax.io/anthropic", (), refusal=_OAUTH),
    _p("openai-api", "openai", "https://api.openai.com/v1", ("OPENAI_API_KEY",), "OPENAI_BASE_URL"),
    _p("lmstudio", "openai", "http://127.0.0.1:1234/v1", ("LM_API_KEY",), "LM_BASE_URL", needs_key=False),
    # Google's OpenAI-compatible surface lives under /openai of the Hermes Agent's native base URL.
    _p("gemini", "openai", "https://generativelanguage.googleapis.com/v1beta/openai", ("GOOGLE_API_KEY", "GEMINI_API_KEY"),
       "GEMINI_BASE_URL"),
    _p("zai", "openai", "https://api.z.ai/api/paas/v4", ("GLM_API_KEY", "ZAI_API_KEY", "Z_AI_API_KEY"), "GLM_BASE_URL"),
    _p("kimi-coding", "openai", "https://api.moonshot.ai/v1", ("KIMI_API_KEY", "KIMI_CODING_API_KEY"), "KIMI_BASE_URL"),
    _p("kimi-coding-cn", "openai", "https://api.moonshot.cn/v1", ("KIMI_CN_API_KEY",)),
    _p("stepfun", "openai", "https://api.stepfun.ai/step_plan/v1", ("STEPFUN_API_KEY",), "STEPFUN_BASE_URL"),
    _p("arcee", "openai", "https://api.arcee.ai/api/v1", ("ARCEEAI_API_KEY",), "ARCEE_BASE_URL"),
    _p("gmi", "openai", "https://api.gmi-serving.com/v1", ("GMI_API_KEY",), "GMI_BASE_URL"),
    _p("minimax", "anthropic", "https://api.minimax.io/anthropic", ("MINIMAX_API_KEY",), "MINIMAX_BASE_URL"),
    _p("minimax-cn", "anthropic", "https://api.minimaxi.com/anthropic", ("MINIMAX_CN_API_KEY",), "MINIMAX_CN_BASE_URL"),
    _p("alibaba", "openai", "https://dashscope-intl.aliyuncs.com/compatible-mode/v1", ("DASHSCOPE_API_KEY",),
       "DASHSCOPE_BASE_URL"),
    _p("alibaba-coding-plan", "openai", "https://coding-intl.dashscope.aliyuncs.com/v1",
       ("ALIBABA_CODING_PLAN_API_KEY", "DASHSCOPE_API_KEY"), "ALIBABA_CODING_PLAN_BASE_URL"),
    _p("deepseek", "openai", "https://api.deepseek.com/v1", ("DEEPSEEK_API_KEY",), "DEEPSEEK_BASE_URL"),
    _p("xai", "openai", "https://api.x.ai/v1", ("XAI_API_KEY",), "XAI_BASE_URL"),
    _p("nvidia", "openai", "https://integrate.api.nvidia.com/v1", ("NVIDIA_API_KEY",), "NVIDIA_BASE_URL"),
    _p("opencode-zen", "openai", "https://opencode.ai/zen/v1", ("OPENCODE_ZEN_API_KEY",), "OPENCODE_ZEN_BASE_URL"),
    _p("opencode-go", "openai", "https://opencode.ai/zen/go/v1", ("OPENCODE_GO_API_KEY",), "OPENCODE_GO_BASE_URL"),
    _p("kilocode", "openai", "https://api.kilo.ai/api/gateway", ("KILOCODE_API_KEY",), "KILOCODE_BASE_URL"),
    _p("huggingface", "openai", "https://router.huggingface.co/v1", ("HF_TOKEN",), "HF_BASE_URL"),
    _p("xiaomi", "openai", "https://api.xiaomimimo.com/v1", ("XIAOMI_API_KEY",), "XIAOMI_BASE_URL"),
    _p("tencent-tokenhub", "openai", "https://tokenhub.tencentmaas.com/v1", ("TOKENHUB_API_KEY",), "TOKENHUB_BASE_URL"),
    _p("ollama-cloud", "openai", "https://ollama.com/v1", ("OLLAMA_API_KEY",), "OLLAMA_BASE_URL"),
    _p("azure-foundry", "openai", "", ("AZURE_FOUNDRY_API_KEY",), "AZURE_FOUNDRY_BASE_URL"),
    _p("deepinfra", "openai", "https://api.deepinfra.com/v1/openai", ("DEEPINFRA_API_KEY",), "DEEPINFRA_BASE_URL"),
    _p("fireworks", "openai", "https://api.fireworks.ai/inference/v1", ("FIREWORKS_API_KEY",)),
    _p("novita", "openai", "https://api.novita.ai/openai/v1", ("NOVITA_API_KEY",), "NOVITA_BASE_URL"),
    _p("upstage", "openai", "https://api.upstage.ai/v1", ("UPSTAGE_API_KEY",), "UPSTAGE_BASE_URL"),
    _p("openai-codex", "", refusal=_REFUSE.format(
        why="openai-codex is ChatGPT's Codex backend: an OAuth login and the Responses API, which we do not speak")),
    _p("xai-oauth", "", refusal=_REFUSE.format(
        why="xai-oauth signs in with the Hermes Agent's xAI OAuth login; use provider: xai with XAI_API_KEY")),
    _p("copilot", "", refusal=_REFUSE.format(
        why="copilot needs GitHub Copilot's token exchange and client headers, which we do not implement")),
    _p("copilot-acp", "", refusal=_REFUSE.format(why="copilot-acp runs the Copilot CLI as a subprocess (ACP)")),
    _p("bedrock", "", refusal=_REFUSE.format(why="bedrock uses the AWS SDK's Converse API, which we do not speak")),
    _p("vertex", "", refusal=_REFUSE.format(why="vertex signs in with Google Cloud credentials (Vertex AI)")),
    _p("moa", "", refusal=_REFUSE.format(why="moa is the Hermes Agent's mixture-of-agents virtual provider")),
)}

# The Hermes Agent's aliases (hermes_cli/auth.py resolve_provider, the registry's duplicate ids).
ALIASES: dict[str, str] = {
    "glm": "zai", "z-ai": "zai", "z.ai": "zai", "zhipu": "zai",
    "google": "gemini", "google-gemini": "gemini", "google-ai-studio": "gemini",
    "x-ai": "xai", "x.ai": "xai", "grok": "xai",
    "x-ai-oauth": "xai-oauth", "grok-oauth": "xai-oauth", "xai-grok-oauth": "xai-oauth",
    "kimi": "kimi-coding", "kimi-for-coding": "kimi-coding", "moonshot": "kimi-coding",
    "kimi-cn": "kimi-coding-cn", "moonshot-cn": "kimi-coding-cn",
    "step": "stepfun", "stepfun-coding-plan": "stepfun",
    "arcee-ai": "arcee", "arceeai": "arcee", "gmi-cloud": "gmi", "gmicloud": "gmi",
    "minimax-china": "minimax-cn", "minimax_cn": "minimax-cn",
    "minimax-portal": "minimax-oauth", "minimax-global": "minimax-oauth", "minimax_oauth": "minimax-oauth",
    "alibaba_coding": "alibaba-coding-plan", "alibaba-coding": "alibaba-coding-plan",
    "alibaba_coding_plan": "alibaba-coding-plan",
    "claude": "anthropic", "claude-code": "anthropic",
    "github": "copilot", "github-copilot": "copilot", "github-models": "copilot", "github-model": "copilot",
    "github-copilot-acp": "copilot-acp", "copilot-acp-agent": "copilot-acp",
    "opencode": "opencode-zen", "zen": "opencode-zen",
    "qwen-portal": "qwen-oauth", "qwen-cli": "qwen-oauth",
    "hf": "huggingface", "hugging-face": "huggingface", "huggingface-hub": "huggingface",
    "mimo": "xiaomi", "xiaomi-mimo": "xiaomi",
    "tencent": "tencent-tokenhub", "tokenhub": "tencent-tokenhub", "tencent-cloud": "tencent-tokenhub",
    "tencentmaas": "tencent-tokenhub",
    "aws": "bedrock", "aws-bedrock": "bedrock", "amazon-bedrock": "bedrock", "amazon": "bedrock",
    "go": "opencode-go", "opencode-go-sub": "opencode-go",
    "kilo": "kilocode", "kilo-code": "kilocode", "kilo-gateway": "kilocode",
    "lm-studio": "lmstudio", "lm_studio": "lmstudio",
    "ollama": "custom", "ollama_cloud": "ollama-cloud", "vllm": "custom", "llamacpp": "custom",
    "llama.cpp": "custom", "llama-cpp": "custom",
    "deep-infra": "deepinfra", "deepinfra-ai": "deepinfra", "fireworks-ai": "fireworks", "fw": "fireworks",
    "novita-ai": "novita", "novitaai": "novita", "solar": "upstage",
    # aliases declared by the Hermes Agent's provider plugins (providers/ list_providers())
    "dashscope": "alibaba", "alibaba-cloud": "alibaba", "qwen-dashscope": "alibaba", "dashscope-coding": "alibaba-coding-plan",
    "claude-oauth": "anthropic", "azure": "azure-foundry", "azure-ai-foundry": "azure-foundry", "azure-ai": "azure-foundry",
    "local": "custom", "deepseek-chat": "deepseek", "mini-max": "minimax", "minimax-oauth-io": "minimax-oauth",
    "nous-portal": "nous", "nousresearch": "nous", "nvidia-nim": "nvidia", "codex": "openai-codex",
    "openai_codex": "openai-codex", "opencode_zen": "opencode-zen", "opencode_go": "opencode-go", "or": "openrouter",
    "qwen": "qwen-oauth", "google-vertex": "vertex", "vertex-ai": "vertex", "gcp-vertex": "vertex",
}

# ``auto`` without a base_url: the first provider whose key variable is set (documented in the README).
# Unlike the Hermes Agent, OPENAI_API_KEY alone means OpenAI, not OpenRouter.
AUTO_ORDER: tuple[tuple[str, str], ...] = (
    ("openrouter", "OPENROUTER_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY"), ("openai", "OPENAI_API_KEY"),
    ("nous", "NOUS_API_KEY"), *((pid, var) for pid in (
        "gemini", "zai", "kimi-coding", "kimi-coding-cn", "minimax", "minimax-cn", "deepseek", "xai", "alibaba",
        "huggingface", "nvidia", "ollama-cloud") for var in PROVIDERS[pid].key_env),
)


@dataclass(frozen=True)
class Route:
    """A resolved endpoint: ``wire`` adapter, ``base_url`` (``""`` = the SDK's default), key and the
    variable a missing key would come from (for error messages)."""

    provider: str
    wire: Literal["openai", "anthropic"]
    base_url: str
    api_key: str
    key_env: str


def canonical(provider: str) -> str:
    """The canonical id of ``provider`` (lower-cased, alias resolved); ``""`` and ``main`` mean ``auto``."""
    name = (provider or "").strip().lower()
    if name in ("", "main"):
        return "auto"
    return ALIASES.get(name, name)


def _named(provider: str, named: Mapping[str, Any]) -> dict[str, Any] | None:
    entry = named.get(provider)
    return entry if isinstance(entry, dict) else None


def named_providers(config_extra: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    """User-defined endpoints of the Hermes Agent's config: ``providers: {<name>: {base_url|api, api_key,
    key_env}}`` and ``custom_providers: [{name, base_url, api_key, key_env}]``, by lower-cased name."""
    extra = config_extra or {}
    out: dict[str, dict[str, Any]] = {}
    listed = extra.get("custom_providers")
    if isinstance(listed, list):
        for entry in listed:
            if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                out[entry["name"].strip().lower()] = entry
    mapped = extra.get("providers")
    if isinstance(mapped, dict):
        for name, entry in mapped.items():
            if isinstance(entry, dict):
                out[str(name).strip().lower()] = entry
    return out


def resolve_route(provider: str, *, base_url: str, api_key: str, api_key_env: str, env: Mapping[str, str],
                  section: str = "model", named: Mapping[str, dict[str, Any]] | None = None) -> Route:
    """Resolve one section's provider to an endpoint.

    Raises :class:`ModelNotConfiguredError` naming ``section`` and what to set when the provider is
    unknown, cannot be driven, has no endpoint (``custom`` without ``base_url``) or needs a key
    that is not set.
    """
    named = named or {}
    pid = canonical(provider)
    env_path = "$HERMES_HOME/.env"

    def key_from(p: ReferenceProvider) -> tuple[str, str]:
        if api_key:
            return api_key, ""
        if api_key_env:
            return env.get(api_key_env, ""), api_key_env
        for var in p.key_env:
            if env.get(var):
                return env[var], var
        return "", (p.key_env[0] if p.key_env else "")

    if pid == "auto":
        if base_url:
            return resolve_route("custom", base_url=base_url, api_key=api_key, api_key_env=api_key_env, env=env,
                                 section=section)
        if api_key or api_key_env:
            raise ModelNotConfiguredError(
                f"{section}.provider is auto (or empty) with a key but no base_url: name the service with "
                f"{section}.provider (openai, anthropic, openrouter, ...) or set {section}.base_url")
        for candidate, var in AUTO_ORDER:
            if env.get(var):
                return resolve_route(candidate, base_url="", api_key="", api_key_env=var, env=env, section=section)
        raise ModelNotConfiguredError(
            f"{section}.provider is auto (or empty) and no provider key was found: set {section}.provider "
            "(openai, anthropic, openrouter, custom with base_url, ...) and its key, e.g. OPENROUTER_API_KEY "
            f"in the environment or {env_path} (the Hermes Agent's OAuth logins in auth.json are not used)")

    entry = _named(pid, named) if pid not in PROVIDERS else None
    if entry is not None:
        url = base_url or str(entry.get("base_url") or entry.get("api") or "").strip()
        if not url:
            raise ModelNotConfiguredError(f"{section}.provider {provider!r} names a custom provider without a base_url: "
                                          f"set base_url in its providers:/custom_providers: entry or {section}.base_url")
        key_env_name = api_key_env or str(entry.get("key_env") or "")
        key = api_key or str(entry.get("api_key") or "") or (env.get(key_env_name, "") if key_env_name else "")
        return Route(pid, "openai", url.rstrip("/"), key, key_env_name)

    p = PROVIDERS.get(pid)
    if p is None:
        known = sorted(set(PROVIDERS) | {"auto"})
        raise ModelNotConfiguredError(
            f"{section}.provider {provider!r} is not a provider we know. Use one of: {', '.join(known)}; or "
            f"provider: custom with {section}.base_url for any OpenAI-compatible server")
    if not p.wire:
        raise ModelNotConfiguredError(f"{section}.provider {provider!r}: {p.refusal}.")
    url = base_url or (env.get(p.base_url_env, "") if p.base_url_env else "") or p.base_url
    if pid == "custom" and not url:
        raise ModelNotConfiguredError(
            f"{section}.provider is {provider!r} but no {section}.base_url is set: point it at the server's "
            "OpenAI-compatible endpoint (e.g. http://localhost:11434/v1 for Ollama) or set CUSTOM_BASE_URL")
    if pid == "azure-foundry" and not url:
        raise ModelNotConfiguredError(f"{section}.provider is azure-foundry but no {section}.base_url (or "
                                      "AZURE_FOUNDRY_BASE_URL) names your Azure endpoint")
    key, var = key_from(p)
    if not key and p.refusal:
        raise ModelNotConfiguredError(f"{section}.provider {provider!r} " + p.refusal.format(
            section=section, url=url) + (f", or set {p.key_env[0]} in the environment or {env_path}" if p.key_env else ""))
    local = pid == "openai" and bool(base_url)
    if not key and p.needs_key and not local:
        var = var or (p.key_env[0] if p.key_env else f"{pid.upper().replace('-', '_')}_API_KEY")
        where = f"{url or 'api.openai.com'}"
        hint = (f", or set {section}.base_url to a local server (e.g. http://localhost:11434/v1 for Ollama)"
                if pid == "openai" else "")
        raise ModelNotConfiguredError(
            f"{section}.provider is {provider} ({where}) but no API key was found: set {var} in the environment or "
            f"in {env_path}, or name another variable with {section}.api_key_env{hint}.")
    return Route(pid, p.wire, url.rstrip("/"), key, var or (p.key_env[0] if p.key_env else ""))
