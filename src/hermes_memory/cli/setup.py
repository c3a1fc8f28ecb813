"""``memory setup`` (provider wizard) and ``memory status``.

The wizard follows docs/reference.md §10: pick a provider (default "Built-in only" →
``memory.provider: ""``), then walk the provider's ``get_config_schema()``: choices become a
selector, secrets are asked without echo and written to ``$HERMES_HOME/.env`` (mode 0600) under
their ``env_var``, everything else goes to ``config.yaml`` under a section named after the provider
(``holographic: {db_path: ...}``). Nothing is written until every answer is collected, so a
cancelled wizard saves nothing. ``config.yaml`` is edited round-trip (only ``memory.provider`` and
the provider's section change; other keys and comments stay byte-identical). Every prompt has a flag for non-interactive use::

    hermes-memory memory setup --provider holographic --set hrr_dim=2048 --yes
"""

from __future__ import annotations

import os
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.prompt import Confirm, Prompt

from hermes_memory.cli.common import EXIT_REFUSED, EXIT_USAGE, console, fail, print_json, state
from hermes_memory.cli.provider_settings import (  # noqa: F401 - moved there, re-exported
    convert,
    invalid_settings,
)
from hermes_memory.cli.providers import provider_status
from hermes_memory.config import read_env_file, update_config, write_env_values
from hermes_memory.errors import ConfigError, ProviderError
from hermes_memory.providers.base import ConfigField
from hermes_memory.providers.discovery import discover_memory_providers, load_memory_provider_or_raise
from hermes_memory.wording import count, plural

BUILTIN_CHOICES = {"", "builtin", "built-in", "none"}


def env_var_for(provider: str, f: ConfigField) -> str:
    """Environment variable of a secret field: its ``env_var``, else ``<PROVIDER>_<KEY>`` upper-cased."""
    return f.env_var or f"{provider}_{f.key}".upper().replace("-", "_")


def missing_conditional(provider: str, schema: list[ConfigField], config_values: dict[str, Any],
                        env_values: dict[str, str], section: Any) -> str:
    """Why the collected answers lack a field made required by ``ConfigField.required_when``; ``""`` if none.

    A setting's value is what setup is about to write (``config_values``, keyed ``provider.key``),
    else the kept ``config.yaml`` value (``section``), else, for a field with ``env_var``, that
    environment variable (``.env`` is already loaded into the process). Secrets count as set when
    written now (``env_values``) or already in the environment. The message names the field and the
    exact ``--set key=VALUE`` / environment variable that provides it.
    """
    kept = section if isinstance(section, dict) else {}
    by_key = {f.key: f for f in schema}

    def value(f: ConfigField) -> str:
        if f.secret:
            var = env_var_for(provider, f)
            return env_values.get(var) or os.environ.get(var) or ""
        v = config_values.get(f"{provider}.{f.key}", kept.get(f.key))
        text = "" if v is None else str(v)
        return text or (os.environ.get(f.env_var, "") if f.env_var else "")

    for f in schema:
        if not f.required_when or value(f):
            continue
        other_key, values = f.required_when
        other = by_key.get(other_key)
        other_value = value(other) if other else str(kept.get(other_key) or "")
        if other_value not in {str(v) for v in values}:
            continue
        state_text = f"{other_key} is blank" if other_value == "" else f"{other_key} is {other_value!r}"
        how = f"--set {f.key}=VALUE"
        if f.secret or f.env_var:
            how += f" or export {env_var_for(provider, f)}"
        return (f"{provider}: {f.key} is required while {state_text}: pass {how} "
                f"(or choose another {other_key} with --set {other_key}=VALUE)")
    return ""


def _ask_until_valid(provider: str, f: ConfigField, current: Any) -> Any:
    """Ask for ``f`` until the answer converts (the error is shown each time); EOF / Ctrl-C cancel."""
    while True:
        raw = _ask_field(provider, f, current)
        try:
            return convert(f, raw)
        except ValueError as exc:
            console.print(f"[red]{escape(str(exc))}[/]; try again")


