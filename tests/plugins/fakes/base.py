"""The provider fakes' base: :class:`FakeService`, a :class:`~tests.helpers.http.LocalHTTPServer` whose
route handlers take ``(request, params)``, plus the small helpers every provider test uses.

Each fake service subclasses :class:`FakeService`, registers its documented routes with
:meth:`FakeService.add_route` (templates like ``/v1/files/{id}``), and keeps its state in plain dicts. The
request log, fault injection (``fail(status, times=1, path="")``, ``stall(seconds, path="")``), the
start/stop lifecycle and the 422 for a missing field come from the shared server
(``tests/helpers/http.py``). A subclass checks credentials by overriding ``dispatch(request)``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hermes_memory.config import update_config
from tests.helpers.http import LocalHTTPServer, Request

ServiceHandler = Callable[[Request, dict[str, str]], Any]


class FakeService(LocalHTTPServer):
    """A fake provider API: routes whose handlers get ``(request, params)`` (the template's named parts)."""

    def add_route(self, method: str, pattern: str, handler: ServiceHandler) -> None:
        """Like :meth:`LocalHTTPServer.route`, but ``handler`` also gets the template's named parts."""
        self.route(method, pattern, lambda req: handler(req, req.params))


def words(text: str) -> set[str]:
    """Lower-case word set, used by the fakes for substring-free keyword similarity."""
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def overlap(query: str, text: str) -> float:
    """Share of the query's words found in ``text`` (0..1): the fakes' similarity score."""
    q = words(query)
    return len(q & words(text)) / len(q) if q else 0.0


def configure(home: Path, provider: str, values: dict[str, Any]) -> None:
    """Write provider settings where ``memory setup`` puts them: the ``<provider>:`` section of config.yaml."""
    update_config(home / "config.yaml", {f"{provider}.{k}": v for k, v in values.items()})


TRACKED_PROVIDERS: list = []
"""Providers built by the tests' ``make()`` helpers; tests/plugins/conftest.py shuts them down."""


def track(provider):
    """Register ``provider`` for shutdown after the current test; returns it."""
    TRACKED_PROVIDERS.append(provider)
    return provider
