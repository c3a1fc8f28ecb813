"""The approximate nearest-neighbour index of semantic search: an inverted-file index (IVF) over
the vectors of ``hm_embeddings``, ours, in numpy (no server, nothing downloaded).

Jégou, Douze and Schmid, "Product quantization for nearest neighbor search" (IEEE TPAMI 2011)
§III.A: the vectors are split into ``nlist`` lists by k-means; a query scores the ``nlist``
centroids, then only the vectors of its ``nprobe`` nearest lists. Here the vectors of the probed
lists are scored exactly (the same int8 vectors an exact scan reads, so every returned cosine is
exact; only a neighbour outside the probed lists can be missed), and the vectors written since
the index last covered them (the *tail*) are always scanned exactly. ``nlist`` is about the
square root of the number of vectors (the usual choice: the centroid scan and the list scan then
cost about the same); spherical k-means (Dhillon and Modha, Machine Learning 2001: centroids are
renormalised means) because search ranks by cosine.

Storage, beside ``hm_embeddings`` in ``state.db`` (docs/architecture.md "state.db: the reference's
schema plus our `hm_` objects")::

    hm_ann_builds(build_id INTEGER PRIMARY KEY, model TEXT, state TEXT,  -- 'building' | 'ready'
                  nlist INTEGER, upto_seq INTEGER,   -- a build covers the vectors of seq <= upto_seq
                  covered_seq INTEGER,              -- ... and extensions up to this seq
                  vectors INTEGER, imbalance REAL,  -- vectors listed; sum(size^2) * nlist / N^2
                  generation INTEGER,               -- bumped by every change readers must see
                  centroids BLOB, created REAL)     -- float32 (nlist, 384)
    hm_ann_parts(build_id INTEGER, part INTEGER, upto_seq INTEGER, last_id INTEGER,
                 ids BLOB, lists BLOB,              -- int64 message ids, int32 list numbers
                 PRIMARY KEY (build_id, part))

Built and extended by the background indexer (:func:`maintain`), never on the append path. A
build commits its centroids first, then one part of :data:`BUILD_CHUNK` assignments per
transaction, and becomes ``ready`` in a last transaction that also drops the build it replaces:
a build killed at any point leaves the previous index (or none: exact scan) in use, and the next
:func:`maintain` resumes it from its last committed part. Readers
(:class:`hermes_memory.sessions.vector_index.VectorIndex`) load the ready build lazily, keep it in
memory, and reload when its ``(build_id, generation)`` changes (another process extended or
rebuilt it).
"""

from __future__ import annotations

import logging
import math
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from hermes_memory.sessions import embeddings as emb

logger = logging.getLogger(__name__)

BUILDS = "hm_ann_builds"
PARTS = "hm_ann_parts"
SCHEMA_SQL = (
    f"CREATE TABLE IF NOT EXISTS {BUILDS} (build_id INTEGER PRIMARY KEY, model TEXT NOT NULL, "
    "state TEXT NOT NULL, nlist INTEGER NOT NULL, upto_seq INTEGER NOT NULL, covered_seq INTEGER NOT NULL, "
    "vectors INTEGER NOT NULL, imbalance REAL NOT NULL, generation INTEGER NOT NULL, centroids BLOB NOT NULL, "
    "created REAL NOT NULL)",
    f"CREATE TABLE IF NOT EXISTS {PARTS} (build_id INTEGER NOT NULL, part INTEGER NOT NULL, "
    "upto_seq INTEGER NOT NULL, last_id INTEGER NOT NULL, ids BLOB NOT NULL, lists BLOB NOT NULL, "
    "PRIMARY KEY (build_id, part))",
)

