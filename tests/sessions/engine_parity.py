"""The same rows written to both engines and searched alike, for the SQLite/PostgreSQL parity tests.

A parity test writes a handful of named messages with ``write(db) -> {name: message id}``, searches
each of its queries and compares which named messages each engine finds: :func:`found_by_name` on
one store, :func:`found_on_both` on a fresh SQLite file and the PostgreSQL database at ``pg_url``."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from hermes_memory.sessions.db import SessionDB


def found_by_name(db: Any, ids: dict[str, int], queries: Iterable[str]) -> dict[str, list[str]]:
    """``{query: sorted names of the messages found}`` for each of ``queries`` on ``db``, where
    ``ids`` maps each message's name to its id (as ``write`` returned it). Search errors raise."""
    names = {v: k for k, v in ids.items()}
    return {q: sorted(names[r["id"]] for r in db.search_messages(q, raise_errors=True)) for q in queries}


def found_on_both(pg_url: str, sqlite_path: Path, write: Callable[[Any], dict[str, int]],
                  queries: Iterable[str]) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """``write`` into a new SQLite store at ``sqlite_path`` and into the PostgreSQL database at
    ``pg_url``, then :func:`found_by_name` on each: ``(sqlite's, postgres's)``. Both stores are closed."""
    from hermes_memory.sessions.pg import PgSessionDB

    queries = list(queries)
    lite = SessionDB(sqlite_path)
    pg = PgSessionDB(pg_url)
    try:
        return found_by_name(lite, write(lite), queries), found_by_name(pg, write(pg), queries)
    finally:
        lite.close()
        pg.close()
