"""Evidence beyond BM25 that the rerank of message search uses: dates named in the query and
question turns whose answer is the next turn (pure parsing, plus one small read per engine).

* **Dates.** "What did Maria donate in December 2023?", "on 3 June, 2023", "camping in June":
  :func:`hermes_memory.dates.date_hint` reads the days, months and years a query names (English month names, day
  before or after the month, optional year; a bare month matches that month of any year). Rows
  of sessions that *started* in such a window, or up to :data:`DATE_SLACK_DAYS` after it (people
  tell of an event after it happened: "last week I went camping"), get a bonus in
  :func:`hermes_memory.sessions.ranking.rerank`.
* **Question turns.** A turn that asks ("What are their names?") matches the words of a
  question about the same thing, but the answer is in the turn after it ("Luna and Oliver!"),
  which often shares no word with the query. :func:`is_question` tells such turns; the rerank
  moves part of their score to the next turn of the same session (which may not have matched
  at all).
* **Speakers.** A turn that starts with a ``Name:`` tag (imported group chats, LoCoMo) was said
  by that person (:mod:`hermes_memory.sessions.speakers`); when the query names them, the rerank
  gives the turn a bonus (:data:`hermes_memory.sessions.ranking.SPEAKER_WEIGHT`).

:func:`gather` reads what these need for the best BM25 candidates with one or two statements
that run unchanged on SQLite and PostgreSQL (``?`` or ``%s`` placeholders). Nothing here raises
on any query text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hermes_memory.dates import DATE_SLACK_DAYS, DateHint, date_hint
from hermes_memory.sessions import speakers as speakers_mod
from hermes_memory.sessions.codec import decode_content

__all__ = ["DATE_SLACK_DAYS", "DateHint", "RankSignals", "date_hint", "gather", "is_question"]

QUESTION_ROWS = 300
"""How many of the best BM25 candidates are checked for being a question (their text is read):
all of :data:`hermes_memory.sessions.ranking.RERANK_POOL`, so which answers join a result does
not hang on near ties of the score (SQLite's BM25 and PostgreSQL's ts_rank_cd then add the same
rows whenever they find the same candidates). Checking only the best 50 measured the same on
LoCoMo within a question or two (bench/locomo_recall.py)."""
ANSWER_LOOKAHEAD = 8
"""A question's answer is the first row after it, within this many message ids, of the same
session that passes the search's role and time filters (tool rows may sit in between)."""

_TRAILING_BRACKETS = re.compile(r"(\s*\[[^\]]*\])+\s*$")
def is_question(text: Any) -> bool:
    """True when a turn's text ends with a question mark (``?`` or the full-width ``？``),
    ignoring bracketed notes at its end (``[shares a photo: ...]``)."""
    if not isinstance(text, str):
        return False
    text = text.rstrip()
    if text.endswith("]"):  # the regex only when there is a bracketed note to strip (it is the slow part)
        text = _TRAILING_BRACKETS.sub("", text).rstrip()
    return text.endswith(("?", "\uff1f"))


@dataclass
class RankSignals:
    """What :func:`hermes_memory.sessions.ranking.rerank` may use beyond BM25 scores:
    ``dates`` named by the query, ``session_start`` (message id -> its session's start, epoch
    s; filled when ``dates`` is set) and ``answers`` (id of a question turn among the
    candidates -> ``(id, session id)`` of the turn that answers it); ``spoken`` (ids of the
    :data:`QUESTION_ROWS` best candidates whose speaker tag the query names,
    :mod:`hermes_memory.sessions.speakers`)."""

    dates: DateHint = field(default_factory=DateHint)
    session_start: dict[int, float] = field(default_factory=dict)
    answers: dict[int, tuple[int, str]] = field(default_factory=dict)
    spoken: set[int] = field(default_factory=set)


