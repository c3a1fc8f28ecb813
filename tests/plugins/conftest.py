"""Plugin tests: every provider a test builds through ``track()`` is shut down after that test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.plugins.fakes.base import TRACKED_PROVIDERS


@pytest.fixture(autouse=True)
def _shutdown_tracked_providers() -> Iterator[None]:
    yield
    while TRACKED_PROVIDERS:
        TRACKED_PROVIDERS.pop().shutdown()
