"""Building a ByteRover provider for the tests (used by test_byterover.py and the contract tests)."""

from __future__ import annotations

from pathlib import Path

from hermes_memory.plugins.byterover import ByteRoverProvider

FAKE = Path(__file__).parent.parent / "fakes" / "brv.py"


def make(home: Path, context: str = "primary", session: str = "s1") -> ByteRoverProvider:
    p = ByteRoverProvider()
    p.initialize(session, hermes_home=str(home), platform="cli", agent_context=context)
    return p
