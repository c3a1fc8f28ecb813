"""Turning anything a user or model types into a safe, useful SQLite FTS5 query.

Two entry points:

* :func:`sanitize_fts5_query` -- the reference agent's sanitiser (docs/reference.md §6):
  keeps FTS5 syntax the user clearly meant (balanced ``"phrases"``, ``term*`` prefixes,
  ``AND``/``OR``/``NOT`` between terms) and neutralises the rest. Its output is valid FTS5
  syntax for every input (no ``+{}():^``, no unbalanced quote, no dangling operator).
* :func:`build_query` -- what :meth:`SessionDB.search_messages` actually runs. It turns a
  keyword query *or a natural-language question* into an OR of informative terms:
  stopwords and one-letter words are dropped (unless nothing else is left), every
  whitespace token is sent as a quoted phrase of its word pieces (so ``gateway/run.py``
  becomes the phrase ``gateway run py``, ``chat-send`` needs the two words adjacent, and
  ``TODO:``/``C:\\Users`` can never start a column filter, failure cases B19/B20), ``OR`` is
  the default. Upper-case ``AND``/``OR``/``NOT``/``NEAR`` are ordinary words ("do NOT deploy"
  searches *deploy*) unless the caller opts into query syntax (``syntax=True``): then they
  are operators between terms, and a plan left with no positive term ("do NOT deploy" with the
  stopword dropped, a query of only operators) falls back to reading the terms as words, so it
  never reports "no results" for text that is there. BM25 then ranks rows matching more (and
  rarer) terms first. CJK text is routed to the trigram side table (failure case B23): see
  :class:`QueryPlan`.

Nothing here touches the database; both functions are pure and never raise on ``str`` input.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from hermes_memory.sessions import cjk_question
from hermes_memory.sessions.word_match import WordMatcher, word_pattern

MAX_QUERY_CHARS = 2048
"""Queries are cut to this many characters before parsing (reference cap)."""

# CJK scripts: Hangul Jamo, CJK radicals/punctuation, Hiragana, Katakana, Bopomofo, Hangul
# compatibility Jamo, CJK extension A, CJK unified ideographs, Yi, Hangul syllables,
# compatibility ideographs, half-width forms, and the supplementary ideograph planes.
_CJK_CLASS = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3100-\u312f\u3130-\u318f"
    "\u31a0-\u31ff\u3200-\u32ff\u3300-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf"
    "\uac00-\ud7af\uf900-\ufaff\uff00-\uffef\U00020000-\U0003134f"
)
CJK_RE = re.compile(f"[{_CJK_CLASS}]")
CJK_RUN_RE = re.compile(f"[{_CJK_CLASS}]+")
# The same ranges as a SQLite GLOB class (used by the triggers that feed the trigram table).
# GLOB compares code points, so this matches what CJK_RE matches for the BMP ideographs,
# kana and Hangul that make up practically all CJK text.
CJK_GLOB = "*[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]*"

_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")
_WORD_PIECE_RE = re.compile(r"[^\W_]+")
_OPERATORS = frozenset({"AND", "OR", "NOT"})
_SYNTAX_OPERATORS = frozenset({"AND", "OR", "NOT", "NEAR"})
"""Upper-case words read as operators by :func:`build_query` when ``syntax=True``."""
# Clitic endings dropped after an apostrophe: "Caroline's" -> caroline, "don't" -> don.
_CLITICS = frozenset({"s", "t", "d", "m", "re", "ve", "ll"})

# English function words and question words. Dropping them turns "What did Caroline say about
# adoption agencies?" into caroline OR say OR adoption OR agencies. Hand-written list, in the
# spirit of the classic SMART / Lucene stopword lists, trimmed to words that carry no topic.
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me more most my myself no nor not now of off on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves also ever get got
    let may might must shall yet us lot really thing things much many like well still even
    one ones kind sort way ago s t d m ll re ve hey hi hello oh ok okay yes yeah
    """.split()
)


def contains_cjk(text: str | None) -> bool:
    """True if ``text`` holds at least one Chinese, Japanese or Korean character."""
    return text is not None and CJK_RE.search(text) is not None