def gather(conn: Any, query: str, hits: Mapping[int, float], sessions: Mapping[int, str], *,
           roles: Sequence[str] = (), since: float | None = None, until: float | None = None,
           placeholder: str = "?", texts: Mapping[int, Any] | None = None) -> RankSignals:
    """Read the :class:`RankSignals` of one relevance search.

    ``conn``: a SQLite or psycopg connection (``placeholder`` ``"?"`` or ``"%s"``); ``hits``:
    candidate id -> BM25 rank (lower is better); ``sessions``: candidate id -> session id;
    ``roles``/``since``/``until``: the search's message filters, which an answer row must pass
    too (it is in the question's session, so it passes the session filters). Reads the texts of
    the :data:`QUESTION_ROWS` best candidates (the start of every one when the query has a word
    that could name a speaker) and, for the questions among them, the next row;
    session starts only when the query names a date (on SQLite the answer lookup reads the
    ``ANSWER_LOOKAHEAD`` rows after each question by rowid: at 1M messages 100 questions cost
    1.6 ms of CPU through the session index, 0.3 ms so). ``texts``: id -> content (as stored) of
    candidates the search already read; their texts are not read again (the same rows are
    judged the same way in Python). Raises the driver's error."""
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
    names = speakers_mod.query_names(query)
    known = [(i, texts[i]) for i in best if i in texts] if texts else []
    unread = [i for i in best if i not in texts] if texts else best
    rows: list[Any] = []
    marks = ",".join([p] * len(unread))
    if names:
        # the start of the rows that may open with a speaker tag and the whole text of the rows
        # holding a question mark (the LIKEs run in the engine): one statement, as without names
        tag = f"substr(content, 1, {int(speakers_mod.TAG_CHARS) + 1})"
        if unread:
            rows = conn.execute(f"SELECT id, CASE WHEN content LIKE {p} OR content LIKE {p} THEN content ELSE {tag} END"
                                f" FROM messages WHERE id IN ({marks}) AND (content LIKE {p} OR content LIKE {p}"
                                f" OR {tag} LIKE {p})", ["%?%", "%\uff1f%", *unread, "%?%", "%\uff1f%", "%: %"]).fetchall()
        # a whole text read before: spoken() looks for the tag in the same first TAG_CHARS + 1 characters
        sig.spoken = speakers_mod.spoken(names, rows) | speakers_mod.spoken(names, known)
    elif unread:  # only rows holding a question mark come back
        rows = conn.execute(f"SELECT id, content FROM messages WHERE id IN ({marks})"
                            f" AND (content LIKE {p} OR content LIKE {p})", [*unread, "%?%", "%\uff1f%"]).fetchall()
    # a row's start (read for its tag) holds no question mark: only whole texts are checked
    asks = [int(r[0]) for r in [*rows, *known] if isinstance(r[1], str) and ("?" in r[1] or "\uff1f" in r[1])
            and is_question(decode_content(r[1]))]
    if not asks:
        return sig
    cond = ""
    params: list[Any] = []
    if roles:
        cond += f" AND n.role IN ({','.join([p] * len(roles))})"
        params += list(roles)
    if since is not None:
        cond += f" AND n.timestamp >= {p}"
        params.append(float(since))
    if until is not None:
        cond += f" AND n.timestamp < {p}"
        params.append(float(until))
    # SQLite (``?``): the unary ``+`` keeps the planner off the session index, which read every row
    # of the question's session and sorted them; the rowid range reads at most ANSWER_LOOKAHEAD rows
    same = "+n.session_id" if p == "?" else "n.session_id"
    sql = (f"SELECT q.id, q.session_id, (SELECT n.id FROM messages n WHERE {same} = q.session_id"
           f" AND n.id > q.id AND n.id <= q.id + {int(ANSWER_LOOKAHEAD)}{cond} ORDER BY n.id LIMIT 1)"
           f" FROM messages q WHERE q.id IN ({','.join([p] * len(asks))})")
    for qid, sid, nid in conn.execute(sql, [*params, *asks]).fetchall():
        if nid is not None:
            sig.answers[int(qid)] = (int(nid), sid)
            if sig.dates and int(qid) in sig.session_start:
                sig.session_start[int(nid)] = sig.session_start[int(qid)]
    return sig
