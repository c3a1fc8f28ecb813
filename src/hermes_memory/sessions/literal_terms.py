"""Query words whose symbols the full-text tokenizer drops (``c++``, ``C#``, ``f#``, ``.net``, ``node.js``).

FTS5's ``unicode61`` tokenizer (and PostgreSQL's parser) keep letters and digits only, so ``c++``
and ``C#`` both become the token ``c`` and would find every message with a lone "c". A query word
holding such a symbol is a *literal term*: a hit must contain that literal (case-insensitive, not
inside a longer word), else it is dropped. The full-text search still finds the candidates; this
module only filters them, after the search, on both engines (:class:`LiteralTermSearch` is mixed
into ``SessionDB`` and ``PgSessionDB``). Queries without such a word take no extra step.

Literal terms: a word (split on white space, outer quotes, brackets and sentence punctuation
removed) with a letter or digit and one of ``+ # & @ $``, or a ``.`` before a letter at its start
(``.net``) or between a letter and another letter or digit (``node.js``, ``asp.net``, ``vue.js``).
Dashes, apostrophes and plain numbers (``3.5``) are not: the tokenizer's phrase already matches them.
Nor are words without a letter (``$50``, ``#42``: "50 dollars" and "issue 42" should still match) or
abbreviations of single letters (``U.S.``, ``e.g.``, ``a.m.``: text writes them as ``US``, ``eg``, ``am`` too).

When a query has literal terms, a message (or a title) is kept when it contains at least one of
them: the point of typing ``c++`` is the language, not the letter. The planner may leave a
one-letter token out beside other words (``c`` in "what did we write in c++"); a page left short
is then filled by a search for the literal terms alone (ranked after the whole query's hits). ``query_syntax`` operators are
words like any other here (``NOT c++`` keeps rows containing ``c++`` out only through the search).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from hermes_memory.sessions.fts import like_escape

OVERFETCH = 4
"""A query with literal terms asks the search for this many times the rows it returns (at least
:data:`MIN_FETCH`, at most :data:`MAX_FETCH`), since the filter drops some; ours, not the reference's."""
MIN_FETCH, MAX_FETCH = 200, 2000

_STRIP = "\"'`“”‘’()[]{}<>,;:!?"
_SYMBOL = re.compile(r"[+#&@$]")
_DOTTED = re.compile(r"(?:^\.[^\W\d_])|(?:[^\W\d_]\.[^\W_])|(?:[^\W_]\.[^\W\d_])")
_ALNUM = re.compile(r"[^\W_]")
_LETTER = re.compile(r"[^\W\d_]")
_INITIALS = re.compile(r"(?:[^\W\d_]\.)+[^\W\d_]?\.?")


def literal_terms(query: str | None) -> list[str]:
    """The literal terms of ``query`` in order, each once (case kept); ``[]`` for most queries.

    >>> literal_terms("C# vs c++ on .NET, node.js or plain c")
    ['C#', 'c++', '.NET', 'node.js']
    """
    if not query or not isinstance(query, str):
        return []
    out: list[str] = []
    for raw in query.split():
        word = raw.strip(_STRIP)
        if word.endswith(".") and not word.startswith("."):
            word = word.rstrip(".")  # a sentence's full stop, not part of the word
        if not _LETTER.search(word) or _INITIALS.fullmatch(raw.strip(_STRIP)):
            continue
        if (_SYMBOL.search(word) or _DOTTED.search(word)) and word.casefold() not in (t.casefold() for t in out):
            out.append(word)
    return out


@functools.lru_cache(maxsize=256)
def _pattern(terms: tuple[str, ...]) -> re.Pattern[str]:
    parts = []
    for t in terms:
        head = r"(?<![^\W_])" if _ALNUM.match(t[0]) else ""
        tail = r"(?![^\W_])" if _ALNUM.match(t[-1]) else ""
        parts.append(head + re.escape(t) + tail)
    return re.compile("|".join(parts), re.IGNORECASE)


