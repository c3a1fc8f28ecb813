"""A PostgreSQL session database as an earlier release left it, for the upgrade tests.

An upgrade test writes rows at schema ``N`` (the store's migrations cut to the first ``N``), reads
every stored row, opens the database at today's schema and checks that the migration changed no
row. :func:`at_schema` is that cut; :func:`write_at_schema` writes a database inside it;
:func:`stored_rows` reads a table's rows by column name (a migration may drop and re-add a derived
column, which moves it to the end: positions change, names and values must not)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import psycopg
import pytest
from psycopg.rows import dict_row

from hermes_memory.sessions.pg import schema

T = TypeVar("T")


@contextmanager
def at_schema(version: int) -> Iterator[None]:
    """While the body runs, a new :class:`PgSessionDB` migrates only to ``version`` (the
    migrations numbered ``<= version``) and reports ``version`` as the newest; restored on exit."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(schema, "MIGRATIONS", [x for x in schema.MIGRATIONS if x.version <= version])
        m.setattr(schema, "SCHEMA_VERSION", version)
        yield


def write_at_schema(url: str, version: int, write: Callable[[Any], T]) -> T:
    """Open the database at ``url`` at schema ``version`` (:func:`at_schema`), call
    ``write(db)`` and close it; returns what ``write`` returned."""
    from hermes_memory.sessions.pg import PgSessionDB

    with at_schema(version):
        db = PgSessionDB(url)
        try:
            return write(db)
        finally:
            db.close()


def stored_rows(url: str, table: str, derived: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """Every row of ``table`` ordered by ``id``, each a dict of column name to stored value, less
    the ``derived`` columns (generated values a later migration recomputes on purpose)."""
    with psycopg.connect(url, autocommit=True, row_factory=dict_row) as conn:
        rows = conn.execute(f"SELECT * FROM {table} ORDER BY id").fetchall()
    return [{k: v for k, v in r.items() if k not in derived} for r in rows]
