"""``hermes-memory hooks ...``: automatic memory in Claude Code (and Gemini CLI) through their hooks.

``install CLIENT`` merges our hook entries into the client's ``settings.json`` (``--scope user``,
``project`` or ``local``), ``uninstall CLIENT`` removes exactly those, ``status`` shows what is
installed where. ``run EVENT`` is what the installed entries call; it reads the hook's JSON on
stdin and writes at most one JSON document on stdout, and it always exits 0 (a hook must never
block or break the client): errors go to ``$HERMES_HOME/logs/hooks.log`` plus one line on stderr.

``python -m hermes_memory [--home H] hooks run ...`` takes a fast path
(:func:`hermes_memory.cli.hookrun.run_main`) that skips loading the rest of the CLI, since it runs
on every prompt.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from hermes_memory.cli.common import EXIT_USAGE, console, err_console, fail, print_json, state
from hermes_memory.cli.hookrun import run_hook_command
from hermes_memory.hooks.clients import CLIENTS, SCOPES, ClientSpec, get_client
from hermes_memory.hooks.settings import (
    DEFAULT_RECALL_BUDGET,
    HooksError,
    install,
    installed,
    installed_homes,
    planned_groups,
    uninstall,
)

ClientArg = Annotated[str, typer.Argument(help=f"Client: {', '.join(CLIENTS)}.")]
ScopeOpt = Annotated[str, typer.Option("--scope", help="user (your settings), project (.claude/settings.json "
                                       "of --project-dir) or local (settings.local.json in that .claude folder).")]
ProjectOpt = Annotated[Path | None, typer.Option("--project-dir", help="Project folder for --scope "
                                                 "project/local (default: the current folder).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def _settings_path(client_name: str, scope: str, project: Path | None) -> tuple[ClientSpec, Path]:
    try:
        client = get_client(client_name)
        return client, client.settings_path(scope, project)
    except ValueError as exc:
        fail(str(exc), EXIT_USAGE)


def register(app: typer.Typer) -> None:
    """Add the ``hooks`` commands to ``app``."""

    @app.command("install")
    def install_cmd(
        ctx: typer.Context,
        client: ClientArg = "claude-code",
        scope: ScopeOpt = "user",
        project_dir: ProjectOpt = None,
        recall_budget: Annotated[float, typer.Option(
            "--recall-budget", min=0.05, max=30.0,
            help="Seconds the prompt hook may spend on recall; past it nothing is injected.")] = DEFAULT_RECALL_BUDGET,
        dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would change; write nothing.")] = False,
        as_json: JsonOpt = False,
    ) -> None:
        """Install the memory hooks into the client's settings.json (other settings and comments kept byte for byte; the old file backed up); the hooks run against this home (--home, else $HERMES_HOME, else ~/.hermes), named in each command."""
        spec, path = _settings_path(client, scope, project_dir)
        st = state(ctx)
        # The home is always written into the command: a home chosen by $HERMES_HOME alone must not
        # turn into ~/.hermes when the client runs the hook without that variable.
        groups = planned_groups(spec, home=str(st.home.root), budget=recall_budget)
        try:
            change, _before, after = install(path, groups, st.home.root, dry_run=dry_run, client=spec)
        except HooksError as exc:
            fail(str(exc))
        data = {**change.as_dict(), "client": client, "scope": scope, "dry_run": dry_run,
                "recall_budget_s": recall_budget}
        if as_json:
            print_json(data)
            return
        verb = "would install" if dry_run else ("installed" if change.changed else "already installed")
        console.print(f"{verb} hermes-memory hooks ({', '.join(change.events)}) in {escape(str(path))}",
                      highlight=False)
        if dry_run:
            # Unwrapped: the text is the file, to be read or piped as it is (a wrapped JSON string breaks it).
            console.print(after, markup=False, highlight=False, soft_wrap=True)
        elif change.changed:
            if change.backup is not None:
                console.print(f"the file as it was: {escape(str(change.backup))}", highlight=False)
            console.print(f"Start a new {spec.title} session to use them (`hermes-memory hooks status` "
                          "checks them; `hermes-memory hooks uninstall` removes them).", highlight=False)

    @app.command("uninstall")
    def uninstall_cmd(
        ctx: typer.Context,
        client: ClientArg = "claude-code",
        scope: ScopeOpt = "user",
        project_dir: ProjectOpt = None,
        dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would change; write nothing.")] = False,
        as_json: JsonOpt = False,
    ) -> None:
        """Remove our hooks from the client's settings.json (nothing else is touched)."""
        spec, path = _settings_path(client, scope, project_dir)
        try:
            change, _before, _after = uninstall(path, state(ctx).home.root, dry_run=dry_run, client=spec)
        except HooksError as exc:
            fail(str(exc))
        if as_json:
            print_json({**change.as_dict(), "client": client, "scope": scope, "dry_run": dry_run})
            return
        if not change.changed:
            console.print(f"no hermes-memory hooks in {escape(str(path))}", highlight=False)
            return
        verb = "would remove" if dry_run else "removed"
        what = " (file deleted: it held nothing else)" if change.deleted else ""
        console.print(f"{verb} hermes-memory hooks ({', '.join(change.events)}) from {escape(str(path))}{what}",
                      highlight=False)
        if change.backup is not None:
            console.print(f"the file as it was: {escape(str(change.backup))}", highlight=False)

    @app.command("status")
    def status_cmd(
        ctx: typer.Context,
        project_dir: ProjectOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Show where our hooks are installed, per client and scope, the data home they run against, and the last hook errors."""
        rows: list[dict[str, Any]] = []
        for name, spec in CLIENTS.items():
            for scope in SCOPES:
                try:
                    path = spec.settings_path(scope, project_dir)
                except ValueError:
                    continue
                ours = installed(path)
                missing = [e for e, _ in spec.events if e not in ours]
                dupes = [e for e, entries in ours.items() if len(entries) > 1]
                homes = [str(h) for h in installed_homes(path)]
                rows.append({"client": name, "scope": scope, "path": str(path), "exists": path.exists(),
                             "installed": sorted(ours), "missing": missing if ours else [],
                             "homes": homes,
                             "duplicates": dupes,
                             "commands": {e: [x.get("command") for x in v] for e, v in ours.items()}})
        # The log is the one of the home the hooks run against (named in their commands).
        homes = list(dict.fromkeys(h for r in rows for h in r["homes"])) or [str(state(ctx).home.root)]
        logs = [Path(h) / "logs" / "hooks.log" for h in homes]
        log_path = logs[0]
        errors = [line for p in logs for line in _recent_errors(p)]
        if as_json:
            print_json({"settings": rows, "log": str(log_path), "logs": [str(p) for p in logs],
                        "recent_errors": errors})
            return
        table = Table("client", "scope", "settings file", "hooks", "data home", title="hermes-memory hooks")
        for col in (table.columns[2], table.columns[4]):  # a path cut to "…" tells nothing: fold it
            col.overflow = "fold"
        for r in rows:
            state_txt = ("not installed" if not r["installed"] else
                         "installed" + (f" (missing {', '.join(r['missing'])})" if r["missing"] else ""))
            where = ", ".join(r["homes"]) or ("$HERMES_HOME or ~/.hermes at run time" if r["installed"] else "")
            table.add_row(r["client"], r["scope"], escape(r["path"]), state_txt, escape(where))
        console.print(table)
        n = len(errors)
        console.print(f"log: {escape(', '.join(str(p) for p in logs))} ({n:,} recent {'error' if n == 1 else 'errors'})",
                      highlight=False)
        for line in errors[-5:]:
            err_console.print(escape(line), highlight=False, soft_wrap=True)

    @app.command("run", hidden=True, context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
    def run_cmd(
        ctx: typer.Context,
        event: Annotated[str, typer.Argument(help="Hook event name (SessionStart, UserPromptSubmit, ...).")],
        client: Annotated[str, typer.Option("--client", help="Client that calls the hook.")] = "claude-code",
        budget: Annotated[float, typer.Option("--budget", help="Recall time budget, seconds.")] = DEFAULT_RECALL_BUDGET,
    ) -> None:
        """Entry point the installed hooks call (reads the hook JSON on stdin; always exits 0)."""
        run_hook_command(client, event, budget, state(ctx).home_arg)


def _recent_errors(path: Path, limit: int = 20) -> list[str]:
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, os.path.getsize(path) - 200_000))
            lines = fh.read().decode("utf-8", errors="replace").splitlines()
    except OSError:
        return []
    return [ln for ln in lines if " ERROR " in ln or " WARNING " in ln][-limit:]
