"""Building a Honcho provider for the tests (used by test_honcho.py and the contract tests)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_memory.plugins.honcho import (
    HonchoProvider,
)
from tests.plugins.fakes.base import configure, track

KEY = "honcho-test-key"


def make(home: Path, monkeypatch: pytest.MonkeyPatch, url: str, agent_context: str = "primary",
         **settings: object) -> HonchoProvider:
    monkeypatch.setenv("HONCHO_API_KEY", KEY)
    p = HonchoProvider()
    configure(home, "honcho", {"baseUrl": url, "timeout": 0.3, "workspace": "ws1", "peerName": "dana", **settings})
    p.initialize("sess/1", hermes_home=str(home), platform="cli", agent_context=agent_context)
    track(p)
    return p
