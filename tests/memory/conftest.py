"""Fixtures for Layer 1: a memory folder with the docs/reference.md §12 test limits (memory=500, user=300 chars).

``store``, ``big_store`` and ``backing`` are parametrised over both entries backends: ``file``
(MEMORY.md / USER.md in ``mem_dir``) and ``postgres`` (rows in a fresh database of the test run's
real PostgreSQL, ``pg_url``). Tests that need the stored form use ``backing`` (``raw`` to prove a
refusal changed nothing, ``seed`` to edit behind the store's back). File-only tests (bytes on disk,
lock files, temp files, symlinks, permissions) take ``file_store`` or build ``MemoryStore(mem_dir)``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_memory.memory import MemoryStore
from tests.memory.backing import Backing, FileBacking, PgBacking

BACKENDS = ["file", "postgres"]


@pytest.fixture
def mem_dir(tmp_path: Path) -> Path:
    d = tmp_path / "memories"
    d.mkdir()
    return d


@pytest.fixture(params=BACKENDS)
def backing(request: pytest.FixtureRequest, mem_dir: Path):
    """Where this test's stores keep their entries: ``mem_dir`` (file) or a fresh database (postgres)."""
    if request.param == "file":
        yield FileBacking(mem_dir)
        return
    b: Backing = PgBacking(request.getfixturevalue("pg_url"))
    try:
        yield b
    finally:
        b.close()


@pytest.fixture
def store(backing: Backing) -> MemoryStore:
    s = backing.new(memory_char_limit=500, user_char_limit=300)
    s.load_from_disk()
    return s


@pytest.fixture
def big_store(backing: Backing) -> MemoryStore:
    """The reference's default limits, 2,200 / 1,375 chars (docs/reference.md §1)."""
    s = backing.new()
    s.load_from_disk()
    return s


@pytest.fixture
def file_store(mem_dir: Path) -> MemoryStore:
    """A file-backend store (memory=500, user=300) for tests about files themselves."""
    s = MemoryStore(mem_dir, memory_char_limit=500, user_char_limit=300)
    s.load_from_disk()
    return s
