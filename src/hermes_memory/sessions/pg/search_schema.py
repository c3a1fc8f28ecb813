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

Version 5 (:data:`PENDING_MIGRATION_SQL`) bounds the GIN indexes' pending lists at
:data:`PENDING_LIST_KB` and empties them once.

Version 8 (:data:`DECODED_MIGRATION_SQL`) indexes JSON text with its escapes decoded
(:data:`JSON_TEXT_FUNCTION`), as SQLite's layout 4 does (docs/architecture.md, "JSON escapes").

Version 9 (:data:`CALLS_CJK_MIGRATION_SQL`) extends both CJK indexes to the decoded tool-call text
(:data:`CALLS_CJK_TEXT`), as SQLite's CJK side table holds it.

Version 10 (:data:`CONTENT_CJK_MIGRATION_SQL`) makes both CJK indexes read the decoded content
(:data:`CONTENT_CJK_TEXT`), as ``search_vector`` has since version 8.
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
"""The generated expression of ``messages.search_vector`` in schema versions 2-5."""

JSON_TEXT_MAX_CHARS = 1_000_000
"""Values longer than this are indexed as stored (as SQLite's
:data:`hermes_memory.sessions.jsontext.DECODE_MAX_BYTES`)."""
JSON_TEXT_FUNCTION = f"""
CREATE OR REPLACE FUNCTION hm_json_text(t text) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $hm$
DECLARE
    j jsonb;
    inner_j jsonb;
    s text;
    result text;
BEGIN
    IF t IS NULL OR strpos(t, chr(92)) = 0 OR length(t) > {JSON_TEXT_MAX_CHARS}
       OR left(ltrim(t), 1) NOT IN ('{{', '[') THEN
        RETURN t;
    END IF;
    BEGIN
        j := t::jsonb;
    EXCEPTION WHEN others THEN
        RETURN t;  -- not JSON, a lone surrogate, an escaped NUL: indexed as stored
    END;
    result := j::text;
    FOR s IN SELECT v #>> '{{}}' FROM jsonb_path_query(j, 'strict $.**') AS v WHERE jsonb_typeof(v) = 'string' LOOP
        IF strpos(s, chr(92)) > 0 AND left(ltrim(s), 1) IN ('{{', '[') THEN
            BEGIN
                inner_j := s::jsonb;
                result := result || ' ' || inner_j::text;
            EXCEPTION WHEN others THEN
                NULL;
            END;
        END IF;
    END LOOP;
    RETURN result;
END
$hm$;
"""
"""``hm_json_text(text)``: the text to index for a value that may be JSON with escapes (the
reference's ``json.dumps`` writes ``café`` as ``caf\\u00e9``; arguments its loop re-serialises
are escaped twice; tools' JSON output too). Text holding no backslash, longer than
:data:`JSON_TEXT_MAX_CHARS`, not starting with ``{``/``[`` or not parsed by ``jsonb`` is returned
as it is; otherwise the JSON as ``jsonb`` writes it (characters as they are, keys kept), then,
for each string value that is itself JSON holding a backslash (twice-escaped arguments), that
value parsed the same way. Never raises (parse errors are caught); IMMUTABLE, so a generated
column may call it."""

DECODED_VECTOR_SQL = " || ".join([
    _vector("hm_json_text(content)",
            f"CASE WHEN role = 'tool' THEN {TOOL_ROW_FTS_CHARS} ELSE {CONTENT_FTS_CHARS} END", "A"),
    _vector("tool_name", str(CONTENT_FTS_CHARS), "B"),
    _vector("hm_json_text(tool_calls)", str(CONTENT_FTS_CHARS), "C"),
])
"""The generated expression of ``messages.search_vector`` from schema version 8: content and
tool-call JSON through :data:`JSON_TEXT_FUNCTION`."""

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

