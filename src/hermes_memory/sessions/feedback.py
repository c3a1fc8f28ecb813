"""Pseudo-relevance feedback for relevance search: the names in the best hits search again.

Why: a question that needs several turns ("Do Jon and Gina start businesses out of what they
love?") finds the turn that shares its words ("I'm starting a dance studio 'cause I'm passionate
about dancing") but not the one that shares only a name or a thing *with that turn* ("I'm
passionate about fashion trends ... my love for dance and fashion"). The best few hits name the
entities the question is about ("Becoming Nicole", "Sweden", "Rome"), so their capitalised words
(:func:`expansion_terms`) are searched too (one more full-text statement of rare words), every
candidate's rank becomes its own plus the expansion's (BM25 is a sum over terms, so this is the
rank of the query with the names added), the rerank orders that second pool, and the two orders
are fused by reciprocal rank (:func:`fuse`): rows high in both rise, rows found only through the
names enter the order, and the first :data:`HEAD` rows of the first order stay first.

This is the classic relevance-feedback loop (Rocchio, 1971; RM3, Lavrenko and Croft, SIGIR
2001), restricted to capitalised words: whole-vocabulary expansion moved more rows but pushed
the page into one session (figures: docs/benchmarks.md "Reading the figures", issue 15 relevance
feedback). Everything here is pure but :func:`expand`, which runs on either engine through the
callables it is given. Constants are read at call time, so ``bench/locomo_recall.py --set`` can
try a value on both LoCoMo splits.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence

from hermes_memory.sessions import ranking
from hermes_memory.sessions.fts import STOPWORDS, QueryPlan
from hermes_memory.sessions.signals import RankSignals
from hermes_memory.sessions.speakers import TAG_CHARS

FEEDBACK = True
"""Run the feedback pass on plain relevance questions (``plan.context``: two or more
informative words, no query syntax). False: search exactly as before."""
WITH_EMBEDDINGS = False
"""Run the feedback pass when semantic fusion is on too. Off: on LoCoMo conversations 0-2 with
embeddings (fusion weight 0.15) it gained any@1 47.8 -> 48.6 % and any@5 76.8 -> 77.5 % but lost a
multi-hop question (all@10 29.7 -> 28.4 %) and session@10 96.3 -> 95.6 %, any@10 85.6 % unchanged:
the cosine order already brings related turns."""
FEEDBACK_ROWS = 3
"""Best rows of the first order whose capitalised words are read. Tuned on LoCoMo conversations
0-2 (bench/locomo_recall.py, categories 1-4, lexical; 3 / 5 tried): docs/benchmarks.md."""
FEEDBACK_TERMS = 5
"""Most expansion words searched (the highest summed IDF over :data:`FEEDBACK_ROWS`; 5 / 10 tried)."""
FEEDBACK_WEIGHT = 0.3
"""Weight of the second order in the reciprocal-rank fusion (first order 1.0; 0.3 / 0.5 tried)."""
FEEDBACK_K = 60.0
"""Reciprocal-rank fusion constant (Cormack et al., SIGIR 2009)."""
HEAD = 1
"""The first this-many rows of the first order stay first (the best single match is not moved)."""
FEEDBACK_POOL = 300
"""Most rows the expansion statement returns (best first; the rerank pool,
:data:`hermes_memory.sessions.ranking.RERANK_POOL`, or fewer)."""
FEEDBACK_NEW = 30
"""Most rows found only by the expansion that join the second order (its best ones). A row of the
second order alone scores at most ``FEEDBACK_WEIGHT / (FEEDBACK_K + 1)`` in :func:`fuse`, below
every row of the first 150 of the first order, so deeper ones only cost a session lookup each
(at 1M messages about 5 ms for 300 rows)."""
MIN_CHARS = 3
"""Shortest expansion word."""
FEEDBACK_BUDGET = 1_000
"""Most index postings the expansion statement may read (the summed document frequencies of its
words; a word that would pass it is skipped). Lower than the first statement's
:data:`hermes_memory.sessions.ranking.POSTINGS_BUDGET`: at 1M messages of natural English the
pass at 2,500 postings took session_search's CPU p95 1.33x the search without it, at 1,000
1.09x (bench/search_ab.py, interleaved, one run each). On LoCoMo conversations 0-2 (tuning) the
bound gained a multi-hop question (all@10 27.0 -> 28.4 %) and cost any@5 77.5 -> 77.0 %; figures
in docs/benchmarks.md, "Reading the figures", issue 15 relevance feedback."""

_WORD = re.compile(r"[^\W\d_][^\W_]*")


def active(semantic: bool) -> bool:
    """Whether a relevance search runs the feedback pass (:data:`FEEDBACK`; with semantic fusion
    on, ``semantic``, only with :data:`WITH_EMBEDDINGS`)."""
    return bool(FEEDBACK and (WITH_EMBEDDINGS or not semantic))


def body(text: str) -> str:
    """``text`` without its leading ``Name:`` speaker tag (the tag names who spoke, not what about)."""
    colon = text.find(": ", 0, TAG_CHARS + 1)
    if 0 < colon and all(w[:1].isupper() for w in text[:colon].split()):
        return text[colon + 2:]
    return text


def capitalised(texts: Sequence[object]) -> list[list[str]]:
    """Per text, its distinct capitalised words, lower-cased, in order: at least :data:`MIN_CHARS`
    letters, not a stopword; the speaker tag is left out (:func:`body`); a non-string gives none."""
    out = []
    for t in texts:
        seen: dict[str, None] = {}
        for w in _WORD.findall(body(t) if isinstance(t, str) else ""):
            lw = w.lower()
            if w[0].isupper() and len(lw) >= MIN_CHARS and lw not in STOPWORDS:
                seen.setdefault(lw, None)
        out.append(list(seen))
    return out


def candidate_words(words: Sequence[Sequence[str]], query_stems: set[str],
                    stems: Mapping[str, str | None]) -> list[list[str]]:
    """``words`` (per row, :func:`capitalised`) without the query's own words, compared by the
    index's stem (``stems``: word -> porter stem or ``None``; a word without one is left out)."""
    return [[w for w in row if stems.get(w) is not None and stems[w] not in query_stems and w not in query_stems]
            for row in words]