MIN_VECTORS = 20_000
"""Below this many vectors search scans them all exactly and no index is built: the int8 scan
costs about 1.6 ms CPU at 20,000 (2.5 ms per 32,000 measured on one core), less than checking the
candidates against ``messages``, so lists would save under 1.5 ms a query at a cost in recall
(docs/benchmarks.md, "Approximate vector index")."""
NPROBE = 32
"""Lists a query probes first (all of them below 32 lists). The recall of a fixed share of the
lists grows with their number, a fixed count holds it: on LoCoMo-like vectors (bench/embeddings.py
``ann``; /tmp sweep of 150 real question vectors, recall@50 of the exact top 50) 100,000 vectors
in 316 lists: 19 / 26 / 32 / 38 probes 0.942 / 0.962 / 0.970 / 0.976; 1,000,000 in 1,000 lists:
20 / 30 / 40 / 50 probes 0.943 / 0.964 / 0.976 / 0.981. 32 kept: >= 0.95 at both sizes."""
TRAIN_PER_LIST = 40
"""k-means trains on up to this many sampled vectors per list (faiss warns below 39)."""
KMEANS_ITERATIONS = 12
BUILD_CHUNK = 20_000
"""Vectors assigned to lists per committed part of a build or an extension."""
EXTEND_SHARE = 0.01
"""An extension assigns the tail to lists once it holds this share of the listed vectors (at least
:data:`EXTEND_MIN`): the tail is scanned exactly by every query until then."""
EXTEND_MIN = 1_000
REBUILD_GROWTH = 2.0
"""A new build is made when the vectors grew this many times since the last (its ``nlist``, about
the square root of the vectors then, has become too small) ..."""
REBUILD_IMBALANCE = 3.0
"""... or when the lists' imbalance (``sum(size^2) * nlist / N^2``: 1 when equal; the
imbalance factor faiss reports) grew past this by extensions."""


def nlist_for(n: int) -> int:
    """Lists of an index over ``n`` vectors: ``round(sqrt(n))``, at least 16."""
    return max(16, int(round(math.sqrt(max(1, n)))))


def nprobe_for(nlist: int) -> int:
    """Lists probed first for an index of ``nlist`` lists (:data:`NPROBE`, at most ``nlist``)."""
    return min(nlist, NPROBE)


def ensure_schema(conn: sqlite3.Connection) -> None:
    """Create the index tables when missing (in the caller's transaction)."""
    for sql in SCHEMA_SQL:
        conn.execute(sql)


def has_tables(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN (?, ?)",
                        (BUILDS, PARTS)).fetchone()[0] == 2


@dataclass(frozen=True)
class Build:
    """One row of ``hm_ann_builds`` (module doc); ``centroids`` float32 ``(nlist, 384)``."""

    build_id: int
    model: str
    state: str
    nlist: int
    upto_seq: int
    covered_seq: int
    vectors: int
    imbalance: float
    generation: int
    centroids: np.ndarray


def _build_of(row: Any) -> Build:
    return Build(int(row[0]), str(row[1]), str(row[2]), int(row[3]), int(row[4]), int(row[5]), int(row[6]),
                 float(row[7]), int(row[8]), np.frombuffer(row[9], dtype=np.float32).reshape(int(row[3]), emb.DIM))


_COLS = "build_id, model, state, nlist, upto_seq, covered_seq, vectors, imbalance, generation, centroids"


def current(conn: sqlite3.Connection, model: str, state: str = "ready") -> Build | None:
    """The newest build of ``model`` in ``state`` (``ready``: the one search uses), or ``None``."""
    if not has_tables(conn):
        return None
    row = conn.execute(f"SELECT {_COLS} FROM {BUILDS} WHERE model = ? AND state = ? ORDER BY build_id DESC LIMIT 1",
                       (model, state)).fetchone()
    return _build_of(row) if row is not None else None


def version(conn: sqlite3.Connection, model: str) -> tuple[int, int] | None:
    """``(build_id, generation)`` of the ready build of ``model`` (what a reader compares to know
    whether its copy in memory is current), or ``None`` when there is none."""
    if not has_tables(conn):
        return None
    row = conn.execute(f"SELECT build_id, generation FROM {BUILDS} WHERE model = ? AND state = 'ready' "
                       "ORDER BY build_id DESC LIMIT 1", (model,)).fetchone()
    return (int(row[0]), int(row[1])) if row is not None else None


