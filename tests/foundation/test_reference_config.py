"""The Hermes Agent's own config.yaml files, written by its own code, load here unchanged.

Every test drives the real reference agent (0.19.0 and the legacy 0.18.0, installed in venvs of their
own by ``tests.backends``) in a subprocess: its ``hermes_cli.config.save_config``
writes ``DEFAULT_CONFIG`` (whole, or stripped of defaults as it normally saves) into a temporary
``HERMES_HOME``, and its registry, aliases and clamps are the oracle.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from hermes_memory.config import load_config
from hermes_memory.errors import ModelNotConfiguredError
from hermes_memory.llm.reference_providers import PROVIDERS, canonical, resolve_route
from tests import backends

REFERENCES = ("hermes-agent", "hermes-agent-legacy")

WRITE = """
import copy, json, sys
from hermes_cli import config as c
cfg = c._deep_merge(copy.deepcopy(c.DEFAULT_CONFIG), json.loads(sys.argv[1]))
c.save_config(cfg, strip_defaults=sys.argv[2] == "stripped")
"""

# The reference's own view of providers: its registry, plugin aliases and resolve_provider() answers.
REGISTRY = """
import json, sys
from hermes_cli.auth import PROVIDER_REGISTRY, resolve_provider
names = set(PROVIDER_REGISTRY) | set(json.loads(sys.argv[1]))
try:
    from providers import list_providers
    for p in list_providers():
        names.add(p.name); names.update(p.aliases)
except Exception:
    pass
resolved = {}
for n in sorted(names):
    try:
        resolved[n] = resolve_provider(n)
    except Exception:
        resolved[n] = None
print(json.dumps({"registry": {k: {"auth": v.auth_type, "base_url": v.inference_base_url,
                                   "keys": list(v.api_key_env_vars), "base_url_env": v.base_url_env_var}
                               for k, v in PROVIDER_REGISTRY.items()}, "resolved": resolved}))
