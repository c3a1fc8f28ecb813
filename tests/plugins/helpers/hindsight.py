"""Building a Hindsight provider for the tests (used by test_hindsight.py and the contract tests)."""

from __future__ import annotations

from pathlib import Path

import yaml

from hermes_memory.plugins.hindsight import HindsightProvider


def configure(home: Path, url: str, **more: object) -> None:
    section = {"api_url": url, "timeout": 5, **more}
    (home / "config.yaml").write_text(yaml.safe_dump({"memory": {"provider": "hindsight", "hindsight": section}}))


def make(providers: list[HindsightProvider], home: Path, context: str = "primary", session: str = "s1",
         **kw: object) -> HindsightProvider:
    p = HindsightProvider()
    p.initialize(session, hermes_home=str(home), platform="cli", agent_context=context, **kw)
    providers.append(p)
    return p
