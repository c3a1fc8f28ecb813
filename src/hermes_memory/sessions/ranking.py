"""Relevance ranking of message search: term budget, BM25 top-up and the rerank (pure functions).

:class:`hermes_memory.sessions.db.SessionDB` runs the SQL (FTS5 ``bm25`` candidates, document
frequencies, candidate texts) and asks this module what to do with the numbers. Nothing here
touches a database, so every rule is unit-tested on plain dicts (tests/sessions/test_ranking.py).

Scores follow FTS5: a BM25 *rank* is negative, lower is better; :func:`rerank` works on the
positive score ``-rank``. Constants are read at call time, so ``bench/locomo_recall.py --set``
can try a value on both LoCoMo splits without editing code.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from hermes_memory import dates
from hermes_memory.sessions.signals import RankSignals

POSTINGS_BUDGET = 2_500
"""Most index postings (rows matching a term) a relevance search scores. When the terms of a
plain-OR query together match more rows, the most frequent terms are dropped (rarest first
kept; at least one term always stays). Frequent terms carry little BM25 weight (low IDF), so
this bounds latency on large histories at little cost in ranking: the "dynamic stopword" trick.
A page left short by it (rare kept terms, or filters excluding their rows) is filled with the
newest rows of the full query, so no match is lost."""
DROPPED_TERM_ROWS = 300
"""How many of the best BM25 candidates are checked for the frequent terms the posting budget
dropped (each found term adds its IDF): all of :data:`RERANK_POOL`. On natural English at 1M
messages (bench/sessions.py --agreement, 20 questions) checking 100 kept 12.5 % of an uncapped
search's top 10, 300 keeps 21 % (14 % before the window was narrowed), at no CPU cost we could
measure against the noise. LoCoMo never drops a term, so its figures do not move."""
SINGLE_TERM_WINDOW = 2_500
"""When even the rarest query word matches more rows than this, relevance search scores only the
newest part of the history holding about this many of its matches (a recency window), so a
query of common words stays fast. Newest/oldest sorts are not windowed. Scoring costs about 3 us
of CPU per row; on natural English at 1M messages (bench/sessions.py, names in 7-15 % of
messages) 5,000 gave question search a CPU p95 of 38 ms, 2,500 25 ms (with a 32 MiB page cache
17.6 ms); alone it kept 14 % instead of 17 % of an uncapped search's top 10 (12 questions),
which :data:`DROPPED_TERM_ROWS` 300 more than wins back. LoCoMo histories are far smaller than
either value, so its figures do not move."""
RERANK_POOL = 300
"""Relevance search reranks the best this-many BM25 rows (or more when a page needs more).
LoCoMo dev any-evidence recall@10: 73.0 % with 100, 75.1 % with 300 (bench/locomo_recall.py)."""
NEIGHBOUR_WEIGHT = 0.0
"""Share of an adjacent (same-session) candidate's BM25 score added to a row: an answer next to
a matching question rises. 0.3 was tuned on LoCoMo when each turn was indexed alone; since the
index holds each turn with the previous turn's text (layout 3) and :data:`ANSWER_SHARE` credits
the turn after a question, it no longer pays. With both, LoCoMo conversations 0-2
(bench/locomo_recall.py, categories 1-4; 0.3 / 0.15 / 0.0 tried): any@5 74.4 / 74.7 / 75.7 %,
any@10 80.9 / 82.2 / 81.2 %, multi-hop all@10 20.3 / 23.0 / 27.0 %, session@10 96.1 / 96.3 /
95.8 %; 0.0 kept for multi-hop coverage. Validation (3-4), 0.3 -> 0.0: any@5 71.4 -> 74.5 %,
any@10 78.2 -> 79.0 %, multi-hop all@10 17.6 -> 20.6 %, session@10 96.0 -> 95.8 % (plain BM25
94.4 %)."""
SESSION_WEIGHT = 0.3
"""Share of the best score in a row's session added to the row: rows of a session that holds a
strong match rise. The session's *best* row, not the sum of its rows' scores (which favoured
long sessions with many weak matches): tuned on LoCoMo conversations 0-2 (bench/locomo_recall.py,
categories 1-4; sum vs best of 1 / 3 / 6 rows tried), any@10 69.5 -> 71.0 %, session@10 93.7 ->
94.5 %, multi-hop all@10 20.3 -> 21.6 %; validation (3-4) any@5 62.6 -> 65.3 %, any@10 73.5 ->
74.3 %, multi-hop all@10 17.6 -> 22.1 %, session@10 94.2 -> 93.6 %. The weight itself (0.15 /
0.3 / 0.5 / 0.8 tried with the best row) changed tuning figures by under a point; kept."""
BM25_HEAD = 2
"""The first this-many rows are the best by BM25 alone (after :func:`apply_signals`: question
turns' scores moved to their answers, the date bonus); the rerank orders the rest: the
neighbour and session bonuses help a row into the top 10 but push a better single match off
the top. Tuned on LoCoMo conversations 0-2 (bench/locomo_recall.py, categories 1-4): any@1
35.0 -> 36.0 %, any@10 71.3 -> 71.8 % (head 1: 36.0 / 71.5); validation (3-4) any@1 31.3 ->
35.5 %, any@10 76.7 % unchanged (plain BM25: 34.2 / 65.0)."""
PAGE_ROWS = 10
"""Rows of the first page that :data:`NEW_SESSION_SLOTS` diversifies (the bench's cutoff and the
largest ``session_search`` limit)."""
NEW_SESSION_SLOTS = 3
"""Places at the end of the first page given to the best rows of sessions not yet on it: the
session bonus clusters the page in one session, and multi-hop questions need turns from
several. Tuned on LoCoMo conversations 0-2 (with BM25_HEAD 2; 2 / 3 / 5 slots tried): session@10
90.6 -> 93.7 %, multi-hop all@10 14.9 -> 20.3 %, any@10 71.8 -> 69.5 %; validation (3-4)
session@10 91.2 -> 94.2 %, multi-hop all@10 14.7 -> 17.6 %, any@10 76.7 -> 73.5 % (plain BM25
92.7 / 94.4 session@10). A greedy decay of every further row of a session (MMR-like, 0.95-0.6)
cost more any@10 for less session recall and was dropped."""


QUESTION_KEEP = 0.7
"""A candidate turn that asks a question (:func:`hermes_memory.sessions.signals.is_question`)
keeps this share of its score; :data:`ANSWER_SHARE` of it goes to the turn after it."""
ANSWER_SHARE = 0.5
"""Share of a question turn's score given to the next turn of its session (its answer, which
often shares no word with the query and then enters the candidates this way). With
:data:`QUESTION_KEEP`, tuned on LoCoMo conversations 0-2 (bench/locomo_recall.py, categories 1-4,
with the date bonus; keep/share 1.0/0.5, 0.8/0.4, 0.7/0.4, 0.7/0.5, 0.7/0.6, 0.6/0.5, 0.5/0.5,
0.5/0.8, 0.3/0.7 tried, 0.7/0.4-0.6 a plateau; 0.7/0 and 0.5/0, demotion alone, lost any@10).
Measured as built, date bonus on before and after: tuning any@1 38.4 -> 45.4 %, any@5 64.0 ->
70.0 %, any@10 72.6 -> 76.8 %, all@10 63.7 -> 66.8 %, multi-hop all@10 21.6 -> 18.9 %, session@10
95.8 -> 96.6 %; validation (3-4) any@1 36.6 -> 43.0 %, any@5 67.9 -> 70.0 %, any@10 76.7 ->
77.5 %, all@10 62.9 -> 65.0 %, multi-hop all@10 22.1 -> 20.6 %, session@10 95.5 -> 95.8 %."""
SPEAKER_WEIGHT = 0.3
"""A candidate said by a speaker the query names (its text starts with their ``Name:`` tag,
:mod:`hermes_memory.sessions.speakers`; ``signals.spoken``) has its score multiplied by
``1 + SPEAKER_WEIGHT``, before its question/answer share moves: "What has Melanie painted?" wants
what Melanie said, not the turns that thank her. Tuned on LoCoMo conversations 0-2
(bench/locomo_recall.py, categories 1-4, lexical; 0.1 / 0.2 / 0.3 / 0.5 / 0.8 tried): any@10
81.2 -> 82.2 / 82.8 / 82.8 / 83.3 / 82.5 %, all@10 71.5 -> 72.8 / 73.4 / 73.1 / 73.1 / 72.8 %,
multi-hop all@10 27.0 -> 27.0 / 27.0 / 27.0 / 25.7 / 27.0 %, session@10 96.3 -> 96.6 / 96.6 /
96.9 / 97.7 / 97.1 %; 0.3 kept (0.5 lost a multi-hop question). Validation (3-4) with 0.3: see
docs/benchmarks.md."""


def choose_terms(dfs: Sequence[int], budget: int | None = None) -> tuple[list[int], list[int], int]:
    """Which OR terms a relevance search keeps under the posting budget.

    ``dfs[i]`` is term ``i``'s document frequency (rows it matches). Returns ``(kept, dropped,
    postings)``: indices kept (in query order), indices dropped (rarest first), and the postings
    the kept terms match together. Terms are taken rarest first while they fit ``budget``
    (default :data:`POSTINGS_BUDGET`); the rarest term is always kept. Nothing is dropped when
    all terms fit."""
    budget = POSTINGS_BUDGET if budget is None else budget
    if sum(dfs) <= budget:
        return list(range(len(dfs))), [], sum(dfs)
    kept: list[int] = []
    dropped: list[int] = []
    total = 0
    for idx in sorted(range(len(dfs)), key=lambda i: (dfs[i], i)):
        if kept and total + dfs[idx] > budget:
            dropped.append(idx)
            continue
        kept.append(idx)
        total += dfs[idx]
    return sorted(kept), dropped, total


def window_start(max_id: int, postings: int, window: int | None = None) -> int | None:
    """First row id of the recency window, or ``None`` when ``postings`` fit ``window`` (default
    :data:`SINGLE_TERM_WINDOW`): the newest share ``window / postings`` of ids up to ``max_id``."""
    window = SINGLE_TERM_WINDOW if window is None else window
    if postings <= window:
        return None
    return max(0, max_id - int(max_id * window / postings))


def bm25_idf(n_rows: int, df: int) -> float:
    """FTS5's BM25 IDF of a term matching ``df`` of ``n_rows`` rows, ``ln((N - n + 0.5) / (n + 0.5))``,
    floored at 1e-6 as FTS5 does (a term in most rows still counts a little)."""
    return max(1e-6, math.log((n_rows - df + 0.5) / (df + 0.5)))


def apply_signals(hits: Mapping[int, float], sessions: Mapping[int, str],
                  signals: RankSignals | None) -> tuple[dict[int, float], dict[int, str]]:
    """``(hits, sessions)`` with the evidence of ``signals`` folded into the ranks (new dicts;
    the inputs are not changed): each question turn keeps :data:`QUESTION_KEEP` of its score and
    gives :data:`ANSWER_SHARE` of it to its answer (which joins the candidates if it was not one),
    then rows whose session matches the query's dates gain :data:`hermes_memory.dates.DATE_WEIGHT` times the best
    score. Before both, rows said by a speaker the query names (``signals.spoken``) are
    multiplied by ``1 + SPEAKER_WEIGHT``. Ranks stay negative-is-better. Without signals the
    inputs come back as copies."""
    out = dict(hits)
    sess = dict(sessions)
    if signals is None:
        return out, sess
    if SPEAKER_WEIGHT and signals.spoken:
        for i in signals.spoken:
            if i in out:
                out[i] *= 1.0 + SPEAKER_WEIGHT
    own = dict(out)  # each row's own score (speaker bonus included), before any answer share
    for q, (a, sid) in signals.answers.items():
        if q not in hits:
            continue
        s = own[q]
        out[q] = out[q] - s + QUESTION_KEEP * s
        out[a] = out.get(a, 0.0) + ANSWER_SHARE * s
        sess.setdefault(a, sid)
    if signals.dates and signals.session_start and dates.DATE_WEIGHT and out:
        bonus = dates.DATE_WEIGHT * max(-v for v in out.values())
        for i in out:
            if signals.dates.matches(signals.session_start.get(i)):
                out[i] -= bonus
    return out, sess


def rerank(hits: Mapping[int, float], sessions: Mapping[int, str], signals: RankSignals | None = None) -> list[int]:
    """Order BM25 candidates by score plus neighbour, session, question/answer and date evidence.

    ``hits``: message id -> FTS5 rank (negative, lower is better); ``sessions``: message id ->
    session id; ``signals``: what :func:`hermes_memory.sessions.signals.gather` read (question
    turns and their answers, dates named by the query), folded in first by
    :func:`apply_signals` (answer rows may join the result). A row's final score is ``score + NEIGHBOUR_WEIGHT * (scores of candidates at id
    +-1 in the same session) + SESSION_WEIGHT * (best score among the session's candidates)``
    (:data:`NEIGHBOUR_WEIGHT`, :data:`SESSION_WEIGHT`); ties go to the newer (larger) id. The
    :data:`BM25_HEAD` best rows by those signal-adjusted BM25 scores alone then come first, and the last
    :data:`NEW_SESSION_SLOTS` places of the first :data:`PAGE_ROWS` go to rows of sessions not yet
    on that page (:func:`session_slots`). Returns every id once, best first. Fewer than two hits
    (after the signals) come back as given."""
    hits, sessions = apply_signals(hits, sessions, signals)
    if len(hits) < 2:
        return list(hits)
    ids = list(hits)
    sess = {i: sessions.get(i, "") for i in ids}
    score = {i: -hits[i] for i in ids}
    session_best: dict[str, float] = {}
    for i in ids:
        session_best[sess[i]] = max(session_best.get(sess[i], score[i]), score[i])

    def final(i: int) -> float:
        s = sess[i]
        nb = sum(score.get(j, 0.0) for j in (i - 1, i + 1) if sess.get(j) == s)
        return score[i] + NEIGHBOUR_WEIGHT * nb + SESSION_WEIGHT * session_best[s]

    if NEIGHBOUR_WEIGHT:
        order = sorted(ids, key=lambda i: (-final(i), -i))
    else:  # the same order without the neighbour sums (a third of the rerank's time)
        sw = SESSION_WEIGHT
        order = sorted(ids, key=lambda i: (-(score[i] + sw * session_best[sess[i]]), -i))
    if BM25_HEAD > 0:
        head = sorted(ids, key=lambda i: (hits[i], -i))[:BM25_HEAD]
        first = set(head)
        order = head + [i for i in order if i not in first]
    if NEW_SESSION_SLOTS > 0:
        order = session_slots(order, sess, PAGE_ROWS, NEW_SESSION_SLOTS)
    return order


def session_slots(order: Sequence[int], group: Mapping[int, str], page: int, slots: int) -> list[int]:
    """``order`` with its last ``slots`` places of the first ``page`` given to the best rows of
    groups (sessions) not yet on the page, while there are such rows; the rest keeps its order."""
    out = list(order[: max(0, page - slots)])
    rest = list(order[len(out):])
    shown = {group[i] for i in out}
    while len(out) < page and rest:
        pick = next((i for i in rest if group[i] not in shown), rest[0])
        rest.remove(pick)
        out.append(pick)
        shown.add(group[pick])
    return out + rest
