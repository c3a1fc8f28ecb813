"""Building a Mem0 provider for the tests (used by test_mem0.py and the contract tests)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_memory.plugins.mem0 import Mem0Provider
from tests.plugins.fakes.base import configure, track

KEY = "m0-test-key"


def make(home: Path, monkeypatch: pytest.MonkeyPatch, host: str, agent_context: str = "primary",
         **settings: object) -> Mem0Provider:
    monkeypatch.setenv("MEM0_API_KEY", KEY)
    p = Mem0Provider()
    configure(home, "mem0", {"mode": "platform", "host": host, "timeout": 0.3, **settings})
    p.initialize("sess-1", hermes_home=str(home), platform="cli", agent_context=agent_context, user_id="alice")
    track(p)
    return p
