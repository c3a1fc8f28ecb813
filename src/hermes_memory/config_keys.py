"""Unknown keys in ``config.yaml``: one warning each, naming the file, the line, the dotted key and
the known key it most looks like (``memory.memroy_char_limit`` -> ``memory.memory_char_limit``).

A key nobody reads is a typo more often than not, and ignoring it silently leaves the user with the
default they meant to change. It is never an error: the file is shared with the reference Hermes
Agent, whose keys are many and grow with each release, so only these warn:

* a key inside one of our sections (``memory:``, ``compression:``, ``prompt_caching:``,
  ``session_search:``, ``search:``, ``storage:``) that neither we nor the reference Hermes Agent
  0.19.0 (its ``DEFAULT_CONFIG`` and the keys it reads besides, 0.18.0's included) use, and that is
  not a memory provider's settings section (``memory.<provider>:``);
* a key inside ``sessions:`` or at the top level only when it is a near miss of a known key: the
  reference treats ``sessions:`` as an open mapping and turns top-level scalars into environment
  variables (its ``hermes config`` warns the same way: near misses only, keys starting with ``_``
  never).

``model:`` and ``auxiliary:`` take many forms (docs/reference.md §10) and are not checked here.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

# The reference Hermes Agent 0.19.0 (and 0.18.0): DEFAULT_CONFIG's top-level keys, the root keys it
# reads besides, and its open mappings (hermes_cli/config.py); names only.
REFERENCE_TOP_LEVEL = frozenset("""
_config_version agent approvals auxiliary bedrock browser checkpoints code_execution command_allowlist
compression computer_use context context_file_max_chars credential_pool_strategies cron curator dashboard
delegation desktop discord display fallback_providers file_read_max_chars gateway goals honcho hooks
hooks_auto_accept human_delay kanban logging lsp matrix mattermost max_concurrent_sessions max_live_sessions
mcp mcp_discovery_timeout memory moa model model_catalog network onboarding openrouter
paste_collapse_char_threshold paste_collapse_threshold paste_collapse_threshold_fallback personalities
platform_hints prefill_messages_file privacy prompt_caching providers quick_commands secrets security sessions
skills slack streaming stt telegram terminal timezone tool_loop_guardrails tool_output tools toolsets tts
updates vertex voice web whatsapp x_search
custom_providers fallback_model mcp_servers image_gen video_gen plugins smart_model_routing platform_toolsets
known_plugin_toolsets session_reset group_sessions_per_user thread_sessions_per_user stt_echo_transcripts
reset_triggers always_log_local filter_silence_narration multiplex_profiles profile_routes platforms
require_mention unauthorized_dm_behavior signal channel_prompts server_actions feishu wecom weixin
bluebubbles qqbot yuanbao email sms dingtalk
provider base_url context_length api_base api_key
""".split())

REFERENCE_SECTION_KEYS: dict[str, frozenset[str]] = {
    "memory": frozenset({"memory_char_limit", "memory_enabled", "provider", "user_char_limit",
                         "user_profile_enabled", "write_approval", "nudge_interval", "provider_config"}),
    "compression": frozenset({"abort_on_summary_failure", "codex_app_server_auto", "codex_gpt55_autoraise",
                              "codex_gpt55_autoraise_notice", "enabled", "hygiene_hard_message_limit", "in_place",
                              "protect_first_n", "protect_last_n", "target_ratio", "threshold",
                              "summary_model", "summary_provider", "summary_base_url"}),  # older, migrated keys
    "sessions": frozenset({"auto_prune", "min_interval_hours", "retention_days", "vacuum_after_prune",
                           "write_json_snapshots"}),
    "prompt_caching": frozenset({"cache_ttl"}),
}

CHECKED_SECTIONS = ("memory", "compression", "prompt_caching", "session_search", "search", "storage")
"""Sections whose every unknown key warns (``sessions:`` and the top level: near misses only)."""
NEAR_MISS = 0.75
"""``difflib`` ratio from which a known key is offered as the one meant (and, where only near misses
warn, from which a key warns at all); ours, a little stricter than the reference's 0.6."""
_BUNDLED_PLUGINS = Path(__file__).resolve().parent / "plugins"


def _provider_names(home: Path | None, configured: Any) -> set[str]:
    """Names a provider's settings section may have: bundled and user plugins, the configured one."""
    names = {configured.strip()} if isinstance(configured, str) and configured.strip() else set()
    for folder in (_BUNDLED_PLUGINS, *(() if home is None else (home / "plugins",))):
        try:
            names.update(p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))
        except OSError:
            continue
    return names


def _lines(text: str) -> dict[tuple[str, ...], int]:
    """1-based line of each key of the top two levels of ``text`` (``{("memory", "x"): 3}``)."""
    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        return {}
    out: dict[tuple[str, ...], int] = {}
    if not isinstance(root, yaml.MappingNode):
        return out
    for key, value in root.value:
        name = str(key.value)
        out[(name,)] = key.start_mark.line + 1
        if isinstance(value, yaml.MappingNode):
            for sub, _ in value.value:
                out[(name, str(sub.value))] = sub.start_mark.line + 1
    return out


def _suggest(key: str, known: Iterable[str]) -> str | None:
    found = difflib.get_close_matches(key, sorted(known), n=1, cutoff=NEAR_MISS)
    return found[0] if found else None


def unknown_key_warnings(data: Mapping[str, Any], text: str, path: Path,
                         our_keys: Mapping[str, Iterable[str]]) -> list[str]:
    """One line per unknown key of ``data`` (the parsed ``text`` of ``path``), in file order:
    ``"<path>:<line>: memory.memroy_char_limit is not a known key (ignored); did you mean
    memory.memory_char_limit?"``. ``our_keys``: our section -> its field names."""
    lines = _lines(text)
    home = path.parent
    memory = data.get("memory")
    providers = _provider_names(home, memory.get("provider") if isinstance(memory, dict) else None)
    found: list[tuple[int, str]] = []

    def warn(dotted: tuple[str, ...], suggestion: str | None) -> None:
        line = lines.get(dotted)
        where = f"{path}:{line}" if line else str(path)
        hint = f"; did you mean {suggestion}?" if suggestion else ""
        found.append((line or 0, f"{where}: {'.'.join(dotted)} is not a known key (ignored){hint}"))

    top_known = set(our_keys) | REFERENCE_TOP_LEVEL | providers
    for name, section in data.items():
        name = str(name)
        if name.startswith("_"):
            continue
        if name not in top_known:
            near = _suggest(name, set(our_keys) | REFERENCE_TOP_LEVEL)
            if near is not None:
                warn((name,), near)
            continue
        if name not in our_keys or not isinstance(section, dict):
            continue
        known = set(our_keys[name]) | REFERENCE_SECTION_KEYS.get(name, frozenset())
        for key, value in section.items():
            key = str(key)
            if key in known or key.startswith("_") or (name == "memory" and key in providers):
                continue
            near = _suggest(key, known)
            if name in CHECKED_SECTIONS or near is not None:
                if name == "memory" and near is None and isinstance(value, dict):
                    near = _suggest(key, providers)
                warn((name, key), None if near is None else f"{name}.{near}")
    return [msg for _, msg in sorted(found, key=lambda f: f[0])]
