"""Fixtures for SessionDB tests: a real SQLite file per test."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_memory.sessions.db import SessionDB


@pytest.fixture
def db(tmp_path: Path):
    d = SessionDB(tmp_path / "state.db")
    yield d
    d.close()
