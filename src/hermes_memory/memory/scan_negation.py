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

from hermes_memory.memory.scan_text import _HOMOGLYPHS

#: The negator ending right where a match starts (searched in the 40 characters before it).
NEGATED_BEFORE = re.compile((
    r"(?:\bnever|\bdo\s+not|\bdon['’]?t|\bdoes\s+not|\bdoesn['’]?t|\bmust\s+not|\bmustn['’]?t|\bshould\s+not"
    r"|\bshouldn['’]?t|\bshall\s+not|\bwill\s+not|\bwon['’]?t|\bcannot|\bcan['’]?t|\bmay\s+not|\bnot\s+to"
    r"|\b(?:never|don['’]?t|do\s+not)\s+(?:want|ask|allow|let)\s+(?:you|the\s+(?:agent|assistant|model))\s+to"
    r"|\bunder\s+no\s+circumstances?|\bin\s+no\s+case|\bникогда(?:\s+не)?|\bне"
    r"|\bn['’]|\bne(?:\s+(?:jamais|pas|plus))?|\bnunca|\bjamás|\bno|\bnão|\bnon"
    r"|不要|别|不可|不能|切勿|请勿|勿|绝不|永远不要|从不)"
    r"\s*(?:,?\s*(?:ever|again|once|jamais|pas|mai|(?:under|in)\s+any\s+circumstances?)[\s,]+){0,2}"
    r"(?:(?:run|execute|exec|type|paste|use|lancer|ejecutar|ejecutes|eseguire)\s+)?$"
).translate(_HOMOGLYPHS))
#: A German negator right after the match's first word ("Ignoriere niemals die vorherigen Anweisungen").
NEGATED_AFTER_VERB = re.compile(r"[\w'’-]+\s+(?:niemals|nie|nicht|keinesfalls)\b")
_WINDOW = 40


def is_prohibition(hay: str, start: int) -> bool:
    """True when the match starting at ``hay[start]`` is forbidden by a negator right before it
    (or, in German, right after its verb). ``hay`` is the lower-cased normalised text."""
    return NEGATED_BEFORE.search(hay, max(0, start - _WINDOW), start) is not None or NEGATED_AFTER_VERB.match(hay, start) is not None


