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

Times are Unix epoch seconds (float). Counts of text are characters unless said otherwise.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import random
import re
import sqlite3
import threading
import time
import unicodedata
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from hermes_memory.errors import SessionStoreError
from hermes_memory.home import HermesHome
from hermes_memory.sessions import fts as fts_mod
from hermes_memory.sessions import hmindex, ranking
from hermes_memory.sessions.migrations import migrate
from hermes_memory.sessions.ranking import (  # noqa: F401  (re-exported: importable here as before)
    DROPPED_TERM_ROWS,
    NEIGHBOUR_WEIGHT,
    POSTINGS_BUDGET,
    RERANK_POOL,
    SESSION_WEIGHT,
    SINGLE_TERM_WINDOW,
)

logger = logging.getLogger(__name__)

T = TypeVar("T")

WRITE_RETRIES = 15
"""Retries of a locked/busy write before :class:`SessionStoreError` (reference: 15)."""
RETRY_SLEEP_RANGE = (0.020, 0.150)
"""Random sleep between write retries, seconds (reference: 20-150 ms)."""
CHECKPOINT_EVERY = 50
"""A passive WAL checkpoint is attempted after this many writes (reference: 50)."""
MAX_TITLE_CHARS = 100
"""Longest session title accepted after sanitising (reference)."""
SNIPPET_TOKENS = 40
"""FTS5 ``snippet()`` length in tokens (reference)."""
CONTEXT_CHARS = 200
"""Characters of the previous/next message shown as search ``context`` (reference)."""
JSON_CONTENT_PREFIX = "\x1ejson:"
"""Prefix marking list/dict message content stored as JSON text."""
BATCH_WRITES = 500
"""Writes per transaction inside :meth:`SessionDB.batch` (bounds what another process waits for)."""
SYNCHRONOUS_MODES = ("full", "normal")
"""Accepted ``synchronous`` settings of :class:`SessionDB` (SQLite ``PRAGMA synchronous``)."""

_MEMORY_CONTEXT_RE = re.compile(r"<memory-context>.*?</memory-context>\s*", re.DOTALL)
_TITLE_NUMBER_RE = re.compile(r"^(.*?) #(\d+)$")
_INVISIBLE = {"\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"}


def sanitize_title(title: str | None) -> str | None:
    """Clean a session title: drop control, zero-width, bidi and BOM characters, collapse
    whitespace, trim (lone surrogates are dropped too). Returns ``None`` for nothing left. Raises ``ValueError`` ("title too long")
    when more than :data:`MAX_TITLE_CHARS` characters remain. Emoji, CJK and accents are kept."""
    if title is None:
        return None
    out = []
    for ch in str(title):
        if ch in "\t\n\r\x0b\x0c":
            out.append(" ")
            continue
        cat = unicodedata.category(ch)
        if ch in _INVISIBLE or cat in ("Cc", "Cf", "Cs"):  # Cs: lone surrogates (unstorable)
            continue
        out.append(ch)
    cleaned = " ".join("".join(out).split())
    if not cleaned:
        return None
    if len(cleaned) > MAX_TITLE_CHARS:
        raise ValueError(
            f"Session title too long: {len(cleaned)} characters (max {MAX_TITLE_CHARS}); shorten it."
        )
    return cleaned


def _encode_content(content: Any) -> str | None:
    if content is None:
        return None
    if isinstance(content, (list, dict)):
        return JSON_CONTENT_PREFIX + fts_mod.scrub_text(json.dumps(content, ensure_ascii=False))
    return fts_mod.scrub_text(str(content))


def _decode_content(content: str | None) -> Any:
    if isinstance(content, str) and content.startswith(JSON_CONTENT_PREFIX):
        try:
            return json.loads(content[len(JSON_CONTENT_PREFIX) :])
        except ValueError:
            return content
    return content


