"""``hermes-memory chat`` (an interactive REPL) and ``hermes-memory run PROMPT`` (one answer).

Both build the main and auxiliary models from ``config.yaml`` (``model:`` / ``auxiliary:``) and
run the :class:`~hermes_memory.agent.Agent` over the data home. With no model configured they exit
2 and print exactly what to add to ``config.yaml``. Exit codes: 0 ok, 1 the model or a provider
failed / the session to resume is unknown, 2 usage or configuration.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markdown import Markdown
from rich.markup import escape
from rich.table import Table

from hermes_memory.cli.common import EXIT_REFUSED, EXIT_USAGE, console, err_console, fail, print_json, state
from hermes_memory.errors import ModelError, ModelNotConfiguredError, ProviderError, SessionStoreError
from hermes_memory.llm.factory import build_models, build_summary_model, not_configured_help
from hermes_memory.wording import count

HISTORY_FILE = ".chat_history"
SLASH_HELP = (
    "/memory            show MEMORY.md and USER.md as they are on disk now\n"
    "/search QUERY      search earlier sessions\n"
    "/compress [TOPIC]  compress the conversation now (optionally focused on TOPIC)\n"
    "/new               end this session and start a new one\n"
    "/resume SESSION    end this session and continue another (id, id prefix or title)\n"
    "/status            token counters and context usage\n"
    "/quit              end the session and exit (also /exit, Ctrl-D)"
)


def _build_agent(ctx: typer.Context, resume: str | None) -> Any:
    from hermes_memory.agent import Agent

    st = state(ctx)
    cfg = st.config
    if not cfg.model.configured:
        fail(not_configured_help(str(st.home.config_path), str(st.home.env_path)), EXIT_USAGE)
    try:
        main, aux = build_models(cfg)
        summary = build_summary_model(cfg, main, aux)
    except ModelNotConfiguredError as exc:  # name the real .env file: HERMES_HOME may well be unset
        fail(str(exc).replace("$HERMES_HOME/.env", str(st.home.env_path)), EXIT_USAGE)
    try:
        return Agent(main, aux_model=aux, summary_model=summary, home=st.home, config=cfg, resume=resume)
    except (ProviderError, SessionStoreError) as exc:
        fail(str(exc), EXIT_REFUSED)


def _footer(agent: Any) -> str:
    s = agent.status()
    total = s["total_usage"]
    ctx = s["context"]
    return (f"tokens in {total['prompt_tokens']:,} · out {total['completion_tokens']:,} · "
            f"from cache {s['cache_share'] * 100:.0f}% · context {ctx['usage_percent']:.0f}% of "
            f"{ctx['context_length']:,} · session {s['session_id']}")


def _show_memory(agent: Any) -> None:
    from hermes_memory.memory import open_memory_store

    if agent.store is None:
        console.print("memory is disabled (memory.memory_enabled and memory.user_profile_enabled are false)")
        return
    live = open_memory_store(agent.home, agent.config)  # live state, not the session's frozen snapshot
    for target, title in (("memory", "MEMORY.md (agent notes)"), ("user", "USER.md (user profile)")):
        entries = live.entries(target)
        table = Table(title=f"{title} · {live.usage(target)['text']}", expand=False)
        table.add_column("#", justify="right")
        table.add_column("entry")
        for i, entry in enumerate(entries, 1):
            table.add_row(str(i), escape(entry))
        if not entries:
            table.add_row("-", "(empty)")
        console.print(table)
    console.print("[dim]Writes made during this session reach the system prompt at the next session.[/]")


def _search(agent: Any, query: str) -> None:
    if not query.strip():
        console.print("usage: /search QUERY")
        return
    rows = agent.db.search_messages(query, limit=10)
    if not rows:
        console.print(f"no matches for {escape(repr(query))}")
        return
    table = Table(show_lines=False)
    table.add_column("session")
    table.add_column("role")
    table.add_column("snippet")
    for r in rows:
        table.add_row(str(r.get("session_id")), str(r.get("role")),
                      escape(str(r.get("snippet") or "").replace("\n", " ")))
    console.print(table)


def _read_history(home: Path) -> Any:
    try:
        import readline
    except ImportError:  # pragma: no cover - Windows without pyreadline
        return None
    path = home / HISTORY_FILE
    with contextlib.suppress(OSError):
        readline.read_history_file(path)
    readline.set_history_length(1000)
    return readline


def register(app: typer.Typer) -> None:
    """Add ``chat`` and ``run`` to the root app."""

    @app.command("chat")
    def chat(
        ctx: typer.Context,
        resume: Annotated[str | None, typer.Option("--resume", help="Continue a session (id, id prefix or title).")] = None,
    ) -> None:
        """Chat with the agent in a REPL; memory, session history and compression work across sessions."""
        agent = _build_agent(ctx, resume)
        carry_on = getattr(agent.db, "continue_relayout_in_background", None)  # SQLite only
        if callable(carry_on):  # the REPL mostly waits on the user: move a pending index on meanwhile
            carry_on()
        home = state(ctx).home.root
        rl = _read_history(home) if console.is_terminal else None
        console.print(f"[bold]hermes-memory chat[/] · model {agent.model.name} · session {agent.session_id}"
                      f"{' (resumed, ' + str(len(agent.messages)) + ' messages)' if resume else ''}\n"
                      "[dim]/help lists commands; Ctrl-D or /quit ends the session.[/]")
        try:
            while True:
                try:
                    line = input("you> ")
                except EOFError:
                    console.print()
                    break
                except KeyboardInterrupt:
                    console.print()
                    break
                text = line.strip()
                if not text:
                    continue
                if text.startswith("/"):
                    cmd, _, arg = text.partition(" ")
                    cmd = cmd.lower()
                    if cmd in ("/quit", "/exit", "/q"):
                        break
                    if cmd == "/help":
                        console.print(SLASH_HELP, highlight=False)
                    elif cmd == "/memory":
                        _show_memory(agent)
                    elif cmd == "/search":
                        _search(agent, arg)
                    elif cmd == "/compress":
                        with console.status("compressing..."):
                            done = agent.compress_context(reason="manual", focus=arg.strip() or None, force=True)
                        console.print(f"compressed; continuing in session {agent.session_id}" if done
                                      else "nothing to compress yet")
                    elif cmd == "/new":
                        console.print(f"new session {agent.new_session()}")
                    elif cmd == "/resume":
                        try:
                            sid = agent.resume(arg.strip())
                        except SessionStoreError as exc:
                            err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
                            continue
                        console.print(f"resumed session {sid} ({count(len(agent.messages), 'message')})")
                    elif cmd == "/status":
                        console.print(_footer(agent), highlight=False)
                    else:
                        console.print(f"unknown command {escape(cmd)}\n{SLASH_HELP}", highlight=False)
                    continue
                try:
                    with console.status("thinking..."):
                        result = agent.run_turn(text)
                except ModelError as exc:
                    err_console.print(f"[bold red]model error:[/] {escape(str(exc))}", highlight=False)
                    continue
                except KeyboardInterrupt:
                    err_console.print("interrupted")
                    continue
                console.print(Markdown(result.text or "(no answer)"))
                console.print(f"[dim]{_footer(agent)}[/]", highlight=False)
        finally:
            try:
                agent.close()
            finally:
                if rl is not None:
                    with contextlib.suppress(OSError):
                        rl.write_history_file(home / HISTORY_FILE)
        if agent.session_stored:
            console.print(f"[dim]session {agent.session_id} saved · {_footer(agent)}[/]", highlight=False)
        else:
            console.print("[dim]nothing saved: no turn was answered[/]", highlight=False)

    @app.command("run")
    def run(
        ctx: typer.Context,
        prompt: Annotated[str, typer.Argument(help="The message to send.")],
        as_json: Annotated[bool, typer.Option("--json", help="Print the answer and counters as JSON (keys: session_id, "
                                              "text, finish_reason, usage, cache_share, api_calls, tool_calls, "
                                              "compressions).")] = False,
        resume: Annotated[str | None, typer.Option("--resume", help="Continue a session (id, id prefix or title).")] = None,
    ) -> None:
        """Answer PROMPT once (one session, memory and history included) and exit."""
        agent = _build_agent(ctx, resume)
        try:
            result = agent.run_turn(prompt)
        except ModelError as exc:
            kept = agent.session_stored  # False: the model never answered, so no session was kept
            agent.close("error")
            fail(str(exc) + ("" if kept else " (nothing was saved: no session is left behind)"), EXIT_REFUSED)
        except KeyboardInterrupt:  # end the session and the providers, then exit 130 (main)
            agent.close("interrupted")
            raise
        agent.close()
        if as_json:
            print_json({
                "session_id": result.session_id,
                "text": result.text,
                "finish_reason": result.finish_reason,
                "usage": result.usage.as_dict(),
                "cache_share": round(result.usage.cache_share, 4),
                "api_calls": result.api_calls,
                "tool_calls": result.tool_calls,
                "compressions": result.compressions,
            })
        else:
            typer.echo(result.text)
