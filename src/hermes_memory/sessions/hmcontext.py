"""The previous turn's text indexed with each turn (layout 3 of our ``hm_*`` index), as SQL.

A question's words are often split across adjacent turns ("What did Caroline research?" asked in
one turn, "adoption agencies" answered in the next), so each conversational turn is indexed with
the text of the turn before it in its session (column ``before``) at a low BM25 weight
(:data:`BEFORE_WEIGHT`): the answer turn then matches the question's words too, and ranks above
turns holding only one part. The turn *after* is credited at query time instead (the rerank's
neighbour bonus, :data:`hermes_memory.sessions.ranking.NEIGHBOUR_WEIGHT`), so an append never
rewrites an earlier row (measured: docs/reference.md §6).

* A **turn** is a ``user`` or ``assistant`` message with non-empty content; tool rows and empty
  assistant tool-call rows are neither given context nor used as context.
* Neighbours are found in conversation order, ``(timestamp, id)`` within the session, through the
  reference's own index ``idx_messages_session (session_id, timestamp)``: an index probe, whatever
  the size of the database or the session.
* A neighbour's text is cut to its first :data:`NEIGHBOUR_CHARS` characters.

Everything here builds SQL text for the triggers and builds of :mod:`hermes_memory.sessions.hmindex`
(valid in the reference agent's transactions: plain SQL, no function of ours). Appending a turn
indexes it with ``before`` (one more index probe); inserting a turn before a later one, or deleting
or changing a turn, rewrites the ``before`` of the turn after it, so deleted text leaves the index.
"""

from __future__ import annotations

from hermes_memory.sessions import jsontext

NEIGHBOUR_CHARS = 1000
"""Characters of the previous turn indexed as context (LoCoMo turns are 10-400 characters; agent
replies can be pages long, and their start is what the next turn usually answers)."""
BEFORE_WEIGHT = 0.2
"""BM25 weight of ``before`` beside content 1.0, tool name 0.8 and tool calls 0.4. Tuned on
LoCoMo conversations 0-2 (bench/locomo_recall.py, categories 1-4, no embeddings; docs/reference.md
§6): 0.1 / 0.2 / 0.3 gave any@1 42.0 / 42.3 / 43.1, any@10 75.2 / 78.1 / 78.6, session@10 95.6 /
95.6 / 95.0, multi-hop all@10 24.3 / 27.0 / 23.0: 0.2 for the multi-hop questions, the farthest
from their goal, at under a point of any@k."""
COLUMNS = ("content", "tool_name", "tool_calls", "before")
"""Columns of ``hm_messages_fts`` in layout 3."""
OWN_COLUMNS = "{content tool_name tool_calls}"
"""FTS5 column filter of a row's own text (without the previous turn's)."""


def is_turn(p: str) -> str:
    """SQL: row alias ``p`` is a conversational turn."""
    return f"({p}.role IN ('user', 'assistant') AND length({p}.content) > 0)"


def _neighbour(p: str, direction: str, col: str) -> str:
    """SQL subquery: ``col`` of the turn before (``direction='before'``) or after ``p`` in its session."""
    if direction == "before":
        cmp, order, tie = "<=", "DESC", "<"
    else:
        cmp, order, tie = ">=", "ASC", ">"
    return (
        f"(SELECT {col} FROM messages n WHERE n.session_id = {p}.session_id AND n.timestamp {cmp} {p}.timestamp "
        f"AND (n.timestamp {tie} {p}.timestamp OR n.id {tie} {p}.id) AND n.id <> {p}.id AND {is_turn('n')} "
        f"ORDER BY n.timestamp {order}, n.id {order} LIMIT 1)"
    )


def neighbour_id(p: str, direction: str) -> str:
    """SQL: id of the turn before/after ``p`` (NULL when none)."""
    return _neighbour(p, direction, "n.id")


def _text(expr: str) -> str:
    """SQL: a neighbour's text as context: content ``expr`` decoded (:mod:`jsontext`), cut."""
    return f"substr({jsontext.decoded(expr, prefixed=True)}, 1, {NEIGHBOUR_CHARS})"


def context(p: str) -> str:
    """SQL: the ``before`` value of row ``p``: the previous turn's text cut to :data:`NEIGHBOUR_CHARS`
    when ``p`` is a turn, else NULL."""
    return f"CASE WHEN {is_turn(p)} THEN {_neighbour(p, 'before', _text('n.content'))} END"


def after_insert(table: str, p: str) -> str:
    """Trigger statement after turn ``p`` was added: the turn after it (only when ``p`` was not
    appended at the end of its session) now has ``p`` before it."""
    return (f"UPDATE {table} SET before = {_text(f'{p}.content')} "
            f"WHERE rowid = {neighbour_id(p, 'after')} AND {is_turn(p)};")


def after_remove(table: str, p: str) -> str:
    """Trigger statement after turn ``p`` left (deleted, or before its new values are added): the
    turn after it now has ``p``'s previous turn before it."""
    return (f"UPDATE {table} SET before = (SELECT {_text('t.content')} FROM messages t "
            f"WHERE t.id = {neighbour_id(p, 'before')}) WHERE rowid = {neighbour_id(p, 'after')} AND {is_turn(p)};")


def next_turns_of(ids_sql: str) -> str:
    """SQL: ids of the turns right after the messages whose ids are ``ids_sql`` (a ``?`` list)."""
    return f"SELECT {neighbour_id('m', 'after')} FROM messages m WHERE m.id IN ({ids_sql})"


def own_text(expr: str) -> str:
    """``expr`` (an FTS5 query) restricted to rows' own text: the previous turn's is not matched."""
    return f"{OWN_COLUMNS} : ({expr})"
