"""Our query plan (:func:`hermes_memory.sessions.fts.build_query`) as PostgreSQL ``tsquery`` text.

The planner is shared with SQLite, so both backends read a query the same way: natural text never
raises, upper-case ``AND``/``OR``/``NOT``/``NEAR`` are words unless the caller opts into query
syntax, a plan with no positive term falls back to words, ``"phrases"`` and ``word*`` prefixes are
honoured. This module only *translates* the plan's FTS5 expression (which the planner generates
itself, in a small grammar: quoted phrases of alphanumeric pieces, an optional ``*``, ``OR`` /
``AND`` / ``NOT`` between them and ``NEAR(...)`` groups) into the ``to_tsquery`` input syntax.

User text never reaches SQL: the tsquery text is passed as a bind parameter to ``to_tsquery``,
and every lexeme in it is single-quoted with ``'`` and ``\\`` escaped (:func:`quote_lexeme`), so
no character of a query can act as a tsquery operator (failure case C14: ``alice::bob``,
``a & | b``, ``!``, ``(``, ``:*``).

Operator precedence follows FTS5 (``NOT`` binds tightest, then ``AND``, then ``OR``; ``a NOT b`` is
``a AND NOT b``); the rendering parenthesises every group, so tsquery's own precedence never
matters. ``NEAR(a b)`` of two words (FTS5: at most 10 tokens between them) becomes one ``<N>``
alternative per allowed distance, in both orders (tsquery's ``<N>`` is an exact distance); a
``NEAR`` of phrases or of three or more members is rendered as ``a & b & ...`` (all present, the
distance unchecked): the one place where PostgreSQL can match more rows than SQLite.

Pure functions; nothing here touches a database and nothing raises on a plan built by
``build_query``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hermes_memory.sessions import fts as fts_mod

NEAR_DISTANCE = 10
"""FTS5's default NEAR distance: tokens allowed between the phrases of a ``NEAR`` group."""
_TOKEN_RE = re.compile(r'"((?:[^"]|"")*)"(\*?)|NEAR\(|\)|AND|OR|NOT')


def quote_lexeme(text: str) -> str:
    """``text`` as one single-quoted tsquery operand: ``'`` doubled and ``\\`` escaped, so the
    text can hold no operator (``quote_lexeme("it's")`` -> ``'it''s'``)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def phrase(pieces: list[str], prefix: bool = False) -> str:
    """tsquery text of one phrase: its pieces joined by ``<->`` (adjacent, in order); ``prefix``
    makes the last piece a prefix (``:*``), as FTS5's ``"a b"*`` does. ``""`` for no pieces."""
    parts = [quote_lexeme(p) for p in pieces if p]
    if not parts:
        return ""
    if prefix:
        parts[-1] += ":*"
    return parts[0] if len(parts) == 1 else "(" + " <-> ".join(parts) + ")"


def term_tsquery(term: fts_mod.Term) -> str:
    """tsquery text of one planned :class:`~hermes_memory.sessions.fts.Term`."""
    return phrase(term.pieces, term.prefix)


@dataclass
class _Node:
    op: str  # "phrase", "and", "or", "not", "near"
    text: str = ""
    kids: list[_Node] = field(default_factory=list)


class _Parser:
    """Recursive descent over the planner's FTS5 expression (see the module docstring)."""

    def __init__(self, expr: str) -> None:
        self.tokens: list[tuple[str, str]] = []
        for m in _TOKEN_RE.finditer(expr):
            if m.group(1) is not None:
                pieces = m.group(1).replace('""', '"').split()
                self.tokens.append(("phrase", phrase(pieces, bool(m.group(2)))))
            else:
                self.tokens.append((m.group(0), m.group(0)))
        self.pos = 0

    def peek(self) -> str | None:
        return self.tokens[self.pos][0] if self.pos < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        tok = self.tokens[self.pos]
        self.pos += 1
        return tok

    def parse_or(self) -> _Node | None:
        kids = [k for k in [self.parse_and()] if k]
        while self.peek() == "OR":
            self.take()
            kid = self.parse_and()
            if kid:
                kids.append(kid)
        return _group("or", kids)

    def parse_and(self) -> _Node | None:
        kids = [k for k in [self.parse_not()] if k]
        while self.peek() == "AND":
            self.take()
            kid = self.parse_not()
            if kid:
                kids.append(kid)
        return _group("and", kids)

    def parse_not(self) -> _Node | None:
        left = self.primary()
        while self.peek() == "NOT":
            self.take()
            right = self.primary()
            if left is None:
                left = None  # FTS5 has no bare NOT; the planner never writes one
            elif right is not None:
                left = _Node("not", kids=[left, right])
        return left

    def primary(self) -> _Node | None:
        kind = self.peek()
        if kind == "phrase":
            text = self.take()[1]
            return _Node("phrase", text) if text else None
        if kind == "NEAR(":
            self.take()
            kids: list[_Node] = []
            while self.peek() == "phrase":
                text = self.take()[1]
                if text:
                    kids.append(_Node("phrase", text))
            if self.peek() == ")":
                self.take()
            return _Node("near", kids=kids) if len(kids) > 1 else _group("and", kids)
        if kind is not None and kind not in ("OR", "AND", "NOT"):
            self.take()  # a stray ")": skip it
            return self.primary()
        return None


