"""Ctrl-C in tests that does not depend on how the suite was started.

A shell that starts a command in the background (``pytest ... &``, ``nohup``, many CI runners) ignores
SIGINT in it, and an ignored signal stays ignored across ``exec``: Python then installs no
``KeyboardInterrupt`` handler, so a child process the test interrupts never sees Ctrl-C, and neither
does the test process itself. The tests that press Ctrl-C set the disposition they need:

* :func:`with_default_sigint` prefixes a child's argv with a launcher that restores SIGINT's default
  disposition and then ``exec``\\ s the command (so a Python child installs its ``KeyboardInterrupt``
  handler as in a terminal). A launcher rather than ``preexec_fn``: the tests run local HTTP servers in
  threads, and ``preexec_fn`` is not safe in a process with threads.
* :func:`sigint_raises_keyboard_interrupt` makes SIGINT raise ``KeyboardInterrupt`` in this process's
  main thread for the duration of a ``with`` block, then puts the previous handler back.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

_LAUNCHER = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
             "os.execvp(sys.argv[1], sys.argv[1:])")


def with_default_sigint(argv: Sequence[str]) -> list[str]:
    """``argv`` run with SIGINT at its default disposition, whatever this process's disposition is."""
    return [sys.executable, "-c", _LAUNCHER, *argv]


@contextmanager
def sigint_raises_keyboard_interrupt() -> Iterator[None]:
    """Within the block, SIGINT to this process raises ``KeyboardInterrupt`` in the main thread."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
