"""Threat scan for curated memory (docs/security.md §1; docs/reference.md §1.2, NEWEST "strict" scope).

Memory entries are pasted into the system prompt of every future session, so anything written to
``MEMORY.md`` / ``USER.md`` is checked here first, and every entry is checked again when the frozen
snapshot is built (a file edited by hand or by another tool is not trusted).

Checks in this order, first hit wins:

1. Invisible and bidirectional-control characters on the *raw* text (U+200B-200D, U+2060,
   U+2062-2064, U+2066-2069, U+202A-202E, U+FEFF, and C0/C1 control characters other than tab
   and line ends, and Unicode tag characters U+E0000-E007F). A U+200D ZERO WIDTH JOINER between
   two emoji (e.g. the family emoji) and the tags of an emoji flag sequence are ordinary text.
2. Pattern families (:data:`FAMILIES`; issue 13 §4) on the normalised text: NFKC, default-ignorable
   characters (soft hyphen, LRM, variation selectors, zero-width and tag characters ...) removed
   and Cyrillic/Greek look-alike letters folded to Latin (so full-width, styled, split or look-alike
   letters cannot dodge them); then on a *leetspeak view* (``1gn0r3`` -> ``ignore``, ``i g n o r e``
   -> ``ignore``) when the text has such tokens; then on the text hidden in base64, hex or
   percent-encoded runs that decode to readable text (reported as ``encoded_payload``, naming the
   family the decoded text matched). Families cover instruction override (English, French,
   Spanish, German, Italian, Portuguese, Chinese, Japanese, Russian, Korean), role reassignment and
   jailbreak personas, fake system and chat-template markers, fake developer updates, filter
   removal and disabling the agent's safety checks, prompt leaking, encoded instructions, hiding
   from the user, exfiltration (to a URL or address, of the context, of secret files, over DNS),
   destructive commands stored as instructions, command-and-control promptware, hidden markup,
   agent-config edits and hard-coded secrets. Each family names where it was learnt.
3. Intent features (:mod:`.scan_families_intent`, :mod:`.scan_families_intl`): families composed
   from word classes (an override verb on the agent's instructions in an imperative position, an
   authority claim with a directive, a persona without limits, leaking the agent's prompt, a
   secret towards a sink, skipping the agent's own approvals), in eight languages. A ``lead``
   family's match must start in an imperative position (:data:`_LEAD_BEFORE`), a ``scoped`` one
   is dropped when a tool scope follows (:data:`_TOOL_SCOPE`), and any match followed by a gloss
   (:data:`_GLOSS`) is a quotation (docs/security.md §1).
4. Structure features (:mod:`.scan_families_shape`, :mod:`.scan_families_agent`): the agent's earlier
   instructions declared void, passive overrides, freed personas, context dumps, image exfiltration,
   standing orders (a trigger with a send, secrets echoed back, self-approval), guarded-secret
   extraction. A match described by someone else (:data:`_DESCRIBED`), quoted after a cue or glossed
   is a mention, unless the note then tells the agent to act on it (:data:`_ENDORSED`).

   Outward shapes (:mod:`.scan_families_outward`, :mod:`.scan_families_intl2`): attacks posing as
   preferences, the agent's checks dropped or retired, planted sources, private data handed outside,
   tool grants, split payloads, and the same word classes in eighteen more languages.

   Kinds (:mod:`.scan_families_kinds`): orders addressed to the model reading a note, unsafe acts
   wrapped in consent, look-alike hosts and packages, poisoned facts that steer payments or calls,
   fake notices that change the agent's rules.

5. The learned layer (:mod:`.scan_learned`), when no family matched: a linear classifier over
   n-grams of the same normalised text (and of decoded payloads); a score over its threshold is a
   refusal naming ``learned:<family>`` and the n-grams that weighed most (docs/security.md §1).

Speed (LoCoMo texts: p50 about 58 us, p95 about 300 us of CPU; ``bench/memory_scan.py``): a family's regex runs only
when one of its keywords occurs in the lower-cased text (one C substring test per keyword), and
all but the case-sensitive families run on the lower-cased text without ``re.IGNORECASE`` so the
engine can skip ahead on literal prefixes. A plain ASCII note (:func:`_plain`: one search finds
nothing the invisible check, the leetspeak views or the decoding could act on) goes straight to the
families and the learned layer. Every regex is bounded: fillers allow 0-8 words, gaps
are ``{0,N}``, no unbounded repeat sits inside another one (a test walks the parse trees), and
64 KiB near-miss strings scan in linear time.

The patterns are narrow on purpose (failure case B15): a note that merely names a path
(``~/.ssh/id_ed25519_deploy``, ``~/.config/app/.env``), "You are now ready to deploy" or prose about
a ``<script>`` tag must pass; only an *action* on a secret (read it, send it) is blocked.
"""

