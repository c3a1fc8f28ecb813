"""Building a Supermemory provider for the tests (used by test_supermemory.py and the contract tests)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_memory.plugins.supermemory import SupermemoryProvider
from tests.plugins.fakes.base import configure, track

KEY = "sm-test-key"


def make(home: Path, monkeypatch: pytest.MonkeyPatch, url: str, agent_context: str = "primary",
         **settings: object) -> SupermemoryProvider:
    monkeypatch.setenv("SUPERMEMORY_API_KEY", KEY)
    p = SupermemoryProvider()
    configure(home, "supermemory", {"base_url": url, "api_timeout": 0.5, "container_tag": "hermes-{identity}", **settings})
    p.initialize("sess-1", hermes_home=str(home), platform="cli", agent_context=agent_context, agent_identity="ada")
    track(p)
    return p
