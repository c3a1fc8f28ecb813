"""Shared CLI plumbing: the global ``--home`` option, config loading, JSON output, exit codes."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from hermes_memory.config import HermesConfig, load_config, load_env_into_process
from hermes_memory.fsutil import OutputRefused, write_output_file
from hermes_memory.home import HermesHome

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2

console = Console()
err_console = Console(stderr=True)


@dataclass
class CliState:
    """Per-invocation state set by the root callback (``--home``)."""

    home_arg: str | None = None
    _home: HermesHome | None = field(default=None, repr=False)
    _config: HermesConfig | None = field(default=None, repr=False)

    @property
    def home(self) -> HermesHome:
        if self._home is None:
            self._home = HermesHome.resolve(self.home_arg)
        return self._home

    @property
    def config(self) -> HermesConfig:
        if self._config is None:
            self._config = load_config(self.home.config_path)
            load_env_into_process(self.home.env_path)
            print_config_warnings(self._config)
        return self._config


def print_config_warnings(config: HermesConfig) -> None:
    """Print each ``config.yaml`` warning (a value clamped or read the Hermes Agent's way) on stderr.

    Called once per invocation, where the config is first loaded; stdout stays clean for JSON and
    the MCP stdio protocol.
    """
    for line in config.warnings:
        err_console.print(f"[yellow]warning:[/] {escape(line)}", highlight=False, soft_wrap=True)


def state(ctx: typer.Context) -> CliState:
    """Return the :class:`CliState` of this invocation (created by the root callback)."""
    root = ctx.find_root()
    if not isinstance(root.obj, CliState):
        root.obj = CliState()
    return root.obj


def print_json(data: Any) -> None:
    """Print ``data`` as pretty JSON on stdout (non-ASCII kept, for pipes and ``jq``)."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def fail(message: str, code: int = EXIT_REFUSED) -> NoReturn:
    """Print ``message`` on stderr and exit with ``code`` (1 refused/not found, 2 usage)."""
    # the message is plain text (server replies, paths, user input): brackets in it are not markup
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, markup=True, soft_wrap=True)
    raise typer.Exit(code)


def write_user_file(ctx: typer.Context, path: Path, text: str, *, force: bool) -> Path:
    """Write ``text`` to the output file ``path`` a user gave (``-o``), or exit 1 saying why not.

    :func:`~hermes_memory.fsutil.write_output_file` with this home's own files as protected: an
    existing file needs ``force``; the home's state.db (and -wal/-shm), config.yaml, .env,
    MEMORY.md/USER.md and any SQLite database are refused even then, left byte-identical. Returns
    the file written (symlinks resolved).
    """
    try:
        return write_output_file(path, text, force=force, protected=state(ctx).home.live_files())
    except OutputRefused as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror or exc}. Check that its folder exists and is writable.")