def _group(op: str, kids: list[_Node]) -> _Node | None:
    if not kids:
        return None
    return kids[0] if len(kids) == 1 else _Node(op, kids=kids)


def _render(node: _Node) -> str:
    if node.op == "phrase":
        return node.text
    if node.op == "near":
        return _render_near(node.kids)
    if node.op == "not":
        return "(" + _render(node.kids[0]) + " & !" + _render(node.kids[1]) + ")"
    joiner = " | " if node.op == "or" else " & "
    return "(" + joiner.join(_render(k) for k in node.kids) + ")"


def _render_near(kids: list[_Node]) -> str:
    """FTS5's ``NEAR(a b)``: at most :data:`NEAR_DISTANCE` tokens between the two, either order.
    Two one-word phrases become every allowed distance (``a <1> b | ... | b <11> a``, exact);
    longer phrases or more members become ``a & b & ...`` (all present, distance unchecked)."""
    single = [k.text for k in kids if k.op == "phrase" and not k.text.startswith("(") and ":*" not in k.text]
    if len(kids) == 2 and len(single) == 2:
        a, b = single
        alts = [f"{x} <{n}> {y}" for n in range(1, NEAR_DISTANCE + 2) for x, y in ((a, b), (b, a))]
        return "(" + " | ".join(alts) + ")"
    return "(" + " & ".join(_render(k) for k in kids) + ")"


def fts_to_tsquery(expr: str | None) -> str | None:
    """The ``to_tsquery`` text of a planner FTS5 expression, or ``None`` when it holds no phrase.

    Example: ``"chat send" OR "deploy"*`` -> ``(('chat' <-> 'send') | 'deploy':*)``.
    """
    if not expr:
        return None
    node = _Parser(expr).parse_or()
    return _render(node) if node else None


def like_literals(cjk_trigram: str | None) -> list[str]:
    """The literals of a plan's ``cjk_trigram`` expression (``"a" OR "b"``, ``""`` escapes a quote)."""
    if not cjk_trigram:
        return []
    return [m.group(1).replace('""', '"') for m in re.finditer(r'"((?:[^"]|"")*)"', cjk_trigram)]


@dataclass(frozen=True)
class TsPlan:
    """A :class:`~hermes_memory.sessions.fts.QueryPlan` for PostgreSQL.

    ``query``: ``to_tsquery`` text of the whole ``plan.fts`` (``None`` when the plan has none).
    ``or_terms``: tsquery text of each of ``plan.or_terms`` (plain OR queries: each term is scored
    with its own IDF), aligned with them. ``exclude``: tsquery text of the words written after
    ``NOT`` (they also leave the CJK side). ``trigram``: substrings of 3+ characters looked up with
    ``ILIKE`` among rows holding CJK text (SQLite's trigram side table); ``like``: the 1-2
    character CJK substrings (``ILIKE`` too: the trigram index cannot serve them). ``exclude_like``:
    CJK literals after ``NOT``, left out of every result.
    """

    query: str | None
    or_terms: list[str]
    exclude: list[str]
    trigram: list[str]
    like: list[str]
    exclude_like: list[str]


def ts_plan(plan: fts_mod.QueryPlan) -> TsPlan:
    """Translate ``plan`` (see :class:`TsPlan`). Never raises."""
    return TsPlan(
        query=fts_to_tsquery(plan.fts),
        or_terms=[term_tsquery(t) for t in plan.or_terms],
        exclude=[q for q in (fts_to_tsquery(x) for x in plan.exclude_fts) if q],
        trigram=like_literals(plan.cjk_trigram),
        like=list(plan.cjk_like),
        exclude_like=list(plan.exclude_like),
    )
