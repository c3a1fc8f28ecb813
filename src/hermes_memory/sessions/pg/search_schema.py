"""The search columns and indexes that message search on PostgreSQL reads (schema version 2).

Version 1 indexed ``to_tsvector('english', content)`` as is. That reads text differently from
our query planner and from SQLite's index (``porter unicode61 remove_diacritics 2``), so the same
query found different rows on the two backends:

* PostgreSQL's parser keeps ``gateway/run.py``, ``user@host``, ``20.04`` as one token each, while
  the planner (like SQLite's tokenizer) splits them into word pieces, so the phrase
  ``gateway <-> run <-> py`` never matched (failure cases B19, C14);
* the ``english`` configuration drops stop words, so ``it's``, ``"the who"`` or a query of only
  stop words found nothing (SQLite indexes every word);
* accents were kept (``café`` did not find ``cafe``), the tool name was not stemmed.

Version 2 indexes what SQLite indexes, the same way:

* ``search_vector`` = content (weight A; tool rows on their first :data:`TOOL_ROW_FTS_CHARS`
  characters as on SQLite, other rows on their first :data:`CONTENT_FTS_CHARS`, which keeps
  every vector under PostgreSQL's 1 MB tsvector limit, failure case C16), tool name (B) and
  tool-call JSON (C), each with every run of non-alphanumeric characters turned into a space
  (:data:`NORMALISE`), under the configuration :data:`TS_CONFIG`: the ``english`` parser with
  ``unaccent`` and a Snowball English stemmer *without* a stop-word list;
* ``hm_messages_cjk_trgm``: a ``pg_trgm`` GIN index over content and tool name of the rows that
  hold CJK text only (a partial index: SQLite's trigram side table), so CJK words, and ASCII words
  glued to CJK text, are found by substring (``ILIKE``) without scanning English rows. Version
  1's trigram index over *all* content is dropped: nothing reads it, and it cost every append a
  trigram GIN update about as large as the text.

On a database already at version 1 the migration rewrites ``messages`` once (the generated
column is replaced), under the migration lock.

:data:`MIGRATION_SQL` is applied as migration 2 by
:func:`hermes_memory.sessions.pg.schema.migrate`; :mod:`hermes_memory.sessions.pg.search_sql`
builds its statements from the same constants, so the partial index's predicate is the query's.

Version 4 (:data:`GLUED_MIGRATION_SQL`) adds ``hm_messages_cjk_words``, a partial GIN index of
the words in CJK rows with the CJK text taken out, so a query holding no CJK finds ``Python`` in
``用Python写`` as a word, without the trigram scan (queries holding CJK keep the substring steps).
"""

from __future__ import annotations

from hermes_memory.sessions import fts as fts_mod

TS_CONFIG = "hm_search"
"""The text-search configuration of ``search_vector`` and of every query (created by the migration)."""
TOOL_ROW_FTS_CHARS = 8192
"""Tool-result rows are indexed on their first 8,192 characters (as on SQLite, reference NEWEST)."""
CONTENT_FTS_CHARS = 100_000
"""Other rows (and tool-call JSON) are indexed on their first 100,000 characters, under
PostgreSQL's 1 MB tsvector limit; longer text stays stored whole."""
NORMALISE = r"'[^0-9A-Za-z\u0080-\U0010ffff]+'"
"""Runs of ASCII characters that are not letters or digits (``_`` included) become one space
before parsing, so the parser sees the word pieces of
:func:`hermes_memory.sessions.fts.build_query` (and of SQLite's unicode61) instead of its
file/host/email/version tokens. Written with explicit ranges, not ``[:alnum:]``: under the
columns' ``C`` collation that class is ASCII only and would cut ``café`` or CJK text apart.
Non-ASCII punctuation is left to the parser, which separates words at it."""
CJK_REGEX = fts_mod.CJK_RE.pattern
"""One CJK character, as :data:`hermes_memory.sessions.fts.CJK_RE` matches it."""
CJK_TEXT = "(coalesce(content, '') || ' ' || coalesce(tool_name, ''))"
"""The text the CJK trigram index covers (SQLite's side table holds content and tool name)."""


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