PENDING_LIST_KB = 64
"""``gin_pending_list_limit`` (kB; PostgreSQL's smallest) of every GIN index search reads (migration 5).

GIN's fast update queues new rows' entries in a pending list, merged into the index only when
the list outgrows this limit (default ``gin_pending_list_limit``, 4 MB) or autovacuum (not a manual
``ANALYZE``) cleans it; until then every scan of the index reads the whole list. Measured with
EXPLAIN (ANALYZE, BUFFERS) at 100k messages (bench/storage.py's corpus after its batched load,
435 pending pages in ``hm_messages_search``, 153 in ``hm_messages_context``, load 6-7): each
term's document-frequency count read 438 buffers and took 18 ms even for a word no row holds,
the candidates' BitmapOr 39 ms (0.7 ms with the lists merged), the term counts 37-47 -> 7 ms. The
planner also charges the pending pages to every GIN path (1,815 against 75 for the same scan), which
can make a sequential scan testing the tsquery on every row look cheaper on a small table. At
64 kB (8 pages) a scan reads at most those; an append that fills the list merges those few
rows' entries. Appending 1,200 messages one commit each showed no cost beyond the noise (load 7:
4.9-5.1 s at 64 kB against 6.8-8.6 s at 4 MB, two rounds each)."""
PENDING_INDEXES = ("hm_messages_search", "hm_messages_context", "hm_messages_cjk_trgm", "hm_messages_cjk_words",
                   "hm_sessions_title_trgm")
"""The GIN indexes search reads (schema versions 1-4): messages' vector, previous turn, CJK trigrams
and words, session titles."""
PENDING_MIGRATION_NAME = f"GIN pending lists bounded at {PENDING_LIST_KB} kB and emptied (search reads each whole)"
PENDING_MIGRATION_SQL = "".join(
    f"ALTER INDEX {ix} SET (gin_pending_list_limit = {PENDING_LIST_KB});\n" for ix in PENDING_INDEXES
) + "SELECT " + ", ".join(f"gin_clean_pending_list('{ix}'::regclass)" for ix in PENDING_INDEXES) + ";\n"
"""Migration 5: a storage parameter on each index of :data:`PENDING_INDEXES` (a catalog change:
no rewrite, no rebuild), then their current pending lists (4 MB each at most) merged into the
indexes. PostgreSQL takes ACCESS EXCLUSIVE on each index (not the table) until the migration
commits, so appends and searches of other processes wait that long, once. Rows and results are
unchanged."""

CHANGES_KEY = "messages_changes"
"""``hm_meta`` key counting the committed transactions that changed ``messages`` (migration 6)."""
CHANGES_MIGRATION_NAME = "messages' change counter (hm_meta.messages_changes, bumped once per writing transaction at commit)"
CHANGES_MIGRATION_SQL = f"""
CREATE TABLE IF NOT EXISTS hm_meta (key text PRIMARY KEY, value text NOT NULL);
INSERT INTO hm_meta (key, value) VALUES ('{CHANGES_KEY}', '0') ON CONFLICT (key) DO NOTHING;
CREATE FUNCTION hm_messages_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('hm.messages_changed', true) IS DISTINCT FROM txid_current()::text THEN
    PERFORM set_config('hm.messages_changed', txid_current()::text, true);
    UPDATE hm_meta SET value = (value::bigint + 1)::text WHERE key = '{CHANGES_KEY}';
  END IF;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER hm_messages_changed AFTER INSERT OR UPDATE OR DELETE ON messages
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION hm_messages_changed();
"""
"""Migration 6: ``hm_meta.messages_changes`` (:data:`CHANGES_KEY`), one more for every transaction
that inserted, updated or deleted messages, written when that transaction commits.

Relevance search caches each word's document frequency while the messages are unchanged
(:data:`hermes_memory.sessions.pg.terms.STAMP_SQL`). Schema 5 took "unchanged" from PostgreSQL's
cumulative statistics (``pg_stat_user_tables``): a view whose planning cost 0.3-1.7 ms on every
query, and which another connection's update or delete reaches only when that connection reports
its statistics (not more than once a second), so a frequency could stay stale that long. This counter is read in the same statement, hence the same snapshot, as the
counts: a snapshot that sees a writer's rows sees its increment and one that does not, does not,
so a cached frequency is never used after a change it did not count.

The trigger is a deferred constraint trigger: it runs when the writing transaction commits and
updates the counter row once (a transaction-local setting remembers that it did), so the row is
locked from then until the commit ends (microseconds), never for the length of a transaction or
batch: concurrent writers queue on it only as long as a commit takes. Per changed row it costs one
function call at commit. Rows written with triggers disabled (``session_replication_role =
replica``) are not counted. The migration adds a table row, a function and a trigger; no row of
``messages`` is touched."""

