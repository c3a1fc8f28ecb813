"""``providers list`` and ``providers status``: what memory providers exist and whether the configured one works."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from hermes_memory.cli.common import EXIT_REFUSED, console, err_console, fail, print_json, state
from hermes_memory.cli.provider_settings import invalid_settings
from hermes_memory.errors import ProviderError
from hermes_memory.providers.discovery import discover_memory_providers, load_memory_provider_or_raise
from hermes_memory.wording import plural

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def provider_status(ctx: typer.Context) -> dict[str, Any]:
    """Status of ``memory.provider``: ``{provider, configured, loaded, available, reason, source, description}``.

    ``ok`` is False when a provider is configured but cannot be used (unknown, fails to load,
    unavailable). The reason is NOT logged: the calling command prints it once (as an error line,
    or in its JSON) and exits 1. Built-in only → ``ok`` True.
    """
    st = state(ctx)
    name = st.config.memory.provider.strip()
    info = {i.name: i for i in discover_memory_providers(st.home.root)}.get(name)
    out: dict[str, Any] = {"provider": name or None, "configured": bool(name), "ok": True, "loaded": False,
                           "available": None, "reason": "", "source": info.source if info else None,
                           "description": info.description if info else ""}
    if not name:
        out["reason"] = "built-in memory only (memory.provider is empty)"
        return out
    try:
        # not load_configured_provider: it also logs the failure, and the command prints it already
        provider = load_memory_provider_or_raise(name, st.home.root, require_available=True)
    except ProviderError as exc:
        out.update(ok=False, available=False, reason=str(exc))
        return out
    out.update(loaded=True, available=True)

    try:
        schema = provider.get_config_schema() if provider is not None else []
    except Exception as exc:  # noqa: BLE001 - plugin code
        out.update(ok=False, reason=f"its get_config_schema() raised {type(exc).__name__}: {exc}; "
                                    "fix or reinstall the plugin")
        return out
    problems = invalid_settings(name, schema, (st.config.model_extra or {}).get(name))
    if problems:
        out.update(ok=False, reason=f"invalid {plural('setting', len(problems))} in {st.home.config_path}: {'; '.join(problems)}. "
                                    f"Fix them with `hermes-memory memory setup --provider {name}` "
                                    "or delete the keys to use the defaults")
    return out


def register(app: typer.Typer) -> None:
    """Add ``list`` and ``status`` to the ``providers`` group."""

    @app.command("list")
    def list_cmd(ctx: typer.Context, json_out: JsonOpt = False) -> None:
        """List memory providers: name, description, whether available and why not."""
        st = state(ctx)
        configured = st.config.memory.provider.strip()
        infos = discover_memory_providers(st.home.root)
        if json_out:
            print_json([{**i.as_dict(), "active": i.name == configured} for i in infos])
        else:
            table = Table(title="Memory providers", show_lines=False)
            for col in ("name", "available", "source", "description / why not"):
                table.add_column(col)
            for i in infos:
                mark = "[green]yes[/]" if i.available else "[red]no[/]"
                name = f"[bold]{escape(i.name)}[/] (active)" if i.name == configured else escape(i.name)
                detail = escape(i.description) if i.available else f"{escape(i.description)}\n[red]{escape(i.reason)}[/]"
                table.add_row(name, mark, i.source, detail)
            console.print(table)
        active = {i.name: i for i in infos}.get(configured)
        if configured and active is None:
            err_console.print(f"[bold red]error:[/] configured memory.provider {escape(repr(configured))} was not found")
            raise typer.Exit(EXIT_REFUSED)
        if active is not None and not active.available:
            err_console.print(f"[bold red]error:[/] configured memory.provider {configured!r} cannot be used: "
                              f"{escape(active.reason)}", highlight=False)
            raise typer.Exit(EXIT_REFUSED)

    @app.command("status")
    def status_cmd(ctx: typer.Context, json_out: JsonOpt = False) -> None:
        """Show the configured provider and whether it loads and is available (exit 1 if not)."""
        status = provider_status(ctx)
        if json_out:
            print_json(status)
        elif not status["configured"]:
            console.print("Memory provider: [bold]built-in only[/] (memory.provider is empty)")
        elif status["ok"]:
            console.print(f"Memory provider: [bold]{escape(status['provider'])}[/] ({status['source']}) — [green]available[/]")
        if not status["ok"]:
            if json_out:
                raise typer.Exit(EXIT_REFUSED)
            fail(f"configured memory provider {status['provider']!r} cannot be used: {status['reason']}")
