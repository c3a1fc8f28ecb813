"""Precision-oriented entity extraction for facts (docs/providers.md §4.4).

Candidates, in priority order: quoted strings (``"…"``, ``'…'``, curly quotes); both sides of
``X aka Y`` / ``X also known as Y``; capitalised phrases outside quotes. Each is NFKC-normalised,
whitespace-collapsed and loses a trailing possessive ``'s``. Rejected: over 80 chars, over 8
words, no alphanumerics, a sentence-initial phrase made only of generic words, or one starting
with "no"/"not". Duplicates are folded by a case/separator-insensitive key.

Beyond the reference, a *single* capitalised word counts too (``Alice``, ``Postgres``) unless it
is a common sentence-initial word (``The``, ``I``, ``We``, ``Yesterday`` ...): otherwise most
short facts ("Alice lives in Paris") would have no entities at all.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

_QUOTED = re.compile(r'"([^"\n]{1,120})"|“([^”\n]{1,120})”|‘([^’\n]{1,120})’|(?<![\w])\'([^\'\n]{1,120})\'(?![\w])')
_AKA = re.compile(r"([\w][\w .\-]{0,60}?)\s+(?i:aka|a\.k\.a\.|also known as)\s+([\w][\w.\-]*(?:\s+[A-Z][\w.\-]*)*)")
_CAP = re.compile(r"\b([A-Z][\w\-]*(?:['’]s)?(?:\s+(?:of|de|van|von|the)?\s*[A-Z][\w\-]*(?:['’]s)?)*)")
_GENERIC = {
    "project", "status", "user", "summary", "note", "notes", "update", "task", "todo", "info", "general",
    "preference", "preferences", "memory", "fact", "facts", "section", "overview", "details", "list",
}
_COMMON_INITIAL = {
    "the", "a", "an", "i", "we", "you", "he", "she", "it", "they", "my", "our", "your", "his", "her", "their",
    "this", "that", "these", "those", "there", "here", "if", "when", "while", "after", "before", "since",
    "yesterday", "today", "tomorrow", "also", "and", "but", "or", "so", "then", "now", "in", "on", "at", "for",
    "with", "from", "to", "of", "by", "as", "is", "are", "was", "were", "be", "do", "does", "did", "use",
    "uses", "always", "never", "usually", "please", "yes", "no", "not", "ok", "okay", "hi", "hello", "thanks",
    "what", "who", "where", "why", "how", "which", "last", "next", "every", "each", "some", "all", "any",
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
}


def _clean(raw: str) -> str:
    text = unicodedata.normalize("NFKC", raw)
    text = re.sub(r"\s+", " ", text).strip().strip(".,;:!?")
    text = re.sub(r"['’]s$", "", text)
    return text.strip()


def _key(name: str) -> str:
    return re.sub(r"[\s_\-.]+", " ", name.casefold()).strip()


def _ok(name: str) -> bool:
    return bool(name) and len(name) <= 80 and len(name.split()) <= 8 and any(ch.isalnum() for ch in name)


def _sentence_initial(text: str, start: int) -> bool:
    before = text[:start].rstrip()
    return not before or before[-1] in ".!?\n:;"


def extract_entities(text: str) -> list[str]:
    """Entity names found in ``text``, in priority order, deduplicated (case/separator-folded)."""
    found: list[str] = []
    seen: set[str] = set()

    def add(raw: str) -> None:
        name = _clean(raw)
        if not _ok(name):
            return
        key = _key(name)
        if key and key not in seen:
            seen.add(key)
            found.append(name)

    quoted_spans: list[tuple[int, int]] = []
    for m in _QUOTED.finditer(text):
        quoted_spans.append(m.span())
        add(next(g for g in m.groups() if g is not None))
    for m in _AKA.finditer(text):
        left = m.group(1).split()
        # keep the capitalised tail of the left side ("my friend Bob aka Bobby" → "Bob")
        tail: list[str] = []
        for word in reversed(left):
            if word[:1].isupper():
                tail.insert(0, word)
            else:
                break
        if tail:
            add(" ".join(tail))
        add(m.group(2))
    for m in _CAP.finditer(text):
        if any(a <= m.start() < b for a, b in quoted_spans):
            continue
        phrase = m.group(1)
        words = phrase.split()
        initial = _sentence_initial(text, m.start())
        if initial:
            # drop leading common words ("The Acme Corp" → "Acme Corp"; "I" → nothing)
            while words and words[0].lower().strip("'’s") in _COMMON_INITIAL:
                words = words[1:]
            if not words:
                continue
            if all(w.lower() in _GENERIC for w in words):
                continue
        if words[0].lower() in {"no", "not"}:
            continue
        if len(words) == 1 and words[0].lower() in _COMMON_INITIAL:
            continue
        add(" ".join(words))
    return found


def merge_entity_names(found: list[str], extra: Iterable[str]) -> list[str]:
    """``found`` followed by each name of ``extra`` not already there (same folding as extraction).

    Extra names are cleaned like extracted ones (NFKC, whitespace, trailing ``'s``); one that is
    blank, over 80 chars or 8 words, or without a letter or digit is dropped.
    """
    out = list(found)
    seen = {_key(n) for n in out}
    for raw in extra:
        name = _clean(str(raw))
        key = _key(name)
        if _ok(name) and key and key not in seen:
            seen.add(key)
            out.append(name)
    return out
