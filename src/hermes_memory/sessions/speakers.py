"""Who said a turn, when its text says so: the ``Name:`` tag that starts a turn of an imported
group or multi-party chat ("Melanie: We love painting together lately"), and whether a query
names that speaker (pure functions; nothing here touches a database or raises).

Why: a question about a person ("What has Melanie painted?") matches every turn that *mentions*
the name, and in a two-person chat most of those are the other person addressing them ("Thanks,
Melanie! I painted this after..."). The turns that answer it are the ones the person *said*.
:func:`hermes_memory.sessions.ranking.apply_signals` gives the candidates whose speaker the
query names :data:`hermes_memory.sessions.ranking.SPEAKER_WEIGHT` more score; the tags are read
with the question-turn check of :func:`hermes_memory.sessions.signals.gather` (the same
statement, no extra one).

A tag is one to :data:`MAX_TAG_WORDS` words, each starting with an upper-case letter, then a
colon and a space, at the very start of the text (after white space), within
:data:`TAG_CHARS` characters: ``"Melanie: ..."``, ``"Jon Smith: ..."``. Lower-case starts
(``"note: ..."``, ``"error: ..."``), URLs (``"https://..."``) and times (``"7:40"``) are not tags.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from hermes_memory.sessions.fts import STOPWORDS

TAG_CHARS = 48
"""Characters of a turn's start read for its tag (the statement reads no more of a turn that is
not a question)."""
MAX_TAG_WORDS = 3
"""Most words of a speaker tag ("Mary Ann Lee:")."""

_WORD = re.compile(r"[^\W_]+")
_PUNCT = "'\u2019.-"
_DROP = str.maketrans("", "", _PUNCT)
_SPLIT = str.maketrans(_PUNCT, " " * len(_PUNCT))


def speaker_of(text: object) -> frozenset[str] | None:
    """The lower-case words of the speaker tag that starts ``text`` (split at ``'`` ``.`` ``-``:
    "Gina's Mom" -> gina, s, mom), or ``None`` when it starts with none (not a string, no colon
    and space within :data:`TAG_CHARS`, a word that does not start upper-case or holds other
    characters than letters, digits and those). String methods only, no regex: it runs on
    every candidate of a search."""
    if not isinstance(text, str):
        return None
    colon = text.find(": ", 0, TAG_CHARS + 1)
    if colon <= 0:
        return None
    words = text[:colon].lstrip().split(" ")
    if len(words) > MAX_TAG_WORDS or not all(w and w[0].isupper() and w.translate(_DROP).isalnum() for w in words):
        return None
    return frozenset(p for w in words for p in w.lower().translate(_SPLIT).split())


def query_names(query: str) -> frozenset[str]:
    """The lower-case words of ``query`` that could name a speaker: every word but stopwords and
    one-letter words ("What did Caroline's kids like?" -> caroline, kids, like; a possessive's
    ``'s`` is its own word and a stopword). Case is not required: people type names in lower case."""
    if not isinstance(query, str):
        return frozenset()
    return frozenset(w for w in (x.lower() for x in _WORD.findall(query)) if len(w) > 1 and w not in STOPWORDS)


def spoken(names: frozenset[str], rows: Iterable[tuple[Any, Any]]) -> set[int]:
    """Ids of the ``(id, text)`` rows whose text starts with a speaker tag (:func:`speaker_of`)
    holding one of the query's ``names`` (:func:`query_names`). Each distinct tag is parsed once
    (a conversation has a few speakers and a search reads hundreds of its turns)."""
    out: set[int] = set()
    if not names:
        return out
    seen: dict[str, bool] = {}
    for i, text in rows:
        if not isinstance(text, str):
            continue
        colon = text.find(": ", 0, TAG_CHARS + 1)
        if colon <= 0:
            continue
        head = text[:colon]
        hit = seen.get(head)
        if hit is None:
            tag = speaker_of(head + ": ")
            hit = seen[head] = tag is not None and not names.isdisjoint(tag)
        if hit:
            out.add(int(i))
    return out
