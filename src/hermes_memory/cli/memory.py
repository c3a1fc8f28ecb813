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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from enum import StrEnum
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from hermes_memory.cli.common import EXIT_REFUSED, EXIT_USAGE, console, fail, print_json, state
from hermes_memory.cli.readonly import require_home
from hermes_memory.memory.backend import EntriesBackend, EntriesTxn, Stored
from hermes_memory.memory.entries import FILE_NAMES, drift_reason
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


def _drift_advice(store: MemoryStore | None, target: str) -> str | None:
    """What frees space in ``target`` when it is stored in a form ``memory remove|replace`` refuse to
    rewrite (an entry longer than the whole limit, blank lines around a '§' line: the drift guard),
    or ``None`` when those commands work on it. Only a hand edit (or export, edit, import
    ``--replace`` on PostgreSQL) fixes such a file."""
    if store is None:
        return None
    stored = store.backend.read(target)
    limit = store.limits[target]
    found = None if stored.error else drift_reason(stored.text, stored.entries, limit)
    if found is None:
        return None
    name = FILE_NAMES[target]
    if found[0] == "too_big":
        why = f"it holds an entry of {found[1]:,} chars, longer than its whole {limit:,}-char limit (text pasted without '§' lines)"
        edit = f"split that text into entries separated by a line holding only '§' (each under {limit:,} chars), or shorten or delete it"
    else:
        why = "it has blank lines or spaces around a '§' line, or an empty entry (a hand edit)"
        edit = "delete the blank lines, trailing spaces and empty entries around the lines holding only '§'"
    if store.backend.kind == "file":
        how = f"Open {store.location(target)} in an editor and {edit}"
    else:
        how = (f"Export it (hermes-memory memory export --to DIR), {edit} in DIR/{name} and load it back with "
               "hermes-memory memory import --from DIR --replace")
    return (f"Free space first. `hermes-memory memory remove` and `memory replace` refuse to rewrite {name} as it "
            f"is: {why}. {how}; then remove or shorten entries with them, and run this command again.")


def _shell_advice(message: str, target: str, store: MemoryStore | None = None, adding: str | None = None) -> str:
    """``message`` (a store refusal) with the agent's consolidation advice replaced by the commands a
    shell user runs to free space in ``target`` (the hand edit :func:`_drift_advice` names when those
    commands would be refused too; shortening the entry when ``adding``, the text added, is longer
    than the whole limit); any other message is returned unchanged."""
    flag = "" if target == "memory" else " --target user"

    def advice(m: re.Match[str]) -> str:
        if store is not None and adding is not None and len(adding.strip()) > store.limits[target]:
            key = "memory_char_limit" if target == "memory" else "user_char_limit"
            return (f"This entry alone is longer than the whole {store.limits[target]:,}-char limit of "
                    f"{FILE_NAMES[target]}, so freeing space cannot make it fit: shorten it or split it into "
                    f"several entries, or raise memory.{key} in config.yaml.")
        drift = _drift_advice(store, target)
        if drift is not None:
            return drift
        lead = "F" if m.group()[0].isupper() else "f"
        return (f"{lead}ree space first: drop a stale entry with `hermes-memory memory remove{flag} OLD_TEXT`, or "
                f"shorten one with `hermes-memory memory replace{flag} OLD_TEXT NEW_TEXT`, then run this command again.")

    return _AGENT_ADVICE.sub(advice, message)


class _WouldWrite(Exception):
    """The dry run reached a write (or a drift backup): the real store must decide, under its lock."""


class _DryTxn(EntriesTxn):
    def __init__(self, stored: Stored) -> None:
        self.stored = stored

    def save(self, entries: Sequence[str], *, canonical: bool = False) -> list[str]:
        raise _WouldWrite

    def backup(self) -> tuple[str, str]:
        raise _WouldWrite


class _DryRun(EntriesBackend):
    """A store's backend read without its lock and never written: a refusal found on it creates no
    home, folder or lock file."""

    def __init__(self, real: EntriesBackend) -> None:
        self._real = real
        self.kind, self.untouched = real.kind, real.untouched

    def location(self, target: str) -> str:
        return self._real.location(target)

    def read(self, target: str) -> Stored:
        return self._real.read(target)

    @contextmanager
    def mutation(self, target: str) -> Iterator[EntriesTxn]:
        yield _DryTxn(self._real.read(target))

    def drift_fix(self, target: str, reason: str, limit: int, backup_name: str) -> str:
        return self._real.drift_fix(target, reason, limit, backup_name)

    def user_ids(self) -> list[str]:
        return self._real.user_ids()


def _edit(store: MemoryStore, op: Callable[[MemoryStore], dict[str, Any]]) -> dict[str, Any]:
    """``op(store)`` (one add, replace or remove), tried first on what is stored now without the
    lock: a refusal there (no matching entry, over the limit, ...) or a change that writes nothing
    (a duplicate add) is the answer, and nothing is created (no home, no ``.lock`` file). Anything
    that would write runs again on the real store, which re-reads and decides under its lock."""
    real = store.backend
    store.backend = _DryRun(real)
    try:
        result: dict[str, Any] | None = op(store)
    except _WouldWrite:
        result = None
    finally:
        store.backend = real
    return result if result is not None else op(store)


def _finish(result: dict[str, Any], as_json: bool, target: str, store: MemoryStore | None = None,
            adding: str | None = None) -> None:
    if not result.get("success") and isinstance(result.get("error"), str):
        result = {**result, "error": _shell_advice(result["error"], target, store, adding)}
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
        store = _store(ctx, user_id, target.value)
        _finish(_edit(store, lambda s: s.add(target.value, content)), as_json, target.value, store, content)

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
        store = _store(ctx, user_id, target.value)
        _finish(_edit(store, lambda s: s.replace(target.value, old_text, content)), as_json, target.value, store)

    @app.command("remove")
    def remove(
        ctx: typer.Context,
        old_text: Annotated[str, typer.Argument(help="The entry's full text or a part unique to it (dashes, quotes and spacing may be typed differently).")],
        target: TargetOpt = Target.memory,
        as_json: JsonOpt = False,
        user_id: UserOpt = None,
    ) -> None:
        """Remove the entry matched by OLD_TEXT."""
        store = _store(ctx, user_id, target.value)
        _finish(_edit(store, lambda s: s.remove(target.value, old_text)), as_json, target.value, store)

    from hermes_memory.cli import memory_transfer

    memory_transfer.register(app)