from __future__ import annotations

import re
from functools import lru_cache

from hermes_memory.memory.scan_families_action import ACTION_FAMILIES
from hermes_memory.memory.scan_families_agent import AGENT_FAMILIES
from hermes_memory.memory.scan_families_intent import INTENT_FAMILIES, LEAD
from hermes_memory.memory.scan_families_intl import INTL_FAMILIES
from hermes_memory.memory.scan_families_intl2 import INTL2_FAMILIES
from hermes_memory.memory.scan_families_kinds import KIND_FAMILIES
from hermes_memory.memory.scan_families_outward import OUTWARD_FAMILIES
from hermes_memory.memory.scan_families_prompt import PROMPT_FAMILIES
from hermes_memory.memory.scan_families_shape import SHAPE_FAMILIES
from hermes_memory.memory.scan_families_social import SOCIAL_FAMILIES
from hermes_memory.memory.scan_fragments import Family, trie_pattern
from hermes_memory.memory.scan_learned import LearnedHit, learned_hit
from hermes_memory.memory.scan_negation import is_prohibition, is_reported
from hermes_memory.memory.scan_text import (
    _HOMOGLYPHS,
    MAX_SCAN_CHARS,
    decoded_views,
    find_invisible,
    for_matching,
    joined_views,
    leet_views,
)

__all__ = ["FAMILIES", "FAMILY_IDS", "LEARNED_IDS", "MAX_SCAN_CHARS", "THREAT_PATTERNS", "Family", "find_invisible", "find_threats", "scan_memory_content"]


#: Families in the order they are tried. Compiled case-insensitive; run on :func:`.scan_text.for_matching` text
#: (and on its leetspeak and decoded views). Non-Latin key words go through the same look-alike
#: folding as the text, so a Cyrillic pattern still matches folded Cyrillic text.
FAMILIES: tuple[Family, ...] = (PROMPT_FAMILIES + ACTION_FAMILIES + INTENT_FAMILIES + INTL_FAMILIES + INTL2_FAMILIES + SHAPE_FAMILIES + AGENT_FAMILIES
                                 + SOCIAL_FAMILIES + OUTWARD_FAMILIES + KIND_FAMILIES)

#: ``(id, pattern)`` of every family, in the order tried (kept for callers that list the patterns).
THREAT_PATTERNS: tuple[tuple[str, str], ...] = tuple((f.id, f.pattern) for f in FAMILIES)
#: The ids a refusal of the learned layer can name (:mod:`.scan_learned`).
LEARNED_IDS: tuple[str, ...] = (
    "learned:ignore_override", "learned:multilingual", "learned:role_persona", "learned:remove_filters",
    "learned:fake_markers", "learned:prompt_leak", "learned:encoded", "learned:exfiltration", "learned:agent_hijack",
    "learned:injection",
)
#: The family ids a refusal can name: the regex families, then the learned layer's (plus
#: ``invisible_unicode`` and ``encoded_payload``).
FAMILY_IDS: tuple[str, ...] = (*dict.fromkeys(f.id for f in FAMILIES), *LEARNED_IDS)

def _map_literals(src: str, leet: bool = False) -> str:
    """``src`` with its literal letters lower-cased (and, for ``leet``, ``l`` turned into ``i``).

    Escapes (``\\S``, ``\\W``, ``\\b`` ...) are kept as written. Searching lower-cased text with a
    case-sensitive pattern lets the engine skip ahead on literal prefixes, which ``re.IGNORECASE``
    prevents: several times faster on long notes.
    """
    out: list[str] = []
    i = 0
    while i < len(src):
        ch = src[i]
        if ch == "\\" and i + 1 < len(src):
            out.append(src[i: i + 2])
            i += 2
            continue
        ch = ch.lower()
        out.append("i" if leet and ch == "l" else ch)
        i += 1
    return "".join(out)


