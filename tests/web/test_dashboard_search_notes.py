"""The dashboard's session search says what the ``session_search`` tool's ``note`` says (a query of
common words only searched as typed, a query cut at 2,048 characters), on a real server over HTTP."""

from __future__ import annotations

import html
from typing import Any

import httpx

from hermes_memory.sessions.fts import MAX_QUERY_CHARS


def test_search_page_shows_the_tools_note(dashboard: dict[str, Any]) -> None:
    with httpx.Client(base_url=dashboard["url"], timeout=60) as c:
        stop = html.unescape(c.get("sessions/search", params={"q": "the to with"}).text)
        assert "only common words" in stop, stop[-3000:]
        long = html.unescape(c.get("sessions/search", params={"q": "pgbouncer " + "padding " * 300}).text)
        assert f"only its first {MAX_QUERY_CHARS:,}" in long
        plain = html.unescape(c.get("sessions/search", params={"q": "pgbouncer"}).text)
        assert "only common words" not in plain and "were searched" not in plain and "pgbouncer" in plain
