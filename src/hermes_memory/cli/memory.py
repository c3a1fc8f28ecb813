"""CLI ``memory show|add|replace|remove``: read and edit MEMORY.md / USER.md of the data home.

Limits come from ``config.yaml`` (``memory.memory_char_limit`` / ``memory.user_char_limit``).
Edits go through :class:`~hermes_memory.memory.MemoryStore`, so they take the same lock, threat
scan and limits as the agent's ``memory`` tool. Exit codes: 0 ok, 1 refused (scan, limit, no
match...), 2 usage (bad option, unsafe ``--user-id``).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import typer
from rich.markup import escape

from hermes_memory.cli.common import EXIT_REFUSED, EXIT_USAGE, console, fail, print_json, state
from hermes_memory.memory.scan import find_threats
from hermes_memory.memory.store import TARGETS, MemoryStore


class Target(StrEnum):
    memory = "memory"
    user = "user"


TargetOpt = Annotated[Target, typer.Option("--target", "-t", help="memory (agent notes, MEMORY.md) or user (USER.md).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]
UserOpt = Annotated[
    str | None, typer.Option("--user-id", help="Gateway mode: edit memories/users/<id>/USER.md (MEMORY.md stays shared).")
]


def _store(ctx: typer.Context, user_id: str | None) -> MemoryStore:
    st = state(ctx)
    cfg = st.config.memory
    try:
        store = MemoryStore(st.home.memories_dir, cfg.memory_char_limit, cfg.user_char_limit, user_id=user_id)
    except ValueError as exc:
        fail(str(exc), EXIT_USAGE)
    store.load_from_disk()
    return store


def _finish(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print_json(result)
    elif result.get("success"):
        console.print(f"[green]ok:[/] {escape(result['message'])}  [dim]({escape(result['usage'])})[/]", highlight=False)
    else:
        fail(escape(result.get("error", "refused")), EXIT_REFUSED)
    if not result.get("success"):
        raise typer.Exit(EXIT_REFUSED)


def register(app: typer.Typer) -> None:
    """Add ``show``, ``add``, ``replace`` and ``remove`` to the ``memory`` group."""

    @app.command("show")
    def show(
        ctx: typer.Context,
        target: Annotated[
            Target | None, typer.Option("--target", "-t", help="Show only memory or user (default: both).")
        ] = None,
        as_json: JsonOpt = False,
        user_id: UserOpt = None,
    ) -> None:
        """Show the entries of MEMORY.md and USER.md with their usage against the limits."""
        store = _store(ctx, user_id)
        cfg = state(ctx).config.memory
        enabled = {"memory": cfg.memory_enabled, "user": cfg.user_profile_enabled}
        targets = [target.value] if target else list(TARGETS)
        data: dict[str, Any] = {}
        for t in targets:
            u = store.usage(t)
            ents = store.entries(t)
            data[t] = {
                "enabled": enabled[t],
                "path": str(store.path_for(t)),
                "entries": ents,
                "blocked": {i + 1: find_threats(e) for i, e in enumerate(ents) if find_threats(e)},
                "chars": u["chars"],
                "limit": u["limit"],
                "percent": u["percent"],
                "over_budget": u["over_budget"],
                "read_error": u["read_error"],
            }
        if as_json:
            print_json(data)
            return
        for t in targets:
            d = data[t]
            title = "MEMORY.md (agent notes)" if t == "memory" else "USER.md (user profile)"
            flag = " [bold red]OVER BUDGET[/]" if d["over_budget"] else ""
            console.print(
                f"[bold]{title}[/] — {d['percent']}% — {d['chars']:,}/{d['limit']:,} chars, "
                f"{len(d['entries'])} entries{flag}", highlight=False,
            )
            console.print(f"  [dim]{escape(d['path'])}[/]", highlight=False)
            if not d["enabled"]:
                key = "memory_enabled" if t == "memory" else "user_profile_enabled"
                console.print(f"  [yellow]disabled in config.yaml (memory.{key}: false): the agent neither reads nor writes it[/]")
            if d["read_error"]:
                console.print(f"  [red]could not be read: {escape(d['read_error'])}; edits are refused until fixed[/]")
            elif not d["entries"]:
                flag_t = "" if t == "memory" else " --target user"
                console.print(
                    "  (empty) Nothing saved yet. The agent fills this through its memory tool; add one yourself "
                    f"with: hermes-memory memory add{flag_t} \"...\"", highlight=False,
                )
            for i, e in enumerate(d["entries"], 1):
                warn = f" [red]⚠ blocked from prompt ({', '.join(d['blocked'][i])})[/]" if i in d["blocked"] else ""
                console.print(f"  [cyan]{i}.[/] {escape(e)}{warn}", highlight=False)
            console.print()

    @app.command("add")
    def add(
        ctx: typer.Context,
        content: Annotated[str, typer.Argument(help="Entry text.")],
        target: TargetOpt = Target.memory,
        as_json: JsonOpt = False,
        user_id: UserOpt = None,
    ) -> None:
        """Add an entry (an exact duplicate succeeds without writing)."""
        _finish(_store(ctx, user_id).add(target.value, content), as_json)

    @app.command("replace")
    def replace(
        ctx: typer.Context,
        old_text: Annotated[str, typer.Argument(help="The entry's full text or a part unique to it.")],
        content: Annotated[str, typer.Argument(help="The whole new text of that entry.")],
        target: TargetOpt = Target.memory,
        as_json: JsonOpt = False,
        user_id: UserOpt = None,
    ) -> None:
        """Replace the whole entry matched by OLD_TEXT with CONTENT."""
        _finish(_store(ctx, user_id).replace(target.value, old_text, content), as_json)

    @app.command("remove")
    def remove(
        ctx: typer.Context,
        old_text: Annotated[str, typer.Argument(help="The entry's full text or a part unique to it.")],
        target: TargetOpt = Target.memory,
        as_json: JsonOpt = False,
        user_id: UserOpt = None,
    ) -> None:
        """Remove the entry matched by OLD_TEXT."""
        _finish(_store(ctx, user_id).remove(target.value, old_text), as_json)