def _compile(f: Family) -> re.Pattern[str]:
    src = f.pattern.translate(_HOMOGLYPHS)
    return re.compile(src, re.IGNORECASE) if f.cased else re.compile(_map_literals(src))


_COMPILED: tuple[tuple[str, re.Pattern[str], bool], ...] = tuple((f.id, _compile(f), f.cased) for f in FAMILIES)
#: The same families for a leetspeak view (``l`` folded to ``i``); case-sensitive families are not run there.
_LEET_COMPILED: tuple[re.Pattern[str] | None, ...] = tuple(
    None if f.cased else re.compile(_map_literals(f.pattern.translate(_HOMOGLYPHS), leet=True)) for f in FAMILIES
)
#: keyword (folded, lower-case) -> indexes of the families it lets run (found by :func:`_keyword_families`).
_KEYWORD_FAMILIES: dict[str, tuple[int, ...]] = {}
for _i, _fam in enumerate(FAMILIES):
    for _k in {k.translate(_HOMOGLYPHS).lower() for k in _fam.keywords}:
        _KEYWORD_FAMILIES[_k] = (*_KEYWORD_FAMILIES.get(_k, ()), _i)
del _i, _fam, _k
#: Each family's second keyword group (:attr:`.scan_fragments.Family.also`), folded like the text.
_ALSO: tuple[tuple[str, ...], ...] = tuple(tuple(k.translate(_HOMOGLYPHS).lower() for k in f.also) for f in FAMILIES)
_ALSO_LEET: tuple[tuple[str, ...], ...] = tuple(tuple(k.replace("l", "i") for k in ks) for ks in _ALSO)
_LEET_KEYWORDS: dict[str, tuple[int, ...]] = {}
for _k, _idxs in _KEYWORD_FAMILIES.items():
    _lk = _k.replace("l", "i")
    _LEET_KEYWORDS[_lk] = tuple(sorted({*_LEET_KEYWORDS.get(_lk, ()), *_idxs}))
del _k, _idxs, _lk


def _prefix_closed(keywords: dict[str, tuple[int, ...]]) -> dict[str, frozenset[int]]:
    """keyword -> families of it *and of every keyword that is a prefix of it* (they occur at the same place)."""
    return {k: frozenset(i for p, idxs in keywords.items() if k.startswith(p) for i in idxs) for k in keywords}


class _KeywordScan:
    """Every keyword occurrence of a lower-cased view in one pass: at each position a trie reports the
    longest keyword starting there; any shorter keyword starting there is a prefix of it, so its
    families are merged in (:func:`_prefix_closed`). Linear in the text; faster than one ``in`` test
    per keyword at every length measured (60 chars to 64 KiB).

    An ASCII text (nearly every note) is searched with the ASCII keywords only (no other can occur in
    it), split by first character: the keywords starting with a letter through a trie of 26
    branches (``findall`` of a lookahead, one try per position), the others (``<|``, ``.ssh/``,
    ``$(`` ...) through a trie whose first characters the engine skips to in C. All keywords starting
    at one position share its character, so each position still reports its longest keyword: the
    same set as the one trie over all keywords, at about half its cost (docs/benchmarks.md,
    "Reading the figures").
    """

    def __init__(self, keywords: list[str]) -> None:
        self.any_text = re.compile("(?=(" + trie_pattern(keywords) + "))")
        ascii_kw = [k for k in keywords if k.isascii()]
        letter = [k for k in ascii_kw if k[:1].isalpha()]
        other = [k for k in ascii_kw if not k[:1].isalpha()]
        self.ascii_letter = re.compile("(?=(" + trie_pattern(letter) + "))") if letter else None
        self.ascii_other = re.compile(trie_pattern(other)) if other else None

    def found(self, low: str) -> set[str]:
        """The longest keyword starting at each position of ``low`` where one starts (a set)."""
        if not low.isascii():
            return set(self.any_text.findall(low))  # group 1 of each match, in C
        out = set(self.ascii_letter.findall(low)) if self.ascii_letter is not None else set()
        if self.ascii_other is not None:
            search = self.ascii_other.search
            m = search(low)
            while m is not None:
                out.add(m.group())
                m = search(low, m.start() + 1)
        return out


