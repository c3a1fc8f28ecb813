"""``hermes-memory status``: what this home uses (config, storage backend and database, memory,
provider) and how much it holds. The database is named without its password."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape

from hermes_memory.cli.common import EXIT_REFUSED, console, print_json, state
from hermes_memory.cli.providers import provider_status
from hermes_memory.cli.readonly import missing_home
from hermes_memory.sessions import hmindex
from hermes_memory.storage import resolve_storage, scrub_password
from hermes_memory.wording import count


def storage_report(ctx: typer.Context) -> dict[str, Any]:
    """``{"backend", "database", "source", "profile", "pool_size", "sessions", "messages", "memory":
    {target: usage}, "relayout", "error"}`` for this home; ``relayout`` is ``None`` or, while the
    SQLite full-text index is being moved from layout 2 to 3, ``{"phase", "done", "total"}``
    (messages); ``database`` is the state.db path or the URL with
    ``***`` for its password; ``error`` (else ``None``) says why the store could not be read, with
    any password scrubbed. Raises :class:`ConfigError` for an invalid ``storage:`` section."""
    from hermes_memory.memory import open_memory_store
    from hermes_memory.sessions.factory import open_session_db

    st = state(ctx)
    storage = resolve_storage(st.config, st.home.root)
    out: dict[str, Any] = {
        "backend": storage.backend,
        "database": storage.display if storage.is_postgres else str(st.home.state_db),
        "source": storage.source,
        "profile": storage.profile if storage.is_postgres else None,
        "pool_size": storage.pool_size if storage.is_postgres else None,
        "memory_dir": None if storage.is_postgres else str(st.home.memories_dir),
        "sessions": None, "messages": None, "memory": {}, "relayout": None, "error": None,
    }
    try:
        if storage.is_postgres or st.home.has_state_db():
            with open_session_db(st.home, st.config, storage=storage, reading=True) as db:
                out["sessions"], out["messages"] = db.session_count(), db.message_count()
                progress = getattr(db, "relayout_progress", None)  # SQLite only
                out["relayout"] = progress() if callable(progress) else None
        else:
            out["sessions"] = out["messages"] = 0  # opening would create state.db: status never writes
        store = open_memory_store(st.home, st.config, storage=storage)
        out["memory"] = {t: store.usage(t) for t in ("memory", "user")}
        close = getattr(store, "close", None)
        if callable(close):
            close()
    except Exception as exc:  # reported, never a traceback: the user needs to know why
        out["error"] = scrub_password(f"{type(exc).__name__}: {exc}", storage.url)
    return out


def register(app: typer.Typer) -> None:
    """Add ``status``."""

    @app.command("status")
    def status_cmd(ctx: typer.Context,
                   json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
        """Show this home: config file, storage backend and database (never its password), how many
        sessions and messages it holds, memory usage, the external provider (and why it cannot be
        used, when it cannot), and a move of the full-text index to a new layout still under way
        (messages re-indexed / total)."""
        st = state(ctx)
        report = storage_report(ctx)
        mem = st.config.memory
        # A configured provider is loaded (no network: is_available() is a local check) so that a
        # typo or a bad setting shows here, not only in `providers status` / `serve`.
        prov = provider_status(ctx) if mem.provider.strip() else None
        provider_error: str | None = None if prov is None or prov["ok"] else str(prov["reason"])
        missing = missing_home(ctx)
        out: dict[str, Any] = {"home": str(st.home.root), "home_exists": st.home.root.exists(),
               "config": str(st.home.config_path),
               "config_exists": st.home.config_path.exists(), "storage": report,
               "provider": mem.provider or None,
               "provider_error": provider_error, "config_warnings": st.config.warnings}
        if json_out:
            print_json(out)
        else:
            console.print(f"Home: {escape(str(out['home']))}")
            if missing is not None:
                console.print(f"[yellow]  {escape(missing)}[/]", soft_wrap=True, highlight=False)
            console.print(f"Config: {escape(str(out['config']))}{'' if out['config_exists'] else ' (absent: defaults)'}")
            if report["backend"] == "postgres":
                console.print(f"Storage: [bold]PostgreSQL[/] {escape(report['database'])} "
                              f"(from {escape(report['source'])}; profile {escape(report['profile'])}, "
                              f"pool {report['pool_size']})", soft_wrap=True)
            else:
                console.print(f"Storage: [bold]SQLite[/] {escape(report['database'])}; memory files in "
                              f"{escape(report['memory_dir'])}", soft_wrap=True)
            if report["error"] is None:
                console.print(f"Sessions: {report['sessions']:,}   Messages: {report['messages']:,}")
                if report["relayout"] is not None:
                    r = report["relayout"]
                    console.print(f"Full-text index: moving to layout {hmindex.LAYOUT_VERSION}, {r['done']:,}/{r['total']:,} messages "
                                  f"re-indexed{' (removing the old index)' if r['phase'] == 'dropping' else ''}; "
                                  "search uses the old index meanwhile; `hermes-memory sessions reindex` "
                                  "finishes it now", highlight=False, soft_wrap=True)
                for target, name in (("memory", "MEMORY.md"), ("user", "USER.md")):
                    u = report["memory"][target]
                    console.print(f"{name}: {count(u['entry_count'], 'entry')}, {escape(u['text'])}")
            console.print(f"External provider: {escape(mem.provider) if mem.provider else 'none (built-in only)'}")
            if provider_error is not None:
                console.print(f"[bold red]  cannot be used:[/] {escape(provider_error)} "
                              "(`hermes-memory providers status` exits 1 on it; `serve` refuses to start)",
                              soft_wrap=True)
        if report["error"] is not None:
            if not json_out:
                console.print(f"[bold red]error:[/] cannot read the store: {escape(report['error'])}", soft_wrap=True)
            raise typer.Exit(EXIT_REFUSED)
