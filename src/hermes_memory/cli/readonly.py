"""Read-only commands never create a home or a database: what they do when there is none.

``sessions list|show|search|export``, ``memory show|export`` and ``status`` only read. Opening the
SQLite session store creates ``state.db`` (and the home folder), so these commands check first:

* the home does not exist (and the storage is the home's own files, not PostgreSQL): they stop with
  exit 1 and say there is no home at PATH and how to start one (``status`` says it and exits 0);
* the home exists but holds no ``state.db`` yet (or a 0-byte one, :meth:`Home.has_state_db`):
  there are no sessions; they answer as for an empty store without creating or writing the file.
"""

from __future__ import annotations

from typing import Any

import typer

from hermes_memory.cli.common import fail, state
from hermes_memory.storage import resolve_storage


def missing_home(ctx: typer.Context) -> str | None:
    """Why there is nothing to read: the message for a home that does not exist while the storage is
    its own files (``None`` when the home exists or the data lives in PostgreSQL)."""
    st = state(ctx)
    if st.home.root.exists():
        return None
    if resolve_storage(st.config, st.home.root).is_postgres:
        return None
    return (f"there is no data home at {st.home.root} (nothing has been stored there yet). Start one with "
            "`hermes-memory chat`, `hermes-memory memory add \"...\"` or `hermes-memory sessions import ...`; "
            "or use an existing home with --home DIR or $HERMES_HOME.")


def require_home(ctx: typer.Context) -> None:
    """Exit 1 with :func:`missing_home`'s message when there is no home to read."""
    why = missing_home(ctx)
    if why is not None:
        fail(why)


def open_existing_db(ctx: typer.Context) -> Any | None:
    """The home's session store opened for reading, or ``None`` when it has no ``state.db`` yet
    (nothing is created). Exits 1 when the home itself does not exist (:func:`require_home`)."""
    from hermes_memory.sessions.factory import open_session_db

    require_home(ctx)
    st = state(ctx)
    if not resolve_storage(st.config, st.home.root).is_postgres and not st.home.has_state_db():
        return None
    return open_session_db(st.home, st.config, reading=True)