def scrub_text(text: str) -> str:
    """Return ``text`` with lone UTF-16 surrogates replaced by ``?`` (SQLite rejects them)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", errors="replace").decode("utf-8")


# --------------------------------------------------------------------------- reference sanitiser
_PHRASE_RE = re.compile(r'"[^"]*"')
_SPECIALS_RE = re.compile(r'[+{}():^\[\]\\"~<>=,;!?\'`|&$#%@]')


def sanitize_fts5_query(query: str) -> str:
    """Make raw text a valid FTS5 expression, keeping the syntax the user evidently meant.

    Steps (reference ``_sanitize_fts5_query``): cap at :data:`MAX_QUERY_CHARS`; protect balanced
    ``"…"`` phrases; turn unmatched quotes and specials (``+{}():^`` …) into spaces; collapse ``*``
    runs and drop a ``*`` that does not follow a word; drop leading/trailing and repeated
    ``AND``/``OR``/``NOT``; quote terms containing ``-``, ``.``, ``/`` or ``_`` once; restore phrases.
    Returns ``""`` when nothing searchable is left. Never raises.

    >>> sanitize_fts5_query("chat-send AND")
    '"chat-send"'
    """
    text = _CONTROL_RE.sub(" ", scrub_text(str(query))[:MAX_QUERY_CHARS])
    phrases: list[str] = []

    def _keep(match: re.Match[str]) -> str:
        inner = match.group(0)[1:-1].strip()
        if not inner:
            return " "
        phrases.append('"' + inner + '"')
        return f" \x00{len(phrases) - 1}\x00 "

    text = _PHRASE_RE.sub(_keep, text)
    text = _SPECIALS_RE.sub(" ", text)
    text = re.sub(r"\*+", "*", text)
    out: list[str] = []
    for raw in text.split():
        if raw.startswith("\x00"):
            out.append(raw)
            continue
        token = raw.lstrip("*")
        if not token:
            continue
        if token in _OPERATORS:
            out.append(token)
            continue
        star = token.endswith("*")
        body = token.rstrip("*").replace("*", "")
        if not body.strip("-./_"):
            continue
        if any(ch in body for ch in "-./_"):
            body = '"' + body + '"'
        out.append(body + ("*" if star else ""))
    # drop dangling / repeated operators
    cleaned: list[str] = []
    for tok in out:
        if tok in _OPERATORS and (not cleaned or cleaned[-1] in _OPERATORS):
            continue
        cleaned.append(tok)
    while cleaned and cleaned[-1] in _OPERATORS:
        cleaned.pop()
    result = " ".join(cleaned)
    return re.sub(r"\x00(\d+)\x00", lambda m: phrases[int(m.group(1))], result)


# --------------------------------------------------------------------------- query plan
@dataclass
class Term:
    """One searchable unit: the word pieces of one whitespace token or one quoted phrase."""

    pieces: list[str]
    prefix: bool = False
    raw: str = ""
    quoted: bool = False

    def render(self) -> str:
        """FTS5 text for this term: a quoted phrase (pieces are alphanumeric, so no escaping)."""
        return '"' + " ".join(self.pieces) + '"' + ("*" if self.prefix else "")

    @property
    def informative(self) -> bool:
        """False for stopwords and one-letter words; a "quoted phrase" is always informative."""
        if self.quoted:
            return True
        return any(
            (p.lower() not in STOPWORDS) and (len(p) > 1 or p.isdigit()) for p in self.pieces
        )


@dataclass
class QueryPlan:
    """What to run for one user query.

    ``fts``: an FTS5 MATCH expression for the main (unicode61 + porter) index, or ``None``.
    ``cjk_trigram``: a MATCH expression for the CJK trigram side table (tokens of 3+ characters
    that contain CJK, plus informative ASCII tokens of 3+ characters that may be glued to CJK
    text, e.g. ``itgc`` in ``gen-itgc后``), or ``None``.
    ``cjk_like``: substrings of 1-2 characters that contain CJK (trigram cannot match them); they
    are looked up with an escaped ``LIKE`` over the CJK side table only.
    ``terms``: the informative terms kept, for snippets and explanations.
    ``empty`` is True when nothing searchable remains (``""``, ``***``, ``"``): search returns ``[]``.
    """

    fts: str | None = None
    cjk_trigram: str | None = None
    cjk_like: list[str] = field(default_factory=list)
    terms: list[str] = field(default_factory=list)
    or_terms: list[Term] = field(default_factory=list)
    """The terms of ``fts`` when it is a plain OR (no AND/NOT from the user); else empty.
    :class:`SessionDB` may drop the most frequent of these to bound the work (see its docs)."""
    exclude_fts: list[str] = field(default_factory=list)
    """Rendered terms written after ``NOT``: rows matching them are left out of the CJK side too."""
    exclude_like: list[str] = field(default_factory=list)
    """CJK literals written after ``NOT``: rows containing them are left out of every result."""
    context: bool = False
    """True when the previous turn's text indexed with each row (:mod:`hermes_memory.sessions.hmcontext`)
    may match: a plain-word query (no query syntax) of two or more informative terms, whose words
    may be split across adjacent turns. A one-term lookup, a quoted phrase alone or query syntax
    matches rows' own text only."""
    fell_back: bool = False
    """True when query syntax was asked for but left no positive term (``NOT x`` after a dropped
    stopword, only operators), so the words were searched as plain terms instead."""
    stopwords_only: bool = False
    """True when no term is informative (only stopwords and one-letter words, no CJK, no quoted
    phrase), so the words were searched as typed instead of being dropped."""

    @property
    def empty(self) -> bool:
        return not (self.fts or self.cjk_trigram or self.cjk_like)


def _pieces(token: str) -> list[str]:
    pieces = _WORD_PIECE_RE.findall(token)
    if "'" in token or "\u2019" in token:
        # "caroline's" -> ["caroline"]; "it's" -> ["it"]
        while len(pieces) > 1 and pieces[-1].lower() in _CLITICS:
            pieces.pop()
    return pieces


def _phrase_literal(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


PLAN_CACHE_MAX = 256
"""Plans :func:`build_query` keeps (least recently used go first): one ``session_search`` call
plans its query four times (the search, the title search, the snippets, the note), about 0.1 ms
of CPU each for a ten-word question."""


def build_query(query: str, syntax: bool = False) -> QueryPlan:
    """Plan the search for ``query`` (any string). Never raises; see :class:`QueryPlan`.

    The plan is pure in ``(query, syntax)`` and kept (:data:`PLAN_CACHE_MAX`): callers get the same
    object for the same arguments and must not change it.

    ``syntax``: read upper-case ``AND``/``OR``/``NOT``/``NEAR`` between terms as operators
    (``a NEAR b`` -> ``NEAR("a" "b")``, FTS5's default distance of 10 tokens). Off by default:
    they are ordinary words of the text. With ``syntax`` a plan with no positive term, or whose
    every positive term is also excluded (``deploy NOT deploy``, which can match nothing), is
    re-planned as words (``fell_back`` is then True). Quoted phrases and ``term*`` prefixes
    are honoured in both modes.

    Examples: ``"What did Caroline say about adoption?"`` -> fts ``"Caroline" OR "say" OR
    "adoption"``; ``chat-send`` -> ``"chat send"``; ``it's`` -> ``"it"`` (only stopwords, so
    they are kept); ``do NOT deploy`` -> ``"deploy"``; ``***`` -> empty plan; ``悬空`` ->
    cjk_like ``["悬空"]``.
    """
    text = query if isinstance(query, str) else ("" if query is None else str(query))
    if len(text) > MAX_QUERY_CHARS:  # not kept: a long text would stay in memory as the key
        return _new_plan(text, bool(syntax))
    return _kept_plan(text, bool(syntax))


def _new_plan(query: str, syntax: bool) -> QueryPlan:
    """:func:`build_query`'s plan, made afresh."""
    plan = _plan(query, syntax)
    plan.context = not syntax and len(plan.or_terms) >= 2
    if syntax and (not (plan.fts or plan.cjk_trigram or plan.cjk_like) or _cancels_itself(plan)):
        words = _plan(query, False)
        if not words.empty:
            words.fell_back = True
            words.context = len(words.or_terms) >= 2
            return words
    return plan


_kept_plan = functools.lru_cache(maxsize=PLAN_CACHE_MAX)(_new_plan)


def _cancels_itself(plan: QueryPlan) -> bool:
    """True when every positive term of ``plan`` is also excluded, so no row could ever match."""
    positive = {t.lower() for t in plan.terms}
    excluded = {x.strip('"*').lower() for x in plan.exclude_fts} | {x.lower() for x in plan.exclude_like}
    return bool(positive) and positive <= excluded


def _plan(query: str, syntax: bool) -> QueryPlan:
    text = scrub_text(str(query) if query is not None else "")[:MAX_QUERY_CHARS]
    text = _CONTROL_RE.sub(" ", text)  # a NUL would end the FTS5 expression early
    # 1. split into tokens, keeping balanced "quoted phrases" whole
    items: list[tuple[str, str]] = []  # (kind, text) kind in {"phrase", "word", "op"}
    pos = 0
    for match in _PHRASE_RE.finditer(text):
        items.extend(_words(text[pos : match.start()], syntax))
        inner = match.group(0)[1:-1]
        if inner.strip():
            items.append(("phrase", inner))
        pos = match.end()
    items.extend(_words(text[pos:], syntax))

    # 2. classify
    seq: list[tuple[str, Term | str]] = []  # ("term", Term) | ("op", "AND") | ("cjk", raw)
    for kind, raw in items:
        if kind == "op":
            seq.append(("op", raw))
            continue
        if contains_cjk(raw):
            # CJK tokens go to the trigram side table as literal substrings (quotes removed).
            literal = raw.replace('"', "").strip().rstrip("*").strip()
            if literal:
                seq.append(("cjk", literal))
                if kind == "word" and not syntax:  # a question typed without spaces: its key terms too
                    seq.extend(("cjk", piece) for piece in cjk_question.key_terms(literal))
            continue
        prefix = kind == "word" and raw.endswith("*") and len(raw.rstrip("*")) > 0
        pieces = _pieces(raw)
        if pieces:
            seq.append(("term", Term(pieces=pieces, prefix=prefix, raw=raw.strip("*"), quoted=kind == "phrase")))

    # 2b. items written right after NOT (with something searchable before it) are negated
    negated: set[int] = set()
    searchable_before = False
    for i, (kind, _item) in enumerate(seq):
        if kind == "op":
            continue
        if searchable_before and i > 0 and seq[i - 1] == ("op", "NOT"):
            negated.add(i)
        searchable_before = True

    terms = [t for k, t in seq if k == "term"]
    informative = [t for t in terms if isinstance(t, Term) and t.informative]
    # a query of only stopwords/one-letter words is searched as typed, unless CJK words carry it
    keep_all = not informative and not any(k == "cjk" for k, _ in seq)
    plan = QueryPlan(stopwords_only=keep_all and bool(terms))

    # 3. main FTS expression: terms joined by OR unless the user wrote AND/NOT between them
    parts: list[str] = []
    pending_op: str | None = None
    seen: set[str] = set()
    near: dict[int, list[str]] = {}  # index in parts -> the phrases of its NEAR group
    for i, (kind, item) in enumerate(seq):
        if kind == "op":
            if parts:
                pending_op = str(item)
            continue
        if kind == "cjk":
            pending_op = None  # an operator before a CJK word belongs to it, not to the next word
            continue
        assert isinstance(item, Term)
        if not keep_all and not item.informative:
            pending_op = None if pending_op == "OR" else pending_op
            continue
        rendered = item.render()
        if i in negated:
            plan.exclude_fts.append(rendered)
            if not parts or pending_op != "NOT":  # "记忆 NOT word": FTS5 has no bare NOT
                pending_op = None
                continue
        if pending_op == "NEAR" and parts:
            # "a NEAR b NEAR c" -> NEAR("a" "b" "c"): the last part grows into a NEAR group
            members = near.setdefault(len(parts) - 1, [parts[-1]])
            members.append(rendered)
            parts[-1] = "NEAR(" + " ".join(members) + ")"
            plan.terms.append(" ".join(item.pieces))
            pending_op = None
            continue
        if rendered.lower() in seen:
            continue
        seen.add(rendered.lower())
        if parts:
            parts.append(pending_op if pending_op in _OPERATORS else "OR")
        parts.append(rendered)
        if i not in negated:
            plan.terms.append(" ".join(item.pieces))
        pending_op = None
    plan.fts = " ".join(parts) or None
    if plan.fts and not near and "AND" not in parts[1::2] and "NOT" not in parts[1::2]:
        plan.or_terms = [t for k, t in seq if k == "term" and isinstance(t, Term) and t.render() in parts]
        uniq: dict[str, Term] = {}
        for t in plan.or_terms:
            uniq.setdefault(t.render().lower(), t)
        plan.or_terms = list(uniq.values())

    # 4. CJK side: tokens with CJK, plus informative ASCII tokens that may be glued to CJK text
    trigram: list[str] = []
    for i, (kind, item) in enumerate(seq):
        if i in negated:
            if kind == "cjk":
                plan.exclude_like.append(str(item))
            continue
        if kind == "cjk":
            literal = str(item)
            plan.terms.append(literal)
            if len(literal) >= 3:
                trigram.append(_phrase_literal(literal))
            else:
                # LIKE folds only ASCII case, so "É记" is looked up by its CJK part alone
                plan.cjk_like.extend(CJK_RUN_RE.findall(literal) or [literal])
        elif kind == "term" and isinstance(item, Term) and (keep_all or item.informative):
            word = "".join(item.pieces) if len(item.pieces) == 1 else None
            if word and len(word) >= 3 and word.isascii():
                trigram.append(_phrase_literal(word))
    if trigram:
        plan.cjk_trigram = " OR ".join(dict.fromkeys(trigram))
    return plan


def _words(chunk: str, syntax: bool) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for raw in chunk.replace('"', " ").split():
        if syntax and raw in _SYNTAX_OPERATORS:
            out.append(("op", raw))
        else:
            out.append(("word", raw))
    return out


def like_escape(text: str) -> str:
    """Escape ``%``, ``_`` and ``\\`` for a ``LIKE … ESCAPE '\\'`` pattern."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


_ADJACENT_MARKS = re.compile(r"<<<([ \t'\u2019-]+)>>>")


class Highlighter:
    """Builds match-centred snippets in Python (no second FTS query): a word matches when it
    starts with a query word or with its porter stem (``adopt`` marks "adopting"); CJK terms
    match as substrings. Matches are wrapped in ``>>>``/``<<<`` (matches separated only by spaces,
    hyphens or apostrophes, as in a quoted phrase, share one pair), cuts marked with ``...``."""

    def __init__(self, terms: list[str], stems: list[str] | None = None, width: int = 240) -> None:
        words: set[str] = set()
        cjk: set[str] = set()
        for t in terms:
            for w in t.split():
                (cjk if contains_cjk(w) else words).add(w.lower())
        words |= {s.lower() for s in stems or [] if s}
        # without CJK terms a WordMatcher gives this pattern's matches without compiling it
        self._words = WordMatcher(words) if not cjk else None
        alts = sorted((re.escape(w) for w in words if w), key=len, reverse=True)
        cjk_alts = sorted((re.escape(w) for w in cjk if w), key=len, reverse=True)
        parts = []
        if alts:
            parts.append(word_pattern(words))
        if cjk_alts:
            parts.append("(?:" + "|".join(cjk_alts) + ")")
        self._re = re.compile("|".join(parts), re.IGNORECASE) if parts and cjk else None
        self.width = width

    def _first(self, text: str) -> int | None:
        if self._words is not None:
            return self._words.first(text)
        m = self._re.search(text) if self._re is not None else None
        return m.start() if m else None

    def matches(self, text: str) -> bool:
        return bool(text) and self._first(text) is not None

    def snippet(self, text: str) -> str:
        if not text:
            return ""
        first = self._first(text)
        if first is None:
            return text[: self.width] + ("..." if len(text) > self.width else "")
        start = max(0, first - self.width // 3)
        if start > 0:
            space = text.rfind(" ", 0, start)
            start = space + 1 if space >= 0 and start - space < 20 else start
        end = min(len(text), start + self.width)
        if self._words is not None:
            body = self._words.mark(text[start:end], ">>>", "<<<")
        else:
            assert self._re is not None
            body = self._re.sub(lambda m: ">>>" + m.group(0) + "<<<", text[start:end])
        # matched words next to each other ("deploy on Fridays", a quoted phrase) are one highlight
        body = _ADJACENT_MARKS.sub(r"\1", body)
        return ("..." if start > 0 else "") + body + ("..." if end < len(text) else "")
