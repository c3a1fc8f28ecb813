"""Fixtures for SessionDB tests, on both engines.

* ``db``: a session store, once on a real SQLite file and once on a real PostgreSQL database
  (``pg_url`` of tests/conftest.py: a fresh database per test). A test that takes ``db`` (or
  ``make_db``/``backend``) runs on both, unless its module sets ``BACKENDS = ("sqlite",)`` or it
  is marked ``@pytest.mark.backends("sqlite")`` (search, until PostgreSQL search lands).
* ``make_db(**kw)``: another store object on the SAME database as ``db`` (a second process's
  view, a reopen); ``timeout``/``write_retries`` go to both engines. Every object it opens is closed
  at the end of the test.
* ``sqlite_db``: a SQLite-only store, for tests of SQLite's own machinery (WAL, PRAGMAs, FTS5
  objects, file modes); those tests say so in their names or docstrings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.sessions.db import SessionDB

ALL_BACKENDS = ("sqlite", "postgres")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "backends(*names): run this test's `db` on these engines only")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        marker = metafunc.definition.get_closest_marker("backends")
        names = marker.args if marker else getattr(metafunc.module, "BACKENDS", ALL_BACKENDS)
        metafunc.parametrize("backend", names)


@pytest.fixture
def make_db(request: pytest.FixtureRequest, tmp_path: Path, backend: str) -> Iterator[Callable[..., Any]]:
    opened: list[Any] = []
    target: dict[str, str] = {}

    def make(**kw: Any) -> Any:
        if backend == "sqlite":
            d: Any = SessionDB(tmp_path / "state.db", **kw)
        else:
            from hermes_memory.sessions.pg import PgSessionDB

            if "url" not in target:
                target["url"] = request.getfixturevalue("pg_url")
            d = PgSessionDB(target["url"], **kw)
        opened.append(d)
        return d

    yield make
    for d in opened:
        d.close()


@pytest.fixture
def db(make_db: Callable[..., Any]) -> Any:
    return make_db()


@pytest.fixture
def sqlite_db(tmp_path: Path) -> Iterator[SessionDB]:
    d = SessionDB(tmp_path / "state.db")
    yield d
    d.close()
