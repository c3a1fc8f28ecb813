"""``SessionDB``: every session and message in one SQLite file (``$HERMES_HOME/state.db``).

Behaviour follows the reference Hermes Agent's own ``SessionDB``, on the same file:

* WAL journal, foreign keys on, files mode 0600, ``synchronous=FULL`` by default (as the
  reference agent): every acknowledged commit is fsynced to the WAL before it returns, so it
  survives a power cut or an OS crash. ``synchronous="normal"`` (``sessions.synchronous`` in
  config.yaml) skips that fsync: still no corruption under WAL, but the last committed
  transactions may be lost on a power cut or OS crash (not on a crash of this process). Batch
  writers (:meth:`SessionDB.append_messages`, importers) commit once per batch, not per row.
* Every write runs in ``BEGIN IMMEDIATE`` under a per-object lock, with a SQLite busy timeout
  (``timeout`` seconds, default 1.0) and up to ``write_retries`` (default 15) retries after a
  random 20-150 ms sleep when the database is locked/busy. When the retries are spent a
  :class:`~hermes_memory.errors.SessionStoreError` is raised -- never swallowed (failure case B26).
  Every 50 writes a passive WAL checkpoint is attempted.
* Full-text search: our FTS5 index ``hm_messages_fts`` (porter + unicode61) kept in step with
  ``messages`` by our ``hm_*`` triggers, plus the trigram side table ``hm_messages_cjk`` for rows
  with CJK text (B23, B24); the reference's own ``messages_fts*`` objects are never touched. See
  :mod:`hermes_memory.sessions.migrations`, :mod:`hermes_memory.sessions.hmindex` and
  :mod:`hermes_memory.sessions.fts`.

The class is put together from one module per job: the connection, bounded-retry writes and
batches (:mod:`~hermes_memory.sessions.connection`), how values are stored in text columns
(:mod:`~hermes_memory.sessions.codec`), titles (:mod:`~hermes_memory.sessions.titles`), lineage
(:mod:`~hermes_memory.sessions.lineage`), listing and resolving sessions
(:mod:`~hermes_memory.sessions.listing`), sessions, messages and export/delete/prune (shared with
the PostgreSQL store, :mod:`~hermes_memory.sessions.records`) and message search
(:mod:`~hermes_memory.sessions.message_search`); this module puts them together and keeps every
name that was importable from it before.

Times are Unix epoch seconds (float). Counts of text are characters unless said otherwise.
"""

from __future__ import annotations

import sqlite3

from hermes_memory.errors import SessionStoreError  # noqa: F401  (re-exported: importable here as before)
from hermes_memory.sessions.browse import BrowseMethods, SessionQuery  # noqa: F401  (re-exported)
from hermes_memory.sessions.codec import (  # noqa: F401  (re-exported: importable here as before)
    JSON_CONTENT_PREFIX,
    decode_content,
    decode_json,
    encode_content,
    encode_json,
    row_to_message,
    scrub,
    storable,
)
from hermes_memory.sessions.connection import (  # noqa: F401  (re-exported)
    BATCH_WRITES,
    CHECKPOINT_EVERY,
    RETRY_SLEEP_RANGE,
    SYNCHRONOUS_MODES,
    WRITE_RETRIES,
    SQLiteStore,
    _is_lock_error,
)
from hermes_memory.sessions.embeddings import forget_sessions
from hermes_memory.sessions.lineage import _MEMORY_CONTEXT_RE, LineageMethods, _repeats_pending_prompt  # noqa: F401
from hermes_memory.sessions.listing import AMBIGUOUS_SHOWN, ListingMethods, SessionLookupError, cwd_clause  # noqa: F401
from hermes_memory.sessions.message_search import (  # noqa: F401  (re-exported)
    CONTEXT_CHARS,
    SNIPPET_TOKENS,
    MessageSearchMethods,
    SearchFilters,
    build_search_sql,
)
from hermes_memory.sessions.message_search import as_list as _as_list  # noqa: F401
from hermes_memory.sessions.ranking import (  # noqa: F401  (re-exported: importable here as before)
    DROPPED_TERM_ROWS,
    NEIGHBOUR_WEIGHT,
    POSTINGS_BUDGET,
    RERANK_POOL,
    SESSION_WEIGHT,
    SINGLE_TERM_WINDOW,
)
from hermes_memory.sessions.records import INSERT_MESSAGE_SQL, MESSAGE_ROW_COLUMNS, RecordMethods  # noqa: F401
from hermes_memory.sessions.titles import (  # noqa: F401
    _INVISIBLE,
    _TITLE_NUMBER_RE,
    MAX_TITLE_CHARS,
    TitleMethods,
    TitleSearchMethods,
    sanitize_title,
)

# The old private names of the codec (importers used them); kept for one release.
_encode_content = encode_content
_decode_content = decode_content
_encode_json = encode_json
_decode_json = decode_json
_scrub = scrub
_storable = storable

class SessionDB(TitleSearchMethods, TitleMethods, LineageMethods, ListingMethods, BrowseMethods, RecordMethods,
                MessageSearchMethods, SQLiteStore):
    """Sessions and messages in one SQLite file; the store behind ``session_search``.

    ``db_path``: the database file, default ``HermesHome.resolve().state_db`` (the folder is
    created). ``timeout``: SQLite busy timeout for one attempt, seconds. ``write_retries``: bounded
    retries of a locked write (see module doc). ``synchronous``: ``"full"`` (default, every
    commit is durable) or ``"normal"`` (faster; the last commits may be lost on a power cut or OS
    crash; see the module doc); anything else raises ``ValueError``. Safe to share between threads
    (one connection, one lock); several processes may open the same file. Raises
    :class:`SessionStoreError` if the file cannot be opened or migrated.
    """

    backend = "sqlite"
    """Which engine holds the sessions (``"postgres"`` for :class:`~hermes_memory.sessions.pg.PgSessionDB`)."""

    @property
    def location(self) -> str:
        """Where the sessions live, for status output: the database file's path."""
        return str(self.db_path)

    def _forget_derived(self, conn: sqlite3.Connection, session_ids: list[str]) -> None:
        forget_sessions(conn, session_ids)  # semantic-search vectors go with the messages

    def fts_integrity_check(self) -> bool:
        """Run FTS5 ``integrity-check`` on the main index (True if it passes; raises
        :class:`SessionStoreError` describing the corruption otherwise)."""
        self._execute_write(
            lambda c: c.execute("INSERT INTO hm_messages_fts(hm_messages_fts, rank) VALUES('integrity-check', 1)")
        )
        return True