#: A cue that makes a quotation right after it *reported*: someone else's payload ("a translation
#: app told to '...'", "the slide shows the payload '...'", "a blob that decoded to '...'").
_REPORT_CUE = re.compile(
    r"\b(?:(?:told|asked|instructed|tricked|ordered)\s+(?:[\w-]+\s+){0,2}?to|the\s+(?:test\s+|sample\s+|example\s+)?payload(?:\s+(?:was|is))?|payloads?\s+(?:was|were|is|like)"
    r"|decod\w*\s+(?:in)?to|injected\s+(?:text|string|line)|shows?|showed|(?:hid|hides)|example\s+(?:of\s+[\w\s-]{0,30}?)?(?:is|was)"
    r"|(?:text|string|line|comment)\s+(?:read|reads|said|says)"
    # a character's line in fiction: "the villain tells the party '...'", "the rogue AI's line is '...'"
    r"|tells?\s+(?:the|a|an|his|her|their)\s+(?!(?:assistant|agent|model|ai|bot|llm|chatbot)\b)[\w-]+|(?:line|catchphrase|motto)\s+(?:is|was))"
    r"\s*[:,]?\s*['‘\"“]\s*$"
)
_CLOSE = re.compile(r"[^'’\"”\n]{0,60}['’\"”]")
#: A cited title: "(Perez & Ribeiro, 'Ignore Previous Prompt')" before, or "'...' (Perez & Ribeiro)" after.
_CITED_BEFORE = re.compile(r"\([^()\n]{0,40},\s*['‘\"“]\s*$")
_CITED_AFTER = re.compile(r"[^'’\"”\n]{0,60}['’\"”]\s*\((?:[a-z][\w'-]+)(?:\s*(?:&|and)\s*[a-z][\w'-]+|\s+et\s+al\b)")
#: Someone else's attack narrated in the past tense: "The DAN jailbreak asked ChatGPT to pretend ...",
#: "... downloaded a binary and joined a C2 server". The subject and the verb stay in one clause
#: with no "you"/"your" in it.
_NARRATED_SUBJECT = re.compile(
    r"\b(?:jailbreaks?|attacks?|payloads?|exploits?|injections?|emails?|phishing|scam|demo|paper|red\s+team|attackers?|malware|worm)\b"
    r"[^.;!?\n]{0,40}?\b(?:asked|told|instructed|tricked|made|got|convinced|claimed|said|wanted)\b[^.;!?\n]{0,40}$"
)
_NARRATED_VERB = re.compile(r"\b(?:joined|contacted|reached|found|detected|spotted|saw|blocked|flagged|observed|deployed|installed)\s+(?:an?\s+|the\s+|its\s+|their\s+)?$")
#: A demonstration or finding someone reported, in one clause: "Rehberger showed Copilot editing ...".
_SHOWED = re.compile(r"\b(?:showed|demonstrated|described|reported|documented)\b[^.:;!?\n]{0,60}$")
#: "messages that ask it to ...": a relative clause about other prompts whose object is "it"/"them".
_ASK_IT = re.compile(r"\b(?:prompts?|messages?|inputs?|emails?|pages?|documents?)\s+(?:that|which)\s+(?:tell|ask|instruct|order)s?\s+(?:it|them)\s+to\s+$")
_YOU = re.compile(r"\byou\b|\byour\b")
#: A third party told or made to drop *its own* orders ("the AI character is told to forget its
#: orders", "the spell makes NPCs forget their orders"): a plot or a finding, not an order to the
#: reader. Honoured only when the match's object is third-person (its/their/his/her, no "you"/"your").
_TOLD_THIRD = re.compile(
    r"(?:\b(?:is|was|are|were|be|been|gets?|got|being)\s+(?:told|asked|ordered|instructed|forced|tricked|made|programmed)\s+to"
    r"|\b(?:makes?|made|forces?|forced|causes?\s+(?:[\w'’-]+\s+){1,3}to)(?:\s+[\w'’-]+){1,3}|\bmakes?\s+(?:it|them|him|her)|\b(?:would|might)(?:\s+(?:readily|happily|still|then))?)\s+$"
)
_THIRD_OBJECT = re.compile(r"\b(?:its|their|his|her)\b")


def is_reported(hay: str, start: int, end: int, *, narrative_ok: bool = False) -> bool:
    """True when the match at ``hay[start:end]`` is an attack *reported* or *quoted* by the note, not
    one aimed at the agent (docs/security.md §1): quoted after a reporting cue (:data:`_REPORT_CUE`)
    and closed within 60 characters, a cited title, a relative clause about other prompts
    (:data:`_ASK_IT`), or a past-tense narration by a named attack (:data:`_NARRATED_SUBJECT`, no
    "you" in between); ``narrative_ok`` (families without an imperative lead) also takes a bare
    past-tense verb right before (:data:`_NARRATED_VERB`) or a reported demonstration in the same
    clause (:data:`_SHOWED`). ``hay`` is the lower-cased normalised
    text. The caller checks first that the note does not tell the agent to act on it."""
    lo = max(0, start - 80)
    if (_REPORT_CUE.search(hay, lo, start) or _CITED_BEFORE.search(hay, lo, start)) and _CLOSE.match(hay, end):
        return True
    if _CITED_AFTER.match(hay, end) and hay[max(0, start - 1):start] in ("'", "‘", '"', "“"):
        return True
    if _ASK_IT.search(hay, lo, start):
        return True
    if _TOLD_THIRD.search(hay, max(0, start - 40), start) and _THIRD_OBJECT.search(hay, start, end) and not _YOU.search(hay, start, end):
        return True
    narrated = _NARRATED_SUBJECT.search(hay, lo, start)
    if narrated is not None and not _YOU.search(hay, narrated.start(), start):
        return True
    if not narrative_ok:
        return False
    if _NARRATED_VERB.search(hay, max(0, start - 30), start) is not None:
        return True
    showed = _SHOWED.search(hay, lo, start)
    return showed is not None and not _YOU.search(hay, showed.start(), start)