WINDOW_EXPRESSION = "(id + 0)"
"""The recency window's column as the ``"fts"`` statement writes it (``m.id + 0 >= min_id``,
:mod:`hermes_memory.sessions.pg.search_sql`): indexed by :data:`WINDOW_INDEX` alone, never by the
primary key."""
WINDOW_INDEX = "hm_messages_recent"
WINDOW_MIGRATION_NAME = "BRIN index of the recency window (id + 0): the window trims candidates before their rows are read"
WINDOW_MIGRATION_SQL = f"""
CREATE INDEX {WINDOW_INDEX} ON messages USING brin ({WINDOW_EXPRESSION});
ANALYZE messages;
"""
"""Migration 7: a BRIN index (each block range's smallest and largest id) of :data:`WINDOW_EXPRESSION`.

When the kept words of a relevance search match more rows than the window holds
(:data:`hermes_memory.sessions.ranking.SINGLE_TERM_WINDOW`), only the newest rows holding about
that many matches are scored (``min_id``). Schema 6 applied the window after reading every match:
the GIN indexes give row addresses only, so each candidate's heap page was read, then the row
dropped by ``id + 0 >= min_id``. Measured with EXPLAIN (ANALYZE, BUFFERS) on 1M messages of
bench/natural_corpus.py ("What does Gina like to do at the garden with Audrey?", kept word
``garden``): 37,010 candidates read from 19,791 heap blocks (14,074 of them not in shared buffers),
32,263 then dropped by the window, 983 ms for the candidate part. With this index the planner ANDs
the GIN bitmap with the block ranges holding ids in the window (BitmapAnd): 2,977 heap blocks, the
other matches never read. The BRIN bitmap is lossy (whole pages), so the rows of those pages are
checked against the tsquery again (21,993 rows removed by the recheck); the result is the same
rows. Ids grow with the table's physical order on an append-mostly history, so the ranges are
tight; a row written into free space of an old page widens that page's range (read, then dropped by
the recheck: more pages, never a lost row), and ranges not yet summarised (the newest, until
VACUUM) always match. The index is tiny (40 kB at 1M messages, built in about 5 s) and an append
updates at most one range's summary. Written ``id + 0`` as the statement writes it so the primary
key never serves the window: a primary-key range scan testing the tsquery on every row of the
window is what ``+ 0`` keeps the planner from choosing.

The migration then runs ``ANALYZE messages`` (a sample of 30,000 rows; about a second at 1M
messages, under a lock that only blocks VACUUM and schema changes): the planner estimates
``id + 0 >= min_id`` from the statistics ``ANALYZE`` keeps for an index's expression, and without
them it takes a third of the table and never uses the index (measured: at 1M messages the
migrated copy read the same 14,967 blocks a tool call as before) until autovacuum next analyses
the table, after a tenth of it has changed."""

DECODED_MIGRATION_NAME = "JSON text indexed with its escapes decoded (caf\\u00e9 found as café), as SQLite layout 4"
DECODED_MIGRATION_SQL = JSON_TEXT_FUNCTION + f"""
ALTER TABLE messages DROP COLUMN search_vector;
ALTER TABLE messages ADD COLUMN search_vector tsvector GENERATED ALWAYS AS ({DECODED_VECTOR_SQL}) STORED;
CREATE INDEX hm_messages_search ON messages USING gin (search_vector) WITH (gin_pending_list_limit = {PENDING_LIST_KB});
ANALYZE messages;
"""
"""Migration 8: :data:`JSON_TEXT_FUNCTION`, then ``search_vector`` re-created over
:data:`DECODED_VECTOR_SQL` (PostgreSQL rewrites ``messages`` once, under the migration lock, as
migration 2 did) and its GIN index rebuilt with migration 5's pending-list bound, then ``ANALYZE messages`` so the
planner keeps the statistics migration 7's window index needs after the rewrite."""