CJK_PREDICATE = f"{CJK_TEXT} ~ {_literal(CJK_REGEX)}"
"""Rows holding CJK text: the partial index's predicate, repeated verbatim by the queries."""


def _vector(column: str, chars: str, weight: str) -> str:
    return (f"setweight(to_tsvector('{TS_CONFIG}'::regconfig, regexp_replace(left(coalesce({column}, ''), {chars}), "
            f"{NORMALISE}, ' ', 'g')), '{weight}')")


VECTOR_SQL = " || ".join([
    _vector("content", f"CASE WHEN role = 'tool' THEN {TOOL_ROW_FTS_CHARS} ELSE {CONTENT_FTS_CHARS} END", "A"),
    _vector("tool_name", str(CONTENT_FTS_CHARS), "B"),
    _vector("tool_calls", str(CONTENT_FTS_CHARS), "C"),
])
"""The generated expression of ``messages.search_vector``."""

MIGRATION_NAME = "search vector as SQLite indexes it (word pieces, no stop words, unaccent), CJK trigram index"
CONFIG_SQL = f"""
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS unaccent;
CREATE TEXT SEARCH DICTIONARY hm_english_stem (TEMPLATE = snowball, Language = english);
CREATE TEXT SEARCH CONFIGURATION {TS_CONFIG} (COPY = english);
ALTER TEXT SEARCH CONFIGURATION {TS_CONFIG} ALTER MAPPING FOR asciiword, asciihword, hword_asciipart,
    word, hword, hword_part, numword, numhword, hword_numpart WITH unaccent, hm_english_stem;
"""
"""The text-search configuration :data:`TS_CONFIG` (``unaccent``, then Snowball English without stop words)."""
MIGRATION_SQL = CONFIG_SQL + f"""
ALTER TABLE messages DROP COLUMN IF EXISTS search_vector;
ALTER TABLE messages ADD COLUMN search_vector tsvector GENERATED ALWAYS AS ({VECTOR_SQL}) STORED;
CREATE INDEX hm_messages_search ON messages USING gin (search_vector);
CREATE INDEX hm_messages_cjk_trgm ON messages USING gin ({CJK_TEXT} gin_trgm_ops) WHERE {CJK_PREDICATE};
DROP INDEX IF EXISTS hm_messages_content_trgm;
"""
"""Migration 2 (see the module docstring)."""

GLUED_TEXT = (f"regexp_replace(regexp_replace(left({CJK_TEXT}, {CONTENT_FTS_CHARS}), {_literal(CJK_REGEX + '+')}, ' ', 'g'), "
              f"{NORMALISE}, ' ', 'g')")
"""The text of a CJK row with every run of CJK characters (and of ASCII punctuation) turned into
a space, so the words written against CJK text stand alone: ``用Python写`` reads ``Python``."""
GLUED_VECTOR = f"to_tsvector('{TS_CONFIG}'::regconfig, {GLUED_TEXT})"
"""The words of :data:`GLUED_TEXT` under :data:`TS_CONFIG` (what index ``hm_messages_cjk_words`` holds)."""
GLUED_MIGRATION_NAME = "words glued to CJK text, indexed on the CJK rows (English queries need no trigram scan)"
GLUED_MIGRATION_SQL = f"""
CREATE INDEX hm_messages_cjk_words ON messages USING gin ({GLUED_VECTOR}) WHERE {CJK_PREDICATE};
"""
"""Migration 4: a partial GIN index over :data:`GLUED_VECTOR` of the rows holding CJK text.

The parser reads ``用Python写`` as one word, so ``python`` never matches it in ``search_vector``;
schema version 2 found such rows for every English query with a ``pg_trgm`` substring scan per
word (``ILIKE '%python%'`` over the CJK rows), a statement costing 10-36 ms at 20k-100k messages
(most of it planning and the trigram index's regex analysis) for a query holding no CJK at all.
With this index a query without CJK finds the words glued to CJK as words (stemmed, like every
other word), in the same statement as its full-text candidates; queries holding CJK keep the
trigram steps. The index is built once (CJK rows only, about 2 % of the rows of a mostly English
history); the table is not rewritten."""