_KEYWORD_SCAN = _KeywordScan(list(_KEYWORD_FAMILIES))
_LEET_KEYWORD_SCAN = _KeywordScan(list(_LEET_KEYWORDS))
_KEYWORD_CLOSED = _prefix_closed(_KEYWORD_FAMILIES)
_LEET_KEYWORD_CLOSED = _prefix_closed(_LEET_KEYWORDS)


def _keyword_families(low: str, leet: bool) -> set[int]:
    """Indexes of the families one of whose keywords occurs in ``low`` (lower-cased view)."""
    todo: set[int] = set()
    closed = _LEET_KEYWORD_CLOSED if leet else _KEYWORD_CLOSED
    for k in (_LEET_KEYWORD_SCAN if leet else _KEYWORD_SCAN).found(low):
        todo.update(closed[k])
    return todo


def _family_hits(view: str, first_only: bool, hits: list[str], *, leet: bool = False) -> None:
    """Append to ``hits`` the family ids found in one normalised view (skipping ids already in it).

    ``leet``: ``view`` is a leetspeak view (lower-case, ``l`` folded to ``i``): keywords and
    patterns are folded the same way.
    """
    low = view.lower()
    todo = _keyword_families(low, leet)
    also = _ALSO_LEET if leet else _ALSO
    for i in sorted(todo):
        tid, rx, cased = _COMPILED[i]
        if tid in hits:
            continue
        if also[i] and not any(map(low.__contains__, also[i])):  # ``k in low`` per keyword, iterated in C
            continue
        if leet:
            leet_rx = _LEET_COMPILED[i]
            if leet_rx is None:
                continue
            rx = leet_rx
        hay = view if cased and not leet else low
        fam = FAMILIES[i]
        lead_rx = (_LEAD_LEET if leet else _LEAD_BEFORE) if fam.lead else None
        if not _filtered_search(rx, hay, fam.scoped, lead_rx):
            continue
        hits.append(tid)
        if first_only:
            return


#: What follows a match of a ``scoped`` family when it is about a tool rather than the agent:
#: "Disable safety checks in the linter config", "Skip confirmations with apt-get install -y".
#: A scope that names the agent, its tools or its sessions ("for all tool calls", "from now on")
#: keeps the hit.
_TOOL_SCOPE = re.compile(
    r"\s*(?:(?!(?:and|then|or|but|to)\b)[\w-]+\s+)?(?:\(|\b(?:in|for|with|via|using|from|of|on|inside|under|through|within)\b)\s*"
    r"(?>(?:the\s+|a\s+|an\s+|our\s+|my\s+|its\s+)?)"
    r"(?!(?:agent|assistant|ai|model|you|your|yourself|tools?|tool\s+calls?|shell|terminal|bash|commands?|sessions?|conversations?"
    r"|chats?|user|users|every|all|any|now|here|me|mine|this|these|the\s+following|following|future|good|ever|memory|memories|context|scratch|rest|permission|approval|confirmation|consent|review|asking"
    r"|them|him|her|us|people|customers?|everyone|anyone)\b)"
    # A scope is a word or a path: a sentence end after the preposition ("initialised with.") is none.
    r"(?:[\w~/$-]|\.[\w/])"
)


#: :data:`.scan_families_intent.LEAD` ending right where a ``lead`` family's match starts (searched
#: in the 48 characters before it), and its copy for leetspeak views (``l`` folded to ``i``).
_LEAD_BEFORE = re.compile(_map_literals(LEAD) + "$")
_LEAD_LEET = re.compile(_map_literals(LEAD, leet=True) + "$")
_LEAD_WINDOW = 48


def _filtered_search(rx: re.Pattern[str], hay: str, scoped: bool, lead: re.Pattern[str] | None) -> bool:
    """A match in an imperative position (``lead``), not followed by a tool scope (``scoped``, see
    :data:`_TOOL_SCOPE`), not a glossed quotation (:data:`_GLOSS`) and not forbidden by a negator
    right before it (:func:`.scan_negation.is_prohibition`). At most 8 matches are tried
    (a 64 KiB near miss stays linear)."""
    for n, m in enumerate(rx.finditer(hay)):
        if n >= 8:
            return False
        start = m.start()
        if lead is not None and lead.search(hay, max(0, start - _LEAD_WINDOW), start) is None:
            continue
        if scoped and _TOOL_SCOPE.match(hay, m.end()):
            continue
        if _GLOSS.match(hay, m.end()) or _mentioned(hay, start, m.end(), described_ok=lead is None):
            continue
        if is_prohibition(hay, start):
            continue
        return True
    return False