def _encode_json(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return fts_mod.scrub_text(value)
    return fts_mod.scrub_text(json.dumps(value, ensure_ascii=False))


def _scrub(value: Any) -> Any:
    """``value`` with lone surrogates replaced when it is text (SQLite cannot store them)."""
    return fts_mod.scrub_text(value) if isinstance(value, str) else value


def _decode_json(value: str | None) -> Any:
    if value is None:
        return None
    try:
        return json.loads(value)
    except ValueError:
        return value


AMBIGUOUS_SHOWN = 5
"""How many candidate sessions an "ambiguous prefix" error lists."""


class SessionLookupError(SessionStoreError):
    """A session reference matched no session (``candidates == []``) or is an ambiguous id prefix
    (``candidates``: up to :data:`AMBIGUOUS_SHOWN` dicts ``{"id", "title", "started_at"}``)."""

    def __init__(self, message: str, ref: str, candidates: list[dict[str, Any]]) -> None:
        super().__init__(message)
        self.ref = ref
        self.candidates = candidates

    @property
    def ambiguous(self) -> bool:
        """True when ``ref`` is a prefix of several session ids."""
        return bool(self.candidates)


def _storable(text: str) -> bool:
    """False for text SQLite cannot hold (lone surrogates): no stored id can equal it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _is_lock_error(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


class SessionDB:
    """Sessions and messages in one SQLite file; the store behind ``session_search``.

    ``db_path``: the database file, default ``HermesHome.resolve().state_db`` (the folder is
    created). ``timeout``: SQLite busy timeout for one attempt, seconds. ``write_retries``: bounded
    retries of a locked write (see module doc). ``synchronous``: ``"full"`` (default, every
    commit is durable) or ``"normal"`` (faster; the last commits may be lost on a power cut or OS
    crash; see the module doc); anything else raises ``ValueError``. Safe to share between threads
    (one connection, one lock); several processes may open the same file. Raises
    :class:`SessionStoreError` if the file cannot be opened or migrated.
    """

    def __init__(
        self,
        db_path: str | os.PathLike[str] | None = None,
        *,
        timeout: float = 1.0,
        write_retries: int = WRITE_RETRIES,
        synchronous: str = "full",
    ) -> None:
        sync = str(synchronous).strip().lower()
        if sync not in SYNCHRONOUS_MODES:
            raise ValueError(f"synchronous must be one of {', '.join(SYNCHRONOUS_MODES)}; got {synchronous!r}")
        self.synchronous = sync
        path = Path(db_path) if db_path is not None else HermesHome.resolve().state_db
        self.db_path = path.expanduser().resolve()
        self.timeout = float(timeout)
        self.write_retries = int(write_retries)
        self._lock = threading.RLock()
        self._writes = 0
        self._batch: dict[str, int] | None = None
        try:
            self.db_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            if not self.db_path.exists():
                fd = os.open(self.db_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                os.close(fd)
            self._conn = sqlite3.connect(
                str(self.db_path), timeout=self.timeout, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as exc:
            raise SessionStoreError(
                f"cannot open session database {self.db_path}: {exc}. Check the path and its permissions."
            ) from exc
        self._conn.row_factory = sqlite3.Row
        try:
            mode = self._conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                logger.warning("state.db journal_mode is %s, not WAL (filesystem without shared memory?)", mode)
            self._conn.execute("PRAGMA foreign_keys=ON")
            self._conn.execute(f"PRAGMA synchronous={sync.upper()}")

            self.migration = self._execute_write(migrate)
            hmindex.finish_backfill(self._execute_write, self.migration["index"])
            self._schema_cookie = self._conn.execute("PRAGMA schema_version").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            raise SessionStoreError(
                f"{self.db_path} is not a usable session database: {exc}. Move it aside to start a new one."
            ) from exc
        except SessionStoreError:
            self._conn.close()
            raise
        self._secure_files()

    # ------------------------------------------------------------------ plumbing
    def _secure_files(self) -> None:
        if os.name == "nt":
            return
        for suffix in ("", "-wal", "-shm"):
            p = Path(str(self.db_path) + suffix)
            try:
                if p.exists() and not p.is_symlink():
                    os.chmod(p, 0o600)
            except OSError:
                pass

    def _resync_if_schema_changed(self) -> None:
        """Catch our ``hm_*`` index up when another program changed the schema since we looked (for
        example rebuilt ``messages``, which drops our triggers): a long-running ``serve`` then keeps
        finding what the reference writes. One ``PRAGMA schema_version`` read when nothing changed."""
        with self._lock:
            if self._conn is None:
                return
            cookie = self._conn.execute("PRAGMA schema_version").fetchone()[0]
            if cookie == self._schema_cookie:
                return
            report = self._execute_write(hmindex.sync)
            hmindex.finish_backfill(self._execute_write, report)
            self._schema_cookie = self._conn.execute("PRAGMA schema_version").fetchone()[0]
        if report["action"] != "none":
            logger.info("state.db schema changed by another program; our index: %s", report)

    @property
    def conn(self) -> sqlite3.Connection:
        """The underlying connection (for tests, benchmarks and importers; prefer the methods)."""
        return self._conn

    def close(self) -> None:
        """Checkpoint (passive) and close the connection. Safe to call twice."""
        with self._lock:
            if self._conn is None:
                return
            try:
                self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
            except sqlite3.Error:
                pass
            self._conn.close()
            self._conn = None  # type: ignore[assignment]

    def __enter__(self) -> SessionDB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _execute_write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(conn)`` inside ``BEGIN IMMEDIATE`` … ``COMMIT`` with bounded jittered retries.

        Raises :class:`SessionStoreError` when the database stays locked after
        ``write_retries`` retries, or on any other SQLite error (the transaction is rolled back).
        Exceptions raised by ``fn`` that are not SQLite errors (e.g. ``ValueError``) roll back and
        propagate unchanged.
        """
        with self._lock:
            if self._conn is None:
                raise SessionStoreError("SessionDB is closed; open a new SessionDB.")
            if self._batch is not None:
                return self._batched_write(fn)
            last: Exception | None = None
            for attempt in range(self.write_retries + 1):
                try:
                    self._conn.execute("BEGIN IMMEDIATE")
                except sqlite3.OperationalError as exc:
                    if _is_lock_error(exc):
                        last = exc
                        if attempt < self.write_retries:
                            time.sleep(random.uniform(*RETRY_SLEEP_RANGE))
                        continue
                    raise SessionStoreError(f"session database write failed: {exc}") from exc
                try:
                    result = fn(self._conn)
                    self._conn.execute("COMMIT")
                except BaseException as exc:
                    if self._conn.in_transaction:
                        self._conn.execute("ROLLBACK")
                    if isinstance(exc, sqlite3.OperationalError) and _is_lock_error(exc):
                        last = exc
                        if attempt < self.write_retries:
                            time.sleep(random.uniform(*RETRY_SLEEP_RANGE))
                        continue
                    if isinstance(exc, sqlite3.Error):
                        raise SessionStoreError(f"session database write failed: {exc}") from exc
                    raise
                self._writes += 1
                if self._writes % CHECKPOINT_EVERY == 0:
                    try:
                        self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
                    except sqlite3.Error:
                        pass
                return result
            raise SessionStoreError(
                f"session database {self.db_path} stayed locked after {self.write_retries} retries "
                f"({self.timeout:g} s busy timeout each): {last}. Another process holds a long write "
                "transaction; close it or retry later."
            ) from last

    @contextlib.contextmanager
    def batch(self, commit_every: int = BATCH_WRITES) -> Iterator[None]:
        """Group the writes made inside the ``with`` block into transactions of ``commit_every``
        writes (one fsync each under ``synchronous=FULL``) instead of one per write: for importers.

        Each write still succeeds or fails alone (a savepoint), so a refused write inside the batch
        undoes only itself. Writes already committed stay if the block raises; the open part is
        rolled back. Other threads using this object wait until the block ends; other processes
        wait at most one chunk. Raises :class:`SessionStoreError` as :meth:`_execute_write` does.
        """
        with self._lock:
            if self._batch is not None:  # nested: the outer batch decides
                yield
                return
            self._execute_write(lambda c: None)  # fail early (closed, locked) outside the batch
            self._begin_batch()
            self._batch = {"writes": 0, "every": max(1, int(commit_every))}
            try:
                yield
            except BaseException:
                self._batch = None
                if self._conn is not None and self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
            self._batch = None
            self._conn.execute("COMMIT")

    def _begin_batch(self) -> None:
        for attempt in range(self.write_retries + 1):
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if not _is_lock_error(exc) or attempt == self.write_retries:
                    raise SessionStoreError(f"session database write failed: {exc}") from exc
                time.sleep(random.uniform(*RETRY_SLEEP_RANGE))

    def _batched_write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        batch = self._batch
        assert batch is not None
        self._conn.execute("SAVEPOINT hm_write")
        try:
            result = fn(self._conn)
        except BaseException as exc:
            self._conn.execute("ROLLBACK TO hm_write")
            self._conn.execute("RELEASE hm_write")
            if isinstance(exc, sqlite3.Error):
                raise SessionStoreError(f"session database write failed: {exc}") from exc
            raise
        self._conn.execute("RELEASE hm_write")
        batch["writes"] += 1
        if batch["writes"] % batch["every"] == 0:
            self._conn.execute("COMMIT")
            self._begin_batch()
        return result

    def _read(self, sql: str, params: Iterable[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            if self._conn is None:
                raise SessionStoreError("SessionDB is closed; open a new SessionDB.")
            try:
                return self._conn.execute(sql, tuple(params)).fetchall()
            except sqlite3.DatabaseError as exc:
                hint = (" The file is damaged: move it aside (or restore a backup) to start a new one."
                        if "malformed" in str(exc) or "not a database" in str(exc) else "")
                raise SessionStoreError(f"session database {self.db_path} read failed: {exc}.{hint}") from exc
            except (sqlite3.Error, OverflowError, UnicodeEncodeError) as exc:
                raise SessionStoreError(f"session database read failed (bad parameter): {exc}") from exc

    # ------------------------------------------------------------------ sessions
    def create_session(
        self,
        session_id: str | None = None,
        source: str = "cli",
        model: str | None = None,
        model_config: dict[str, Any] | str | None = None,
        system_prompt: str | None = None,
        user_id: str | None = None,
        parent_session_id: str | None = None,
        title: str | None = None,
        started_at: float | None = None,
    ) -> str:
        """Create a session row and return its id (a new UUID4 hex-ish string when not given).

        Creating an id that already exists is a no-op that returns the id (idempotent; the
        stored row is not changed). ``title`` goes through :func:`sanitize_title`; a title held by
        another session raises ``ValueError``. A ``parent_session_id`` that does not exist raises
        :class:`SessionStoreError`.
        """
        sid = session_id or uuid.uuid4().hex
        clean_title = sanitize_title(title)
        cfg = model_config if model_config is None or isinstance(model_config, str) else json.dumps(model_config)

        def _do(conn: sqlite3.Connection) -> str:
            if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (sid,)).fetchone():
                return sid
            if clean_title is not None and conn.execute(
                "SELECT 1 FROM sessions WHERE title = ?", (clean_title,)
            ).fetchone():
                raise ValueError(f"Session title {clean_title!r} is already in use; choose another title.")
            conn.execute(
                "INSERT INTO sessions (id, source, user_id, model, model_config, system_prompt, "
                "parent_session_id, started_at, title) VALUES (?,?,?,?,?,?,?,?,?)",
                (
                    sid,
                    source or "cli",
                    user_id,
                    model,
                    cfg,
                    system_prompt,
                    parent_session_id,
                    started_at if started_at is not None else time.time(),
                    clean_title,
                ),
            )
            return sid

        return self._execute_write(_do)

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        """The session row as a dict (all columns), or ``None`` if unknown."""
        if not _storable(session_id):
            return None
        rows = self._read("SELECT * FROM sessions WHERE id = ?", (session_id,))
        return dict(rows[0]) if rows else None

    def end_session(self, session_id: str, reason: str) -> bool:
        """Set ``ended_at`` (now) and ``end_reason``. The first end wins: returns False (and changes
        nothing) when the session is already ended or unknown; :meth:`reopen_session` re-arms it."""

        def _do(conn: sqlite3.Connection) -> bool:
            cur = conn.execute(
                "UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL",
                (time.time(), reason, session_id),
            )
            return cur.rowcount > 0

        return self._execute_write(_do)

    def reopen_session(self, session_id: str) -> bool:
        """Clear ``ended_at``/``end_reason`` so the session can be ended again. False if unknown."""
        return self._execute_write(
            lambda c: c.execute(
                "UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = ?", (session_id,)
            ).rowcount
            > 0
        )

    def update_token_counts(
        self,
        session_id: str,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
        reasoning_tokens: int = 0,
        cost_usd: float | None = None,
        model: str | None = None,
        api_call_count: int | None = None,
        absolute: bool = False,
    ) -> bool:
        """Add the token counts (tokens, not chars) and ``cost_usd`` (to ``estimated_cost_usd``) to
        the session, or set them when ``absolute``. ``api_call_count`` is added (default +0) or set.
        ``model`` is stored only when the session has none yet. Returns False for an unknown session."""
        counters = {
            "input_tokens": int(input_tokens or 0),
            "output_tokens": int(output_tokens or 0),
            "cache_read_tokens": int(cache_read_tokens or 0),
            "cache_write_tokens": int(cache_write_tokens or 0),
            "reasoning_tokens": int(reasoning_tokens or 0),
        }
        if absolute:
            sets = [f"{k} = ?" for k in counters]
            params: list[Any] = list(counters.values())
            if cost_usd is not None:
                sets.append("estimated_cost_usd = ?")
                params.append(float(cost_usd))
            if api_call_count is not None:
                sets.append("api_call_count = ?")
                params.append(int(api_call_count))
        else:
            sets = [f"{k} = coalesce({k}, 0) + ?" for k in counters]
            params = list(counters.values())
            if cost_usd is not None:
                sets.append("estimated_cost_usd = coalesce(estimated_cost_usd, 0) + ?")
                params.append(float(cost_usd))
            if api_call_count is not None:
                sets.append("api_call_count = coalesce(api_call_count, 0) + ?")
                params.append(int(api_call_count))
        if model:
            sets.append("model = coalesce(model, ?)")
            params.append(model)
        params.append(session_id)
        sql = f"UPDATE sessions SET {', '.join(sets)} WHERE id = ?"
        return self._execute_write(lambda c: c.execute(sql, params).rowcount > 0)

    # ------------------------------------------------------------------ titles
    def set_session_title(self, session_id: str, title: str | None) -> bool:
        """Set (or clear with ``None``/``""``) a session's title. Returns False for an unknown session.

        Raises ``ValueError`` when the title is too long or held by another session -- unless that
        session is a compression predecessor of this one (reached through parents that each
        ended with ``end_reason == "compression"``): then the title moves down to this
        continuation and the predecessor's title is cleared (reference NEWEST). A branch or a
        subagent child never takes its parent's title.
        """
        clean = sanitize_title(title)

        def _do(conn: sqlite3.Connection) -> bool:
            if not conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
                return False
            if clean is not None:
                holder = conn.execute(
                    "SELECT id FROM sessions WHERE title = ? AND id != ?", (clean, session_id)
                ).fetchone()
                if holder is not None:
                    if holder[0] in self._compression_predecessors(conn, session_id):
                        conn.execute("UPDATE sessions SET title = NULL WHERE id = ?", (holder[0],))
                    else:
                        raise ValueError(
                            f"Session title {clean!r} is already in use by session {holder[0]}; "
                            "choose another title (see get_next_title_in_lineage)."
                        )
            conn.execute("UPDATE sessions SET title = ? WHERE id = ?", (clean, session_id))
            return True

        return self._execute_write(_do)

    sanitize_title = staticmethod(sanitize_title)
    """:func:`sanitize_title`, also reachable as ``SessionDB.sanitize_title`` (reference name)."""

    def get_session_by_title(self, title: str) -> dict[str, Any] | None:
        """The session row whose title is exactly ``title`` (after :func:`sanitize_title`), or
        ``None``. See :meth:`resolve_session_by_title` for the ``"title #N"`` lineage lookup."""
        clean = sanitize_title(title) if isinstance(title, str) else None
        if not clean or not _storable(clean):
            return None
        rows = self._read("SELECT * FROM sessions WHERE title = ?", (clean,))
        return dict(rows[0]) if rows else None

    def update_system_prompt(self, session_id: str, system_prompt: str | None) -> bool:
        """Store the session's system prompt (replacing it). Returns False for an unknown session."""
        value = _scrub(system_prompt)
        return self._execute_write(
            lambda c: c.execute("UPDATE sessions SET system_prompt = ? WHERE id = ?", (value, session_id)).rowcount > 0
        )

    def ensure_session(self, session_id: str, source: str = "cli", model: str | None = None) -> str:
        """Make sure a session row exists (created with ``source``/``model`` if missing; an existing
        row is left unchanged) so that messages can be appended to it. Returns the id."""
        return self.create_session(session_id=session_id, source=source, model=model)

    def get_session_title(self, session_id: str) -> str | None:
        """The session's title, or ``None`` (no title or unknown session)."""
        row = self.get_session(session_id)
        return row["title"] if row else None

    def get_next_title_in_lineage(self, base_title: str) -> str:
        """``base`` if no session uses it, else ``"base #N"`` with N one above the highest used
        number (the bare title counts as #1). A ``" #N"`` suffix on ``base_title`` is ignored."""
        base = sanitize_title(base_title) or ""
        m = _TITLE_NUMBER_RE.match(base)
        if m:
            base = m.group(1)
        rows = self._read(  # a range, not LIKE: it uses the title index
            "SELECT title FROM sessions WHERE title = ? OR (title > ? AND title < ?)", (base, base + " #", base + " $")
        )
        if not rows:
            return base
        highest = 0
        for (t,) in rows:
            if t == base:
                highest = max(highest, 1)
                continue
            mm = _TITLE_NUMBER_RE.match(t)
            if mm and mm.group(1) == base:
                highest = max(highest, int(mm.group(2)))
        return f"{base} #{highest + 1}" if highest else base

    def resolve_session_by_title(self, title: str) -> str | None:
        """Session id whose title is ``title``, preferring the highest ``"title #N"``; else ``None``
        (also for text longer than any title may be)."""
        try:
            base = sanitize_title(title)
        except ValueError:  # too long to be a title, so no session has it
            return None
        if not base:
            return None
        rows = self._read(  # a range, not LIKE: it uses the title index
            "SELECT id, title FROM sessions WHERE title = ? OR (title > ? AND title < ?)", (base, base + " #", base + " $")
        )
        best: tuple[int, str] | None = None
        for sid, t in rows:
            n = 1 if t == base else None
            mm = _TITLE_NUMBER_RE.match(t)
            if n is None and mm and mm.group(1) == base:
                n = int(mm.group(2))
            if n is not None and (best is None or n > best[0]):
                best = (n, sid)
        return best[1] if best else None

    def search_titles(self, query: str, limit: int = 10, query_syntax: bool = False) -> list[dict[str, Any]]:
        """Sessions whose title matches ``query``, best first: the session row plus ``title_match``.

        ``"exact"``: the whole query (quotes and backticks around it ignored, any case) is the
        title; a ``"title #N"`` lineage resolves to its highest N (:meth:`resolve_session_by_title`).
        ``"terms"``: every informative term of the query (as planned by
        :func:`~hermes_memory.sessions.fts.build_query`) starts a word of the title, or its porter
        stem does (CJK terms as substrings). Exact matches come first, then newest ``started_at``;
        the scan stops at the ``limit`` newest term matches.
        ``[]`` for a query with nothing searchable. Raises :class:`SessionStoreError` on a
        database failure.
        """
        wanted = str(query or "").strip().strip("`'\"").strip()
        if not wanted or limit <= 0 or not _storable(wanted):
            return []
        found: dict[str, tuple[int, float]] = {}  # id -> (0 exact | 1 terms, started_at)
        exact_id = self.resolve_session_by_title(wanted)
        for r in self._read("SELECT id, started_at FROM sessions WHERE title = ? OR id = ?", (wanted, exact_id or "")):
            found[r["id"]] = (0, r["started_at"] or 0.0)
        plan = fts_mod.build_query(wanted, syntax=query_syntax)
        words = [w for t in plan.terms for w in t.split() if w]
        informative = any(fts_mod.contains_cjk(w) or (w.lower() not in fts_mod.STOPWORDS and len(w) > 1) for w in words)
        if informative:  # a title is not found by "the" alone
            with self._lock:
                if self._conn is None:
                    raise SessionStoreError("SessionDB is closed; open a new SessionDB.")
                try:
                    stems = self._stems(self._conn, [w.lower() for w in words if not fts_mod.contains_cjk(w)])
                except sqlite3.Error:
                    stems = {}
            # SQL narrows the rows (LIKE folds ASCII case; a word or its stem must occur), Python decides
            sql = "SELECT id, title, started_at FROM sessions WHERE title IS NOT NULL"
            params: list[Any] = []
            for w in dict.fromkeys(w.lower() for w in words if w.isascii() and len(w) > 2):
                sql += " AND (title LIKE ? ESCAPE '\\' OR title LIKE ? ESCAPE '\\')"
                params += ["%" + fts_mod.like_escape(x) + "%" for x in (w, stems.get(w) or w)]
            checks = [fts_mod.Highlighter([w], [stems.get(w.lower()) or ""]) for w in words]
            folded = wanted.casefold()
            page, offset, terms_found = max(200, 20 * limit), 0, 0
            # newest first; "+" keeps the planner on the title index for the filter (sorting the few matches)
            sql += " ORDER BY +started_at DESC, id LIMIT ? OFFSET ?"
            while terms_found < limit:
                rows = self._read(sql, [*params, page, offset])
                for r in rows:
                    if r["id"] not in found and all(h.matches(r["title"] or "") for h in checks):
                        kind = 0 if (r["title"] or "").casefold() == folded else 1
                        found[r["id"]] = (kind, r["started_at"] or 0.0)
                        terms_found += kind
                if len(rows) < page:
                    break
                offset += page
        ranked = sorted(found.items(), key=lambda kv: (kv[1][0], -kv[1][1], kv[0]))[:limit]
        out = []
        for sid, (kind, _) in ranked:
            row = self.get_session(sid)
            if row is not None:
                out.append({**row, "title_match": "exact" if kind == 0 else "terms"})
        return out

    # ------------------------------------------------------------------ messages
    def append_message(
        self,
        session_id: str,
        role: str,
        content: Any = None,
        tool_name: str | None = None,
        tool_calls: list[dict[str, Any]] | str | None = None,
        tool_call_id: str | None = None,
        token_count: int | None = None,
        finish_reason: str | None = None,
        reasoning: str | None = None,
        reasoning_content: str | None = None,
        reasoning_details: Any = None,
        codex_reasoning_items: Any = None,
        codex_message_items: Any = None,
        timestamp: float | None = None,
    ) -> int:
        """Store one message and return its row id.

        ``content`` may be text or a list/dict (stored as prefixed JSON, returned decoded); lone
        surrogates are scrubbed. ``tool_calls`` (OpenAI list) is stored as JSON. The session's
        ``message_count`` grows by 1 and, for assistant messages, ``tool_call_count`` by the number
        of tool calls. Raises :class:`SessionStoreError` for an unknown session or after the
        bounded retries of a locked database.
        """
        if tool_calls is not None and isinstance(tool_calls, str):
            decoded = _decode_json(tool_calls)
            n_calls = len(decoded) if isinstance(decoded, list) else 0
        else:
            n_calls = len(tool_calls) if isinstance(tool_calls, list) else 0
        row = (
            session_id,
            fts_mod.scrub_text(str(role)),
            _encode_content(content),
            _scrub(tool_call_id),
            _encode_json(tool_calls),
            _scrub(tool_name),
            timestamp if timestamp is not None else time.time(),
            token_count,
            _scrub(finish_reason),
            _scrub(reasoning),
            _scrub(reasoning_content),
            _encode_json(reasoning_details),
            _encode_json(codex_reasoning_items),
            _encode_json(codex_message_items),
        )
        added_calls = n_calls if role == "assistant" else 0

        def _do(conn: sqlite3.Connection) -> int:
            updated = conn.execute(
                "UPDATE sessions SET message_count = coalesce(message_count, 0) + 1, "
                "tool_call_count = coalesce(tool_call_count, 0) + ? WHERE id = ?",
                (added_calls, session_id),
            ).rowcount
            if not updated:
                raise SessionStoreError(
                    f"unknown session {session_id!r}: create it with create_session() before appending."
                )
            cur = conn.execute(
                "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, "
                "timestamp, token_count, finish_reason, reasoning, reasoning_content, reasoning_details, "
                "codex_reasoning_items, codex_message_items) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                row,
            )
            return int(cur.lastrowid)

        return self._execute_write(_do)

    def append_messages(self, session_id: str, messages: list[dict[str, Any]]) -> list[int]:
        """Append many OpenAI-style message dicts in ONE transaction; returns their row ids.

        Keys as for :meth:`append_message` (``name`` is accepted for ``tool_name``, ``timestamp``
        for a given time). Used by importers and batch writers.
        """
        if not messages:
            return []
        prepared = []
        calls_total = 0
        now = time.time()
        for m in messages:
            role = fts_mod.scrub_text(str(m.get("role") or "user"))
            tc = m.get("tool_calls")
            if isinstance(tc, str):
                dec = _decode_json(tc)
                n = len(dec) if isinstance(dec, list) else 0
            else:
                n = len(tc) if isinstance(tc, list) else 0
            if role == "assistant":
                calls_total += n
            prepared.append(
                (
                    session_id,
                    role,
                    _encode_content(m.get("content")),
                    _scrub(m.get("tool_call_id")),
                    _encode_json(tc),
                    _scrub(m.get("tool_name") or m.get("name")),
                    m.get("timestamp") if m.get("timestamp") is not None else now,
                    m.get("token_count"),
                    _scrub(m.get("finish_reason")),
                    _scrub(m.get("reasoning")),
                    _scrub(m.get("reasoning_content")),
                    _encode_json(m.get("reasoning_details")),
                    _encode_json(m.get("codex_reasoning_items")),
                    _encode_json(m.get("codex_message_items")),
                )
            )

        def _do(conn: sqlite3.Connection) -> list[int]:
            if not conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
                raise SessionStoreError(
                    f"unknown session {session_id!r}: create it with create_session() before appending."
                )
            ids = []
            for r in prepared:
                cur = conn.execute(
                    "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, "
                    "timestamp, token_count, finish_reason, reasoning, reasoning_content, reasoning_details, "
                    "codex_reasoning_items, codex_message_items) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    r,
                )
                ids.append(int(cur.lastrowid))
            conn.execute(
                "UPDATE sessions SET message_count = coalesce(message_count, 0) + ?, "
                "tool_call_count = coalesce(tool_call_count, 0) + ? WHERE id = ?",
                (len(prepared), calls_total, session_id),
            )
            return ids

        return self._execute_write(_do)

    def update_message_content(self, message_id: int, content: Any) -> bool:
        """Rewrite one message's content (redaction, persisted pruning). The full-text index
        follows: the old wording no longer matches. Returns False for an unknown id."""
        enc = _encode_content(content)
        return self._execute_write(
            lambda c: c.execute("UPDATE messages SET content = ? WHERE id = ?", (enc, message_id)).rowcount > 0
        )

    def _row_to_message(self, row: sqlite3.Row) -> dict[str, Any]:
        d = dict(row)
        d["content"] = _decode_content(d.get("content"))
        for key in ("tool_calls", "reasoning_details", "codex_reasoning_items", "codex_message_items"):
            if key in d:
                d[key] = _decode_json(d[key])
        return d

    def get_messages(self, session_id: str) -> list[dict[str, Any]]:
        """All messages of a session in order (by id), every column, JSON columns decoded."""
        rows = self._read("SELECT * FROM messages WHERE session_id = ? ORDER BY id", (session_id,))
        return [self._row_to_message(r) for r in rows]

    def get_message(self, message_id: int) -> dict[str, Any] | None:
        """One message by id (decoded), or ``None``."""
        rows = self._read("SELECT * FROM messages WHERE id = ?", (message_id,))
        return self._row_to_message(rows[0]) if rows else None

    def get_messages_window(
        self, session_id: str, around_message_id: int, window: int = 5
    ) -> tuple[list[dict[str, Any]], bool, bool]:
        """Messages ``window`` before and after ``around_message_id`` in its session (inclusive).
        Returns ``(messages, more_before, more_after)``."""
        before = self._read(
            "SELECT * FROM messages WHERE session_id = ? AND id < ? ORDER BY id DESC LIMIT ?",
            (session_id, around_message_id, window + 1),
        )
        after = self._read(
            "SELECT * FROM messages WHERE session_id = ? AND id >= ? ORDER BY id LIMIT ?",
            (session_id, around_message_id, window + 2),
        )
        more_before = len(before) > window
        more_after = len(after) > window + 1
        rows = list(reversed(before[:window])) + list(after[: window + 1])
        return [self._row_to_message(r) for r in rows], more_before, more_after

    def _ancestors(self, conn: sqlite3.Connection, session_id: str) -> list[str]:
        chain: list[str] = []
        seen = {session_id}
        cur = conn.execute("SELECT parent_session_id FROM sessions WHERE id = ?", (session_id,)).fetchone()
        while cur and cur[0] and cur[0] not in seen:
            chain.append(cur[0])
            seen.add(cur[0])
            cur = conn.execute("SELECT parent_session_id FROM sessions WHERE id = ?", (cur[0],)).fetchone()
        return chain

    def _compression_predecessors(self, conn: sqlite3.Connection, session_id: str) -> list[str]:
        """The parent chain of ``session_id`` as far as each parent ended by compression (nearest
        first): the sessions this one continues. Cycles are cut."""
        chain: list[str] = []
        seen = {session_id}
        cur = session_id
        while True:
            row = conn.execute(
                "SELECT p.id, p.end_reason FROM sessions c JOIN sessions p ON p.id = c.parent_session_id "
                "WHERE c.id = ?",
                (cur,),
            ).fetchone()
            if row is None or row[0] in seen or row[1] != "compression":
                return chain
            chain.append(row[0])
            seen.add(row[0])
            cur = row[0]

    def get_lineage(self, session_id: str) -> list[str]:
        """The ids from the root ancestor down to ``session_id`` (cycles are cut)."""
        with self._lock:
            return list(reversed(self._ancestors(self._conn, session_id))) + [session_id]

    def get_lineages(self, session_ids: Iterable[str]) -> dict[str, list[str]]:
        """For many sessions at once (one recursive query): id -> ids from the root down to it."""
        ids = list(dict.fromkeys(session_ids))
        if not ids:
            return {}
        out: dict[str, list[tuple[int, str]]] = {i: [] for i in ids}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            rows = self._read(
                "WITH RECURSIVE up(start, id, parent, depth) AS ("
                f" SELECT id, id, parent_session_id, 0 FROM sessions WHERE id IN ({','.join('?' * len(chunk))})"
                " UNION ALL SELECT up.start, s.id, s.parent_session_id, up.depth + 1"
                " FROM up JOIN sessions s ON s.id = up.parent WHERE up.depth < 1000 AND s.id != up.start)"
                " SELECT start, id, depth FROM up",
                chunk,
            )
            for r in rows:
                out[r["start"]].append((int(r["depth"]), r["id"]))
        result = {}
        for sid, chain in out.items():
            seen: list[str] = []
            for _, anc in sorted(chain, key=lambda t: -t[0]):
                if anc not in seen:
                    seen.append(anc)
            result[sid] = seen or [sid]
        return result

    def get_bookends(self, session_id: str, n: int = 3) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
        """First and last ``n`` user/assistant messages of a session, and how many it has."""
        count = int(self._read(
            "SELECT count(*) FROM messages WHERE session_id = ? AND role IN ('user', 'assistant')", (session_id,)
        )[0][0])
        first = self._read(
            "SELECT * FROM messages WHERE session_id = ? AND role IN ('user', 'assistant') ORDER BY id LIMIT ?",
            (session_id, n),
        )
        last = self._read(
            "SELECT * FROM messages WHERE session_id = ? AND role IN ('user', 'assistant') ORDER BY id DESC LIMIT ?",
            (session_id, n),
        )
        return [self._row_to_message(r) for r in first], [self._row_to_message(r) for r in reversed(last)], count

    def lineage_root(self, session_id: str) -> str:
        """The root of ``session_id``'s parent chain (itself when it has no parent)."""
        return self.get_lineage(session_id)[0]

    def get_messages_as_conversation(
        self, session_id: str, include_ancestors: bool = False
    ) -> list[dict[str, Any]]:
        """OpenAI-style message dicts for replay: ``{"role", "content"}`` plus ``timestamp`` (epoch
        seconds), ``tool_calls``, ``tool_call_id``, ``name`` where set; assistant messages regain
        ``finish_reason``, ``reasoning``, ``reasoning_content``, ``reasoning_details`` and codex
        items when stored (even ``""``). Leaked ``<memory-context>…</memory-context>`` blocks are
        stripped from content. ``include_ancestors`` prepends the parent chain (oldest first)
        without repeating a system prompt already included, and drops a user message that repeats
        an earlier user message with no assistant reply in between (the prompt a resumed session
        replayed). The model adapters send only the keys their API knows."""
        ids = self.get_lineage(session_id) if include_ancestors else [session_id]
        out: list[dict[str, Any]] = []
        seen_system: set[str] = set()
        for sid in ids:
            for m in self.get_messages(sid):
                content = m.get("content")
                if isinstance(content, str) and "<memory-context>" in content:
                    content = _MEMORY_CONTEXT_RE.sub("", content).strip()
                if m["role"] == "system":
                    key = str(content)
                    if key in seen_system:
                        continue
                    seen_system.add(key)
                if include_ancestors and m["role"] == "user" and _repeats_pending_prompt(out, content):
                    continue
                msg: dict[str, Any] = {"role": m["role"], "content": content}
                if m.get("timestamp") is not None:
                    msg["timestamp"] = m["timestamp"]
                if m.get("tool_calls"):
                    msg["tool_calls"] = m["tool_calls"]
                if m.get("tool_call_id"):
                    msg["tool_call_id"] = m["tool_call_id"]
                if m.get("tool_name") and m["role"] == "tool":
                    msg["name"] = m["tool_name"]
                if m["role"] == "assistant":
                    if m.get("finish_reason"):
                        msg["finish_reason"] = m["finish_reason"]
                    for key in (
                        "reasoning",
                        "reasoning_content",
                        "reasoning_details",
                        "codex_reasoning_items",
                        "codex_message_items",
                    ):
                        if m.get(key) is not None:
                            msg[key] = m[key]
                out.append(msg)
        return out

    # ------------------------------------------------------------------ search
    def search_messages(
        self,
        query: str,
        source_filter: list[str] | str | None = None,
        exclude_sources: list[str] | str | None = None,
        role_filter: list[str] | str | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
        since: float | None = None,
        until: float | None = None,
        limit: int = 20,
        offset: int = 0,
        sort: str | None = None,
        exclude_session_ids: list[str] | None = None,
        raise_errors: bool = False,
        with_context: bool = True,
        with_snippet: bool = True,
        query_syntax: bool = False,
        cwd_prefix: str | None = None,
    ) -> list[dict[str, Any]]:
        """Full-text search over all messages; any string is accepted and nothing is raised.

        ``query`` is planned by :func:`hermes_memory.sessions.fts.build_query` (an OR of informative
        terms, phrases for punctuated tokens, CJK via the trigram side table). Upper-case
        ``AND``/``OR``/``NOT``/``NEAR`` are plain words unless ``query_syntax`` is True (then they
        are operators; a query left with no positive term is searched as words). Filters: sources to
        include/exclude, roles, one session, ``user_id``, ``since <= timestamp < until`` (epoch s),
        sessions to leave out, and ``cwd_prefix`` (sessions whose working directory is that folder
        or below it; see :func:`cwd_clause`). ``sort``: ``None``/``"relevance"`` (BM25, best first),
        ``"newest"`` or ``"oldest"`` (ties broken by message id, so order is stable).

        Returns a list of dicts: ``id, session_id, role, snippet`` (matches wrapped in
        ``>>>``/``<<<``), ``timestamp, tool_name, source, model, title, user_id, session_started``,
        ``context`` (a list of the previous message, this one and the next one of the same session,
        each ``{"id", "role", "content"}`` cut to 200 chars; ``[]`` when ``with_context`` is False)
        and ``rank`` (BM25, lower is better; ``None`` for rows found only by the CJK side table).
        An empty or unsearchable query returns ``[]``. A SQLite failure returns ``[]`` and is
        logged, unless ``raise_errors`` is set, when :class:`SessionStoreError` is raised (the
        ``session_search`` tool does this so that a failure is never reported as "no results").
        """
        try:
            self._resync_if_schema_changed()
            return self._search(
                query,
                _as_list(source_filter),
                _as_list(exclude_sources),
                _as_list(role_filter),
                session_id,
                user_id,
                since,
                until,
                max(0, min(int(limit), 1000)),
                max(0, int(offset)),
                sort,
                list(exclude_session_ids or []),
                with_context,
                with_snippet,
                query_syntax,
                cwd_prefix,
            )
        except (SessionStoreError, sqlite3.Error) as exc:
            if raise_errors:
                if isinstance(exc, SessionStoreError):
                    raise
                raise SessionStoreError(f"search failed: {exc}") from exc
            logger.warning("session search for %r failed: %s", query, exc)
            return []

    def _filters(
        self,
        sources: list[str],
        excluded: list[str],
        roles: list[str],
        session_id: str | None,
        user_id: str | None,
        since: float | None,
        until: float | None,
        excluded_sessions: list[str],
        cwd_prefix: str | None = None,
    ) -> tuple[str, list[Any], bool]:
        where: list[str] = []
        params: list[Any] = []
        needs_session = False
        if cwd_prefix is not None:
            clause, extra = cwd_clause(cwd_prefix, "s.")
            where.append(clause)
            params += extra
            needs_session = True
        if sources:
            where.append(f"s.source IN ({','.join('?' * len(sources))})")
            params += sources
            needs_session = True
        if excluded:
            where.append(f"s.source NOT IN ({','.join('?' * len(excluded))})")
            params += excluded
            needs_session = True
        if user_id is not None:
            where.append("s.user_id = ?")
            params.append(user_id)
            needs_session = True
        if roles:
            where.append(f"m.role IN ({','.join('?' * len(roles))})")
            params += roles
        if session_id is not None:
            where.append("m.session_id = ?")
            params.append(session_id)
        if excluded_sessions:
            where.append(f"m.session_id NOT IN ({','.join('?' * len(excluded_sessions))})")
            params += excluded_sessions
        if since is not None:
            where.append("m.timestamp >= ?")
            params.append(float(since))
        if until is not None:
            where.append("m.timestamp < ?")
            params.append(float(until))
        return (" AND " + " AND ".join(where)) if where else "", params, needs_session

    def _search(
        self,
        query: str,
        sources: list[str],
        excluded: list[str],
        roles: list[str],
        session_id: str | None,
        user_id: str | None,
        since: float | None,
        until: float | None,
        limit: int,
        offset: int,
        sort: str | None,
        excluded_sessions: list[str],
        with_context: bool = True,
        with_snippet: bool = True,
        query_syntax: bool = False,
        cwd_prefix: str | None = None,
    ) -> list[dict[str, Any]]:
        plan = fts_mod.build_query(query, syntax=query_syntax)
        if plan.empty or limit <= 0:
            return []
        want = offset + limit
        cond, params, needs_session = self._filters(
            sources, excluded, roles, session_id, user_id, since, until, excluded_sessions, cwd_prefix
        )
        order_newest = (sort or "").lower() in ("newest", "recent", "desc")
        order_oldest = (sort or "").lower() in ("oldest", "asc")
        relevance = not (order_newest or order_oldest)
        join_s = " JOIN sessions s ON s.id = m.session_id" if needs_session else ""
        # words after NOT: CJK literals leave every result, other words leave the CJK side too
        neg_like = "".join(
            " AND m.id NOT IN (SELECT rowid FROM hm_messages_cjk WHERE content LIKE ? ESCAPE '\\'"
            " OR tool_name LIKE ? ESCAPE '\\')" for _ in plan.exclude_like
        )
        neg_like_params = [p for lit in plan.exclude_like for p in ["%" + fts_mod.like_escape(lit) + "%"] * 2]
        neg_fts = " AND m.id NOT IN (SELECT rowid FROM hm_messages_fts WHERE hm_messages_fts MATCH ?)" if plan.exclude_fts else ""
        neg_fts_params = [" OR ".join(plan.exclude_fts)] if plan.exclude_fts else []
        if order_newest:
            order = "m.timestamp DESC, m.id DESC"
        elif order_oldest:
            order = "m.timestamp ASC, m.id ASC"
        else:
            order = "hm_messages_fts.rank, m.id DESC"

        with self._lock:
            conn = self._conn
            if conn is None:
                raise SessionStoreError("SessionDB is closed; open a new SessionDB.")
            hits: dict[int, float] = {}  # id -> bm25 rank (negative; lower is better)
            cand: dict[int, tuple[str, str]] = {}
            fts_expr, dropped, min_rowid = self._cap_terms(conn, plan) if relevance else (plan.fts, [], None)
            window = " AND hm_messages_fts.rowid >= ?" if min_rowid else ""
            wparams = [min_rowid] if min_rowid else []
            if fts_expr:
                pool = max(want, ranking.RERANK_POOL) if relevance else want
                if not cond and not neg_like and relevance:
                    # fast path: FTS5 sorts by rank itself and stops at LIMIT
                    rows = conn.execute(
                        "SELECT rowid AS id, rank FROM hm_messages_fts WHERE hm_messages_fts MATCH ?"
                        + window + " ORDER BY rank LIMIT ?",
                        [fts_expr, *wparams, pool],
                    ).fetchall()
                else:
                    rows = conn.execute(
                        "SELECT m.id AS id, hm_messages_fts.rank AS rank FROM hm_messages_fts "
                        "JOIN messages m ON m.id = hm_messages_fts.rowid" + join_s
                        + " WHERE hm_messages_fts MATCH ?" + window + cond + neg_like + f" ORDER BY {order} LIMIT ?",
                        [fts_expr, *wparams, *params, *neg_like_params, pool],
                    ).fetchall()
                for r in rows:
                    hits[int(r["id"])] = float(r["rank"])
                if hits and relevance and dropped:
                    best = sorted(hits, key=hits.__getitem__)[:ranking.DROPPED_TERM_ROWS]
                    self._score_dropped(conn, hits, dropped, self._candidates(conn, best, with_text=True))
                if relevance and (dropped or min_rowid) and len(hits) < want and plan.fts:
                    # The posting budget or the recency window left the page short (the kept words
                    # are rare, or the filters exclude their rows): fill it with the newest rows of
                    # the full query, ranked by their full BM25, so no match is lost.
                    extra = conn.execute(
                        "SELECT m.id AS id, hm_messages_fts.rank AS rank FROM hm_messages_fts "
                        "JOIN messages m ON m.id = hm_messages_fts.rowid" + join_s
                        + " WHERE hm_messages_fts MATCH ?" + cond + neg_like
                        + " ORDER BY hm_messages_fts.rowid DESC LIMIT ?",
                        [plan.fts, *params, *neg_like_params, want + len(hits)],
                    ).fetchall()
                    for r in extra:
                        if len(hits) >= want:
                            break
                        hits.setdefault(int(r["id"]), float(r["rank"]))
                if hits and relevance:
                    cand = self._candidates(conn, list(hits), with_text=False)
            found: dict[int, float] = {}
            if (plan.cjk_trigram or plan.cjk_like) and conn.execute(
                "SELECT 1 FROM hm_messages_cjk LIMIT 1"
            ).fetchone():
                base = (
                    "SELECT m.id AS id, m.timestamp AS ts FROM hm_messages_cjk c JOIN messages m ON m.id = c.rowid"
                    + join_s
                )
                # Under newest/oldest the side table is read in that time order (row ids need not
                # follow timestamps: imported history); relevance takes the newest rows.
                by_time = "m.timestamp ASC, m.id ASC" if order_oldest else "m.timestamp DESC, m.id DESC"
                if plan.cjk_trigram:
                    for r in conn.execute(
                        base + " WHERE hm_messages_cjk MATCH ?" + cond + neg_like + neg_fts
                        + f" ORDER BY {'c.rowid DESC' if relevance else by_time} LIMIT ?",
                        [plan.cjk_trigram, *params, *neg_like_params, *neg_fts_params, max(want, 50)],
                    ):
                        found.setdefault(int(r["id"]), r["ts"])
                for lit in plan.cjk_like:
                    pat = "%" + fts_mod.like_escape(lit) + "%"
                    for r in conn.execute(
                        base
                        + " WHERE (c.content LIKE ? ESCAPE '\\' OR c.tool_name LIKE ? ESCAPE '\\')"
                        + cond + neg_like + neg_fts
                        + f" ORDER BY {by_time} LIMIT ?",
                        [pat, pat, *params, *neg_like_params, *neg_fts_params, max(want, 50)],
                    ):
                        found.setdefault(int(r["id"]), r["ts"])
            cjk_only = [i for i in found if i not in hits]
            ids = ranking.rerank(hits, {i: c[0] for i, c in cand.items()}) if relevance and hits else list(hits)
            if cjk_only:
                cjk_only.sort(key=lambda i: (-found[i], -i))
                ids += cjk_only
            if not ids:
                return []
            if not relevance:
                meta = {
                    int(r["id"]): float(r["timestamp"])
                    for r in conn.execute(
                        f"SELECT id, timestamp FROM messages WHERE id IN ({','.join('?' * len(ids))})", ids
                    )
                }
                if order_newest:
                    ids.sort(key=lambda i: (-meta[i], -i))
                else:
                    ids.sort(key=lambda i: (meta[i], i))
            page = ids[offset : offset + limit]
            if not page:
                return []
            return self._materialise(conn, page, hits, plan, with_context, with_snippet)

    def _stems(self, conn: sqlite3.Connection, words: list[str]) -> dict[str, str | None]:
        """Index tokens (porter stems) of ``words``, by tokenising them with the same tokenizer
        in a TEMP FTS5 table (nothing is written to the database file). Cached."""
        cache: dict[str, str | None] = self.__dict__.setdefault("_stem_cache", {})
        todo = [w for w in dict.fromkeys(words) if w not in cache]
        if todo:
            if not self.__dict__.get("_temp_ready"):
                conn.execute(
                    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.hm_tok USING fts5(x, "
                    "tokenize='porter unicode61 remove_diacritics 2')"
                )
                conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.hm_tok_v USING fts5vocab(temp, hm_tok, instance)")
                conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.hm_fts_v USING fts5vocab(main, hm_messages_fts, row)")
                self.__dict__["_temp_ready"] = True
            conn.execute("DELETE FROM temp.hm_tok")
            conn.executemany("INSERT INTO temp.hm_tok(rowid, x) VALUES (?, ?)", list(enumerate(todo, start=1)))
            got = {int(d): t for d, t in conn.execute("SELECT doc, term FROM temp.hm_tok_v")}
            for i, w in enumerate(todo, start=1):
                cache[w] = got.get(i)
            if len(cache) > 50_000:
                cache.clear()
        return {w: cache.get(w) for w in words}

    def _cap_terms(
        self, conn: sqlite3.Connection, plan: fts_mod.QueryPlan
    ) -> tuple[str | None, list[tuple[fts_mod.Term, int]], int | None]:
        """Bound the work of a relevance search (see :data:`hermes_memory.sessions.ranking.POSTINGS_BUDGET`).

        Returns ``(fts_expression, dropped_terms_with_df, min_rowid)``: the expression is
        ``plan.fts`` minus the most frequent OR terms when together they match more than
        ``POSTINGS_BUDGET`` rows; when even the rarest term alone matches more than
        ``SINGLE_TERM_WINDOW`` rows, ``min_rowid`` limits scoring to the newest part of the history
        holding about that many of its matches (recency window), else it is ``None``."""
        if not plan.fts or not plan.or_terms or any(t.prefix for t in plan.or_terms):
            return plan.fts, [], None
        try:
            pieces = [p.lower() for t in plan.or_terms for p in t.pieces]
            stems = self._stems(conn, pieces)
            dfs: list[int] = []  # document frequency of each OR term, in query order
            for t in plan.or_terms:
                df = None
                for p in t.pieces:
                    stem = stems.get(p.lower())
                    if stem is None:
                        continue
                    row = conn.execute("SELECT doc FROM temp.hm_fts_v WHERE term = ?", (stem,)).fetchone()
                    n = int(row[0]) if row else 0
                    df = n if df is None else min(df, n)
                dfs.append(df or 0)
        except sqlite3.Error as exc:  # the cap is an optimisation; never fail a search over it
            logger.debug("term statistics unavailable: %s", exc)
            return plan.fts, [], None
        if sum(dfs) <= ranking.POSTINGS_BUDGET:
            return plan.fts, [], None
        kept, dropped_idx, total = ranking.choose_terms(dfs)
        dropped = [(plan.or_terms[i], dfs[i]) for i in dropped_idx]
        min_rowid = None
        if total > ranking.SINGLE_TERM_WINDOW:
            max_id = conn.execute("SELECT max(id) FROM messages").fetchone()[0] or 0
            min_rowid = ranking.window_start(max_id, total)
        return " OR ".join(plan.or_terms[i].render() for i in kept), dropped, min_rowid

    def _candidates(self, conn: sqlite3.Connection, ids: list[int], with_text: bool) -> dict[int, tuple[str, str]]:
        """id -> (session_id, searchable text or "") for the BM25 candidates, in one query."""
        cols = "id, session_id, content, tool_name, tool_calls" if with_text else "id, session_id"
        out: dict[int, tuple[str, str]] = {}
        for r in conn.execute(f"SELECT {cols} FROM messages WHERE id IN ({','.join('?' * len(ids))})", ids):
            text = " ".join(x for x in r[2:] if x) if with_text else ""
            out[int(r[0])] = (r[1], text)
        return out

    def _score_dropped(
        self,
        conn: sqlite3.Connection,
        hits: dict[int, float],
        dropped: list[tuple[fts_mod.Term, int]],
        cand: dict[int, tuple[str, str]],
    ) -> None:
        """Give candidates the BM25 weight of the frequent terms left out of the FTS query.

        For each dropped term found in a candidate's text (word-prefix match on the term or its
        porter stem) the rank falls by the term's IDF, ``ln((N - n + 0.5) / (n + 0.5))`` as in FTS5's
        bm25 -- the exact contribution of one occurrence in a row of average length."""
        if not hits or not dropped:
            return
        n_rows = conn.execute("SELECT max(id) FROM messages").fetchone()[0] or 1
        for term, df in dropped:
            idf = ranking.bm25_idf(n_rows, df)
            words = [p.lower() for p in term.pieces]
            pattern = fts_mod.Highlighter([" ".join(words)], list(self._stems(conn, words).values()))
            for i in hits:
                if pattern.matches(cand.get(i, ("", ""))[1]):
                    hits[i] -= idf

    def _stems_for_terms(self, conn: sqlite3.Connection, terms: list[str]) -> list[str]:
        words = [w.lower() for t in terms for w in t.split() if not fts_mod.contains_cjk(w)]
        try:
            return [s for s in self._stems(conn, words).values() if s]
        except sqlite3.Error:
            return []

    def _materialise(
        self,
        conn: sqlite3.Connection,
        page: list[int],
        hits: dict[int, float],
        plan: fts_mod.QueryPlan,
        with_context: bool,
        with_snippet: bool = True,
    ) -> list[dict[str, Any]]:
        marks = ",".join("?" * len(page))
        text_cols = "m.content, m.tool_calls, " if with_snippet else ""
        rows = conn.execute(
            "SELECT m.id, m.session_id, m.role, " + text_cols + "m.timestamp, m.tool_name, "
            "s.source, s.model, s.title, s.user_id, s.started_at AS session_started "
            f"FROM messages m JOIN sessions s ON s.id = m.session_id WHERE m.id IN ({marks})",
            page,
        ).fetchall()
        by_id = {int(r["id"]): r for r in rows}
        highlighter = fts_mod.Highlighter(plan.terms, self._stems_for_terms(conn, plan.terms)) if with_snippet else None
        results = []
        for i in page:
            r = by_id.get(i)
            if r is None:
                continue
            snip = self._snippet(highlighter, r) if highlighter is not None else None
            results.append(
                {
                    "id": i,
                    "session_id": r["session_id"],
                    "role": r["role"],
                    "snippet": snip,
                    "timestamp": r["timestamp"],
                    "tool_name": r["tool_name"],
                    "source": r["source"],
                    "model": r["model"],
                    "title": r["title"],
                    "user_id": r["user_id"],
                    "session_started": r["session_started"],
                    "rank": hits.get(i),
                    "context": self._context(conn, r["session_id"], i) if with_context else [],
                }
            )
        return results

    def _snippet(self, highlighter: fts_mod.Highlighter, r: sqlite3.Row) -> str:
        text = _decode_content(r["content"])
        if not isinstance(text, str):
            text = json.dumps(text, ensure_ascii=False) if text is not None else ""
        if r["tool_name"] and (not text or not highlighter.matches(text)):
            text = f"[{r['tool_name']}] {text}".strip()
        if not highlighter.matches(text) and r["tool_calls"]:
            text = f"{text} {r['tool_calls']}".strip()
        return highlighter.snippet(text)

    def snippets_for(self, query: str, message_ids: list[int], query_syntax: bool = False) -> dict[int, str]:
        """``>>>match<<<`` snippets of ``query`` in the given messages (id -> snippet), built the
        same way as :meth:`search_messages` builds them. Unknown ids are left out."""
        ids = [int(i) for i in message_ids]
        if not ids:
            return {}
        plan = fts_mod.build_query(query, syntax=query_syntax)
        with self._lock:
            conn = self._conn
            if conn is None:
                raise SessionStoreError("SessionDB is closed; open a new SessionDB.")
            hl = fts_mod.Highlighter(plan.terms, self._stems_for_terms(conn, plan.terms))
            rows = conn.execute(
                f"SELECT id, content, tool_name, tool_calls FROM messages WHERE id IN ({','.join('?' * len(ids))})", ids
            ).fetchall()
            return {int(r["id"]): self._snippet(hl, r) for r in rows}

    def _context(self, conn: sqlite3.Connection, session_id: str, message_id: int) -> list[dict[str, Any]]:
        rows = conn.execute(
            "SELECT * FROM (SELECT id, role, content FROM messages WHERE session_id = ? AND id < ? "
            "ORDER BY id DESC LIMIT 1) UNION ALL SELECT id, role, content FROM messages WHERE id = ? "
            "UNION ALL SELECT * FROM (SELECT id, role, content FROM messages WHERE session_id = ? AND id > ? "
            "ORDER BY id LIMIT 1)",
            (session_id, message_id, message_id, session_id, message_id),
        ).fetchall()
        out = []
        for r in rows:
            content = _decode_content(r["content"])
            if not isinstance(content, str):
                content = json.dumps(content, ensure_ascii=False) if content is not None else ""
            out.append({"id": int(r["id"]), "role": r["role"], "content": content[:CONTEXT_CHARS]})
        return out

    # ------------------------------------------------------------------ listing
    def list_sessions(
        self,
        source: str | None = None,
        limit: int = 20,
        offset: int = 0,
        user_id: str | None = None,
        include_preview: bool = True,
        cwd_prefix: str | None = None,
    ) -> list[dict[str, Any]]:
        """Sessions newest first (by ``started_at``, ties by id): every column plus ``preview``
        (first user message, 80 chars) and ``last_active`` (newest message time or ``started_at``).
        ``cwd_prefix`` keeps sessions run in that folder or below it (:func:`cwd_clause`)."""
        where, params = [], []
        if source:
            where.append("source = ?")
            params.append(source)
        if cwd_prefix is not None:
            clause, extra = cwd_clause(cwd_prefix)
            where.append(clause)
            params += extra
        if user_id is not None:
            where.append("user_id = ?")
            params.append(user_id)
        clause = (" WHERE " + " AND ".join(where)) if where else ""
        rows = self._read(
            f"SELECT * FROM sessions{clause} ORDER BY started_at DESC, id DESC LIMIT ? OFFSET ?",
            [*params, max(0, int(limit)), max(0, int(offset))],
        )
        out = []
        for r in rows:
            d = dict(r)
            if include_preview:
                first = self._read(
                    "SELECT content FROM messages WHERE session_id = ? AND role = 'user' ORDER BY id LIMIT 1",
                    (d["id"],),
                )
                text = _decode_content(first[0]["content"]) if first else None
                d["preview"] = (text if isinstance(text, str) else "")[:80] if first else ""
                last = self._read("SELECT max(timestamp) AS t FROM messages WHERE session_id = ?", (d["id"],))
                d["last_active"] = (last[0]["t"] if last and last[0]["t"] is not None else d["started_at"])
            out.append(d)
        return out

    def search_sessions(self, source: str | None = None, limit: int = 20, offset: int = 0) -> list[dict[str, Any]]:
        """Reference name for :meth:`list_sessions` (sessions newest first, paginated)."""
        return self.list_sessions(source=source, limit=limit, offset=offset)

    def session_count(self, source: str | None = None, cwd_prefix: str | None = None) -> int:
        """Number of sessions (optionally of one source, and run in or below ``cwd_prefix``)."""
        if cwd_prefix is not None:
            clause, params = cwd_clause(cwd_prefix)
            if source:
                clause += " AND source = ?"
                params.append(source)
            return int(self._read(f"SELECT count(*) FROM sessions WHERE {clause}", params)[0][0])
        if source:
            return int(self._read("SELECT count(*) FROM sessions WHERE source = ?", (source,))[0][0])
        return int(self._read("SELECT count(*) FROM sessions")[0][0])

    def message_count(self, session_id: str | None = None) -> int:
        """Number of messages in total or in one session."""
        if session_id:
            return int(self._read("SELECT count(*) FROM messages WHERE session_id = ?", (session_id,))[0][0])
        return int(self._read("SELECT count(*) FROM messages")[0][0])

    def resolve_session_id(self, prefix: str) -> str | None:
        """Full id for an exact id or a unique prefix (``%``/``_`` are literal); ``None`` when
        unknown or ambiguous."""
        if not prefix or not _storable(prefix):
            return None
        if self._read("SELECT 1 FROM sessions WHERE id = ?", (prefix,)):
            return prefix
        rows = self._read(
            "SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\\' LIMIT 2", (fts_mod.like_escape(prefix) + "%",)
        )
        return rows[0]["id"] if len(rows) == 1 else None

    def session_id_candidates(self, prefix: str, limit: int = 5) -> tuple[list[dict[str, Any]], int]:
        """Sessions whose id starts with ``prefix`` (``%``/``_`` literal): up to ``limit`` rows
        ``{"id", "title", "started_at"}`` (oldest first, then id) and the total number that match.
        ``([], 0)`` for an empty or unstorable prefix."""
        if not prefix or not _storable(prefix):
            return [], 0
        pattern = fts_mod.like_escape(prefix) + "%"
        total = self._read("SELECT count(*) FROM sessions WHERE id LIKE ? ESCAPE '\\'", (pattern,))[0][0]
        rows = self._read(
            "SELECT id, title, started_at FROM sessions WHERE id LIKE ? ESCAPE '\\' ORDER BY started_at, id LIMIT ?",
            (pattern, max(0, int(limit))),
        )
        return [{"id": r["id"], "title": r["title"], "started_at": r["started_at"]} for r in rows], int(total)

    def resolve_session(self, ref: str, *, by_title: bool = True) -> str:
        """Full session id for ``ref``: an exact id, a unique id prefix or (``by_title``) a title
        (see :meth:`resolve_session_by_title`); a unique prefix wins over a title.

        The one place the CLI and the agent turn a user's session reference into an id. Raises
        :class:`SessionLookupError` (a :class:`SessionStoreError`) when nothing matches, or when
        ``ref`` is a prefix of several ids: then the message says "ambiguous" and lists up to 5
        of them (id, title, start time in UTC) and ``candidates`` holds them.
        """
        sid = self.resolve_session_id(ref) or (self.resolve_session_by_title(ref) if by_title else None)
        if sid:
            return sid
        shown, total = self.session_id_candidates(ref, limit=AMBIGUOUS_SHOWN)
        if total > 1:
            lines = []
            for c in shown:
                started = (time.strftime("%Y-%m-%d %H:%M", time.gmtime(float(c["started_at"])))
                           if c["started_at"] is not None else "-")
                lines.append(f"  {c['id']}  {c['title'] or '(untitled)'}  started {started} UTC")
            more = f"\n  ... and {total - len(shown)} more" if total > len(shown) else ""
            raise SessionLookupError(
                f"session id prefix {ref!r} is ambiguous: it matches {total} sessions:\n"
                + "\n".join(lines) + more + "\nGive more characters of the id.",
                ref, shown,
            )
        what = "id, id prefix or title" if by_title else "id or id prefix"
        raise SessionLookupError(
            f"no session matches {ref!r} (as an {what}); list sessions with `hermes-memory sessions list`.",
            ref, [],
        )

    # ------------------------------------------------------------------ export / delete / prune
    def export_session(self, session_id: str) -> dict[str, Any] | None:
        """The session row (all columns, ``title`` may be ``None``) plus ``messages`` (decoded), or
        ``None`` for an unknown session. JSON-serialisable."""
        s = self.get_session(session_id)
        if s is None:
            return None
        s["messages"] = self.get_messages(session_id)
        return s

    def export_all(self, source: str | None = None) -> list[dict[str, Any]]:
        """:meth:`export_session` for every session (optionally one source), oldest first."""
        if source:
            ids = self._read("SELECT id FROM sessions WHERE source = ? ORDER BY started_at, id", (source,))
        else:
            ids = self._read("SELECT id FROM sessions ORDER BY started_at, id")
        return [e for (sid,) in ids if (e := self.export_session(sid)) is not None]

    def delete_session(self, session_id: str) -> bool:
        """Delete a session and its messages (they leave the search index too). Child sessions are
        detached (``parent_session_id`` set to NULL), never deleted. False for an unknown id."""
        if not _storable(session_id):
            return False

        def _do(conn: sqlite3.Connection) -> bool:
            if not conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
                return False
            conn.execute("UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ?", (session_id,))
            conn.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
            return True

        return self._execute_write(_do)

    def prune_sessions(self, older_than_days: float = 90, source: str | None = None) -> int:
        """Delete ENDED sessions that started more than ``older_than_days`` days ago (optionally of
        one source) and return how many. Sessions that never ended are never pruned; children of
        pruned sessions that stay are detached. Running it twice prunes nothing the second time."""
        cutoff = time.time() - float(older_than_days) * 86400.0

        def _do(conn: sqlite3.Connection) -> int:
            sql = "SELECT id FROM sessions WHERE ended_at IS NOT NULL AND started_at < ?"
            params: list[Any] = [cutoff]
            if source:
                sql += " AND source = ?"
                params.append(source)
            ids = [r[0] for r in conn.execute(sql, params).fetchall()]
            if not ids:
                return 0
            for chunk_start in range(0, len(ids), 500):
                chunk = ids[chunk_start : chunk_start + 500]
                marks = ",".join("?" * len(chunk))
                conn.execute(f"UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id IN ({marks})", chunk)
                conn.execute(f"DELETE FROM messages WHERE session_id IN ({marks})", chunk)
                conn.execute(f"DELETE FROM sessions WHERE id IN ({marks})", chunk)
            return len(ids)

        return self._execute_write(_do)

    def fts_integrity_check(self) -> bool:
        """Run FTS5 ``integrity-check`` on the main index (True if it passes; raises
        :class:`SessionStoreError` describing the corruption otherwise)."""
        try:
            self._execute_write(
                lambda c: c.execute("INSERT INTO hm_messages_fts(hm_messages_fts, rank) VALUES('integrity-check', 1)")
            )
        except SessionStoreError:
            raise
        return True


def _repeats_pending_prompt(conversation: list[dict[str, Any]], content: Any) -> bool:
    """True when ``content`` (a user message) equals a user message already in ``conversation``
    that no assistant message (with text or tool calls) has answered yet."""
    if not isinstance(content, str) or not content:
        return False
    for prev in reversed(conversation):
        if prev["role"] == "user" and prev.get("content") == content:
            return True
        if prev["role"] == "assistant" and (prev.get("content") or prev.get("tool_calls")):
            return False
    return False


def cwd_clause(prefix: str, alias: str = "") -> tuple[str, list[Any]]:
    """SQL condition (and its parameters) for sessions whose ``cwd`` is the folder ``prefix`` or a
    folder below it (``/`` or ``\\`` separated). ``%`` and ``_`` in the path match themselves."""
    base = prefix.rstrip("/\\") or prefix
    esc = base.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    col = f"{alias}cwd"
    return (f"({col} = ? OR {col} LIKE ? ESCAPE '\\' OR {col} LIKE ? ESCAPE '\\')",
            [base, esc + "/%", esc + "\\\\%"])


def _as_list(value: list[str] | tuple[str, ...] | str | None) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return [str(v) for v in value if v]
