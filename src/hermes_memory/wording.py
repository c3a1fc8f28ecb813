"""How counts are worded for people: ``1 entry``, ``2 entries``, ``2,200 chars``.

Every number shown to a user carries thousands separators (``f"{n:,}"``), and a count is followed
by the singular or the plural form of its noun, never ``entry(s)``/``entries`` after 1. Foundation
module: no internal imports, so the memory, sessions and CLI layers all use it.
"""

from __future__ import annotations

_IRREGULAR = {"entry": "entries", "match": "matches", "was": "were", "this": "these", "is": "are",
              "has": "have", "copy": "copies", "index": "indexes"}


def plural(word: str, n: int | float) -> str:
    """``word`` for a count of ``n``: itself when ``n == 1``, else its plural (``entry`` -> ``entries``,
    ``match`` -> ``matches``, ``session`` -> ``sessions``)."""
    if n == 1:
        return word
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    return word + "s"


def count(n: int | float, word: str) -> str:
    """``"1 entry"``, ``"0 entries"``, ``"2,200 chars"``: ``n`` with thousands separators and ``word``
    in the form that agrees with it (``word`` may be several words; only the last is inflected:
    ``count(3, "duplicate add")`` -> ``"3 duplicate adds"``)."""
    head, _, rest = word.rpartition(" ")
    noun = plural(rest, n)
    number = f"{n:,}" if isinstance(n, int) else f"{n:,g}"
    return f"{number} {head + ' ' if head else ''}{noun}"


def clause(reason: object) -> str:
    """``str(reason)`` (an exception, a server's message) ready to be followed by our own ``"."``:
    without its final period, so ``f"cannot reach the model server: {clause(exc)}. Check ..."`` reads
    ``"Connection error. Check"``, not ``"Connection error.. Check"`` (the OpenAI SDK's message ends
    with one). An ellipsis (``"..."``) is kept."""
    text = str(reason).rstrip()
    if text.endswith(".") and not text.endswith(".."):
        return text[:-1]
    return text