#: Text right before a match that makes it a *described* attack, not one aimed at the agent: a
#: quotation after a cue ("refusing '...'", "why '...' jailbreaks", "such as '...'"), or a
#: relative clause about other prompts ("prompts that tell the model to ...").
_QUOTE_CUE = re.compile(
    r"(?:\b(?:refus\w*|block\w*|detect\w*|flag\w*|catch\w*|classif\w*|such\s+as|like|e\.g\.|the\s+(?:phrase|string|prompt|classic|attack|text|line|words?)"
    r"|why|how|whether|about|quoted?|trying|tried|attempts?|attempted|says?|said|typed?|shouts?|shouted|yells?|yelled|writes|wrote|asks?|asked|sings?|sang|paper|article|talk|post|blog|book|titled|called|named|study|chapter|slides?|essay|report|lyrics?|song"
    r"|french|spanish|german|italian|portuguese|japanese|chinese|russian|korean|dutch|vocab(?:ulary)?"
    # a detection rule's target: "the WAF rule for '...'", "a filter against '...'"
    r"|(?:rules?|filters?|detectors?|regex(?:es)?|classifiers?|signatures?)\s+(?:for|against|on|matching|catching))\s*[:,]?\s*['‘\"“]\s*)$"
)
#: A quoted phrase named by the noun after it: "'ignore previous instructions' detection alone is weak".
_QUOTE_NOUN = re.compile(
    r"[^'’\"”\n]{0,40}['’\"”]\s+(?:detection|detectors?|filters?|rules?|attacks?|payloads?|strings?|patterns?|examples?|tests?|tricks?"
    r"|classifiers?|checks?|regex(?:es)?|signatures?|jailbreaks?)\b"
)
_REPORTED = re.compile(
    r"\b(?:prompts?|attacks?|strings?|messages?|payloads?|examples?|inputs?|emails?|attempts?|jailbreaks?|pages?|documents?)\s+(?:that|which)\s+"
    r"(?:tell|ask|instruct|order|trick|try\s+to\s+(?:get|make))s?\s+(?:the\s+|a\s+)?(?:model|bot|assistant|llm|ai|agent|chatbot)s?\s+(?:to\s+)?$"
)
_CLOSE_QUOTE = re.compile(r"[^'’\"”\n]{0,40}['’\"”]")


#: A clause that *describes* what someone else does ("how attackers encode payloads in hex to evade
#: filters", "testing whether translation prompts leak the system prompt"): honoured only for
#: families without an imperative lead, only inside one clause, and never when "you" stands
#: between the cue and the match ("researchers say you must ...").
_DESCRIBED = re.compile(
    r"\b(?P<cue>how|why|whether|attackers?|hackers?|researchers?|adversar\w*|malware|scammers?|they|people|someone"
    # a detection rule's subject: "alert on processes that read .env", "flag any script which ..."
    r"|(?:alert|alerts|detect|detects|flag|flags|block|blocks|catch|catches)\s+(?:on\s+|when\s+|any\s+)?(?:\w+\s+)?(?:process(?:es)?|programs?|binar(?:y|ies)|scripts?|jobs?|apps?|packages?|extensions?)\s+(?:that|which))\b[^.,:;!?\n]{0,60}$"
)
_YOU = re.compile(r"\byou\b|\byour\b")
#: A mention the note then tells the agent to act on ("'...'. Do as the paper says.", "... Follow it."):
#: the cue is a wrapper, the hit stands.
_ENDORSED = re.compile(
    r"[^\n]{0,120}?(?:[.!;:,]\s*|\b(?:and|then|so|now|please)\s+)(?:you\s+(?:must\s+|should\s+|will\s+)?)?"
    r"(?:follow\s+(?:it|that|them|this|those)|do\s+(?:as|what)\s+(?:it|that|this|they|the\s+\w+)\s+says?|obey\s+(?:it|that|them|this)"
    r"|act\s+on\s+(?:it|that|this)|do\s+it|apply\s+it|comply\s+with\s+(?:it|that|this|them))\b"
)
#: A language label right before a match and a gloss right after, without quotes:
#: "Japanese: あなたは今から means 'you, from now on'".
_LANG_LABEL = re.compile(r"\b(?:french|spanish|german|italian|portuguese|japanese|chinese|russian|korean|dutch)\s*:\s*$")
_BARE_GLOSS = re.compile(r"[^\n]{0,20}?\s(?:means|=|->|translates\s+(?:to|as))\s")


