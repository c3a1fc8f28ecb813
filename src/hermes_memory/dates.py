"""Dates a query names ("in August 2023", "on 3 June, 2023", "camping in June", "in 2022"), for
ranking: rows of sessions (and Holographic facts) from those dates rise in search.

Pure text parsing with the standard library only, at the foundation of the package, so that
every search path can use it (the Holographic provider runs without numpy, which
:mod:`hermes_memory.sessions` needs). Nothing here raises on any text.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, datetime

DATE_SLACK_DAYS = 7
"""Days after a named date window in which a session's start still counts as matching it.
Tuned on LoCoMo conversations 0-2 (bench/locomo_recall.py, categories 1-4; 7 / 14 tried, at
date weight 0.2 / 0.4 / 0.7 / 1.0): 7 was as good or better at every weight."""
DATE_WEIGHT = 0.4
"""Share of the best candidate's score added to a result from a named date: rows of sessions
that started then in :func:`hermes_memory.sessions.ranking.rerank`, facts learned then in the
Holographic provider's search. Tuned on LoCoMo conversations 0-2 with session search
(bench/locomo_recall.py, categories 1-4; 0.2 / 0.4 / 0.7 / 1.0 tried, slack 7 days): any@1 36.0
-> 38.4 %, any@10 71.0 -> 72.6 %, session@10 94.5 -> 95.8 % (0.7: any@10 72.8 % but multi-hop
all@10 21.6 -> 20.3 %); validation (3-4) any@1 35.5 -> 36.6 %, any@10 74.3 -> 76.7 %, session@10
93.6 -> 95.5 % (plain BM25 94.4 %)."""

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({abbr.lower(): i for i, abbr in enumerate(calendar.month_abbr) if abbr})
_MONTHS["sept"] = 9
_MONTH_RE = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_DMY = re.compile(rf"\b{_DAY}\s+(?:of\s+)?({_MONTH_RE})\.?,?\s+(\d{{4}})\b", re.IGNORECASE)
_MDY = re.compile(rf"\b({_MONTH_RE})\.?\s+{_DAY},?\s+(\d{{4}})\b", re.IGNORECASE)
_MY = re.compile(rf"\b({_MONTH_RE})\.?,?\s+(?:of\s+)?(\d{{4}})\b", re.IGNORECASE)
# a bare month name must be spelled out ("may" / "mar" are words); "May" counts only capitalised
_FULL_MONTH = re.compile(r"\b(" + "|".join(calendar.month_name[1:]) + r")\b")
_YEAR = re.compile(r"\b(19\d\d|20\d\d)\b")
_DAY_S = 86_400.0


@dataclass(frozen=True)
class DateHint:
    """Dates a query names: ``windows`` are ``(start, end)`` epoch-second intervals (UTC, end
    exclusive) of named days, months and years; ``months`` are month numbers named without a
    year (any year matches)."""

    windows: tuple[tuple[float, float], ...] = ()
    months: tuple[int, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.windows or self.months)

    def matches(self, started: float | None, slack_days: float | None = None) -> bool:
        """True when a session that started at ``started`` (epoch s) falls in a window, or up to
        ``slack_days`` (default :data:`DATE_SLACK_DAYS`) after one."""
        if started is None:
            return False
        slack = (DATE_SLACK_DAYS if slack_days is None else slack_days) * _DAY_S
        if any(lo <= started < hi + slack for lo, hi in self.windows):
            return True
        if not self.months:
            return False
        try:
            year = datetime.fromtimestamp(started, UTC).year
        except (OverflowError, OSError, ValueError):
            return False
        for y in (year - 1, year):  # a window of December may end in the next year
            for m in self.months:
                lo, hi = _month(y, m)
                if lo <= started < hi + slack:
                    return True
        return False


def _epoch(y: int, m: int, d: int) -> float:
    return datetime(y, m, d, tzinfo=UTC).timestamp()


def _month(y: int, m: int) -> tuple[float, float]:
    return _epoch(y, m, 1), _epoch(y + (m == 12), m % 12 + 1, 1)


def date_hint(query: str) -> DateHint:
    """The days (``"3 June, 2023"``, ``"June 3 2023"``), months (``"August 2023"``, or a
    capitalised month name alone: ``"in June"``) and years (``"in 2022"``) ``query`` names.
    Impossible dates and years outside 1900-2099 are ignored. Never raises; an empty hint
    (false) when there is none."""
    if not isinstance(query, str) or not query:
        return DateHint()
    text = query[:2048]
    windows: list[tuple[float, float]] = []
    for rx, order in ((_DMY, "dmy"), (_MDY, "mdy")):
        for m in rx.finditer(text):
            day, month, year = (m.group(1), m.group(2), m.group(3)) if order == "dmy" else \
                (m.group(2), m.group(1), m.group(3))
            try:
                start = _epoch(int(year), _MONTHS[month.lower()], int(day))
            except (ValueError, KeyError, OverflowError):
                continue
            windows.append((start, start + _DAY_S))
        text = rx.sub(" ", text)
    for m in _MY.finditer(text):
        try:
            windows.append(_month(int(m.group(2)), _MONTHS[m.group(1).lower()]))
        except (ValueError, KeyError, OverflowError):
            continue
    text = _MY.sub(" ", text)
    years = [int(y) for y in _YEAR.findall(text)]
    windows += [(_epoch(y, 1, 1), _epoch(y + 1, 1, 1)) for y in years]
    months = () if years else tuple(dict.fromkeys(_MONTHS[m.lower()] for m in _FULL_MONTH.findall(text)))
    return DateHint(tuple(windows), months)


