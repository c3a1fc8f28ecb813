"""Building a OpenViking provider for the tests (used by test_openviking.py and the contract tests)."""

from __future__ import annotations

from pathlib import Path

import yaml

from hermes_memory.plugins.openviking import OpenVikingProvider

ENV = ("OPENVIKING_URL", "OPENVIKING_ENDPOINT", "OPENVIKING_API_KEY", "OPENVIKING_ACCOUNT", "OPENVIKING_USER",
       "OPENVIKING_AGENT", "OPENVIKING_ACTOR_PEER_ID")


def configure(home: Path, url: str, **more: object) -> None:
    section = {"endpoint": url, "timeout": 5, **more}
    (home / "config.yaml").write_text(yaml.safe_dump({"memory": {"provider": "openviking", "openviking": section}}))


def make(home: Path, context: str = "primary", session: str = "s1", **kw: object) -> OpenVikingProvider:
    p = OpenVikingProvider()
    p.initialize(session, hermes_home=str(home), platform="cli", agent_context=context, **kw)
    return p