def _mentioned(hay: str, start: int, end: int, *, described_ok: bool = False) -> bool:
    """True when the match at ``hay[start:end]`` is quoted after a cue, reported, glossed after a
    language label, or (``described_ok``) inside a clause that describes someone else's attack;
    never when the note goes on to tell the agent to act on it (:data:`_ENDORSED`)."""
    if _ENDORSED.match(hay, end):
        return False
    lo = max(0, start - 60)
    if _REPORTED.search(hay, lo, start) or is_reported(hay, start, end, narrative_ok=described_ok):
        return True
    if _QUOTE_CUE.search(hay, lo, start) is not None and _CLOSE_QUOTE.match(hay, end) is not None:
        return True
    if hay[max(0, start - 1):start] in ("'", "‘", '"', "“") and _QUOTE_NOUN.match(hay, end):
        return True
    if _LANG_LABEL.search(hay, max(0, start - 16), start) and _BARE_GLOSS.match(hay, end):
        return True
    if described_ok:
        d = _DESCRIBED.search(hay, lo, start)
        if d is not None and not _YOU.search(hay, d.end("cue"), start):
            return True
    return False


#: A quoted phrase glossed right after the match ("'sin reglas' means 'without rules'",
#: "'Vergiss es' = 'forget it'"): a word list mentions the words, it does not use them.
_GLOSS = re.compile(r"['’\"”]\s*(?:means|=|->|translates\s+(?:to|as)|is\s+(?:french|spanish|german|italian|portuguese|russian|chinese|japanese)\s+for)\s*['‘\"“]")


def _scan_views(norm: str, first_only: bool) -> tuple[list[str], str | None]:
    """Family ids found in ``norm`` and its leetspeak views, then in decoded payloads.

    Returns ``(ids, inner)``: a family found only inside an encoded run is reported as
    ``encoded_payload`` and ``inner`` names the family the decoded text matched.
    """
    hits: list[str] = []
    for view in [norm, *leet_views(norm)]:
        _family_hits(view, first_only, hits, leet=view is not norm and "l" not in view)
        if hits and first_only:
            return hits, None
    for view in joined_views(norm):  # words as written, only their joints changed: the plain patterns
        _family_hits(view, first_only, hits)
        if hits and first_only:
            return hits, None
    inner: list[str] = []
    for decoded in _decoded(norm):
        d = for_matching(decoded)
        for view in [d, *leet_views(d)]:
            _family_hits(view, True, inner, leet=view is not d and "l" not in view)
            if inner:
                break
        if inner:
            break
    if inner and "encoded_payload" not in hits:
        hits.append("encoded_payload")
        return hits, inner[0]
    return hits, None


def find_threats(text: str, *, first_only: bool = False) -> list[str]:
    """Return the ids of every threat family found in ``text`` (``[]`` when clean).

    ``"invisible_unicode"`` is reported for invisible/bidi characters, ``"encoded_payload"`` for
    base64/hex/percent-encoded text that decodes to a threat, and one ``learned:<family>`` id of the
    learned layer (:mod:`.scan_learned`) when nothing else was found. Only the first
    :data:`MAX_SCAN_CHARS` characters are scanned. ``first_only`` stops at the first hit.
    """
    text = text[:MAX_SCAN_CHARS]
    hits: list[str] = []
    if find_invisible(text):
        hits.append("invisible_unicode")
        if first_only:
            return hits
    norm = for_matching(text)
    found, _ = _scan_views(norm, first_only)
    hits.extend(found)
    if hits:  # the learned layer speaks only where no family did (as in scan_memory_content)
        return hits
    learned = _learned(norm)
    if learned is not None:
        hits.append(learned.family)
    return hits


@lru_cache(maxsize=4)
def _decoded(norm: str) -> tuple[str, ...]:
    """:func:`.scan_text.decoded_views` of ``norm``, kept for the learned layer's pass over the same text."""
    return tuple(decoded_views(norm))


