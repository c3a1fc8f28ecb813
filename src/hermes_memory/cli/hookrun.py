"""The ``hooks run`` entry point, kept free of the rest of the CLI so a hook starts fast.

``python -m hermes_memory [--home H] hooks run EVENT [--client C] [--budget S]`` comes here
directly from ``__main__`` (:func:`is_hook_run`); ``hermes-memory hooks run`` reaches the same
:func:`run_hook_command` through typer.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from hermes_memory.hooks.clients import get_client
from hermes_memory.hooks.settings import DEFAULT_RECALL_BUDGET


def run_hook_command(client_name: str, event: str, budget: float, home_arg: str | None) -> None:
    """Run one hook: stdout is kept for the single JSON answer (anything else printed meanwhile, by
    us or a provider library, goes to stderr); never raises, never exits non-zero. After work it
    gave up on past its budget, the process ends right after the answer
    (:func:`~hermes_memory.hooks.runtime.exit_after_abandoned_work`)."""
    real_out = os.dup(1)
    try:
        os.dup2(2, 1)
    except OSError:
        pass
    saved_stdout = sys.stdout
    sys.stdout = sys.stderr
    output = None
    warning = None
    try:
        from hermes_memory.home import HermesHome
        from hermes_memory.hooks.runtime import configure_logging, run_hook

        home = HermesHome.resolve(home_arg)
        configure_logging(home)
        raw = sys.stdin.buffer.read().decode("utf-8", errors="replace") if sys.stdin else ""
        result = run_hook(get_client(client_name), event, raw, home,
                          budget=budget if 0 < budget <= 30 else DEFAULT_RECALL_BUDGET)
        output, warning = result.output, result.warning
    except BaseException as exc:  # noqa: BLE001 - a hook never breaks the client
        warning = f"hermes-memory: {event} hook skipped ({type(exc).__name__}: {exc})"
    finally:
        sys.stdout = saved_stdout
    if warning:
        try:
            sys.stderr.write(warning.replace("\n", " ") + "\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
    try:
        if output is not None:
            os.write(real_out, (json.dumps(output, ensure_ascii=False) + "\n").encode("utf-8"))
    except OSError:
        pass
    finally:
        os.close(real_out)
    try:
        from hermes_memory.hooks.runtime import exit_after_abandoned_work
    except BaseException:  # noqa: BLE001 - the import failed above already and was reported
        return
    exit_after_abandoned_work(0)


def run_main(argv: list[str]) -> None:
    """Fast path for ``[--home H] hooks run EVENT [--client C] [--budget S]`` (unknown options are
    ignored, so an entry written by another version still runs). Exits 0."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--home")
    parser.add_argument("group")
    parser.add_argument("verb")
    parser.add_argument("event", nargs="?", default="")
    parser.add_argument("--client", default="claude-code")
    parser.add_argument("--budget", type=float, default=DEFAULT_RECALL_BUDGET)
    try:
        args, _unknown = parser.parse_known_args(argv)
    except SystemExit:
        sys.stderr.write("hermes-memory: hook entry could not be read; skipped\n")
        raise SystemExit(0) from None
    run_hook_command(args.client, args.event, args.budget, args.home)
    raise SystemExit(0)


def is_hook_run(argv: list[str]) -> bool:
    """True for ``[--home H | --home=H] hooks run ...``."""
    i = 0
    while i < len(argv) and argv[i].startswith("--home"):
        i += 1 if "=" in argv[i] else 2
    return argv[i : i + 2] == ["hooks", "run"]