def expansion_terms(words: Sequence[Sequence[str]], dfs: Mapping[str, int], n_rows: int,
                    limit: int | None = None, budget: int | None = None) -> list[str]:
    """The expansion words: each word of ``words`` (per feedback row, :func:`candidate_words`)
    scored by its BM25 IDF (``ln((N - n + 0.5) / (n + 0.5))`` as FTS5's bm25, ``dfs``: word ->
    rows holding it, of ``n_rows``) summed over the rows holding it; the ``limit`` (default
    :data:`FEEDBACK_TERMS`) best with a positive score that the index holds (df > 0), best first,
    ties in order of appearance, taken while their document frequencies together stay within
    ``budget`` rows (default :data:`FEEDBACK_BUDGET`, below the first statement's
    :data:`hermes_memory.sessions.ranking.POSTINGS_BUDGET`; a word over it is skipped)."""
    limit = FEEDBACK_TERMS if limit is None else limit
    budget = FEEDBACK_BUDGET if budget is None else budget
    score: dict[str, float] = {}
    for row in words:
        for w in row:
            df = dfs.get(w, 0)
            if df <= 0:
                continue
            idf = math.log((n_rows - df + 0.5) / (df + 0.5)) if n_rows > df else 0.0
            if idf > 0:
                score[w] = score.get(w, 0.0) + idf
    out: list[str] = []
    total = 0
    for w in sorted(score, key=lambda w: -score[w]):
        if len(out) >= limit:
            break
        if total + dfs[w] <= budget:
            out.append(w)
            total += dfs[w]
    return out