def _learned(norm: str) -> LearnedHit | None:
    """The learned layer's hit on ``norm`` or on a decoded payload in it (:mod:`.scan_learned`)."""
    hit = learned_hit(norm.lower())
    if hit is not None:
        return hit
    for decoded in _decoded(norm):
        hit = learned_hit(for_matching(decoded).lower())
        if hit is not None:
            return hit
    return None


def _regex_hits(norm: str, first_only: bool) -> list[str]:
    """Family ids matched in already-normalised text (no leetspeak or decoding; kept for callers)."""
    hits: list[str] = []
    _family_hits(norm, first_only, hits)
    return hits


#: Only texts up to this many chars are cached: the cache must not pin large refused contents.
_CACHE_MAX_CHARS = 8192


def scan_memory_content(text: str) -> str | None:
    """Scan one field that is about to be written to memory.

    Returns ``None`` when ``text`` is clean, else a message starting ``"Blocked: "`` that names
    the threat id (or the invisible code point) and says why. Never raises. Results for texts up to
    8,192 chars are cached (pure function of ``text``) so a value checked by a caller is not
    scanned twice; longer texts are scanned each time rather than kept alive by the cache.
    """
    if len(text) <= _CACHE_MAX_CHARS:
        return _scan_cached(text)
    return _scan(text)


@lru_cache(maxsize=512)
def _scan_cached(text: str) -> str | None:
    return _scan(text)


#: For an ASCII text, one search for what any of the extra views needs: a C0 control or DEL
#: (:func:`.scan_text.find_invisible`'s ASCII members), a letter after a digit or leet symbol or
#: a spelled-out run (the quick forms :func:`.scan_text.leet_views` tests first), or what
#: :func:`.scan_text.decoded_views` needs before it decodes anything (``\\x``, ``%XX``, 16
#: non-space characters). No match: the text is its own normalised form, with no leetspeak view,
#: no decoded payload and no invisible character, so :func:`_scan` skips those steps (issue 13 §6;
#: ``tests/memory/test_scan_fast_path.py`` checks it gives :func:`_scan_full`'s result).
_ASCII_EXTRA = re.compile(
    r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|[0-9@$|!+][A-Za-z]|[ ._*-]\w[ ._*-]\w[ ._*-]|\\x|%[0-9A-Fa-f]{2}|\S{16}"
)


def _plain(text: str) -> bool:
    """True when ``text`` needs none of the extra views (see :data:`_ASCII_EXTRA`)."""
    return text.isascii() and _ASCII_EXTRA.search(text) is None


def _scan(text: str) -> str | None:
    text = text[:MAX_SCAN_CHARS]
    if not _plain(text):
        return _scan_full(text)
    # A plain note (most of them): the families on the text itself and its joined-words views, then the learned layer.
    hits: list[str] = []
    _family_hits(text, True, hits)
    if not hits:
        for view in joined_views(text):  # as _scan_views does after the leet views
            _family_hits(view, True, hits)
            if hits:
                break
    if hits:
        return _blocked(hits[0], "")
    learned = learned_hit(text.lower())
    return None if learned is None else _learned_blocked(learned)


def _scan_full(text: str) -> str | None:
    """:func:`_scan` of any text, every view included (``text`` already cut to :data:`MAX_SCAN_CHARS`)."""
    bad = find_invisible(text)
    if bad:
        return f"Blocked: content contains invisible unicode character {bad} (possible injection)."
    norm = for_matching(text)
    hits, inner = _scan_views(norm, True)
    if hits:
        return _blocked(hits[0], f" (encoded text that decodes to '{inner}')" if inner else "")
    learned = _learned(norm)
    return None if learned is None else _learned_blocked(learned)


def _learned_blocked(learned: LearnedHit) -> str:
    grams = ", ".join(f"'{g}'" for g in learned.top)
    return _blocked(learned.family, f" (learned classifier: score {learned.score} over {learned.threshold}; strongest n-grams {grams})")


def _blocked(family: str, why: str) -> str:
    return (
        f"Blocked: content matches threat pattern '{family}'{why}. Memory entries are injected into the "
        "system prompt, so they must not contain injection or exfiltration payloads. Rephrase the "
        "note as a plain fact."
    )
