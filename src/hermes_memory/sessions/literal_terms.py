"""Query words whose symbols the full-text tokenizer drops (``c++``, ``C#``, ``f#``, ``.net``, ``node.js``).

FTS5's ``unicode61`` tokenizer (and PostgreSQL's parser) keep letters and digits only, so ``c++``
and ``C#`` both become the token ``c`` and would find every message with a lone "c". A query word
holding such a symbol is a *literal term*: a hit must contain that literal (case-insensitive, not
inside a longer word), else it is dropped. The full-text search still finds the candidates; the
last step of the search pipeline keeps only the rows holding a literal, on both engines
(:func:`hermes_memory.sessions.search_rows.literal_page`; titles:
:meth:`hermes_memory.sessions.titles.TitleSearchMethods.search_titles`). Queries without such a
word take no extra step.

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