def _cjk_indexes_sql(text: str, vector: str, predicate: str) -> str:
    """SQL re-creating ``hm_messages_cjk_trgm`` (trigrams of ``text``) and ``hm_messages_cjk_words``
    (``vector``), both partial on ``predicate`` with migration 5's pending-list bound, then
    ``ANALYZE messages``: the body of migrations 9 and 10, which differ only in the text covered."""
    return f"""
DROP INDEX hm_messages_cjk_trgm;
DROP INDEX hm_messages_cjk_words;
CREATE INDEX hm_messages_cjk_trgm ON messages USING gin ({text} gin_trgm_ops)
    WITH (gin_pending_list_limit = {PENDING_LIST_KB}) WHERE {predicate};
CREATE INDEX hm_messages_cjk_words ON messages USING gin ({vector})
    WITH (gin_pending_list_limit = {PENDING_LIST_KB}) WHERE {predicate};
ANALYZE messages;
"""


CALLS_CJK_TEXT = "(coalesce(content, '') || ' ' || coalesce(tool_name, '') || ' ' || coalesce(hm_json_text(tool_calls), ''))"
"""The text the CJK indexes cover from schema version 9: content, tool name and the tool calls' JSON
with its escapes decoded (:data:`JSON_TEXT_FUNCTION`), as SQLite's CJK side table holds the
decoded tool-call text since layout 4. Schema versions 2-8 covered :data:`CJK_TEXT` only, so a CJK
word written only in tool-call arguments (``東京タワー``, or ``\\u6771\\u4eac...``) was never found."""
CALLS_CJK_PREDICATE = f"{CALLS_CJK_TEXT} ~ {_literal(CJK_REGEX)}"
"""Rows holding CJK text in content, tool name or decoded tool calls (schema 9's partial indexes'
predicate, repeated verbatim by the queries)."""
CALLS_GLUED_TEXT = GLUED_TEXT.replace(CJK_TEXT, CALLS_CJK_TEXT)
CALLS_GLUED_VECTOR = f"to_tsvector('{TS_CONFIG}'::regconfig, {CALLS_GLUED_TEXT})"
""":data:`GLUED_VECTOR` over :data:`CALLS_CJK_TEXT` (index ``hm_messages_cjk_words`` from schema 9)."""
CALLS_CJK_MIGRATION_NAME = "CJK trigram and glued-word indexes cover the decoded tool-call text (as SQLite layout 4)"
CALLS_CJK_MIGRATION_SQL = _cjk_indexes_sql(CALLS_CJK_TEXT, CALLS_GLUED_VECTOR, CALLS_CJK_PREDICATE)
"""Migration 9: ``hm_messages_cjk_trgm`` and ``hm_messages_cjk_words`` re-created over
:data:`CALLS_CJK_TEXT` (with migration 5's pending-list bound). No row of ``messages`` is
rewritten: both indexes are built once, which reads the table once and calls ``hm_json_text`` on
every row's tool calls (text without a backslash is returned at once). ``ANALYZE messages`` then
keeps the statistics of the new index expressions, which the planner needs to estimate
:data:`CALLS_CJK_PREDICATE` (the searches' CJK steps) from the start, not after autovacuum's next
analysis."""

CONTENT_CJK_TEXT = CALLS_CJK_TEXT.replace("coalesce(content, '')", "coalesce(hm_json_text(content), '')")
"""The text the CJK indexes cover from schema version 10: :data:`CALLS_CJK_TEXT` with the content
decoded by :data:`JSON_TEXT_FUNCTION` too, as :data:`DECODED_VECTOR_SQL` reads it and as SQLite's CJK
side table holds decoded content since layout 4. Schema 9 read content as stored, so a CJK word in
content written as JSON text with escapes (``[{"type": "text", "text": "\\u6771\\u4eac..."}]``: the
reference agent's multi-part content, an import) was never found."""
CONTENT_CJK_PREDICATE = f"{CONTENT_CJK_TEXT} ~ {_literal(CJK_REGEX)}"
"""Rows holding CJK text in decoded content, tool name or decoded tool calls (schema 10's partial
indexes' predicate, repeated verbatim by the queries)."""
CONTENT_GLUED_TEXT = GLUED_TEXT.replace(CJK_TEXT, CONTENT_CJK_TEXT)
CONTENT_GLUED_VECTOR = f"to_tsvector('{TS_CONFIG}'::regconfig, {CONTENT_GLUED_TEXT})"
""":data:`GLUED_VECTOR` over :data:`CONTENT_CJK_TEXT` (index ``hm_messages_cjk_words`` from schema 10)."""
CONTENT_CJK_MIGRATION_NAME = "CJK trigram and glued-word indexes cover the decoded content too (as SQLite layout 4)"
CONTENT_CJK_MIGRATION_SQL = _cjk_indexes_sql(CONTENT_CJK_TEXT, CONTENT_GLUED_VECTOR, CONTENT_CJK_PREDICATE)
"""Migration 10: ``hm_messages_cjk_trgm`` and ``hm_messages_cjk_words`` re-created over
:data:`CONTENT_CJK_TEXT` (with migration 5's pending-list bound), as migration 9 did for the tool
calls. No row of ``messages`` is rewritten: both indexes are built once, which reads the table once
and calls ``hm_json_text`` on every row's content (text without a backslash, or not starting with
``{``/``[``, is returned at once). ``ANALYZE messages`` then keeps the new index expressions'
statistics, which the planner needs to estimate :data:`CONTENT_CJK_PREDICATE` from the start."""

