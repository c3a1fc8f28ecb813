"""What the person a question names said, on the first page: a second pass over their own turns
and the last places of the page (pure functions; the SQLite reads are in
:mod:`hermes_memory.sessions.speaker_focus_sql`).

Why: a multi-hop question about a person ("What types of yoga has Maria practiced?", "What did
Melanie paint recently?") needs two or three of *their* turns, often in different sessions. In a
two-person chat the turns that match best are as often the other speaker's ("Woah, Maria, that
sounds cool! I'm doing kickboxing", matched through the previous turn's text and the name), so
the tail of the first page fills with near misses while the named speaker's other turns wait at
rank 11-30. :data:`hermes_memory.sessions.ranking.SPEAKER_WEIGHT` already multiplies a named
speaker's turns; that alone cannot move them past rows matching more words. Two rules, both only
when the query names someone whose ``Name:`` tag starts some candidate
(:mod:`hermes_memory.sessions.speakers`; untagged histories are untouched):

* **The speaker's pass** (lexical search only, :func:`pass_active`): the query's words searched
  in rows' *own* text (not the previous turn's), the rows the named speaker said kept in that BM25
  order, and that order fused into the search's by reciprocal rank at a low weight
  (:func:`fuse_spoken`), the first :data:`SPOKEN_HEAD` rows fixed.
* **The speaker's tail** (lexical and fused order, :func:`spoken_tail`): from place
  :data:`TAIL_START` of the first page on, rows the named speaker said among the next
  :data:`TAIL_DEPTH` come first; the others wait just below the page, in order.

Constants are read at call time, so ``bench/locomo_recall.py --set`` can try a value on both LoCoMo
splits. Figures: docs/benchmarks.md, "Issue 15, the named speaker's turns".
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

from hermes_memory.sessions import feedback, ranking, speakers

Starts = Callable[[list[int]], Iterable[tuple[Any, Any]]]
"""``starts(ids)`` -> ``(id, text)`` of those rows, the text as stored or its first
:data:`hermes_memory.sessions.speakers.TAG_CHARS` + 1 characters (enough for the speaker tag):
what an engine gives :func:`apply_pass` and :func:`apply_tail`."""

SPOKEN_PASS = True
"""Run the speaker's pass on lexical relevance questions that name a speaker. Tuned on LoCoMo
conversations 0-2 (bench/locomo_recall.py, categories 1-4; weight / head 0.1 / 1, 0.1 / 3,
0.1 / 5, 0.2 / 1-5, 0.3 / 1-5, 0.5 / 1-5 tried with the tail on and off): docs/benchmarks.md."""
SPOKEN_WEIGHT = 0.1
"""Weight of the speaker's order in the reciprocal-rank fusion (the search's order 1.0; k is
:data:`hermes_memory.sessions.feedback.FEEDBACK_K`). 0.2 and more cost any@5 and any@10 on
tuning more than they gained multi-hop questions."""
SPOKEN_HEAD = 2
"""The first this-many rows of the search's order stay first (1 / 2 / 3 / 4 / 5 tried on tuning:
head 1 cost any@5 77.0 -> 76.2 %, 3 one multi-hop question)."""
SPOKEN_POOL = 300
"""Most rows the speaker's statement returns, best BM25 first (the rerank pool,
:data:`hermes_memory.sessions.ranking.RERANK_POOL`); the named speaker's among them, in that
order, are the speaker's order (keeping only their best 50 / 100 measured lower on tuning, a pool
of 100 / 500 too)."""
SPOKEN_WITH_EMBEDDINGS = False
"""Run the speaker's pass when semantic fusion is on too. Off: with embeddings it lost any@5
(78.3 -> 77.3 %) and any@10 (86.2 -> 85.1 %) on tuning for one multi-hop question."""
TAIL_START = 6
"""First place (0-based) of the page the speaker's tail reorders: places 0-5 keep their rows, so
any@1 and any@5 cannot move. 5 / 6 / 7 / 8 tried on tuning (docs/benchmarks.md)."""
TAIL_DEPTH = 10
"""Rows after :data:`TAIL_START` looked at for the named speaker's turns (10 / 20 / 40 measured
the same on tuning)."""


def pass_active(semantic: bool) -> bool:
    """Whether a relevance search naming a speaker runs the speaker's pass (:data:`SPOKEN_PASS`;
    with semantic fusion on, ``semantic``, only with :data:`SPOKEN_WITH_EMBEDDINGS`)."""
    return bool(SPOKEN_PASS and (SPOKEN_WITH_EMBEDDINGS or not semantic))


def fuse_spoken(order: Sequence[int], spoken_order: Sequence[int]) -> list[int]:
    """``order`` (ids, best first) fused with ``spoken_order`` (the named speaker's rows by their
    own text's BM25, best first) by weighted reciprocal rank
    (:func:`hermes_memory.sessions.feedback.fuse`, weight :data:`SPOKEN_WEIGHT`, head
    :data:`SPOKEN_HEAD`); ``order`` unchanged when ``spoken_order`` is empty. Every id of either
    list appears once."""
    if not spoken_order:
        return list(order)
    return feedback.fuse(order, spoken_order, weight=SPOKEN_WEIGHT, k=feedback.FEEDBACK_K, head=SPOKEN_HEAD)


def tail_window(order: Sequence[int]) -> list[int]:
    """The ids of ``order`` :func:`spoken_tail` may move (places :data:`TAIL_START` to
    ``TAIL_START + TAIL_DEPTH``), whose speakers it needs to know."""
    start = max(0, TAIL_START)
    return list(order[start:start + max(0, TAIL_DEPTH)])


def spoken_tail(order: Sequence[int], spoken: Collection[int], *, page: int | None = None) -> list[int]:
    """``order`` with the places from :data:`TAIL_START` to the end of the first ``page`` (default
    :data:`hermes_memory.sessions.ranking.PAGE_ROWS`) given first to the rows in ``spoken`` (ids
    the named speaker said) among the :data:`TAIL_DEPTH` rows from that place on, in order; the
    rows passed over come right after the page, in order, then the rest. Unchanged when none of
    those rows is in ``spoken`` or the order is no longer than :data:`TAIL_START`."""
    page = ranking.PAGE_ROWS if page is None else page
    start = max(0, TAIL_START)
    window = tail_window(order)
    if len(order) <= start or page <= start or not any(i in spoken for i in window):
        return list(order)
    out = list(order[:start])
    waiting: list[int] = []
    for i in window:
        if len(out) < page and i in spoken:
            out.append(i)
        else:
            waiting.append(i)
    while len(out) < page and waiting:
        out.append(waiting.pop(0))
    return out + waiting + list(order[start + len(window):])


def apply_tail(order: list[int], names: frozenset[str], starts: Starts) -> list[int]:
    """``order`` after :func:`spoken_tail` for a query whose words ``names``
    (:func:`hermes_memory.sessions.speakers.query_names`) may name a speaker: the speakers of the
    rows of :func:`tail_window` are read through ``starts`` (engine errors propagate)."""
    window = tail_window(order)
    if not names or not window:
        return order
    return spoken_tail(order, speakers.spoken(names, starts(window)))


def apply_pass(order: list[int], names: frozenset[str], search: Callable[[], list[int]],
               starts: Starts) -> list[int]:
    """``order`` fused with the speaker's order (:func:`fuse_spoken`): ``search()`` -> the ids of
    the rows matching the query's words in their own text, best BM25 first (at most
    :data:`SPOKEN_POOL`, under the search's filters); those a speaker in ``names`` said
    (``starts``), in that order, are the speaker's order. Engine errors propagate."""
    if not names:
        return order
    ids = search()
    if not ids:
        return order
    said = speakers.spoken(names, starts(ids))
    return fuse_spoken(order, [i for i in ids if i in said])
