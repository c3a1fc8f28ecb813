"""``hermes-memory sessions ...``: list, show, search, export, import, prune, delete.

Every command that prints data takes ``--json``. Exit codes: 0 ok, 1 refused or not found,
2 usage (unknown format, bad option).
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from hermes_memory.cli.common import (
    EXIT_USAGE,
    console,
    err_console,
    fail,
    print_json,
    state,
    write_user_file,
)
from hermes_memory.cli.readonly import open_existing_db
from hermes_memory.errors import SessionStoreError
from hermes_memory.sessions import fusion
from hermes_memory.sessions.db import SessionDB, SessionLookupError
from hermes_memory.sessions.factory import open_session_db
from hermes_memory.sessions.importers import FORMATS, import_path
from hermes_memory.sessions.query_notes import search_note
from hermes_memory.sessions.search import HIDDEN_SOURCES
from hermes_memory.wording import count

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


ProjectOpt = Annotated[Path | None, typer.Option(
    "--project", help="Only sessions run in this folder or below it (their working directory, as "
    "Claude Code records it).")]


def _project(path: Path | None) -> str | None:
    """The absolute folder for ``--project`` (``~`` expanded; need not exist any more)."""
    return None if path is None else str(path.expanduser().resolve())


def _under(folder: str | None, project: str) -> bool:
    """True when ``folder`` is ``project`` or a folder below it (the rule of ``cwd_clause``)."""
    if not folder:
        return False
    base = project.rstrip("/\\") or project
    return folder == base or folder.startswith((base + "/", base + "\\"))


def _db(ctx: typer.Context) -> SessionDB:
    return open_session_db(state(ctx).home, state(ctx).config)


def _reader(ctx: typer.Context) -> Any:
    """The session store for a command that only reads (or deletes): ``nullcontext(None)`` when the
    home has no state.db yet (nothing is created); exit 1 when the home does not exist."""
    db = open_existing_db(ctx)
    return contextlib.nullcontext(None) if db is None else db


def _no_sessions(ctx: typer.Context, session_id: str) -> NoReturn:
    fail(f"no session matches {session_id!r}: {state(ctx).home.state_db} does not exist yet (no session "
         "has been stored in this home).")


def _when(ts: float | None) -> str:
    if ts is None:
        return "-"
    return datetime.fromtimestamp(float(ts), tz=UTC).strftime("%Y-%m-%d %H:%M")


def _resolve(db: SessionDB, session_id: str, *, by_title: bool = True) -> str:
    """Session id for a user's reference (:meth:`SessionDB.resolve_session`); exit 1 when nothing
    matches or the prefix is ambiguous (the message lists up to 5 candidates)."""
    try:
        return db.resolve_session(session_id, by_title=by_title)
    except SessionLookupError as exc:
        fail(str(exc))


_DURATION_RE = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhdw])$", re.IGNORECASE)
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
TIME_HELP = ("a date or time (2026-11-01, 2026-11-01T10:00; UTC unless it has an offset) "
             "or a duration back from now (90m, 12h, 7d, 2w)")


def _browse(ctx: typer.Context, source: str | None, limit: int, cwd: str | None, as_json: bool) -> None:
    """``sessions search ""``: the most recent sessions, newest first, as the session_search tool's browse
    mode gives them (sessions of the sources it hides only with ``--source``)."""
    sources: list[str | None] = [x.strip() for x in (source or "").split(",") if x.strip()]
    rows: list[dict[str, Any]] = []
    with _reader(ctx) as db:
        for src in sources or [None]:
            if db is not None:  # room for the hidden sources left out below
                rows += db.list_sessions(source=src, limit=limit + (0 if sources else 20), cwd_prefix=cwd)
    if not sources:  # as the tool: tool/subagent/kanban sessions only when asked for by --source
        rows = [r for r in rows if r.get("source") not in HIDDEN_SOURCES]
    rows.sort(key=lambda r: (r.get("started_at") or 0.0, r["id"]), reverse=True)
    rows = rows[:limit]
    if as_json:
        print_json({"query": "", "mode": "browse", "count": len(rows), "sessions": rows})
        return
    if not rows:
        console.print("no sessions yet")
        return
    console.print(_session_table(rows, f"no query: the {count(len(rows), 'most recent session')}"))


def _session_table(rows: list[dict[str, Any]], title: str) -> Table:
    """The table ``sessions list`` prints: id, start, source, message count, title or first message."""
    table = Table("id", "started", "source", "msgs", "title / first message", title=title)
    for r in rows:
        table.add_row(escape(r["id"]), _when(r["started_at"]), escape(r["source"] or ""),
                      f"{r['message_count'] or 0:,}", escape(r["title"] or r.get("preview") or ""))
    return table


def parse_time_option(option: str, value: str, *, until: bool = False, now: float | None = None) -> float:
    """Epoch seconds for a ``--since``/``--until`` value, or exit 2 (usage) naming ``option`` and
    showing accepted examples.

    Accepts an ISO date or datetime (naive ones are UTC, like the times this CLI prints; an offset
    such as ``+02:00`` or ``Z`` is honoured) or ``N`` + ``s|m|h|d|w`` meaning N units before ``now``.
    For ``until`` a bare date means the END of that day (the next midnight), so
    ``--since 2026-11-01 --until 2026-11-01`` is that whole day.
    """
    text = value.strip()
    m = _DURATION_RE.match(text)
    if m:
        return (time.time() if now is None else now) - float(m.group(1)) * _UNIT_SECONDS[m.group(2).lower()]
    try:
        if _DATE_RE.match(text):
            day = date.fromisoformat(text)
            start = datetime(day.year, day.month, day.day, tzinfo=UTC)
            return (start + timedelta(days=1) if until else start).timestamp()
        dt = datetime.fromisoformat(text) if text else None
    except ValueError:
        dt = None
    if dt is None:
        fail(f"{option}: cannot read {value!r}; use {TIME_HELP}, e.g. {option} 2026-11-01 or {option} 7d.",
             EXIT_USAGE)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _print_import_report(data: dict[str, Any]) -> None:
    """Print an import report (:meth:`ImportReport.as_dict`): skipped lines first (up to 50, whole),
    then the summary. An import that changed nothing (every session unchanged) says so in one line
    and counts its skipped lines instead of listing them again: an unchanged file skips the same
    lines on every re-import."""
    errors = data["errors"]
    changed = data["sessions_created"] or data["sessions_updated"] or data["messages_imported"]
    if not changed and data["sessions_unchanged"]:
        extra = f" ({count(len(errors), 'line')} skipped, as listed by --json)" if errors else ""
        console.print(f"{count(data['sessions_unchanged'], 'session')} unchanged, nothing imported{extra}",
                      highlight=False)
        return
    for e in errors[:50]:
        err_console.print(f"[yellow]skipped:[/] {escape(e)}", highlight=False, soft_wrap=True)
    if len(errors) > 50:
        err_console.print(f"... and {len(errors) - 50:,} more (--json lists them all)", highlight=False)
    console.print(
        f"{count(data['sessions_created'], 'new session')}, {data['sessions_updated']:,} topped up, "
        f"{data['sessions_unchanged']:,} unchanged, {count(data['messages_imported'], 'message')} imported",
        highlight=False,
    )


def register(app: typer.Typer) -> None:
    """Add the ``sessions`` commands to ``app``."""

    @app.command("list")
    def list_cmd(
        ctx: typer.Context,
        source: Annotated[str | None, typer.Option("--source", help="Only this source (cli, telegram, ...).")] = None,
        limit: Annotated[int, typer.Option("--limit", min=1, help="Sessions to show.")] = 20,
        offset: Annotated[int, typer.Option("--offset", min=0, help="Skip this many (newest first).")] = 0,
        project: ProjectOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """List sessions, newest first."""
        cwd = _project(project)
        rows: list[dict[str, Any]] = []
        total = 0
        with _reader(ctx) as db:
            if db is not None:
                rows = db.list_sessions(source=source, limit=limit, offset=offset, cwd_prefix=cwd)
                total = db.session_count(source, cwd_prefix=cwd)
        if as_json:
            print_json({"total": total, "sessions": rows})
            return
        shown = f"{len(rows):,} of {count(total, 'session')}" if len(rows) < total else count(total, "session")
        console.print(_session_table(rows, shown))

    @app.command("show")
    def show_cmd(
        ctx: typer.Context,
        session_id: Annotated[str, typer.Argument(help="Session id, unique id prefix, or title.")],
        as_json: JsonOpt = False,
    ) -> None:
        """Show one session and its messages."""
        with _reader(ctx) as db:
            if db is None:
                _no_sessions(ctx, session_id)
            sid = _resolve(db, session_id)
            data = db.export_session(sid)
        assert data is not None
        if as_json:
            print_json(data)
            return
        console.print(f"[bold]{escape(data['id'])}[/]  {escape(data['source'] or '')}  "
                      f"started {_when(data['started_at'])}  ended {_when(data['ended_at'])} "
                      f"({escape(data['end_reason'] or 'open')})", highlight=False)
        if data.get("title"):
            console.print(f"title: {data['title']}", highlight=False, markup=False)
        for m in data["messages"]:
            content = m["content"] if isinstance(m["content"], str) else json.dumps(m["content"], ensure_ascii=False)
            extra = f" [{m['tool_name']}]" if m.get("tool_name") else ""
            console.print(f"[cyan]{escape(m['role'] + extra)}[/] #{m['id']}: {escape(content or '')}",
                          highlight=False, markup=True)

    @app.command("search")
    def search_cmd(
        ctx: typer.Context,
        query: Annotated[str, typer.Argument(help="Words, \"phrases\" or a plain question (the first 2,048 "
                                              "characters are searched). Empty (\"\"): the most recent sessions, "
                                              "as the session_search tool does. A query that begins with - "
                                              "goes after -- (sessions search -- -deploy).")],
        source: Annotated[str | None, typer.Option(
            "--source", help="Only these sources, comma-separated (cli,telegram).")] = None,
        role: Annotated[str | None, typer.Option("--role", help="Comma-separated roles (user, assistant, system, tool).")] = None,
        session: Annotated[str | None, typer.Option(
            "--session", help="Only this session (id or unique id prefix).")] = None,
        user_id: Annotated[str | None, typer.Option("--user-id", help="Only sessions of this user id.")] = None,
        since: Annotated[str | None, typer.Option(
            "--since", help=f"Messages at or after: {TIME_HELP}.")] = None,
        until: Annotated[str | None, typer.Option(
            "--until", help="Messages before: same forms as --since; a bare date includes that whole day.")] = None,
        limit: Annotated[int, typer.Option("--limit", min=1, max=1000)] = 20,
        sort: Annotated[str, typer.Option("--sort", help="relevance, newest or oldest.")] = "relevance",
        query_syntax: Annotated[bool, typer.Option(
            "--query-syntax", help="Read upper-case AND, OR, NOT, NEAR between words as operators "
            "(by default they are plain words).")] = False,
        project: ProjectOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Full-text search over every stored message, optionally filtered; sessions whose title
        matches are listed first; an empty query lists the most recent sessions."""
        cwd = _project(project)
        if not query.strip():  # the session_search tool's browse mode (the reference's too)
            used = [n for n, v in (("--role", role), ("--session", session), ("--user-id", user_id),
                                   ("--since", since), ("--until", until)) if v is not None]
            if used or sort != "relevance" or query_syntax:
                fail(f"{', '.join(used) or '--sort/--query-syntax'} need words to search; an empty query lists "
                     "the most recent sessions (with --source, --project and --limit only).", EXIT_USAGE)
            _browse(ctx, source, limit, cwd, as_json)
            return
        if sort not in ("relevance", "newest", "oldest"):
            fail("--sort must be relevance, newest or oldest.", EXIT_USAGE)
        now = time.time()
        t_since = parse_time_option("--since", since, now=now) if since is not None else None
        t_until = parse_time_option("--until", until, until=True, now=now) if until is not None else None
        if t_since is not None and t_until is not None and t_since >= t_until:
            fail(f"--since ({since}) must be earlier than --until ({until}).", EXIT_USAGE)
        rows: list[dict[str, Any]] = []
        titled: list[dict[str, Any]] = []
        with _reader(ctx) as db:
            if db is None:
                if session is not None:
                    _no_sessions(ctx, session)
            else:
                fusion.attach(db, state(ctx).config.search)  # semantic search when search.embeddings is on
                sid = _resolve(db, session, by_title=False) if session is not None else None
                try:
                    rows = db.search_messages(query, source_filter=source, role_filter=role, session_id=sid,
                                              user_id=user_id, since=t_since, until=t_until, limit=limit,
                                              sort=None if sort == "relevance" else sort, raise_errors=True,
                                              query_syntax=query_syntax, cwd_prefix=cwd)
                except ValueError as exc:  # a --role no message has (role_problem)
                    fail(f"--role: {exc}", EXIT_USAGE)
                sources = [x.strip() for x in (source or "").split(",") if x.strip()]
                titled = [] if sid is not None else [
                    {k: t.get(k) for k in ("id", "title", "title_match", "source", "started_at")}
                    for t in db.search_titles(query, limit=limit, query_syntax=query_syntax)
                    if (not sources or t.get("source") in sources) and (user_id is None or t.get("user_id") == user_id)
                    and (cwd is None or _under(t.get("cwd"), cwd))
                ]
        note = search_note(query, query_syntax, found=bool(rows or titled))
        if as_json:
            print_json({"query": query, "mode": "search", "count": len(rows), "results": rows, "title_matches": titled,
                        **({"note": note} if note else {})})
            return
        if note:
            err_console.print(f"[yellow]note:[/] {escape(note)}", highlight=False, soft_wrap=True)
        for t in titled:
            console.print(f"title match: {escape(t['id'])}  {escape(t['title'] or '')}  ({_when(t['started_at'])})",
                          highlight=False)
        if not rows:
            console.print("no matches" if not titled else "no message matches")
            return
        table = Table("session", "when", "role", "snippet", title=count(len(rows), "match"))
        for r in rows:
            table.add_row(escape(r["session_id"]), _when(r["timestamp"]), escape(r["role"]), escape(r["snippet"] or ""))
        console.print(table)

    @app.command("export")
    def export_cmd(
        ctx: typer.Context,
        session_id: Annotated[str | None, typer.Argument(help="One session (default: all).")] = None,
        fmt: Annotated[str, typer.Option("--format", help="json (one document) or jsonl (one session per line).")] = "json",
        output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")] = None,
        source: Annotated[str | None, typer.Option("--source", help="Only sessions of this source.")] = None,
        force: Annotated[bool, typer.Option("--force", help="Overwrite an existing --output file (never the "
                                            "home's state.db, config or memory files, nor any SQLite database).")] = False,
        as_json: JsonOpt = False,
    ) -> None:
        """Export sessions with their messages as JSON or JSONL (to stdout, or atomically to a new file)."""
        if fmt not in ("json", "jsonl"):
            fail("--format must be json or jsonl.", EXIT_USAGE)
        items: list[dict[str, Any]] = []
        with _reader(ctx) as db:
            if db is None:
                if session_id:
                    _no_sessions(ctx, session_id)
            elif session_id:
                one = db.export_session(_resolve(db, session_id))
                items = [one] if one else []
            else:
                items = db.export_all(source=source)
        if fmt == "jsonl":
            text = "".join(json.dumps(i, ensure_ascii=False, default=str) + "\n" for i in items)
        else:
            doc: Any = items[0] if session_id else items
            text = json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n"
        if output is None:
            typer.echo(text, nl=False)
            return
        write_user_file(ctx, output, text, force=force)
        n_messages = sum(len(i["messages"]) for i in items)
        summary = {"written": str(output), "format": fmt, "sessions": len(items), "messages": n_messages}
        if as_json:
            print_json(summary)
        else:
            console.print(f"wrote {count(len(items), 'session')}, {count(n_messages, 'message')} "
                          f"to {escape(str(output))}", highlight=False)

    @app.command("import")
    def import_cmd(
        ctx: typer.Context,
        path: Annotated[Path, typer.Argument(help="File or folder to import.")],
        fmt: Annotated[str, typer.Option("--format", "-f", help=f"One of: {', '.join(FORMATS)}.")],
        as_json: JsonOpt = False,
    ) -> None:
        """Import transcripts from another agent (re-importing adds nothing twice)."""
        fmt = fmt.replace("-", "_")  # claude-code, as `hooks install` spells the client
        if fmt not in FORMATS:
            fail(f"unknown --format {fmt!r}; use one of: {', '.join(FORMATS)}.", EXIT_USAGE)
        if not path.exists():
            fail(f"{path} does not exist; pass the file or folder to import.")
        with _db(ctx) as db, Progress(
            TextColumn("importing"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            console=err_console, transient=True,
        ) as bar:
            task = bar.add_task("import", total=None)

            def progress(done: int, total: int | None) -> None:
                bar.update(task, completed=done, total=total)

            before = (db.session_count(), db.message_count())
            try:
                with db.batch():  # one fsync per few hundred writes, not per session
                    report = import_path(db, path, fmt, progress=progress)
            except SessionStoreError as exc:  # a full disk, say: say what was kept, never a traceback
                kept = (db.session_count() - before[0], db.message_count() - before[1])
                fail(f"import stopped: {exc} Imported before it stopped: {kept[0]} sessions, {kept[1]} messages "
                     "(written in whole transactions; the one that failed was rolled back). Run the same import "
                     "again once fixed: it adds only what is missing.")
        data = report.as_dict()
        if as_json:
            print_json(data)
        else:
            _print_import_report(data)
        if data["errors"] and not (data["sessions_created"] or data["messages_imported"] or data["sessions_unchanged"]):
            raise typer.Exit(1)

    @app.command("prune")
    def prune_cmd(
        ctx: typer.Context,
        older_than: Annotated[float, typer.Option("--older-than", min=0, help="Days since the session started.")] = 90,
        source: Annotated[str | None, typer.Option("--source", help="Only this source.")] = None,
        yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
        as_json: JsonOpt = False,
    ) -> None:
        """Delete ENDED sessions older than N days (open sessions are never pruned)."""
        if not math.isfinite(older_than):
            fail("--older-than must be a finite number of days, e.g. --older-than 90.", EXIT_USAGE)
        if not yes and not typer.confirm(f"Delete ended sessions older than {count(older_than, 'day')}?"):
            fail("nothing pruned (not confirmed; pass --yes to skip the question).")
        n = remaining = 0
        with _reader(ctx) as db:  # no state.db: nothing to prune, and none is created
            if db is not None:
                n = db.prune_sessions(older_than_days=older_than, source=source)
                remaining = db.session_count()
        if as_json:
            print_json({"pruned": n, "remaining": remaining, "older_than_days": older_than, "source": source})
            return
        which = f"ended {source + ' ' if source else ''}sessions that started more than {count(older_than, 'day')} ago"
        if n:
            console.print(f"pruned {count(n, 'session')} ({which}); {count(remaining, 'session')} "
                          f"{'remains' if remaining == 1 else 'remain'}", highlight=False)
        else:
            console.print(f"pruned nothing: no {which}; {count(remaining, 'session')} kept", highlight=False)

    @app.command("delete")
    def delete_cmd(
        ctx: typer.Context,
        session_id: Annotated[str, typer.Argument(help="Session id or unique prefix.")],
        yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
        as_json: JsonOpt = False,
    ) -> None:
        """Delete one session and its messages (child sessions are kept, detached)."""
        with _reader(ctx) as db:
            if db is None:
                _no_sessions(ctx, session_id)
            sid = _resolve(db, session_id)
            if not yes and not typer.confirm(f"Delete session {sid} and its messages?"):
                fail("nothing deleted (not confirmed; pass --yes to skip the question).")
            ok = db.delete_session(sid)
        if not ok:
            fail(f"session {sid} not found")
        if as_json:
            print_json({"deleted": sid})
        else:
            console.print(f"deleted {sid}")
