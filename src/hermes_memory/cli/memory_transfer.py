"""CLI ``memory export --to DIR`` and ``memory import --from DIR``: Markdown files <-> the memory store.

The store is the one the home is configured for (``storage:`` in ``config.yaml``, or
``HERMES_DATABASE_URL``: the files, or PostgreSQL), or the PostgreSQL database of ``--database URL``;
``--profile`` (default: ``storage.profile``, else ``default``) picks whose memory there. Limits come from ``config.yaml``. Exit codes: 0 every file
done, 1 something refused (each target is still all-or-nothing; the message says which and why),
2 usage (no such folder, bad profile).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from hermes_memory.cli.common import EXIT_REFUSED, EXIT_USAGE, console, fail, print_json, state
from hermes_memory.cli.readonly import require_home
from hermes_memory.errors import MemoryStoreError
from hermes_memory.memory.store import MemoryStore
from hermes_memory.wording import count

DatabaseOpt = Annotated[
    str | None,
    typer.Option(
        "--database", envvar="HERMES_DATABASE_URL", show_envvar=True,
        help="PostgreSQL URL of the memory store (postgresql://USER:PASSWORD@HOST:5432/DB); default: the store "
             "config.yaml's storage: section names (the home's files when it names none).",
    ),
]
ProfileOpt = Annotated[str | None, typer.Option("--profile", help="On PostgreSQL: whose memory (one profile per "
                                                 "deployment; default: storage.profile in config.yaml).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]


def _opener(ctx: typer.Context, database: str | None, profile: str | None) -> Any:
    """``open_store(user_id) -> MemoryStore`` for the configured store, and its user ids."""
    from dataclasses import replace

    from hermes_memory.memory.factory import open_memory_store
    from hermes_memory.storage import Storage, resolve_storage

    st = state(ctx)
    storage = resolve_storage(st.config, st.home.root)
    if database:
        storage = Storage("postgres", database, storage.profile, storage.pool_size, "--database")
    if profile:
        storage = replace(storage, profile=profile)

    def open_store(user_id: str | None) -> MemoryStore:
        return open_memory_store(st.home, st.config, user_id=user_id, storage=storage)

    try:
        base = open_store(None)
    except ValueError as exc:
        fail(str(exc), EXIT_USAGE)
    except MemoryStoreError as exc:
        fail(escape(str(exc)), EXIT_REFUSED)
    return open_store, base


def register(app: typer.Typer) -> None:
    """Add ``export`` and ``import`` to the ``memory`` group."""

    @app.command("export")
    def export(
        ctx: typer.Context,
        to: Annotated[Path, typer.Option("--to", help="Folder to write MEMORY.md, USER.md and users/<id>/USER.md into.")],
        database: DatabaseOpt = None,
        profile: ProfileOpt = None,
        force: Annotated[bool, typer.Option("--force", help="Overwrite files in the folder that hold other entries (never the home's own MEMORY.md/USER.md).")] = False,
        as_json: JsonOpt = False,
    ) -> None:
        """Write the store's entries as Markdown files (the MEMORY.md / USER.md format). Running it twice changes nothing."""
        from hermes_memory.memory.transfer import export_store

        if not database:
            require_home(ctx)  # nothing to export, and nothing is created in the home
        open_store, base = _opener(ctx, database, profile)
        if to.exists() and not to.is_dir():
            fail(f"{escape(str(to))} is not a folder.", EXIT_USAGE)
        try:
            live = [(p, w) for p, w in state(ctx).home.live_files() if p.name in ("MEMORY.md", "USER.md")]
            results = export_store(open_store, base.backend.user_ids(), to, force=force, protected=live)
        except MemoryStoreError as exc:
            fail(escape(str(exc)), EXIT_REFUSED)
        refused = [r for r in results if r.get("error")]
        if as_json:
            print_json({"to": str(to), "files": results, "success": not refused})
        else:
            if not results:
                console.print("[yellow]nothing to export:[/] the store holds no entries.", highlight=False)
            for r in results:
                if r.get("error"):
                    console.print(f"[red]refused:[/] {escape(r['error'])}", highlight=False)
                else:
                    done = "written" if r["written"] else "unchanged"
                    console.print(f"[green]{done}:[/] {escape(r['path'])}  [dim]({count(r['entries'], 'entry')}, "
                                  f"{count(r['chars'], 'char')})[/]", highlight=False)
        if refused:
            raise typer.Exit(EXIT_REFUSED)

    @app.command("import")
    def import_(
        ctx: typer.Context,
        from_: Annotated[Path, typer.Option("--from", help="Folder holding MEMORY.md, USER.md and/or users/<id>/USER.md.")],
        database: DatabaseOpt = None,
        profile: ProfileOpt = None,
        replace: Annotated[bool, typer.Option("--replace", help="Make each target exactly the file (default: add the entries missing from the store).")] = False,
        as_json: JsonOpt = False,
    ) -> None:
        """Load Markdown memory files into the store: all or nothing per file, every entry scanned, limits checked.

        Entries already in the store are not added again, so importing twice adds nothing.
        """
        from hermes_memory.cli.memory import _visible
        from hermes_memory.memory.transfer import import_entries, read_markdown_dir

        if not from_.is_dir():
            fail(f"{escape(str(from_))} is not a folder with MEMORY.md / USER.md files.", EXIT_USAGE)
        found, problems = read_markdown_dir(from_)
        open_store, base = _opener(ctx, database, profile)
        results: list[dict[str, Any]] = []
        for f in found:
            if f.error:
                res: dict[str, Any] = {"success": False, "error": f"{f.path} could not be read ({f.error}); nothing imported from it."}
            else:
                try:
                    store = base if f.user_id is None else open_store(f.user_id)
                    res = import_entries(store, f.target, f.entries, replace=replace)
                except MemoryStoreError as exc:
                    res = {"success": False, "error": str(exc)}
            res["file"] = f.label
            results.append(res)
        ok = all(r["success"] for r in results) and not problems
        if as_json:
            print_json({"from": str(from_), "files": results, "problems": problems, "success": ok})
        else:
            if not found:
                console.print(f"[yellow]nothing to import:[/] no MEMORY.md, USER.md or users/*/USER.md in {escape(str(from_))}.",
                              highlight=False)
            for p in problems:
                console.print(f"[red]refused:[/] {escape(_visible(p))}", highlight=False)
            for r in results:
                if r["success"]:
                    console.print(f"[green]imported:[/] {escape(r['file'])}  [dim]({r['added']:,} added, "
                                  f"{r['already_present']:,} already present, {r['removed']:,} removed; "
                                  f"{escape(r['usage'])})[/]", highlight=False)
                else:
                    err = r["error"]  # the store's reasons may begin with the file name already: say it once
                    if err.startswith(f"{r['file']}: "):
                        err = err[len(r["file"]) + 2:]
                    shown = err if err.startswith(f"{r['file']} ") else f"{r['file']}: {err}"
                    console.print(f"[red]refused:[/] {escape(_visible(shown))}", highlight=False)
        if not ok:
            raise typer.Exit(EXIT_REFUSED)
