"""Building a RetainDB provider for the tests (used by test_retaindb.py and the contract tests)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_memory.plugins.retaindb import RetainDBProvider
from tests.plugins.fakes.base import configure, track

KEY = "rdb-test-key"


def make(home: Path, monkeypatch: pytest.MonkeyPatch, url: str, agent_context: str = "primary",
         session: str = "sess-1") -> RetainDBProvider:
    monkeypatch.setenv("RETAINDB_API_KEY", KEY)
    monkeypatch.setenv("RETAINDB_BASE_URL", url)
    p = RetainDBProvider()
    configure(home, "retaindb", {"project": "proj-x", "timeout": 0.3})
    p.initialize(session, hermes_home=str(home), platform="cli", agent_context=agent_context, user_id="carol")
    track(p)
    return p
