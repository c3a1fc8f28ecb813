"""Tokens per day for the Insights chart, counted on the days a session's replies were written.

``state.db`` keeps token counters per *session* (``input_tokens``, ``cache_read_tokens``,
``output_tokens``: the sums over its API calls), not per message, so a session that runs over
several days cannot be split exactly. Each session's counters are spread over the UTC days of
its assistant messages (one per model reply, so about one per API call), in proportion to how
many were written each day; a session without assistant messages uses all its messages, and one
without messages counts on the day it started. Integer shares are rounded so that a session's
days add up to its counters exactly. The rows come from the session store's public
:meth:`session_tokens_since` / :meth:`message_days_since` (both engines).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, date, datetime, timedelta
from typing import Any

COUNTERS = ("input", "cache_read", "output")


def apportion(total: int, weights: dict[str, int]) -> dict[str, int]:
    """``total`` split over ``weights`` (key -> positive weight) in proportion, as integers that
    add up to ``total`` (largest remainder; ties go to the earlier key in sorted order)."""
    whole = sum(weights.values())
    if whole <= 0 or total == 0:
        return {k: 0 for k in weights}
    exact = {k: total * w / whole for k, w in weights.items()}
    out = {k: int(v) for k, v in exact.items()}
    left = total - sum(out.values())
    for k in sorted(weights, key=lambda k: (-(exact[k] - out[k]), k))[:left]:
        out[k] += 1
    return out


def tokens_per_day(db: Any, first: date, days: int) -> list[dict[str, Any]]:
    """``[{"day": "YYYY-MM-DD", "cached_input", "uncached_input", "output", "sessions"}]`` for the
    ``days`` UTC days from ``first`` (tokens, spread as the module says; ``sessions``: sessions
    started that day). ``input_tokens`` holds all input, so uncached = input - cache reads."""
    since = datetime(first.year, first.month, first.day, tzinfo=UTC).timestamp()
    spread: dict[str, dict[str, tuple[int, int]]] = defaultdict(dict)
    for r in db.message_days_since(since):
        spread[r["session_id"]][r["day"]] = (r["replies"], r["messages"])
    sums: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(COUNTERS, 0))
    started: dict[str, int] = defaultdict(int)
    for s in db.session_tokens_since(since):
        if s["started_in_window"]:
            started[s["day"]] += 1
        by_day = spread.get(s["id"], {})
        weights = {d: replies for d, (replies, _n) in by_day.items() if replies}
        if not weights:
            weights = {d: n for d, (_r, n) in by_day.items() if n}
        if not weights:
            weights = {s["day"]: 1}
        for key in COUNTERS:
            for d, share in apportion(s[key], weights).items():
                sums[d][key] += share
    out = []
    for i in range(days):
        d = (first + timedelta(days=i)).isoformat()
        inp, cached, outp = (sums[d][k] for k in COUNTERS) if d in sums else (0, 0, 0)
        cached = min(cached, inp) if inp else cached
        out.append({"day": d, "cached_input": cached, "uncached_input": max(0, inp - cached),
                    "output": outp, "sessions": started.get(d, 0)})
    return out
