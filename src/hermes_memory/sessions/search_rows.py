"""The shape of one search result: its row, its snippet, its context; and the last step of the
search pipeline before the page is shaped, the literal-term post-filter (both engines).

Pure functions over rows already read (``sqlite3.Row``, a psycopg row, or anything indexable by
column name); nothing here runs a statement (:func:`literal_page` reads texts it lacks through the
engine's reader).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hermes_memory.sessions import fts as fts_mod
from hermes_memory.sessions import literal_terms as literal_mod
from hermes_memory.sessions.codec import decode_content, readable_json

Texts = dict[int, tuple[Any, Any, Any]]
"""id -> ``(content, tool_name, tool_calls)`` of messages, as stored (content not decoded)."""

CONTEXT_CHARS = 200
"""Characters of the previous/next message shown as search ``context`` (reference)."""


def time_sort(ids: list[int], timestamps: dict[int, float], order_kind: str) -> None:
    """Sort ``ids`` in place by message time: ``"newest"`` first or else oldest first, ties by id."""
    if order_kind == "newest":
        ids.sort(key=lambda i: (-timestamps[i], -i))
    else:
        ids.sort(key=lambda i: (timestamps[i], i))


def message_snippet(highlighter: fts_mod.Highlighter, r: Any) -> str:
    """The ``>>>match<<<`` snippet of one message row (``content``, ``tool_name``, ``tool_calls``
    by name): its content, else its tool name and tool-call text where the match is."""
    text = decode_content(r["content"])
    if not isinstance(text, str):
        text = json.dumps(text, ensure_ascii=False) if text is not None else ""
    text = readable_json(text)
    if r["tool_name"] and (not text or not highlighter.matches(text)):
        text = f"[{r['tool_name']}] {text}".strip()
    if not highlighter.matches(text) and r["tool_calls"]:
        text = f"{text} {readable_json(r['tool_calls'])}".strip()
    return highlighter.snippet(text)


def result_row(i: int, r: Any, snippet: str | None, rank: float | None, context: list[dict[str, Any]]) -> dict[str, Any]:
    """One :meth:`MessageSearchMethods.search_messages` result from a joined message/session row."""
    return {
        "id": i,
        "session_id": r["session_id"],
        "role": r["role"],
        "snippet": snippet,
        "timestamp": r["timestamp"],
        "tool_name": r["tool_name"],
        "source": r["source"],
        "model": r["model"],
        "title": r["title"],
        "user_id": r["user_id"],
        "session_started": r["session_started"],
        "rank": rank,
        "context": context,
    }


def context_row(row_id: int, role: str, content: str | None) -> dict[str, Any]:
    """One message of a result's ``context``: content decoded and cut to :data:`CONTEXT_CHARS`."""
    text = decode_content(content)
    if not isinstance(text, str):
        text = json.dumps(text, ensure_ascii=False) if text is not None else ""
    return {"id": int(row_id), "role": role, "content": text[:CONTEXT_CHARS]}




@dataclass
class Ranked:
    """One search's result ids before paging, and what the search read on the way.

    ``ids``: message ids in result order (relevance or time); ``hits``: id -> rank of the
    full-text hits (lower is better; rows found only by the CJK lookups have none); ``plan``: the
    query plan (its terms highlight the snippets); ``rows``: id -> row of the filter check
    (:data:`hermes_memory.sessions.search_head.KEEP_COLUMNS`, SQLite); ``texts``: the
    :data:`Texts` of the rows whose text was read; ``times``: id -> timestamp (epoch s) of every
    id under a time sort, else empty."""

    ids: list[int]
    hits: dict[int, float]
    plan: fts_mod.QueryPlan
    rows: dict[int, Any] = field(default_factory=dict)
    texts: Texts = field(default_factory=dict)
    times: dict[int, float] = field(default_factory=dict)


def literal_text(text: tuple[Any, Any, Any]) -> str:
    """What the literal-term check reads of a message: its content and tool calls (as stored)."""
    return f"{text[0] or ''}\n{text[2] or ''}"


def literal_page(rank: Callable[[str, int], Ranked | None], read: Callable[[list[int]], Texts], query: str,
                 terms: list[str], offset: int, limit: int, sort: str | None) -> list[tuple[int, Ranked]]:
    """The page ``offset .. offset + limit`` of a search whose query has literal terms
    (:func:`hermes_memory.sessions.literal_terms.literal_terms`): ``(id, the search that found it)``.

    ``rank(query, n)`` runs the engine's search for its best ``n`` ids (``None`` for an empty
    plan); ``read(ids)`` returns the :data:`Texts` of messages (unknown ids left out). The search
    asks for :data:`~hermes_memory.sessions.literal_terms.OVERFETCH` times the rows it returns
    (between ``MIN_FETCH`` and ``MAX_FETCH``) and keeps, in order, the rows holding a literal term
    (:func:`hermes_memory.sessions.literal_terms.contains_literal` on :func:`literal_text`); texts
    the search already read are not read again, the others are read in rank order only as far as
    the page needs. A page left short is filled by the search for the literal terms alone (the
    planner may drop a one-letter token such as the ``c`` of ``c++``), after the whole query's
    rows; under ``sort`` ``"newest"``/``"oldest"`` the two are then merged by timestamp."""
    want = offset + limit
    fetch = min(max(want * literal_mod.OVERFETCH, literal_mod.MIN_FETCH), literal_mod.MAX_FETCH)
    first = rank(query, fetch)
    out = [(i, first) for i in _holding(first, read, terms, fetch, want)] if first is not None else []
    alone = " ".join(terms)
    if len(out) < want and alone != query.strip():
        second = rank(alone, fetch)
        if second is not None:
            seen = {i for i, _ in out}
            out += [(i, second) for i in _holding(second, read, terms, fetch, None) if i not in seen]
        if sort in ("newest", "oldest"):
            out.sort(key=lambda e: (e[1].times.get(e[0]) or 0.0, e[0]), reverse=sort == "newest")
    return out[offset:want]


def _holding(ranked: Ranked, read: Callable[[list[int]], Texts], terms: list[str], fetch: int,
             want: int | None) -> list[int]:
    """The first ``fetch`` ids of ``ranked`` that hold a literal term, in order; with ``want``,
    only until ``want`` are found (the texts further down are not read)."""
    ids = ranked.ids[:fetch]
    texts = ranked.texts
    out: list[int] = []
    start, step = 0, max(want or 0, 50)
    while start < len(ids) and (want is None or len(out) < want):
        chunk = ids[start:start + step]
        missing = [i for i in chunk if i not in texts]
        if missing:
            texts.update(read(missing))
        out += [i for i in chunk if i in texts and literal_mod.contains_literal(literal_text(texts[i]), terms)]
        start, step = start + step, 2 * step  # few statements even when most rows lack the literal
    return out