def contains_literal(text: Any, terms: list[str] | tuple[str, ...]) -> bool:
    """True when ``text`` (a string, or anything with a ``str()``) holds one of ``terms`` as typed,
    ignoring case, and not inside a longer word (``c#`` is not found in ``abc#``, ``.net`` not in
    ``.network``). ``True`` when ``terms`` is empty."""
    if not terms:
        return True
    if text is None:
        return False
    return _pattern(tuple(terms)).search(text if isinstance(text, str) else str(text)) is not None


class LiteralTermSearch:
    """Mixin for the session stores: ``search_messages`` and ``search_titles`` drop hits that lack
    every literal term of the query (see the module docstring). Must come before the classes that
    implement the searches in the MRO; uses the store's ``_read(sql, params)``."""

    def search_messages(self, query: str, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        terms = literal_terms(query)
        inner = super().search_messages  # type: ignore[misc]
        if not terms or args:  # positional filters: the callers pass keywords; leave such calls as they are
            return inner(query, *args, **kwargs)
        limit = max(int(kwargs.pop("limit", 20)), 0)
        offset = max(int(kwargs.pop("offset", 0)), 0)
        want = offset + limit
        fetch = min(max(want * OVERFETCH, MIN_FETCH), MAX_FETCH)
        kept = self._holding(inner(query, limit=fetch, offset=0, **kwargs), terms)
        if len(kept) < want and " ".join(terms) != query.strip():
            # The planner may drop a one-letter token (``c`` of ``c++``) beside other words: the literal
            # terms alone find the rest, after the hits of the whole query.
            seen = {r["id"] for r in kept}
            extra = self._holding(inner(" ".join(terms), limit=fetch, offset=0, **kwargs), terms)
            kept += [r for r in extra if r["id"] not in seen]
            sort = kwargs.get("sort")
            if sort in ("newest", "oldest"):
                kept.sort(key=lambda r: (r.get("timestamp") or 0.0, r["id"]), reverse=sort == "newest")
        return kept[offset:want]

    def _holding(self, rows: list[dict[str, Any]], terms: list[str]) -> list[dict[str, Any]]:
        texts = self._message_texts([r["id"] for r in rows])
        return [r for r in rows if contains_literal(texts.get(int(r["id"]), ""), terms)]

    def search_titles(self, query: str, limit: int = 10, query_syntax: bool = False) -> list[dict[str, Any]]:
        hits = super().search_titles(query, limit, query_syntax)  # type: ignore[misc]
        terms = literal_terms(query)
        if not terms:
            return hits
        hits = [h for h in hits if contains_literal(h.get("title") or "", terms)]
        if len(hits) < limit:  # the title search skips one-letter words: "C# port" is found by its literal
            seen = {h["id"] for h in hits}
            for term in terms:
                rows = self._read(  # type: ignore[attr-defined]
                    "SELECT id, title FROM sessions WHERE title IS NOT NULL AND lower(title) LIKE ? ESCAPE '\\' "
                    "ORDER BY started_at DESC LIMIT ?", ("%" + like_escape(term.lower()) + "%", 4 * limit))
                for r in rows:
                    if r["id"] in seen or not contains_literal(r["title"], terms) or len(hits) >= limit:
                        continue
                    session = self.get_session(r["id"])  # type: ignore[attr-defined]
                    if session is not None:
                        seen.add(r["id"])
                        wanted = query.strip().strip("`'\"").strip().casefold()
                        hits.append({**session, "title_match": "exact" if r["title"].casefold() == wanted else "terms"})
        return hits

    def _message_texts(self, ids: list[int]) -> dict[int, str]:
        """``id -> content + tool calls`` of the given messages (what the full-text index holds)."""
        out: dict[int, str] = {}
        for start in range(0, len(ids), 500):
            chunk = [int(i) for i in ids[start:start + 500]]
            if not chunk:
                continue
            marks = ",".join("?" * len(chunk))
            for r in self._read(  # type: ignore[attr-defined]
                    f"SELECT id, content, tool_calls FROM messages WHERE id IN ({marks})", tuple(chunk)):
                out[int(r["id"])] = f"{r['content'] or ''}\n{r['tool_calls'] or ''}"
        return out