def assignments(conn: sqlite3.Connection, build_id: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(message ids int64, lists int32, upto_seq int64)`` of a build, one entry per message id
    (the latest part's assignment when an extension re-listed a re-embedded vector). A vector is
    in its list only while its ``seq`` is at most the ``upto_seq`` of its assignment."""
    ids, lists, upto = [], [], []
    for part_upto, id_blob, list_blob in conn.execute(
            f"SELECT upto_seq, ids, lists FROM {PARTS} WHERE build_id = ? ORDER BY part", (build_id,)):
        part_ids = np.frombuffer(id_blob, dtype=np.int64)
        ids.append(part_ids)
        lists.append(np.frombuffer(list_blob, dtype=np.int32))
        upto.append(np.full(len(part_ids), int(part_upto), dtype=np.int64))
    if not ids:
        return np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0, np.int64)
    all_ids, all_lists, all_upto = np.concatenate(ids)[::-1], np.concatenate(lists)[::-1], np.concatenate(upto)[::-1]
    uniq, first = np.unique(all_ids, return_index=True)  # reversed: the first occurrence is the latest part's
    return uniq, all_lists[first], all_upto[first]


def _vectors(rows: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """``(message ids, float32 unit vectors (n, 384))`` of ``(message_id, scale, vec)`` rows."""
    ids = np.fromiter((int(r[0]) for r in rows), dtype=np.int64, count=len(rows))
    scale = np.fromiter((float(r[1]) for r in rows), dtype=np.float32, count=len(rows))
    q = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.int8).reshape(len(rows), emb.DIM)
    return ids, q.astype(np.float32) * scale[:, None]


def nearest_centroid(vecs: np.ndarray, centroids: np.ndarray, chunk: int = 4096) -> np.ndarray:
    """For each row of ``vecs`` (float32 ``(n, d)``) the index of its most similar centroid
    (highest dot product; ``(n,)`` int32)."""
    out = np.empty(len(vecs), dtype=np.int32)
    for at in range(0, len(vecs), chunk):
        out[at:at + chunk] = np.argmax(vecs[at:at + chunk] @ centroids.T, axis=1)
    return out


def kmeans(sample: np.ndarray, nlist: int, iterations: int = KMEANS_ITERATIONS, seed: int = 0) -> np.ndarray:
    """Spherical k-means (module doc) of ``sample`` (float32 ``(n, d)`` unit vectors, ``n >= 1``):
    ``nlist`` unit centroids, float32 ``(nlist, d)``. Initialised with distinct sampled vectors;
    an empty list is given the sample vector farthest from its centroid."""
    rng = np.random.default_rng(seed)
    n = len(sample)
    k = min(nlist, n)
    cent = sample[rng.choice(n, size=k, replace=False)].copy()
    for _ in range(iterations):
        assign = nearest_centroid(sample, cent)
        sums = np.zeros_like(cent)
        np.add.at(sums, assign, sample)
        counts = np.bincount(assign, minlength=k)
        empty = np.flatnonzero(counts == 0)
        if len(empty):
            fit = np.einsum("ij,ij->i", sample, cent[assign])
            far = np.argsort(fit)[: len(empty)]
            sums[empty] = sample[far]
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        cent = (sums / np.maximum(norms, 1e-12)).astype(np.float32)
    if k < nlist:  # fewer vectors than lists (tests): repeat centroids, the extra lists stay empty
        cent = np.vstack([cent, cent[np.arange(nlist - k) % k]])
    return cent


def imbalance(lists: np.ndarray, nlist: int) -> float:
    """``sum(size^2) * nlist / N^2`` of an assignment (1.0: equal lists; module doc)."""
    n = len(lists)
    if n == 0:
        return 1.0
    sizes = np.bincount(lists, minlength=nlist).astype(np.float64)
    return float((sizes ** 2).sum() * nlist / (n * n))


def _listable(conn: sqlite3.Connection, model: str, above: int = 0) -> int:
    return int(conn.execute(f"SELECT count(*) FROM {emb.TABLE} WHERE model = ? AND seq > ? AND length(vec) = ?",
                            (model, above, emb.DIM)).fetchone()[0])


def status(conn: sqlite3.Connection, model: str) -> dict[str, Any]:
    """Where the index of ``model`` stands: ``{"vectors", "state": "none" | "small" (fewer than
    :data:`MIN_VECTORS`: exact scan) | "building" | "ready", "nlist", "listed", "tail" (vectors
    scanned exactly), "building_done" (vectors a build in progress has assigned)}``."""
    if not emb.has_table(conn):
        return {"vectors": 0, "state": "none", "nlist": 0, "listed": 0, "tail": 0}
    total = _listable(conn, model)
    ready, building = current(conn, model), current(conn, model, "building")
    out: dict[str, Any] = {"vectors": total, "state": "ready" if ready else ("small" if total < MIN_VECTORS else "none"),
                           "nlist": ready.nlist if ready else 0, "listed": 0, "tail": total}
    if ready is not None:
        out["tail"] = _listable(conn, model, ready.covered_seq)
        out["listed"] = total - out["tail"]
    if building is not None:
        done = conn.execute(f"SELECT coalesce(sum(length(ids)), 0) / 8 FROM {PARTS} WHERE build_id = ?",
                            (building.build_id,)).fetchone()[0]
        out.update(state="building" if ready is None else "ready, rebuilding", building_done=int(done),
                   building_total=building.vectors)
    return out


def _write(db: Any, fn: Callable[[sqlite3.Connection], Any]) -> Any:
    return db._execute_write(fn)


def _sample(db: Any, model: str, upto: int, total: int, want: int) -> np.ndarray:
    """About ``want`` vectors of ``model`` with ``seq <= upto``, a deterministic spread sample (a
    multiplicative hash of the message id), float32 unit vectors."""
    share = min(1.0, want / max(1, total))
    limit = int(share * 1_000_003)
    with db._lock:
        cur = db._live().cursor()
        cur.row_factory = None
        rows = cur.execute(
            f"SELECT message_id, scale, vec FROM {emb.TABLE} WHERE model = ? AND seq <= ? AND length(vec) = ? "
            "AND (message_id * 2654435761) % 1000003 < ?", (model, upto, emb.DIM, limit)).fetchall()
    if not rows:
        return np.zeros((0, emb.DIM), dtype=np.float32)
    return _vectors(rows)[1]


def _start_build(db: Any, model: str) -> Build | None:
    with db._lock:
        conn = db._live()
        upto = int(conn.execute(f"SELECT coalesce(max(seq), 0) FROM {emb.TABLE}").fetchone()[0])
        total = _listable(conn, model)
    if total == 0:
        return None
    nlist = nlist_for(total)
    t0 = time.perf_counter()
    sample = _sample(db, model, upto, total, TRAIN_PER_LIST * nlist)
    if len(sample) == 0:
        return None
    cent = kmeans(sample, nlist)
    logger.info("vector index: %d centroids trained on %d of %d vectors in %.1f s", nlist, len(sample), total,
                time.perf_counter() - t0)

    def insert(c: sqlite3.Connection) -> int:
        ensure_schema(c)
        c.execute(f"DELETE FROM {PARTS} WHERE build_id IN (SELECT build_id FROM {BUILDS} WHERE model = ? "
                  "AND state = 'building')", (model,))
        c.execute(f"DELETE FROM {BUILDS} WHERE model = ? AND state = 'building'", (model,))
        cur = c.execute(f"INSERT INTO {BUILDS}(model, state, nlist, upto_seq, covered_seq, vectors, imbalance, "
                        "generation, centroids, created) VALUES (?, 'building', ?, ?, ?, ?, 1.0, 0, ?, ?)",
                        (model, nlist, upto, upto, total, cent.astype(np.float32).tobytes(), time.time()))
        return int(cur.lastrowid or 0)

    build_id = _write(db, insert)
    with db._lock:
        return _build_of(db._live().execute(f"SELECT {_COLS} FROM {BUILDS} WHERE build_id = ?",
                                            (build_id,)).fetchone())


def _assign_rows(db: Any, build: Build, rows: list[Any], upto: int) -> int:
    """Assign ``rows`` (``(message_id, scale, vec)``) to ``build``'s lists and commit them as its
    next part; returns the rows assigned."""
    if not rows:
        return 0
    ids, vecs = _vectors(rows)
    lists = nearest_centroid(vecs, build.centroids)

    def put(c: sqlite3.Connection) -> None:
        part = int(c.execute(f"SELECT coalesce(max(part), -1) + 1 FROM {PARTS} WHERE build_id = ?",
                             (build.build_id,)).fetchone()[0])
        c.execute(f"INSERT INTO {PARTS}(build_id, part, upto_seq, last_id, ids, lists) VALUES (?,?,?,?,?,?)",
                  (build.build_id, part, upto, int(ids[-1]), ids.tobytes(), lists.astype(np.int32).tobytes()))

    _write(db, put)
    return len(rows)


def _continue_build(db: Any, build: Build, progress: Callable[[int, int], None] | None,
                    stop: Any) -> bool:
    """Assign the rest of ``build``'s vectors, one part per transaction, then make it the ready
    build; ``False`` when ``stop`` was set first (the build stays resumable)."""
    with db._lock:
        conn = db._live()
        last, done = conn.execute(f"SELECT coalesce(max(last_id), -1), coalesce(sum(length(ids)), 0) / 8 FROM {PARTS} "
                                  "WHERE build_id = ?", (build.build_id,)).fetchone()
    last, done = int(last), int(done)
    while True:
        if stop is not None and stop.is_set():
            return False
        with db._lock:
            cur = db._live().cursor()
            cur.row_factory = None
            rows = cur.execute(
                f"SELECT message_id, scale, vec FROM {emb.TABLE} WHERE model = ? AND seq <= ? AND length(vec) = ? "
                "AND message_id > ? ORDER BY message_id LIMIT ?",
                (build.model, build.upto_seq, emb.DIM, last, BUILD_CHUNK)).fetchall()
        if not rows:
            break
        done += _assign_rows(db, build, rows, build.upto_seq)
        last = int(rows[-1][0])
        if progress is not None:
            progress(min(done, build.vectors), build.vectors)
    _finish(db, build)
    return True


def _finish(db: Any, build: Build) -> None:
    def ready(c: sqlite3.Connection) -> None:
        _, lists, _ = assignments(c, build.build_id)
        gen = int(c.execute(f"SELECT coalesce(max(generation), 0) + 1 FROM {BUILDS} WHERE model = ?",
                            (build.model,)).fetchone()[0])
        c.execute(f"UPDATE {BUILDS} SET state = 'ready', vectors = ?, imbalance = ?, generation = ? WHERE build_id = ?",
                  (len(lists), imbalance(lists, build.nlist), gen, build.build_id))
        old = [r[0] for r in c.execute(f"SELECT build_id FROM {BUILDS} WHERE build_id != ? AND model = ?",
                                       (build.build_id, build.model))]
        for b in old:
            c.execute(f"DELETE FROM {PARTS} WHERE build_id = ?", (b,))
            c.execute(f"DELETE FROM {BUILDS} WHERE build_id = ?", (b,))

    _write(db, ready)


def extend(db: Any, build: Build) -> int:
    """Assign the vectors written since ``build`` last covered them (the tail) to its lists, in
    parts of :data:`BUILD_CHUNK`, and bump its generation. Returns the vectors assigned."""
    with db._lock:
        top = int(db._live().execute(f"SELECT coalesce(max(seq), 0) FROM {emb.TABLE}").fetchone()[0])
    done, after = 0, -1
    while True:
        with db._lock:
            cur = db._live().cursor()
            cur.row_factory = None
            rows = cur.execute(
                f"SELECT message_id, scale, vec FROM {emb.TABLE} WHERE model = ? AND seq > ? AND seq <= ? "
                "AND length(vec) = ? AND message_id > ? ORDER BY message_id LIMIT ?",
                (build.model, build.covered_seq, top, emb.DIM, after, BUILD_CHUNK)).fetchall()
        if not rows:
            break
        done += _assign_rows(db, build, rows, top)
        after = int(rows[-1][0])

    def bump(c: sqlite3.Connection) -> None:
        _, lists, _ = assignments(c, build.build_id)
        c.execute(f"UPDATE {BUILDS} SET covered_seq = ?, vectors = ?, imbalance = ?, generation = generation + 1 "
                  "WHERE build_id = ?", (top, len(lists), imbalance(lists, build.nlist), build.build_id))

    _write(db, bump)
    return done


def drop(db: Any, model: str) -> None:
    """Remove every build of ``model`` (the store shrank below :data:`MIN_VECTORS`)."""
    def clear(c: sqlite3.Connection) -> None:
        c.execute(f"DELETE FROM {PARTS} WHERE build_id IN (SELECT build_id FROM {BUILDS} WHERE model = ?)", (model,))
        c.execute(f"DELETE FROM {BUILDS} WHERE model = ?", (model,))

    _write(db, clear)


def maintain(db: Any, model: str, *, progress: Callable[[int, int], None] | None = None, stop: Any = None,
             force: bool = False) -> dict[str, Any]:
    """Keep the index of ``model`` in ``db`` (a SessionDB) useful, in the caller's thread (the
    background indexer's, or ``sessions reindex``): resume a killed build, or build one when there
    is none and at least :data:`MIN_VECTORS` vectors (``force``: at any size), rebuild when the
    vectors grew :data:`REBUILD_GROWTH` times or the lists became unbalanced
    (:data:`REBUILD_IMBALANCE`), else extend it when the tail reached :data:`EXTEND_SHARE`.
    ``progress(done, total)`` follows a build's assignment; ``stop`` (a ``threading.Event``) ends a
    build after its current part, resumable. Returns ``{"action": "none" | "built" | "resumed" |
    "rebuilt" | "extended" | "dropped" | "stopped", "vectors", "seconds", ...}``. Raises
    :class:`~hermes_memory.errors.SessionStoreError` when the database stays locked."""
    t0 = time.perf_counter()
    with db._lock:
        conn = db._live()
        if not emb.has_table(conn):
            return {"action": "none", "vectors": 0, "seconds": 0.0}
        total = _listable(conn, model)
        ready, building = current(conn, model), current(conn, model, "building")
        tail = _listable(conn, model, ready.covered_seq) if ready is not None else total
        top = int(conn.execute(f"SELECT coalesce(max(seq), 0) FROM {emb.TABLE}").fetchone()[0])
    # a build covering seqs the table no longer reaches: hm_embeddings was emptied and made again
    # (its lists would place the new vectors wrongly): rebuild
    rewritten = ready is not None and ready.covered_seq > top
    action = "none"
    if building is not None:
        action = "resumed"
    elif total < MIN_VECTORS and not force:
        if ready is not None:
            drop(db, model)
            action = "dropped"
    elif ready is None or force or rewritten or total >= REBUILD_GROWTH * max(1, ready.vectors) \
            or ready.imbalance > REBUILD_IMBALANCE:
        action = "built" if ready is None else "rebuilt"
        building = _start_build(db, model)
        if building is None:
            action = "none"
    elif tail >= max(EXTEND_MIN, EXTEND_SHARE * ready.vectors):
        return {"action": "extended", "vectors": extend(db, ready), "seconds": round(time.perf_counter() - t0, 3)}
    if building is not None and not _continue_build(db, building, progress, stop):
        action = "stopped"
    return {"action": action, "vectors": total, "nlist": building.nlist if building is not None else
            (ready.nlist if ready is not None else 0), "seconds": round(time.perf_counter() - t0, 3)}