def _parse_sets(items: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        if "=" not in item:
            fail(f"--set expects KEY=VALUE, got {item!r}", EXIT_USAGE)
        key, value = item.split("=", 1)
        out[key.strip()] = value
    return out


def _ask_provider(infos: list[Any]) -> str:
    console.print("[bold]Memory provider[/] (built-in MEMORY.md/USER.md memory is always on)")
    console.print("  0. Built-in only")
    for n, i in enumerate(infos, 1):
        mark = "" if i.available else f"  [red](unavailable: {escape(i.reason)})[/]"
        console.print(f"  {n}. {escape(i.name)} — {escape(i.description)}{mark}")
    choice = Prompt.ask("Choose", choices=[str(n) for n in range(len(infos) + 1)], default="0", console=console)
    return "" if choice == "0" else infos[int(choice) - 1].name


def _ask_field(provider: str, f: ConfigField, current: Any) -> Any:
    default = current if current not in (None, "") else f.default
    label = escape(f"{f.key} — {f.description}" + (f" ({f.url})" if f.url else ""))
    if f.secret:
        var = env_var_for(provider, f)
        have = bool(os.environ.get(var))
        answer = Prompt.ask(f"{label} {escape(f'[{var}]')}" + (" (leave blank to keep)" if have else ""), password=True,
                            default="", show_default=False, console=console)
        return answer or None
    if f.type == "bool":
        return Confirm.ask(label, default=bool(convert(f, default)) if default is not None else False, console=console)
    if f.choices:
        return Prompt.ask(label, choices=[str(c) for c in f.choices],
                          default=str(default) if default is not None else None, console=console)
    return Prompt.ask(label, default=None if default is None else str(default), console=console)


def register(memory_app: typer.Typer, providers_app: typer.Typer) -> None:
    """Add ``memory setup`` and ``memory status``."""

    @memory_app.command("setup")
    def setup_cmd(
        ctx: typer.Context,
        provider: Annotated[str | None, typer.Option("--provider", "-p",
                            help="Provider to configure ('builtin' for built-in only); asked when omitted.")] = None,
        sets: Annotated[list[str] | None, typer.Option("--set", help="KEY=VALUE for a provider field (repeatable).")] = None,
        yes: Annotated[bool, typer.Option("--yes", "-y", help="Non-interactive: take --set values and defaults, ask nothing.")] = False,
        json_out: Annotated[bool, typer.Option("--json", help="Print what was written as JSON.")] = False,
    ) -> None:
        """Choose and configure the external memory provider (secrets go to .env, the rest to config.yaml).

        Only memory.provider and the provider's own section change in config.yaml; every other key and comment (a Hermes Agent's file included) is kept as it was.
        """
        st = state(ctx)
        values_in = _parse_sets(sets or [])
        interactive = not yes
        infos = discover_memory_providers(st.home.root)
        by_name = {i.name: i for i in infos}
        try:
            if provider is None:
                if yes:
                    fail("--yes needs --provider NAME (or --provider builtin)", EXIT_USAGE)
                provider = _ask_provider(infos)
            name = "" if provider.strip().lower() in BUILTIN_CHOICES else provider.strip()
            if name and name not in by_name:
                fail(f"unknown provider {name!r}; known: {', '.join(sorted(by_name)) or 'none'} "
                            "(see `hermes-memory providers list`)", EXIT_USAGE)
            config_values: dict[str, Any] = {}
            env_values: dict[str, str] = {}
            prov = None
            if name:
                try:
                    prov = load_memory_provider_or_raise(name, st.home.root, require_available=False)
                except ProviderError as exc:
                    fail(str(exc))
                try:
                    schema = prov.get_config_schema()
                except Exception as exc:  # noqa: BLE001 - plugin code
                    fail(f"memory provider {name!r}: get_config_schema() raised {type(exc).__name__}: {exc}; "
                                "fix or reinstall the plugin")
                known = {f.key for f in schema}
                unknown = sorted(set(values_in) - known)
                if unknown:
                    fail(f"unknown {plural('setting', len(unknown))} for {name}: {', '.join(unknown)}; "
                         f"valid: {', '.join(sorted(known)) or 'none'}", EXIT_USAGE)
                section = (st.config.model_extra or {}).get(name) or {}
                for f in schema:
                    current = section.get(f.key) if isinstance(section, dict) else None
                    if f.key in values_in:
                        raw: Any = values_in[f.key]
                    elif interactive:
                        raw = _ask_field(name, f, current)
                    else:
                        raw = None
                    if raw is None:
                        if f.secret:
                            if f.required and not os.environ.get(env_var_for(name, f)):
                                fail(f"{f.key} is required: pass --set {f.key}=VALUE or export {env_var_for(name, f)}",
                                     EXIT_USAGE)
                            continue
                        if current is not None:  # keep what is configured, if it is valid
                            try:
                                convert(f, current)
                            except ValueError as exc:
                                fail(f"{exc} (the value now in config.yaml): pass --set {f.key}=VALUE", EXIT_USAGE)
                            continue
                        if f.default is None:
                            if f.required:
                                fail(f"{f.key} is required: pass --set {f.key}=VALUE", EXIT_USAGE)
                            continue
                        raw = f.default
                    try:
                        value = convert(f, raw)
                    except ValueError as exc:
                        if not interactive or f.key in values_in:
                            fail(str(exc), EXIT_USAGE)
                        console.print(f"[red]{escape(str(exc))}[/]; try again")
                        value = _ask_until_valid(name, f, current)
                    if f.secret:
                        env_values[env_var_for(name, f)] = str(value)
                    else:
                        config_values[f"{name}.{f.key}"] = value
                if problem := missing_conditional(name, schema, config_values, env_values, section):
                    fail(problem, EXIT_USAGE)
            # everything collected and checked: now write (cancelling or refusing above saved nothing)
            if env_values:
                write_env_values(st.home.env_path, env_values)
                os.environ.update(env_values)
            update_config(st.home.config_path, {"memory.provider": name, **config_values})
            if prov is not None:
                try:
                    prov.save_config({k.split(".", 1)[1]: v for k, v in config_values.items()}, str(st.home.root))
                except Exception as exc:  # noqa: BLE001 - plugin code
                    fail(f"{st.home.config_path} was updated, but {name}.save_config() raised "
                                f"{type(exc).__name__}: {exc}; fix the cause and run setup again")
        except (KeyboardInterrupt, EOFError):
            console.print("\nsetup cancelled; nothing was saved")
            raise typer.Exit(EXIT_REFUSED) from None
        except ConfigError as exc:
            fail(str(exc), EXIT_USAGE)
        result = {"provider": name or None, "config": config_values, "env": sorted(env_values),
                  "config_path": str(st.home.config_path), "env_path": str(st.home.env_path)}
        if json_out:
            print_json(result)
        else:
            what = name or "built-in only"
            console.print(f"[green]Saved[/] memory provider: [bold]{escape(what)}[/] → {escape(str(st.home.config_path))}")
            if env_values:
                console.print(f"Secrets written to {st.home.env_path} (mode 0600): {', '.join(sorted(env_values))}")
            console.print("Start a new session for the change to take effect.")
        if name and not by_name[name].available:
            # availability may depend on what was just written: re-check, and say so loudly
            re_infos = {i.name: i for i in discover_memory_providers(st.home.root)}
            if not re_infos[name].available:
                fail(f"provider {name!r} is configured but not available: {re_infos[name].reason}")

    @memory_app.command("status")
    def status_cmd(ctx: typer.Context,
                   json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
        """Show memory settings, the configured provider, its settings (secrets masked) and availability."""
        st = state(ctx)
        mem = st.config.memory
        status = provider_status(ctx)
        name = status["provider"] or ""
        settings: dict[str, Any] = {}
        secrets: dict[str, bool] = {}
        if name and status["ok"]:
            prov = load_memory_provider_or_raise(name, st.home.root, require_available=False)
            section = (st.config.model_extra or {}).get(name) or {}
            env = read_env_file(st.home.env_path)
            for f in prov.get_config_schema():
                if f.secret:
                    var = env_var_for(name, f)
                    secrets[var] = bool(env.get(var) or os.environ.get(var))
                else:
                    settings[f.key] = section.get(f.key, f.default) if isinstance(section, dict) else f.default
        out: dict[str, Any] = {
            "home": str(st.home.root),
            "memory_enabled": mem.memory_enabled, "user_profile_enabled": mem.user_profile_enabled,
            "memory_char_limit": mem.memory_char_limit, "user_char_limit": mem.user_char_limit,
            "nudge_interval": mem.nudge_interval, "flush_min_turns": mem.flush_min_turns,
            "provider": status, "provider_settings": settings, "provider_secrets_set": secrets,
        }
        if json_out:
            print_json(out)
        else:
            console.print(f"Home: {escape(out['home'])}")
            console.print(f"MEMORY.md: {'on' if mem.memory_enabled else 'off'} ({mem.memory_char_limit:,} chars)   "
                          f"USER.md: {'on' if mem.user_profile_enabled else 'off'} ({mem.user_char_limit:,} chars)")
            console.print(f"Nudge every {count(mem.nudge_interval, 'turn')}; flush after {count(mem.flush_min_turns, 'turn')}")
            if not name:
                console.print("External provider: [bold]none[/] (built-in only)")
            elif status["ok"]:
                console.print(f"External provider: [bold]{escape(name)}[/] — [green]available[/]")
                for k, v in settings.items():
                    console.print(f"  {k}: {escape(str(v))}")
                for var, ok in secrets.items():
                    console.print(f"  {var}: {'set' if ok else '[red]not set[/]'}")
        if not status["ok"]:
            if json_out:
                raise typer.Exit(EXIT_REFUSED)
            fail(f"configured memory provider {name!r} cannot be used: {status['reason']}")
