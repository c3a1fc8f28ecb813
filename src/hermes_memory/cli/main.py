"""Root of the ``hermes-memory`` command: global options and the command groups."""

from __future__ import annotations

import logging
import shlex
import sys
from typing import Annotated, Any

import typer
from rich.markup import escape

from hermes_memory import __version__
from hermes_memory.cli import chat as chat_cmds
from hermes_memory.cli import hooks as hook_cmds
from hermes_memory.cli import memory as memory_cmds
from hermes_memory.cli import providers as provider_cmds
from hermes_memory.cli import reindex as reindex_cmds
from hermes_memory.cli import serve as serve_cmds
from hermes_memory.cli import sessions as session_cmds
from hermes_memory.cli import setup as setup_cmds
from hermes_memory.cli import status as status_cmds
from hermes_memory.cli import storage as storage_cmds
from hermes_memory.cli import ui as ui_cmds
from hermes_memory.cli.common import EXIT_REFUSED, EXIT_USAGE, CliState, err_console
from hermes_memory.errors import ConfigError, HermesMemoryError, HomeError


def _hide_flag_types() -> None:
    """Help shows no ``<bool>`` after a flag (``--json``, ``--yes``): a flag takes no value, and typer
    0.2x's rich help prints the type of every option. Only flags change; a value's type stays shown."""
    from typer.core import TyperOption

    shown = getattr(TyperOption, "display_type_rich", None)
    if shown is None or getattr(shown, "_hermes_flags_hidden", False):
        return

    def display_type_rich(self: TyperOption, ctx: Any) -> str | None:
        return None if getattr(self, "is_flag", False) and self.metavar is None else shown(self, ctx)

    display_type_rich._hermes_flags_hidden = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


_hide_flag_types()

app = typer.Typer(
    name="hermes-memory",
    help="Four-layer memory for LLM agents: curated memory files, searchable sessions, "
    "context compression and one external memory provider.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
memory_app = typer.Typer(help="Curated memory: MEMORY.md (agent notes) and USER.md (user profile).", no_args_is_help=True)
sessions_app = typer.Typer(help="Session history in state.db: list, show, search, export, import, prune, delete, reindex.", no_args_is_help=True)
providers_app = typer.Typer(help="External memory providers (Holographic, Mem0, Honcho, ...).", no_args_is_help=True)
hooks_app = typer.Typer(help="Automatic memory in Claude Code (and Gemini CLI) through their hooks: "
                        "install, uninstall, status.", no_args_is_help=True)
app.add_typer(memory_app, name="memory")
app.add_typer(sessions_app, name="sessions")
app.add_typer(providers_app, name="providers")
app.add_typer(hooks_app, name="hooks")
storage_app = typer.Typer(help="Where sessions and memory live: storage migrate (SQLite home -> PostgreSQL).",
                          no_args_is_help=True)
app.add_typer(storage_app, name="storage")

memory_cmds.register(memory_app)
setup_cmds.register(memory_app, providers_app)
session_cmds.register(sessions_app)
reindex_cmds.register(sessions_app)
provider_cmds.register(providers_app)
hook_cmds.register(hooks_app)
chat_cmds.register(app)
serve_cmds.register(app)
ui_cmds.register(app)
status_cmds.register(app)
storage_cmds.register(storage_app)


def _one_line_short_help(group: typer.Typer) -> None:
    """Give every command of ``group`` (and of its subgroups) without its own ``short_help`` the
    first paragraph of its docstring as one line. typer 0.2x's rich help keeps a docstring's single
    line breaks in a group's command list, so a hard-wrapped docstring showed there as short broken
    lines ("... how many" / "sessions and messages it holds, ..."); a command's own ``--help`` page
    already joins them."""
    import inspect

    for info in group.registered_commands:
        doc = info.help or (inspect.getdoc(info.callback) if info.callback else None)
        if info.short_help is None and doc:
            info.short_help = " ".join(doc.split("\n\n")[0].split())
    for sub in group.registered_groups:
        if sub.typer_instance is not None:
            _one_line_short_help(sub.typer_instance)


_one_line_short_help(app)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"hermes-memory {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    home: Annotated[
        str | None,
        typer.Option("--home", help="Data home (default: $HERMES_HOME, else ~/.hermes).", envvar=None),
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log debug messages to stderr.")] = False,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")] = False,
) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    ctx.obj = CliState(home_arg=home)