"""

# What the reference itself reads from a config.yaml: the merged config and its compressor's clamps.
READ_BACK = """
import json
from hermes_cli.config import load_config
cfg = load_config()
print(json.dumps(cfg, default=str))
"""


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN", "_BASE_URL"))}
    env["HERMES_HOME"] = str(home)
    return env


def run_reference(python: Path, home: Path, code: str, *args: str) -> str:
    proc = subprocess.run([str(python), "-c", code, *args], capture_output=True, text=True, env=_env(home),
                          timeout=300)
    assert proc.returncode == 0, f"reference agent failed:\n{proc.stderr[-3000:]}"
    return proc.stdout


def reference_writes(python: Path, home: Path, overrides: dict[str, Any] | None = None,
                     kind: str = "stripped") -> Path:
    home.mkdir(parents=True, exist_ok=True)
    run_reference(python, home, WRITE, json.dumps(overrides or {}), kind)
    path = home / "config.yaml"
    assert path.is_file()
    return path


def ours(home: Path, *args: str, env: dict[str, str] | None = None, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hermes_memory", "--home", str(home), *args], input=stdin,
                          capture_output=True, text=True, env=env or _env(home), timeout=180)


@pytest.fixture(scope="module", params=REFERENCES)
def reference(request: pytest.FixtureRequest) -> Path:
    return backends.ensure(request.param)


@pytest.mark.parametrize("kind", ["full", "stripped"])
def test_reference_default_config_loads_unchanged_without_warnings(reference: Path, tmp_path: Path, kind: str) -> None:
    path = reference_writes(reference, tmp_path / "h", kind=kind)
    before = path.read_bytes()
    if kind == "full":
        assert yaml.safe_load(before)["model"] == ""  # the reference's own default, refused before
    cfg = load_config(path)
    assert cfg.warnings == []
    assert not cfg.model.configured and cfg.memory.memory_char_limit == 2200 and cfg.compression.target_ratio == 0.20
    assert path.read_bytes() == before


@pytest.mark.parametrize("provider", ["openrouter", "auto", "nous", "codex", "openai-codex", "custom", "ollama",
                                      "anthropic", "deepseek", "gemini", "zai", "lmstudio", "copilot", "bedrock"])
def test_each_reference_provider_value_loads_and_routes_or_says_what_to_set(
        reference: Path, tmp_path: Path, provider: str) -> None:
    path = reference_writes(reference, tmp_path / "h", {"model": {"default": "vendor/some-model", "provider": provider}})
    cfg = load_config(path)
    assert cfg.warnings == []
    assert cfg.model.name == "vendor/some-model" and cfg.model.provider == provider
    p = PROVIDERS.get(canonical(provider))
    env = {var: "sk-test" for entry in PROVIDERS.values() for var in entry.key_env}
    if p is not None and p.wire and provider not in ("custom", "ollama", "auto"):
        route = resolve_route(cfg.model.provider, base_url="", api_key="", api_key_env="", env=env)
        assert route.base_url == p.base_url and route.api_key == "sk-test"
    if provider in ("custom", "ollama"):
        with pytest.raises(ModelNotConfiguredError, match=r"model\.base_url"):
            resolve_route(cfg.model.provider, base_url="", api_key="", api_key_env="", env={})
    if p is not None and not p.wire:
        with pytest.raises(ModelNotConfiguredError, match="Use another provider here"):
            resolve_route(cfg.model.provider, base_url="", api_key="", api_key_env="", env=env)
    if provider == "nous":  # OAuth-only in the reference: we say what to set instead of reading auth.json
        with pytest.raises(ModelNotConfiguredError, match=r"model\.api_key.*NOUS_API_KEY"):
            resolve_route("nous", base_url="", api_key="", api_key_env="", env={})


def test_model_as_a_string_and_stale_root_keys_follow_the_reference(reference: Path, tmp_path: Path) -> None:
    home = tmp_path / "h"
    path = reference_writes(reference, home, {"model": "anthropic/claude-sonnet-4"})
    assert load_config(path).model.name == "anthropic/claude-sonnet-4"
    path.write_text("provider: openrouter\nbase_url: http://127.0.0.1:9/v1\nmodel:\n  name: a\n  default: b\n")
    cfg = load_config(path)
    ref = json.loads(run_reference(reference, home, READ_BACK))["model"]
    assert cfg.model.name == ref["default"] == "b"
    assert cfg.model.provider == ref["provider"] == "openrouter" and cfg.model.base_url == ref["base_url"]


def test_provider_table_matches_the_reference_registry_and_aliases(reference: Path, tmp_path: Path) -> None:
    from hermes_memory.llm.reference_providers import ALIASES

    data = json.loads(run_reference(reference, tmp_path, REGISTRY, json.dumps(sorted(ALIASES))))
    # every provider id and alias the reference resolves is resolved to the same id here
    for name, ref_id in data["resolved"].items():
        if ref_id is not None:
            assert canonical(name) == ref_id, name
            assert ref_id in PROVIDERS or ref_id == "openrouter", ref_id
    # default endpoint, key variables and base-URL variable are the reference's, with documented exceptions
    exceptions = {
        "gemini": "we use Google's OpenAI-compatible path /v1beta/openai",
        "anthropic": "ANTHROPIC_TOKEN / CLAUDE_CODE_OAUTH_TOKEN are OAuth tokens our adapter cannot send",
        "nous": "OAuth in the reference; NOUS_API_KEY is the variable its doctor checks",
        "minimax-oauth": "OAuth only", "qwen-oauth": "OAuth only", "azure-foundry": "no default endpoint",
    }
    for pid, ref in data["registry"].items():
        ours_ = PROVIDERS[canonical(pid)]
        if not ours_.wire or pid in exceptions:
            continue
        assert ours_.base_url == ref["base_url"], pid
        assert list(ours_.key_env) == ref["keys"], pid
        assert ours_.base_url_env == ref["base_url_env"], pid
    assert PROVIDERS["gemini"].base_url == data["registry"]["gemini"]["base_url"] + "/openai"
    assert PROVIDERS["anthropic"].key_env == (data["registry"]["anthropic"]["keys"][0],)


def test_values_the_reference_clamps_are_clamped_the_same_way_with_a_warning(reference: Path, tmp_path: Path) -> None:
    home = tmp_path / "h"
    for ratio, expected in ((0.05, 0.10), (0.95, 0.80)):
        path = reference_writes(reference, home, {"compression": {"target_ratio": ratio, "protect_first_n": -2},
                                                  "prompt_caching": {"cache_ttl": "2h"},
                                                  "memory": {"nudge_interval": -1}})
        oracle = json.loads(run_reference(reference, home, (
            "import json\nfrom agent.context_compressor import ContextCompressor\n"
            f"c = ContextCompressor('m', summary_target_ratio={ratio}, config_context_length=100000, quiet_mode=True)\n"
            "print(json.dumps(c.summary_target_ratio))")))
        cfg = load_config(path)
        assert cfg.compression.target_ratio == oracle == expected
        assert cfg.compression.protect_first_n == max(0, -2)  # the reference's max(0, protect_first_n)
        assert cfg.prompt_caching.cache_ttl == "5m"  # the reference keeps 5m for an unknown ttl
        assert cfg.memory.nudge_interval == 0  # nudging off, as the reference's `> 0` test makes it
        keys = ["compression.target_ratio", "compression.protect_first_n", "prompt_caching.cache_ttl",
                "memory.nudge_interval"]
        assert len(cfg.warnings) == len(keys)
        for key in keys:
            assert any(key in w and str(path) in w for w in cfg.warnings), (key, cfg.warnings)


def test_booleans_the_reference_reads_loosely_are_read_its_way(reference: Path, tmp_path: Path) -> None:
    path = reference_writes(reference, tmp_path / "h", {"compression": {"enabled": "sometimes"},
                                                        "memory": {"user_profile_enabled": "please"}})
    cfg = load_config(path)
    assert cfg.compression.enabled is False  # str(v).lower() in {"true", "1", "yes"}
    assert cfg.memory.user_profile_enabled is True  # truthiness
    assert len(cfg.warnings) == 2 and all(str(path) in w for w in cfg.warnings)


@pytest.mark.parametrize("kind", ["full", "stripped"])
def test_memory_setup_on_the_reference_file_changes_only_our_keys(reference: Path, tmp_path: Path, kind: str) -> None:
    home = tmp_path / "h"
    path = reference_writes(reference, home, {"model": {"default": "x/y", "provider": "openrouter"}}, kind=kind)
    with path.open("a", encoding="utf-8") as fh:
        fh.write("# a comment the user added by hand\nterminal_extra:\n  - 'quoted'   # trailing comment\n")
    before = path.read_text(encoding="utf-8")
    ref_before = json.loads(run_reference(reference, home, READ_BACK))
    proc = ours(home, "memory", "setup", "--provider", "holographic", "--set", "hrr_dim=512", "--yes", "--json")
    assert proc.returncode == 0, proc.stderr
    written = [key.split(".", 1)[1] for key in json.loads(proc.stdout)["config"]]
    after = path.read_text(encoding="utf-8")
    diff = list(difflib.ndiff(before.splitlines(keepends=True), after.splitlines(keepends=True)))
    removed = [line[2:] for line in diff if line.startswith("- ")]
    added = [line[2:] for line in diff if line.startswith("+ ")]
    # every other line (comments, quotes, indentation, order) is byte-identical
    assert removed == (["  provider: ''\n"] if kind == "full" else [])
    ours_keys = ("memory:", "provider: holographic", "provider: 'holographic'", "holographic:",
                 *(f"{key}:" for key in written))
    assert "hrr_dim" in written and added and all(a.strip().startswith(ours_keys) for a in added), added
    # the reference reads the edited file and sees only our keys changed
    ref_after = json.loads(run_reference(reference, home, READ_BACK))
    assert ref_after["memory"]["provider"] == "holographic" and ref_after["holographic"]["hrr_dim"] == 512
    ref_after["memory"]["provider"] = ref_before["memory"]["provider"]
    ref_after.pop("holographic")
    ref_before.pop("holographic", None)
    assert ref_after == ref_before
    assert load_config(path).memory.provider == "holographic"


def test_commands_that_need_no_model_exit_0_on_a_reference_home(reference: Path, tmp_path: Path) -> None:
    home = tmp_path / "h"
    for overrides in ({}, {"model": {"default": "anthropic/claude-sonnet-4", "provider": "openai-codex"}}):
        path = reference_writes(reference, home, overrides, kind="full")
        before = path.read_bytes()
        for args in (["memory", "show"], ["sessions", "list"], ["providers", "list"], ["memory", "status"]):
            proc = ours(home, *args)
            assert proc.returncode == 0, (args, proc.stderr)
            assert "error" not in proc.stderr.lower() and "warning" not in proc.stderr.lower(), proc.stderr
        # serve over stdio: an MCP initialize, then end of input ends it with 0
        init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
        proc = ours(home, "serve", stdin=init + "\n")
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout.splitlines()[0])["result"]["serverInfo"]
        assert path.read_bytes() == before  # no command rewrote the reference's file


def test_run_with_a_reference_provider_that_we_cannot_drive_exits_2_saying_what_to_set(
        reference: Path, tmp_path: Path) -> None:
    home = tmp_path / "h"
    reference_writes(reference, home, {"model": {"default": "gpt-5.5", "provider": "codex"}})
    proc = ours(home, "run", "hello")
    assert proc.returncode == 2
    assert "openai-codex" in proc.stderr and "OPENROUTER_API_KEY" in proc.stderr
    assert not (home / "state.db").exists() or ours(home, "sessions", "list", "--json").stdout.strip() in ("[]", "")


def test_run_with_provider_openrouter_reaches_a_local_openai_compatible_server(reference: Path, tmp_path: Path) -> None:
    from tests.helpers.model_fake import FakeOpenAIServer

    home = tmp_path / "h"
    with FakeOpenAIServer(["hello from the fake router"], api_key="sk-or-local") as srv:
        reference_writes(reference, home, {"model": {"default": "anthropic/claude-sonnet-4", "provider": "openrouter",
                                                     "base_url": srv.base_url}})
        env = {**_env(home), "OPENROUTER_API_KEY": "sk-or-local"}
        proc = ours(home, "run", "--json", "say hello", env=env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["text"] == "hello from the fake router"
    assert srv.requests[0].body["model"] == "anthropic/claude-sonnet-4"
    headers = srv.requests[0].headers
    assert headers["authorization"] == "Bearer sk-or-local"


def test_cli_prints_each_config_warning_once_on_stderr(reference: Path, tmp_path: Path) -> None:
    home = tmp_path / "h"
    path = reference_writes(reference, home, {"compression": {"target_ratio": 0.05}})
    proc = ours(home, "memory", "show", "--json")
    assert proc.returncode == 0, proc.stderr
    json.loads(proc.stdout)  # stdout stays clean JSON
    assert proc.stderr.count("compression.target_ratio") == 1 and str(path) in proc.stderr.replace("\n", "")


def test_auxiliary_compression_task_of_the_reference_is_our_summary_model(reference: Path, tmp_path: Path) -> None:
    from hermes_memory.llm.factory import auxiliary_config

    path = reference_writes(reference, tmp_path / "h", {
        "model": {"default": "main-model", "provider": "openrouter"},
        "auxiliary": {"compression": {"provider": "auto", "model": "cheap-model", "timeout": 45}}})
    cfg = load_config(path)
    aux = auxiliary_config(cfg)
    assert aux is not None and aux.name == "cheap-model" and aux.provider == "openrouter" and aux.timeout == 45
    untouched = copy.deepcopy(yaml.safe_load(path.read_text()))
    assert untouched["auxiliary"]["compression"]["model"] == "cheap-model"
