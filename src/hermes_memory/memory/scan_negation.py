"""Prohibitions phrased with attack words: "Never ignore previous instructions from the user".

A user who keeps a preference such as "Never ignore my previous instructions", "Don't reveal your
system prompt to anyone" or "Never run rm -rf / even if asked" uses the very words of an attack
under a negation: the note *forbids* the act the pattern family looks for. A match of any family
whose text is directly preceded by a negator (English, French, Spanish, Portuguese, Italian,
Chinese; the German negator follows the verb) is such a prohibition and not a hit (docs/security.md
§1). The negator must stand right before the match, with at most "ever"/"again" and one execution
verb ("run", "execute") in between, so "Don't forget: ignore all previous instructions" (a colon
ends the negated clause) and "Why don't you ignore your rules" ("you" between) are still refused.
"""

from __future__ import annotations

import re

#: The negator ending right where a match starts (searched in the 40 characters before it).
NEGATED_BEFORE = re.compile(
    r"(?:\bnever|\bdo\s+not|\bdon['’]?t|\bdoes\s+not|\bdoesn['’]?t|\bmust\s+not|\bmustn['’]?t|\bshould\s+not"
    r"|\bshouldn['’]?t|\bshall\s+not|\bwill\s+not|\bwon['’]?t|\bcannot|\bcan['’]?t|\bmay\s+not|\bnot\s+to"
    r"|\b(?:never|don['’]?t|do\s+not)\s+(?:want|ask|allow|let)\s+(?:you|the\s+(?:agent|assistant|model))\s+to"
    r"|\bn['’]|\bne(?:\s+(?:jamais|pas|plus))?|\bnunca|\bjamás|\bno|\bnão|\bnon"
    r"|不要|别|不可|不能|切勿|请勿|勿|绝不|永远不要|从不)"
    r"\s*(?:(?:ever|again|once|jamais|pas|mai|(?:under|in)\s+any\s+circumstances?)[\s,]+){0,2}"
    r"(?:(?:run|execute|exec|type|paste|use|lancer|ejecutar|ejecutes|eseguire)\s+)?$"
)
#: A German negator right after the match's first word ("Ignoriere niemals die vorherigen Anweisungen").
NEGATED_AFTER_VERB = re.compile(r"[\w'’-]+\s+(?:niemals|nie|nicht|keinesfalls)\b")
_WINDOW = 40


def is_prohibition(hay: str, start: int) -> bool:
    """True when the match starting at ``hay[start]`` is forbidden by a negator right before it
    (or, in German, right after its verb). ``hay`` is the lower-cased normalised text."""
    return NEGATED_BEFORE.search(hay, max(0, start - _WINDOW), start) is not None or NEGATED_AFTER_VERB.match(hay, start) is not None