def hoist_home_option(argv: list[str]) -> list[str]:
    """Move ``--home DIR`` / ``--home=DIR`` given after a command to the front, where the root option lives.

    Users type ``hermes-memory memory show --home DIR`` as often as ``hermes-memory --home DIR memory
    show``; both mean the same. Nothing after a literal ``--`` is touched (it is data, e.g. memory
    content). Returns a new list.
    """
    args = list(argv)
    front: list[str] = []
    i = 0
    while i < len(args) and args[i] != "--":
        if args[i] == "--home" and i + 1 < len(args):
            front += args[i : i + 2]
            del args[i : i + 2]
        elif args[i].startswith("--home="):
            front.append(args.pop(i))
        else:
            i += 1
    return front + args


def dash_text_hint(error: Any, argv: list[str]) -> str | None:
    """The hint for text that begins with ``-`` read as an option (``sessions search -deploy`` gives
    click's "No such option: -d"): put it after ``--``, with the command to type. ``None`` when the
    error is another one, the command takes no text argument, or no word of ``argv`` (the command
    line after the program name) begins with the unknown option."""
    name = getattr(error, "option_name", None)
    ctx = getattr(error, "ctx", None)
    if type(error).__name__ != "NoSuchOption" or not name or ctx is None:
        return None
    arguments = [p for p in getattr(ctx.command, "params", []) if type(p).__name__.endswith("Argument")]
    if not arguments:
        return None
    end = argv.index("--") if "--" in argv else len(argv)
    at = next((i for i, w in enumerate(argv[:end]) if w.startswith(name) and not w.startswith("--")), None)
    if at is None:
        at = next((i for i, w in enumerate(argv[:end]) if w.split("=", 1)[0] == name), None)
    if at is None:
        return None
    if len(arguments) == 1 and end == len(argv):  # its one text last, the options before the --
        words = [*argv[:at], *argv[at + 1:], "--", argv[at]]
    else:
        words = [*argv[:at], "--", *argv[at:]]
    typed = " ".join(shlex.quote(w) for w in words)
    return f"If {argv[at]} is text (a query or an entry), not an option, put it after --: hermes-memory {typed}"


def main() -> None:
    """Console-script entry point: maps our errors to messages and exit codes."""
    try:
        # With standalone_mode=False click *returns* the code of a typer.Exit instead of raising it.
        argv = hoist_home_option(sys.argv[1:])
        rv = app(args=argv, standalone_mode=False)
        if isinstance(rv, int) and rv:
            raise SystemExit(rv)
    except typer.Exit as exc:
        raise SystemExit(exc.exit_code) from None
    except (ConfigError, HomeError) as exc:
        err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
        raise SystemExit(EXIT_USAGE) from None
    except HermesMemoryError as exc:
        err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
        raise SystemExit(EXIT_REFUSED) from None
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    except SystemExit:
        raise
    except Exception as exc:  # click usage errors
        import click

        # typer >= 0.20 ships its own click fork (typer._click): match its exceptions by shape.
        if isinstance(exc, click.exceptions.ClickException) or (
            hasattr(exc, "show") and isinstance(getattr(exc, "exit_code", None), int)
        ):
            usage_error: Any = exc  # a ClickException of either click, by the check above
            hint = dash_text_hint(usage_error, argv)
            if hint:
                usage_error.message = f"{usage_error.message}\n{hint}"
            usage_error.show()
            raise SystemExit(usage_error.exit_code) from None
        # typer's click fork raises its own Abort (e.g. EOF at a confirmation prompt)
        if isinstance(exc, click.exceptions.Abort) or type(exc).__name__ == "Abort":
            err_console.print("aborted")
            raise SystemExit(EXIT_REFUSED) from None
        raise


if __name__ == "__main__":
    main()
