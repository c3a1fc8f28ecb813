"""CLI ``memory show|add|replace|remove``: read and edit MEMORY.md / USER.md of the data home.

``memory export|import`` (Markdown files <-> the store, PostgreSQL included) live in
:mod:`hermes_memory.cli.memory_transfer`.

Limits come from ``config.yaml`` (``memory.memory_char_limit`` / ``memory.user_char_limit``).
Edits go through :class:`~hermes_memory.memory.MemoryStore`, so they take the same lock, threat
scan and limits as the agent's ``memory`` tool. Exit codes: 0 ok, 1 refused (scan, limit, no
match...), 2 usage (bad option, unsafe ``--user-id``, ``--user-id`` on a MEMORY.md edit).
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from hermes_memory.cli.common import EXIT_REFUSED, EXIT_USAGE, console, fail, print_json, state
from hermes_memory.cli.readonly import require_home
from hermes_memory.memory.factory import open_memory_store
from hermes_memory.memory.scan import find_threats
from hermes_memory.memory.store import TARGETS, MemoryStore
from hermes_memory.wording import count


class Target(StrEnum):
    memory = "memory"
    user = "user"


TargetOpt = Annotated[Target, typer.Option("--target", "-t", help="memory (agent notes, MEMORY.md) or user (USER.md).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]
UserOpt = Annotated[
    str | None,
    typer.Option("--user-id", help="Gateway mode: USER.md is memories/users/<id>/USER.md (MEMORY.md stays shared)."),
]


# C0 controls but tab/newline, DEL, C1 controls and the bidi overrides/isolates: a hand-edited or
# poisoned file must not drive the terminal (colours, title, clear screen) or reorder what is shown.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _visible(text: str) -> str:
    """``text`` safe for the terminal: control characters shown as ``\\xNN`` / ``\\uNNNN`` escapes."""
    return _CONTROL.sub(lambda m: ascii(m.group())[1:-1], text)


def _store(ctx: typer.Context, user_id: str | None, edit_target: str | None = None) -> MemoryStore:
    if user_id is not None and edit_target == "memory":
        # MEMORY.md is shared by every user: a per-user fact written there would reach them all.
        fail(
            "--user-id only applies to --target user (MEMORY.md is shared by all users). Add --target user to "
            "edit this user's USER.md, or drop --user-id to edit the shared MEMORY.md.",
            EXIT_USAGE,
        )
    st = state(ctx)
    try:
        store = open_memory_store(st.home, st.config, user_id=user_id)
    except ValueError as exc:
        fail(str(exc), EXIT_USAGE)
    store.load_from_disk()
    return store


# The store words an over-limit refusal for the agent ("... then retry — all in this turn (one call
# with an `operations` batch works best)."): at a shell there is no turn and no batch.
_AGENT_ADVICE = re.compile(r"consolidate now:.*?\(one call with an `operations` batch works best\)\.", re.I | re.S)


def _shell_advice(message: str, target: str) -> str:
    """``message`` (a store refusal) with the agent's consolidation advice replaced by the commands a
    shell user runs to free space in ``target``; any other message is returned unchanged."""
    flag = "" if target == "memory" else " --target user"

    def advice(m: re.Match[str]) -> str:
        lead = "F" if m.group()[0].isupper() else "f"
        return (f"{lead}ree space first: drop a stale entry with `hermes-memory memory remove{flag} OLD_TEXT`, or "
                f"shorten one with `hermes-memory memory replace{flag} OLD_TEXT NEW_TEXT`, then run this command again.")

    return _AGENT_ADVICE.sub(advice, message)


def _finish(result: dict[str, Any], as_json: bool, target: str) -> None:
    if not result.get("success") and isinstance(result.get("error"), str):
        result = {**result, "error": _shell_advice(result["error"], target)}
    if as_json:
        print_json(result)
    elif result.get("success"):
        console.print(f"[green]ok:[/] {escape(result['message'])}  [dim]({escape(result['usage'])})[/]", highlight=False)
    else:
        msg = result.get("error", "refused")
        if result.get("remediation"):
            msg += f"\nTo fix: {result['remediation']}"
        if "current_entries" in result:
            msg += f"\nSee the entries with: hermes-memory memory show --target {target}"
        fail(escape(_visible(msg)), EXIT_REFUSED)
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
        require_home(ctx)  # reading creates nothing: a home that does not exist is said to be missing
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
                "path": store.location(t),  # a file, or the database and key
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
                f"{count(len(d['entries']), 'entry')}{flag}", highlight=False,
            )
            console.print(f"  [dim]{escape(_visible(d['path']))}[/]", highlight=False)
            if not d["enabled"]:
                key = "memory_enabled" if t == "memory" else "user_profile_enabled"
                console.print(f"  [yellow]disabled in config.yaml (memory.{key}: false): the agent neither reads nor writes it[/]")
            if d["read_error"]:
                console.print(f"  [red]could not be read: {escape(_visible(d['read_error']))}; edits are refused until fixed[/]")
            elif not d["entries"]:
                flag_t = "" if t == "memory" else " --target user"
                console.print(Padding(Text(
                    "(empty) Nothing saved yet. The agent fills this through its memory tool; add one yourself "
                    f"with: hermes-memory memory add{flag_t} \"...\""), (0, 0, 0, 2)), highlight=False)
            if d["entries"]:  # a grid wraps a long entry under its text (hanging indent), not at column 0
                grid = Table.grid(padding=(0, 1))
                grid.add_column(justify="right", no_wrap=True)
                grid.add_column(overflow="fold")
                for i, e in enumerate(d["entries"], 1):
                    warn = ""
                    if i in d["blocked"]:
                        warn = f" [red]⚠ {escape('[BLOCKED: ' + ', '.join(d['blocked'][i]) + ']')} blocked from prompt[/]"
                    grid.add_row(f"  [cyan]{i}.[/]", Text.from_markup(f"{escape(_visible(e))}{warn}"))
                console.print(grid, highlight=False)
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
        _finish(_store(ctx, user_id, target.value).add(target.value, content), as_json, target.value)

    @app.command("replace")
    def replace(
        ctx: typer.Context,
        old_text: Annotated[str, typer.Argument(help="The entry's full text or a part unique to it (dashes, quotes and spacing may be typed differently).")],
        content: Annotated[str, typer.Argument(help="The whole new text of that entry.")],
        target: TargetOpt = Target.memory,
        as_json: JsonOpt = False,
        user_id: UserOpt = None,
    ) -> None:
        """Replace the whole entry matched by OLD_TEXT with CONTENT."""
        _finish(_store(ctx, user_id, target.value).replace(target.value, old_text, content), as_json, target.value)

    @app.command("remove")
    def remove(
        ctx: typer.Context,
        old_text: Annotated[str, typer.Argument(help="The entry's full text or a part unique to it (dashes, quotes and spacing may be typed differently).")],
        target: TargetOpt = Target.memory,
        as_json: JsonOpt = False,
        user_id: UserOpt = None,
    ) -> None:
        """Remove the entry matched by OLD_TEXT."""
        _finish(_store(ctx, user_id, target.value).remove(target.value, old_text), as_json, target.value)

    from hermes_memory.cli import memory_transfer

    memory_transfer.register(app)
