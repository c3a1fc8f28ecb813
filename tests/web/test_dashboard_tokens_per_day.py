"""Insights' tokens per day: a session that runs over several days counts on the days its replies
were written (state.db keeps its token counters per session, so they are spread over those days
in proportion to its assistant messages), on SQLite and on PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.config import load_config
from hermes_memory.home import HermesHome
from hermes_memory.mcp.server import MemoryServer
from hermes_memory.web.data import Backend
from hermes_memory.web.tokens import apportion
from tests.sessions.backend_sql import raw_write

TODAY = date(2026, 11, 20)


def _at(d: date, hour: int) -> float:
    return datetime(d.year, d.month, d.day, hour, tzinfo=UTC).timestamp()


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, hermes_home: Path) -> Iterator[Backend]:
    if request.param == "postgres":
        url = request.getfixturevalue("pg_url")
        (hermes_home / "config.yaml").write_text(f"storage:\n  backend: postgres\n  url: {url}\n")
    server = MemoryServer(HermesHome(hermes_home), load_config(hermes_home / "config.yaml"))
    assert server.db.backend == request.param
    try:
        yield Backend(server)
    finally:
        server.close()


def _session(db: Any, started: float, replies: list[float], *, users: Sequence[float] = (), inp: int = 0,
             cached: int = 0, outp: int = 0, ended: float | None = None) -> str:
    sid = db.create_session(source="cli")
    raw_write(db, "UPDATE sessions SET started_at = ? WHERE id = ?", (started, sid))
    for ts in users:
        db.append_message(sid, "user", "a question", timestamp=ts)
    for ts in replies:
        db.append_message(sid, "assistant", "an answer", timestamp=ts)
    db.update_token_counts(sid, input_tokens=inp, cache_read_tokens=cached, output_tokens=outp)
    if ended is not None:
        raw_write(db, "UPDATE sessions SET ended_at = ? WHERE id = ?", (ended, sid))
    return sid


def test_a_session_over_several_days_counts_on_the_days_of_its_replies(backend: Backend) -> None:
    db = backend.db
    d0, d1, d2 = TODAY - timedelta(days=2), TODAY - timedelta(days=1), TODAY
    # started late on d0, one reply that night, three replies on d1
    _session(db, _at(d0, 23), [_at(d0, 23), _at(d1, 9), _at(d1, 10), _at(d1, 11)],
             users=[_at(d0, 23)], inp=4_000, cached=2_000, outp=400, ended=_at(d1, 12))
    # a session with no messages counts on the day it started
    _session(db, _at(d2, 8), [], inp=100, outp=10)
    # started before the window (d0 - 10 days), still open: only its in-window share shows
    old = TODAY - timedelta(days=12)
    _session(db, _at(old, 8), [_at(old, 9), _at(d2, 9)], inp=1_000, outp=100)
    rows = {r["day"]: r for r in backend.insights(days=7, today=TODAY)["tokens_per_day"]}
    assert rows[d0.isoformat()] == {"day": d0.isoformat(), "cached_input": 500, "uncached_input": 500,
                                    "output": 100, "sessions": 1}
    assert rows[d1.isoformat()] == {"day": d1.isoformat(), "cached_input": 1_500, "uncached_input": 1_500,
                                    "output": 300, "sessions": 0}
    assert rows[d2.isoformat()] == {"day": d2.isoformat(), "cached_input": 0, "uncached_input": 100 + 500,
                                    "output": 10 + 50, "sessions": 1}
    assert sum(r["output"] for r in rows.values()) == 400 + 10 + 50  # the old day is outside the window


def test_a_session_with_only_user_messages_is_spread_over_those(backend: Backend) -> None:
    d1, d2 = TODAY - timedelta(days=1), TODAY
    _session(backend.db, _at(d1, 20), [], users=[_at(d1, 20), _at(d2, 8)], inp=11, outp=3)
    rows = {r["day"]: r for r in backend.insights(days=2, today=TODAY)["tokens_per_day"]}
    assert (rows[d1.isoformat()]["uncached_input"], rows[d2.isoformat()]["uncached_input"]) == (6, 5)
    assert rows[d1.isoformat()]["output"] + rows[d2.isoformat()]["output"] == 3


def test_apportioned_shares_add_up_to_the_counter() -> None:
    assert apportion(10, {"a": 1, "b": 1, "c": 1}) == {"a": 4, "b": 3, "c": 3}
    assert apportion(7, {"a": 0, "b": 2}) == {"a": 0, "b": 7}
    assert apportion(0, {"a": 3}) == {"a": 0}
    for total in (1, 99, 12_345):
        assert sum(apportion(total, {"x": 3, "y": 5, "z": 11}).values()) == total