def fuse(first: Sequence[int], second: Sequence[int], *, weight: float | None = None, k: float | None = None,
         head: int | None = None) -> list[int]:
    """One order from two (ids, best first): weighted reciprocal-rank fusion, ``1 / (k + r)`` for
    rank ``r`` of ``first`` plus ``weight / (k + s)`` for rank ``s`` of ``second``
    (:data:`FEEDBACK_WEIGHT`, :data:`FEEDBACK_K`), ties in ``first``'s order then ``second``'s; the
    first ``head`` (:data:`HEAD`) ids of ``first`` stay first. Every id of either list appears once."""
    w = FEEDBACK_WEIGHT if weight is None else float(weight)
    rk = FEEDBACK_K if k is None else float(k)
    h = HEAD if head is None else int(head)
    score: dict[int, float] = {}
    seen: dict[int, int] = {}
    for r, i in enumerate(first, start=1):
        score[i] = score.get(i, 0.0) + 1.0 / (rk + r)
        seen.setdefault(i, r)
    off = len(first) + 1
    for s, i in enumerate(second, start=1):
        score[i] = score.get(i, 0.0) + w / (rk + s)
        seen.setdefault(i, off + s)
    fixed = list(dict.fromkeys(first))[: max(0, h)]
    keep = set(fixed)
    return fixed + sorted((i for i in score if i not in keep), key=lambda i: (-score[i], seen[i]))


def query_words(plan: QueryPlan) -> list[str]:
    """The words of a relevance query's plan (every piece of its OR terms), lower-cased: what
    :func:`expand` keeps out of the expansion, on either engine."""
    return [p.lower() for t in plan.or_terms for p in t.pieces]


def expand(
    order: list[int],
    hits: Mapping[int, float],
    sessions: Mapping[int, str],
    rank_signals: RankSignals | None,
    query_words: Sequence[str],
    *,
    texts: Callable[[list[int]], dict[int, str]],
    stems: Callable[[list[str]], Mapping[str, str | None]],
    doc_freqs: Callable[[list[str]], tuple[dict[str, int], int]],
    search: Callable[[list[str]], dict[int, float]],
    sessions_of: Callable[[list[int]], dict[int, str]],
) -> tuple[list[int], list[str]]:
    """The feedback pass over one relevance search; returns ``(order, expansion words)``, the
    order unchanged (and no words) when there is nothing to expand with.

    ``order``: the first order (ids, best first); ``hits``: candidate id -> BM25 rank (negative,
    lower is better); ``sessions``: candidate id -> session id; ``rank_signals``: the first pass's
    signals (reused: rows found only by the expansion get no question/answer share);
    ``query_words``: the query's words, lower-cased (:func:`query_words`; they and their stems are
    never expansion words). Engine callables: ``texts(ids)`` -> id ->
    text of those rows; ``stems(words)`` -> word -> the index's stem; ``doc_freqs(words)`` -> (word -> rows
    holding it, rows in the index); ``search(words)`` -> id -> rank of the rows matching any of
    ``words`` under the search's filters (at most the rerank pool); ``sessions_of(ids)`` -> id ->
    session id. Their database errors propagate."""
    if not FEEDBACK or len(order) < 2 or FEEDBACK_ROWS <= 0 or FEEDBACK_TERMS <= 0:
        return order, []
    best = list(order[:FEEDBACK_ROWS])
    got = texts(best)
    raw = capitalised([got.get(i, "") for i in best])
    every = list(dict.fromkeys(w for row in raw for w in row))
    if not every:
        return order, []
    asked = list(query_words)
    query_stems = set(asked) | {st for st in stems(asked).values() if st}
    words = candidate_words(raw, query_stems, stems(every))
    pool = list(dict.fromkeys(w for row in words for w in row))
    if not pool:
        return order, []
    dfs, n_rows = doc_freqs(pool)
    terms = expansion_terms(words, dfs, n_rows)
    if not terms:
        return order, []
    extra = search(terms)
    if not extra:
        return order, terms
    sess = dict(sessions)
    new = sorted((i for i in extra if i not in sess), key=lambda i: (extra[i], -i))[: max(0, FEEDBACK_NEW)]
    merged = dict(hits)
    for i in new:
        merged[i] = extra[i]
    for i, r in extra.items():
        if i in hits:
            merged[i] += r
    if new:
        sess.update(sessions_of(new))
    second = ranking.rerank(merged, sess, rank_signals)
    return fuse(order, second), terms