PREFIXED_JSON_TEXT_FUNCTION = JSON_TEXT_FUNCTION.replace(
    "    result text;\nBEGIN\n",
    "    result text;\n    body text := t;\nBEGIN\n"
    "    IF left(t, 6) = chr(30) || 'json:' THEN\n"
    "        body := substr(t, 7);  -- list/dict content behind our prefix: its JSON is decoded\n"
    "    END IF;\n",
).replace(
    "IF t IS NULL OR strpos(t, chr(92)) = 0 OR length(t) > ",
    "IF t IS NULL OR strpos(body, chr(92)) = 0 OR length(body) > ",
).replace(
    "OR left(ltrim(t), 1) NOT IN ('{', '[') THEN",
    "OR left(ltrim(body), 1) NOT IN ('{', '[') THEN",
).replace("        j := t::jsonb;\n", "        j := body::jsonb;\n").replace(
    "WHERE jsonb_typeof(v) = 'string' LOOP\n",
    "WHERE jsonb_typeof(v) = 'string' LOOP\n"
    "        IF strpos(s, chr(92)) > 0 OR strpos(s, chr(34)) > 0 OR s ~ '[[:cntrl:]]' THEN\n"
    "            result := result || ' ' || s;  -- jsonb's text escapes these again: the value as decoded\n"
    "        END IF;\n",
)
""":data:`JSON_TEXT_FUNCTION` that also decodes JSON behind :data:`hermes_memory.sessions.codec.JSON_CONTENT_PREFIX`
(the prefix is dropped, as SQLite's :func:`hermes_memory.sessions.jsontext.decoded` drops it for
content); a value that is not decoded is still returned as stored, prefix included. Before schema 11
such content (every list/dict message, and a caller's text already starting with the prefix) was
indexed as stored: ``caf\\u00e9`` and ``first\\nwalrus`` gave no word ``café`` or ``walrus``. And in any
decoded value (content or tool calls) a string holding a newline, tab, quote or backslash is appended
as decoded, since ``jsonb::text`` writes those escaped again (``first\\nwalrus``: no word ``walrus``
before schema 11; SQLite indexes the decoded leaves). Such a row's words then count twice in its
vector (ranking weight, not which rows match). The
reference agent's NUL prefix cannot be stored in PostgreSQL text (copy replaces the NUL)."""
if PREFIXED_JSON_TEXT_FUNCTION.count("body") != 6 or "chr(34)" not in PREFIXED_JSON_TEXT_FUNCTION:  # every replacement above found its text
    raise AssertionError("PREFIXED_JSON_TEXT_FUNCTION: JSON_TEXT_FUNCTION changed; rewrite the replacements")
PREFIXED_MIGRATION_NAME = "decode JSON content behind the \\x1ejson: prefix for search (as SQLite layout 4)"
"""Migration 11's name; its SQL, :data:`PREFIXED_JSON_TEXT_FUNCTION` and the rows marked for a
bounded recomputation, is :data:`hermes_memory.sessions.pg.decoded_schema.PREFIXED_MIGRATION_SQL`."""
