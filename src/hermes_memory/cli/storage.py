"""``hermes-memory storage migrate``: copy this SQLite home into PostgreSQL (docs/scaling.md §3)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from hermes_memory.cli.common import EXIT_REFUSED, EXIT_USAGE, console, err_console, fail, print_json, state
from hermes_memory.storage import (
    DATABASE_URL_ENV,
    Storage,
    check_url,
    redact_url,
    require_driver,
    resolve_storage,
    scrub_password,
    url_password,
    without_password,
)
from hermes_memory.wording import count

_PHASES = {"sessions": "sessions and messages", "memory": "memory files"}


def _target(ctx: typer.Context, to: str | None) -> Storage:
    st = state(ctx)
    configured = resolve_storage(st.config, st.home.root)
    if to is None:
        if not configured.is_postgres:
            fail("pass --to postgresql://user@host:5432/dbname (the database to copy this home into)", EXIT_USAGE)
        return configured
    try:
        check_url(to.strip(), where="--to")
    except ValueError as exc:
        fail(str(exc), EXIT_USAGE)
    return Storage("postgres", to.strip(), configured.profile, configured.pool_size, "--to")


def _write_config(ctx: typer.Context, url: str) -> list[str]:
    """Switch config.yaml to ``url`` (no password in it); a password goes to ``.env`` (mode 0600)."""
    from hermes_memory.config import update_config, write_env_values

    st = state(ctx)
    update_config(st.home.config_path, {"storage.backend": "postgres", "storage.url": without_password(url)})
    notes = [f"config.yaml: storage.backend: postgres, storage.url: {redact_url(without_password(url))}"]
    if url_password(url):
        write_env_values(st.home.env_path, {DATABASE_URL_ENV: url})
        notes.append(f".env: {DATABASE_URL_ENV} (with the password; mode 0600)")
    return notes


def register(app: typer.Typer) -> None:
    """Add ``storage migrate``."""

    @app.command("migrate")
    def migrate_cmd(
        ctx: typer.Context,
        to: Annotated[str | None, typer.Option("--to", help="PostgreSQL URL to copy into (postgresql://user@host:5432/db); "
                                               "default: the storage this home is configured for.")] = None,
        write_config: Annotated[bool, typer.Option("--write-config", help="After a verified copy, switch config.yaml "
                                                   "to this database (a password goes to .env, not config.yaml).")] = False,
        json_out: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    ) -> None:
        """Copy this home's state.db (sessions, messages) and memory files (MEMORY.md, USER.md, per-user
        profiles) into PostgreSQL, losslessly. Safe to interrupt and run again: it resumes, and never adds
        anything twice. The SQLite home is only read. Counts are verified at the end (exit 1 if they differ)."""
        from hermes_memory.migrate import migrate_home

        st = state(ctx)
        target = _target(ctx, to)
        require_driver()
        if not st.home.root.is_dir():
            fail(f"{st.home.root} is not a data home (no such folder): pass --home DIR", EXIT_USAGE)
        err_console.print(f"Copying {escape(str(st.home.root))} into {escape(target.display)}", highlight=False)
        tasks: dict[str, Any] = {}
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=err_console, transient=False) as bar:
            def progress(phase: str, done: int, total: int) -> None:
                if phase not in tasks:
                    tasks[phase] = bar.add_task(_PHASES.get(phase, phase), total=total)
                bar.update(tasks[phase], completed=done, total=total)

            try:
                report = migrate_home(st.home, st.config, target, progress=progress)
            except Exception as exc:
                from hermes_memory.errors import HermesMemoryError

                if not isinstance(exc, HermesMemoryError):
                    raise
                fail(scrub_password(str(exc), target.url) + " Run the command again to resume.")
        notes = _write_config(ctx, target.url) if write_config and report.ok else []
        out = report.as_dict() | {"config_written": notes}
        if json_out:
            print_json(out)
        else:
            console.print(f"Sessions: {report.sessions_source:,} in state.db, {report.sessions_target:,} in the "
                          f"database ({report.sessions_added:,} added now)")
            console.print(f"Messages: {report.messages_source:,} in state.db, {report.messages_target:,} in the "
                          f"database ({report.messages_added:,} added now)")
            if report.values_replaced:
                console.print(f"{report.values_replaced:,} text values held a NUL character, which PostgreSQL cannot "
                              "store: they are stored with U+FFFD in its place (docs/failure-cases.md C17).")
            for m in report.memory:
                console.print(f"{escape(m['file'])}: {count(m['entries_source'], 'entry')} in the file, "
                              f"{m['entries_target']:,} in the database ({m['added']:,} added now)")
            for line in notes:
                console.print(f"Wrote {escape(line)}")
            if report.ok:
                console.print("[green]Verified:[/] every session, message and memory entry is in the database.")
        if not report.ok:
            for line in report.problems:
                err_console.print(f"[bold red]mismatch:[/] {escape(line)}", soft_wrap=True)
            if write_config:
                err_console.print("config.yaml was not changed.")
            raise typer.Exit(EXIT_REFUSED)
