"""Evidence beyond BM25 that the rerank of message search uses: dates named in the query and
question turns whose answer is the next turn (pure parsing, plus one small read per engine).

* **Dates.** "What did Maria donate in December 2023?", "on 3 June, 2023", "camping in June":
  :func:`date_hint` reads the days, months and years a query names (English month names, day
  before or after the month, optional year; a bare month matches that month of any year). Rows
  of sessions that *started* in such a window, or up to :data:`DATE_SLACK_DAYS` after it (people
  tell of an event after it happened: "last week I went camping"), get a bonus in
  :func:`hermes_memory.sessions.ranking.rerank`.
* **Question turns.** A turn that asks ("What are their names?") matches the words of a
  question about the same thing, but the answer is in the turn after it ("Luna and Oliver!"),
  which often shares no word with the query. :func:`is_question` tells such turns; the rerank
  moves part of their score to the next turn of the same session (which may not have matched
  at all).

:func:`gather` reads what these need for the best BM25 candidates with one or two statements
that run unchanged on SQLite and PostgreSQL (``?`` or ``%s`` placeholders). Nothing here raises
on any query text.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from hermes_memory.sessions.codec import decode_content

DATE_SLACK_DAYS = 7
"""Days after a named date window in which a session's start still counts as matching it.
Tuned on LoCoMo conversations 0-2 (bench/locomo_recall.py, categories 1-4; 7 / 14 tried, at
date weight 0.2 / 0.4 / 0.7 / 1.0): 7 was as good or better at every weight."""
QUESTION_ROWS = 50
"""How many of the best BM25 candidates are checked for being a question (their text is read)."""
ANSWER_LOOKAHEAD = 8
"""A question's answer is the first row after it, within this many message ids, of the same
session that passes the search's role and time filters (tool rows may sit in between)."""

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
_TRAILING_BRACKETS = re.compile(r"(\s*\[[^\]]*\])+\s*$")
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


def is_question(text: Any) -> bool:
    """True when a turn's text ends with a question mark (``?`` or the full-width ``？``),
    ignoring bracketed notes at its end (``[shares a photo: ...]``)."""
    if not isinstance(text, str):
        return False
    return _TRAILING_BRACKETS.sub("", text).rstrip().endswith(("?", "\uff1f"))


@dataclass
class RankSignals:
    """What :func:`hermes_memory.sessions.ranking.rerank` may use beyond BM25 scores:
    ``dates`` named by the query, ``session_start`` (message id -> its session's start, epoch
    s; filled when ``dates`` is set) and ``answers`` (id of a question turn among the
    candidates -> ``(id, session id)`` of the turn that answers it)."""

    dates: DateHint = field(default_factory=DateHint)
    session_start: dict[int, float] = field(default_factory=dict)
    answers: dict[int, tuple[int, str]] = field(default_factory=dict)


def gather(conn: Any, query: str, hits: Mapping[int, float], sessions: Mapping[int, str], *,
           roles: Sequence[str] = (), since: float | None = None, until: float | None = None,
           placeholder: str = "?") -> RankSignals:
    """Read the :class:`RankSignals` of one relevance search.

    ``conn``: a SQLite or psycopg connection (``placeholder`` ``"?"`` or ``"%s"``); ``hits``:
    candidate id -> BM25 rank (lower is better); ``sessions``: candidate id -> session id;
    ``roles``/``since``/``until``: the search's message filters, which an answer row must pass
    too (it is in the question's session, so it passes the session filters). Reads the texts of
    the :data:`QUESTION_ROWS` best candidates and, for the questions among them, the next row;
    session starts only when the query names a date. Raises the driver's error."""
    sig = RankSignals(dates=date_hint(query))
    if not hits:
        return sig
    p = placeholder
    if sig.dates:
        sids = sorted(set(sessions.values()))
        if sids:
            start = {r[0]: r[1] for r in conn.execute(
                f"SELECT id, started_at FROM sessions WHERE id IN ({','.join([p] * len(sids))})", sids).fetchall()}
            sig.session_start = {i: float(start[s]) for i, s in sessions.items() if start.get(s) is not None}
    best = sorted(hits, key=lambda i: (hits[i], -i))[:QUESTION_ROWS]
    rows = conn.execute(f"SELECT id, content FROM messages WHERE id IN ({','.join([p] * len(best))})", best).fetchall()
    asks = [int(r[0]) for r in rows if is_question(decode_content(r[1]))]
    if not asks:
        return sig
    cond, params = "", []
    if roles:
        cond += f" AND n.role IN ({','.join([p] * len(roles))})"
        params += list(roles)
    if since is not None:
        cond += f" AND n.timestamp >= {p}"
        params.append(float(since))
    if until is not None:
        cond += f" AND n.timestamp < {p}"
        params.append(float(until))
    sql = (f"SELECT q.id, q.session_id, (SELECT n.id FROM messages n WHERE n.session_id = q.session_id"
           f" AND n.id > q.id AND n.id <= q.id + {int(ANSWER_LOOKAHEAD)}{cond} ORDER BY n.id LIMIT 1)"
           f" FROM messages q WHERE q.id IN ({','.join([p] * len(asks))})")
    for qid, sid, nid in conn.execute(sql, [*params, *asks]).fetchall():
        if nid is not None:
            sig.answers[int(qid)] = (int(nid), sid)
            if sig.dates and int(qid) in sig.session_start:
                sig.session_start[int(nid)] = sig.session_start[int(qid)]
    return sig
