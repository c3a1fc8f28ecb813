"""Shared fixtures. Every test gets its own HERMES_HOME so nothing touches ~/.hermes."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def hermes_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh data home for each test, exported as $HERMES_HOME."""
    home = tmp_path / "hermes-home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    return home


@pytest.fixture(scope="session")
def pg_server():
    """One real PostgreSQL server for the whole test run (tests/pgserver.py); fails, never skips."""
    from tests.pgserver import PostgresServer

    server = PostgresServer().start()
    yield server
    server.stop()


@pytest.fixture
def pg_url(pg_server) -> str:
    """The DSN of a fresh, empty database on the test run's PostgreSQL server."""
    return pg_server.create_database()
