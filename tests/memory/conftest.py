"""Fixtures for Layer 1: a memory folder with the docs/reference.md §12 test limits (memory=500, user=300 chars)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_memory.memory import MemoryStore


@pytest.fixture
def mem_dir(tmp_path: Path) -> Path:
    d = tmp_path / "memories"
    d.mkdir()
    return d


@pytest.fixture
def store(mem_dir: Path) -> MemoryStore:
    s = MemoryStore(mem_dir, memory_char_limit=500, user_char_limit=300)
    s.load_from_disk()
    return s


@pytest.fixture
def big_store(mem_dir: Path) -> MemoryStore:
    """The reference's default limits, 2,200 / 1,375 chars (docs/reference.md §1)."""
    s = MemoryStore(mem_dir)
    s.load_from_disk()
    return s
