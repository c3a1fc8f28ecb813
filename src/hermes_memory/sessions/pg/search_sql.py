"""The SQL of message search on PostgreSQL (pure: statements and parameters, nothing is run).

Each statement selects ``id``, ``session_id`` and ``score`` (higher is better; the ``"cjk"``
and ``"glued"`` steps select ``ts``, the message time, instead of ``score``); :func:`one_statement`
sends several of them in one round trip. Filters are the backend-neutral
:func:`hermes_memory.sessions.message_search.filter_sql` with psycopg placeholders, so both
backends keep exactly the same rows. Every user-supplied value is a bind parameter; the only
text put into the statements comes from this module's constants.

Scoring (``"fts"``, ``"top_up"``): a plain OR query scores each term on its own,
``sum(idf(term) * ts_rank_cd(WEIGHTS, tsv, term, RANK_NORMALIZATION))``, which is BM25's shape
(IDF times a saturating, length-normalised term frequency, docs/reference.md §6); other queries
(``AND``/``NOT``/``NEAR``/one term) use ``ts_rank_cd`` of the whole query.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hermes_memory.sessions import fts as fts_mod
from hermes_memory.sessions import hmcontext
from hermes_memory.sessions.message_search import SearchFilters, filter_sql, sort_order
from hermes_memory.sessions.pg.search_schema import (
    CONTENT_CJK_PREDICATE,
    CONTENT_CJK_TEXT,
    CONTENT_GLUED_VECTOR,
    TS_CONFIG,
)
from hermes_memory.sessions.pg.tsquery import TsPlan, quote_lexeme

TSV = "m.search_vector"
"""The messages' weighted ``tsvector`` (:mod:`hermes_memory.sessions.pg.search_schema`): content
weight A, tool name B, tool-call arguments C (SQLite's BM25 column weights 1.0 / 0.8 / 0.4)."""
CONTEXT_TSV = f"({TSV} || coalesce(m.hm_context, ''::tsvector))"
"""A row's own vector and the previous turn's text (weight D, :mod:`hermes_memory.sessions.pg.context_schema`)."""
WEIGHTS = f"'{{{hmcontext.BEFORE_WEIGHT}, 0.4, 0.8, 1.0}}'::float4[]"
"""``ts_rank_cd`` weights of D, C, B, A: the previous turn's text 0.2, tool-call arguments 0.4,
tool name 0.8, content 1.0 (SQLite's BM25 column weights)."""
RANK_NORMALIZATION = 1 | 32
"""``ts_rank_cd`` normalisation: divide by 1 + log(document length) (BM25's length norm) and
then ``rank / (rank + 1)`` (BM25's term-frequency saturation)."""
SEARCH_STEPS = ("fts", "top_up", "cjk", "glued")
SCORED_VECTOR = "c.v"
"""The scored rows' vector (:data:`CONTEXT_TSV`), computed once per matching row in a subquery:
written inside every ``ts_rank_cd`` call it was concatenated once per term (five times for a
five-word question), which cost half the statement (100k messages, 1,565 candidates: 57 -> 28 ms,
the same scores)."""

TSQ = f"to_tsquery('{TS_CONFIG}', %s)"
"""A tsquery from a bind parameter (tsquery text built by :mod:`hermes_memory.sessions.pg.tsquery`)."""
_TEXT = (CONTENT_CJK_TEXT.replace("(content", "(m.content").replace("(tool_name", "(m.tool_name")
         .replace("(tool_calls", "(m.tool_calls"))
_HAS_CJK = CONTENT_CJK_PREDICATE.replace(CONTENT_CJK_TEXT, _TEXT)  # the partial indexes' predicate (schema 10), as a constant
_GLUED = CONTENT_GLUED_VECTOR.replace(CONTENT_CJK_TEXT, _TEXT)  # the expression of index hm_messages_cjk_words (schema 10)
_CALLS = "hm_json_text(m.tool_calls)"
"""The decoded tool-call text, as :data:`~hermes_memory.sessions.pg.search_schema.CONTENT_CJK_TEXT` holds it."""
_CONTENT = "hm_json_text(m.content)"
"""The decoded content, as :data:`~hermes_memory.sessions.pg.search_schema.CONTENT_CJK_TEXT` holds it."""


@dataclass(frozen=True)
class Scoring:
    """How the ``"fts"``/``"top_up"`` statements score rows: ``terms`` (tsquery texts) with their
    ``idfs``; no terms means ``ts_rank_cd`` of the statement's own query."""

    terms: tuple[str, ...] = ()
    idfs: tuple[float, ...] = ()


def pg_filter_sql(f: SearchFilters) -> tuple[str, list[Any], bool]:
    """:func:`~hermes_memory.sessions.message_search.filter_sql` with ``%s`` placeholders (its
    SQL holds no ``?`` or ``%`` but its placeholders: patterns are parameters)."""
    cond, params, needs_session = filter_sql(f)
    return cond.replace("?", "%s"), params, needs_session


def score_sql(scoring: Scoring, query: str, context: bool = False, vector: str | None = None) -> tuple[str, list[Any]]:
    """The ``score`` expression and its parameters (see :class:`Scoring`); ``context``: the
    previous turn's text counts (:data:`CONTEXT_TSV`); ``vector``: an expression already holding
    that vector (the statements compute it once per row, :data:`SCORED_VECTOR`)."""
    tsv = vector or (CONTEXT_TSV if context else TSV)
    if not scoring.terms:
        return f"ts_rank_cd({WEIGHTS}, {tsv}, {TSQ}, {RANK_NORMALIZATION})", [query]
    parts, params = [], []
    for term, idf in zip(scoring.terms, scoring.idfs, strict=True):
        parts.append(f"%s::float8 * ts_rank_cd({WEIGHTS}, {tsv}, {TSQ}, {RANK_NORMALIZATION})")
        params += [float(idf), term]
    return "(" + " + ".join(parts) + ")", params


def negation_sql(ts: TsPlan, *, cjk_step: bool) -> tuple[str, list[Any]]:
    """Conditions leaving out rows holding a CJK literal written after ``NOT`` (every step) and,
    on the CJK step, rows matching the other words written after ``NOT``."""
    sql, params = "", []
    for lit in ts.exclude_like:
        sql += f" AND NOT ({_TEXT} ILIKE %s ESCAPE '\\')"
        params.append("%" + fts_mod.like_escape(lit) + "%")
    if cjk_step and ts.exclude:
        sql += f" AND NOT ({TSV} @@ {TSQ})"
        params.append(" | ".join(ts.exclude))
    return sql, params


def build_pg_search_sql(
    step: str,
    ts: TsPlan,
    filters: SearchFilters,
    sort: str | None,
    *,
    limit: int,
    query: str | None = None,
    scoring: Scoring | None = None,
    min_id: int | None = None,
    literals: list[str] | None = None,
    context: bool = False,
) -> tuple[str, list[Any]]:
    """One statement of a PostgreSQL search as ``(sql, params)``, at most ``limit`` rows.

    * ``"fts"``: rows whose ``tsvector`` matches ``query`` (default ``ts.query``; the capped
      query under the posting budget), in ``sort`` order (score, then newest id, under
      relevance); ``min_id`` keeps ids ``>= min_id`` (the recency window).
    * ``"top_up"``: the newest rows matching the full ``ts.query``, scored like ``"fts"``.
    * ``"cjk"``: rows holding CJK text whose content, tool name or decoded tool calls contain one of ``literals``
      (``ILIKE``, served by the trigram index; ``%``/``_`` match themselves), newest first under
      relevance, else in ``sort``'s time order.
    * ``"glued"``: rows holding CJK text in which one of the words ``literals`` is written
      (stemmed; also against CJK characters, ``Python`` in ``用Python写``), from the partial index
      ``hm_messages_cjk_words`` (:data:`hermes_memory.sessions.pg.search_schema.CONTENT_CJK_MIGRATION_SQL`),
      ordered as ``"cjk"``: what ``"cjk"`` found by substring for a query holding no CJK.

    ``context`` (``"fts"``/``"top_up"``): rows also match, and are scored, on the previous turn's
    text (``plan.context`` under relevance, as on SQLite).

    Every step applies ``filters`` and the negated words (:func:`negation_sql`). Raises
    ``ValueError`` for an unknown step, or a ``"cjk"``/``"glued"`` step without literals.
    """
    cond, params, needs_session = pg_filter_sql(filters)
    order_kind = sort_order(sort)
    join_s = " JOIN sessions s ON s.id = m.session_id" if needs_session else ""
    if step in ("fts", "top_up"):
        expr = (query or ts.query) if step == "fts" else ts.query
        neg, neg_params = negation_sql(ts, cjk_step=False)
        # scored on the row with its previous turn either way: SQLite's BM25 counts the previous
        # turn in a row's length even when only the row's own text may match
        score, score_params = score_sql(scoring or Scoring(), expr or "", True, vector=SCORED_VECTOR)
        match = f"({TSV} @@ {TSQ} OR m.hm_context @@ {TSQ})" if context else f"{TSV} @@ {TSQ}"
        match_params = [expr, expr] if context else [expr]
        # "+ 0": the window must not become a primary-key range scan filtering every row by the
        # tsquery (the GIN index finds the matches; the window only trims them, through the BRIN
        # index of id + 0, before their rows are read: search_schema.WINDOW_MIGRATION_SQL)
        window = " AND m.id + 0 >= %s" if step == "fts" and min_id else ""
        wparams = [min_id] if window else []
        if step == "top_up":
            order = "c.id DESC"
        else:
            order = {"newest": "c.timestamp DESC, c.id DESC", "oldest": "c.timestamp ASC, c.id ASC",
                     "relevance": "score DESC, c.id DESC"}[order_kind]
        where = f"FROM messages m{join_s} WHERE {match}{window}{cond}{neg}"
        if order.startswith("score"):
            # every matching row is scored: first the rows (filters applied), then their vector
            # once each (OFFSET 0 keeps the planner from folding the subquery back into one
            # concatenation per ts_rank_cd call)
            rows = f"SELECT m.id AS id, m.session_id AS session_id, m.timestamp AS timestamp, {CONTEXT_TSV} AS v {where} OFFSET 0"
            sql = f"SELECT c.id AS id, c.session_id AS session_id, {score} AS score FROM ({rows}) c ORDER BY {order} LIMIT %s"
        else:
            # a time order: the page's rows first, then only they get a vector and a score
            first = (f"SELECT m.id AS id, m.session_id AS session_id, m.timestamp AS timestamp, {TSV} AS sv, "
                     f"m.hm_context AS hc {where} ORDER BY {order.replace('c.', 'm.')} LIMIT %s")
            rows = (f"SELECT l.id, l.session_id, l.timestamp, (l.sv || coalesce(l.hc, ''::tsvector)) AS v "
                    f"FROM ({first}) l OFFSET 0")
            sql = f"SELECT c.id AS id, c.session_id AS session_id, {score} AS score FROM ({rows}) c ORDER BY {order}"
        return sql, [*score_params, *match_params, *wparams, *params, *neg_params, limit]
    if step == "glued":
        words = list(literals or [])
        if not words:
            raise ValueError("the glued step needs at least one word")
        neg, neg_params = negation_sql(ts, cjk_step=True)
        by_time = "m.timestamp ASC, m.id ASC" if order_kind == "oldest" else "m.timestamp DESC, m.id DESC"
        order = "m.id + 0 DESC" if order_kind == "relevance" else by_time
        sql = (f"SELECT m.id AS id, m.session_id AS session_id, m.timestamp AS ts FROM messages m{join_s} "
               f"WHERE {_GLUED} @@ {TSQ} AND {_HAS_CJK}{cond}{neg} ORDER BY {order} LIMIT %s")
        return sql, [glued_tsquery(words), *params, *neg_params, limit]
    if step == "cjk":
        lits = list(literals or [])
        if not lits:
            raise ValueError("the cjk step needs at least one literal")
        neg, neg_params = negation_sql(ts, cjk_step=True)
        # the whole text is what the trigram index serves; content, tool name or decoded tool
        # calls alone is what SQLite matches (no match across the spaces between them)
        one = (f"({_TEXT} ILIKE %s ESCAPE '\\' AND ({_CONTENT} ILIKE %s ESCAPE '\\' OR m.tool_name ILIKE %s ESCAPE '\\'"
               f" OR {_CALLS} ILIKE %s ESCAPE '\\'))")
        match = " OR ".join([one] * len(lits))
        match_params = [p for lit in lits for p in ["%" + fts_mod.like_escape(lit) + "%"] * 4]
        by_time = "m.timestamp ASC, m.id ASC" if order_kind == "oldest" else "m.timestamp DESC, m.id DESC"
        # "+ 0": newest-first must not walk the primary key backwards testing each row (the
        # planner's LIMIT gamble); the partial trigram index finds the few CJK rows first
        order = "m.id + 0 DESC" if order_kind == "relevance" else by_time
        sql = (f"SELECT m.id AS id, m.session_id AS session_id, m.timestamp AS ts FROM messages m{join_s} "
               f"WHERE ({match}) AND {_HAS_CJK}{cond}{neg} ORDER BY {order} LIMIT %s")
        return sql, [*match_params, *params, *neg_params, limit]
    raise ValueError(f"unknown search step {step!r}; expected one of {', '.join(SEARCH_STEPS)}")


def glued_tsquery(words: list[str]) -> str:
    """tsquery text matching any of ``words`` (each one quoted lexeme: no operator can come from them)."""
    return " | ".join(quote_lexeme(w) for w in words)


def one_statement(parts: list[tuple[str, list[Any]]]) -> tuple[str, list[Any]]:
    """Several statements of :func:`build_pg_search_sql` as one (one round trip): each keeps its
    own order and limit and its rows come tagged with its index in ``parts``, as
    ``(part, id, session_id, score_or_ts)``. Raises ``ValueError`` for no part."""
    if not parts:
        raise ValueError("one_statement needs at least one statement")
    sql = " UNION ALL ".join(f"(SELECT {i} AS part, p{i}.* FROM ({s}) p{i})" for i, (s, _) in enumerate(parts))
    return sql, [p for _, params in parts for p in params]
