"""The vectors of semantic search in memory, one copy per process: exact cosine scan for small
stores, the inverted-file index of :mod:`hermes_memory.sessions.ann` for large ones.

Memory: the int8 vectors as stored in ``hm_embeddings`` (384 bytes) plus their scale, message id,
``seq`` and list number (24 bytes): about 410 bytes a vector, against 1,536 for float32. Cosines
are computed from the int8 vectors in chunks of :data:`CHUNK` rows converted to float32 (as fast
as a float32 scan: bench/embeddings.py), so the exact scan and the lists' scan give the very same
score to a vector, and ties are broken by message id in both: the index returns exactly the exact
scan's top k whenever that top k lies in the probed lists and the tail.

Invalidation between processes: every search reads ``max(seq)`` of ``hm_embeddings`` (rows written
since the last search are loaded: the tail, scanned exactly) and the ready build's
``(build_id, generation)`` (an extension or a rebuild by another process: the lists are loaded
again). Both are single reads of an index, in the search's own read transaction.

Persistence: from :data:`hermes_memory.sessions.vector_file.MIN_ROWS` vectors the copy is saved
in the vector file next to ``state.db`` (:mod:`hermes_memory.sessions.vector_file`) and the first
search of a process maps that file instead of reading every row: rows ``[0, B)`` of the matrix
are the file's (copy-on-write, checked block by block as they are first read), rows ``[B, n)``
are in memory (the rows written since the file: its ``hwm_seq``). The file is written again when
the rows read from SQLite since reach :data:`hermes_memory.sessions.ann.EXTEND_SHARE` (at least
:data:`hermes_memory.sessions.ann.EXTEND_MIN`), when the lists changed, or when it was missing,
stale or damaged; a damaged file found during a search is dropped, the vectors are read from
SQLite and the search runs again.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np

from hermes_memory.sessions import ann
from hermes_memory.sessions import embeddings as emb
from hermes_memory.sessions import vector_file as vf

logger = logging.getLogger(__name__)

CHUNK = 1024
"""Rows converted from int8 to float32 per step of a scan (fits a core's L2 cache)."""
CHECK_FIRST = 16
"""The first check of the nearest against ``messages`` reads ``k`` plus this many (most pass: a
candidate fails only by a filter or a changed text); later checks read four times more."""


class VectorIndex:
    """The vectors of one model in memory (module doc), loaded from ``hm_embeddings`` at the first
    search and topped up at each later one. Use under the owning SessionDB's lock.

    ``min_vectors``: below this many vectors every search scans exactly (default
    :data:`hermes_memory.sessions.ann.MIN_VECTORS`, read at search time). ``file_rows``: fewest
    vectors saved in the vector file (default :data:`hermes_memory.sessions.vector_file.MIN_ROWS`;
    ``None`` there: never read nor written)."""

    def __init__(self, model: str, *, min_vectors: int | None = None, file_rows: int | None = -1) -> None:
        self.model = model
        self.min_vectors = min_vectors
        self.file_rows = vf.MIN_ROWS if file_rows == -1 else file_rows
        self.file_state = "none"
        """Where the vectors came from at the last refresh: ``"none"`` (no file used), ``"mapped"``
        (the vector file, plus rows read since), or why the file was not used: ``"corrupt"``,
        ``"stale"``; ``"written"`` after this process wrote it (for tests and benches)."""
        self._tried_file = False
        self.last_mode = "exact"
        """How the latest search ran: ``"exact"`` or ``"ann"`` (for tests and benches)."""
        self.last_scored = 0
        """Vectors the latest search scored."""
        self._reason_logged = ""
        self._reset()

    def _reset(self) -> None:
        self._n = 0
        self._base: vf.VectorFile | None = None  # rows [0, _b) of the matrix: the mapped file's
        self._bq = np.zeros((0, emb.DIM), dtype=np.int8)
        self._b = 0
        self._q = np.zeros((0, emb.DIM), dtype=np.int8)  # rows [_b, _n), and spare capacity
        self._seen: tuple[int, int, int] | None = None  # (data_version, total_changes, connection) refreshed at
        self._dirty = False  # the file on disk does not match (missing, stale, damaged, other lists)
        self._unsaved = 0  # rows read from SQLite since the file was read or written
        self._scale = np.zeros(0, dtype=np.float32)
        self._ids = np.zeros(0, dtype=np.int64)
        self._seqs = np.zeros(0, dtype=np.int64)
        self._hash = np.zeros(0, dtype=np.uint32)  # text_hash of each row's embedded text
        self._list = np.zeros(0, dtype=np.int32)
        self._seq = 0
        self._sorted_ids = np.zeros(0, dtype=np.int64)  # snapshot for id -> row, plus _recent after it
        self._sorted_rows = np.zeros(0, dtype=np.int64)
        self._recent: dict[int, int] = {}
        self._version: tuple[int, int] | None = None  # (build_id, generation) loaded
        self._centroids: np.ndarray | None = None
        self._offsets = np.zeros(1, dtype=np.int64)
        self._listed = 0  # rows [0, _listed) are grouped by list; later rows are the tail
        self._moved: list[int] = []  # listed rows re-embedded since: out of their list, in the tail

    def __len__(self) -> int:
        return self._n

    def memory_bytes(self) -> int:
        """Bytes of the arrays held (vectors, scales, ids, seqs, lists, id lookup, centroids)."""
        arrays = (self._scale, self._ids, self._seqs, self._hash, self._list, self._sorted_ids, self._sorted_rows)
        return int(sum(a.nbytes for a in arrays) * self._n / max(1, len(self._ids)) + self._bq.nbytes
                   + self._q.nbytes * (self._n - self._b) / max(1, len(self._q))
                   + (self._centroids.nbytes if self._centroids is not None else 0))

    # --- rows of the matrix: the mapped file's, then the ones in memory --------------------------

    def _qr(self, start: int, end: int) -> np.ndarray:
        """int8 rows ``[start, end)`` (the file's checked first)."""
        b = self._b
        if end <= b:
            assert self._base is not None
            self._base.verify(start, end)
            return self._bq[start:end]
        if start >= b:
            return self._q[start - b:end - b]
        return np.concatenate([self._qr(start, b), self._qr(b, end)])

    def _qrows(self, rows: np.ndarray) -> np.ndarray:
        """int8 rows of the row numbers ``rows``."""
        b = self._b
        if not b:
            return self._q[rows]
        assert self._base is not None
        out = np.empty((len(rows), emb.DIM), dtype=np.int8)
        low = rows < b
        self._base.verify_rows(rows[low])
        out[low] = self._bq[rows[low]]
        out[~low] = self._q[rows[~low] - b]
        return out

    def _qset(self, at: int, vec: np.ndarray) -> None:
        if at < self._b:
            assert self._base is not None
            self._base.verify(at, at + 1)  # before the change: its block no longer matches after
            self._bq[at] = vec
        else:
            self._q[at - self._b] = vec

    # --- loading -------------------------------------------------------------------------------

    def _grow(self, extra: int) -> None:
        need = self._n + extra
        if need <= len(self._ids) and need - self._b <= len(self._q):
            return
        cap = max(need, int(len(self._ids) * 1.5) + 1024)

        def grown(a: np.ndarray, rows: int, size: int) -> np.ndarray:
            out = np.zeros((size, *a.shape[1:]), dtype=a.dtype)
            out[:rows] = a[:rows]
            return out

        n, b = self._n, self._b
        self._q = grown(self._q, n - b, cap - b)
        self._scale, self._ids = grown(self._scale, n, cap), grown(self._ids, n, cap)
        self._seqs, self._list = grown(self._seqs, n, cap), grown(self._list, n, cap)
        self._hash = grown(self._hash, n, cap)

    def _row_of(self, mid: int) -> int | None:
        at = self._recent.get(mid)
        if at is not None:
            return at
        k = int(np.searchsorted(self._sorted_ids, mid))
        if k < len(self._sorted_ids) and int(self._sorted_ids[k]) == mid:
            return int(self._sorted_rows[k])
        return None

    def _resort(self) -> None:
        order = np.argsort(self._ids[: self._n], kind="stable")
        self._sorted_ids, self._sorted_rows = self._ids[: self._n][order], order.astype(np.int64)
        self._recent = {}

    def refresh(self, conn: sqlite3.Connection) -> None:
        """Load the rows of this model written since the last refresh (all of them the first time:
        from the vector file when it matches, then the rows written since), and the index's
        lists when another build or extension became current; then save the vector file when it
        fell behind (module doc)."""
        # PRAGMA data_version moves with another connection's commit, total_changes with a write
        # through this one: unchanged, nothing can be new (one statement instead of four a search)
        seen = (int(conn.execute("PRAGMA data_version").fetchone()[0]), conn.total_changes, id(conn))
        if seen == self._seen:
            return
        if not emb.has_table(conn):  # never made, or dropped by another program
            self._reset()
            return
        top = conn.execute(f"SELECT max(seq) FROM {emb.TABLE}").fetchone()[0] or 0
        if not self._tried_file:
            self._tried_file = True
            self._open_file(conn, int(top))
        if top < self._seq:  # the table was emptied or rebuilt: start over
            self._reset()
            self._dirty = True
        if top > self._seq:
            self._load_rows(conn, int(top))
        want = ann.version(conn, self.model)
        if want != self._version:
            self._load_lists(conn, want)
        self._save_if_behind(conn)
        self._seen = seen

    def _file(self, conn: sqlite3.Connection) -> Path | None:
        if self.file_rows is None:
            return None
        db_path = vf.db_path_of(conn)
        return vf.path_for(db_path) if db_path is not None else None

    def _open_file(self, conn: sqlite3.Connection, top: int) -> None:
        """Take rows ``[0, rows)`` from the vector file when it matches this table (module doc)."""
        path = self._file(conn)
        if path is None or self._n:
            return
        try:
            f = vf.read(path, self.model)
        except vf.VectorFileCorrupt as exc:
            logger.warning("vector file ignored and written again: %s", exc)
            self.file_state, self._dirty = "corrupt", True
            return
        if f is None:
            return
        h = f.header
        if int(h["table_root"]) != vf.table_root(conn) or int(h["hwm_seq"]) > top:
            logger.info("vector file %s covers another hm_embeddings table: written again", path)
            self.file_state, self._dirty = "stale", True
            return
        a = f.arrays
        self._base, self._bq, self._b = f, a["q"], f.rows
        self._n, self._seq, self._listed = f.rows, int(h["hwm_seq"]), int(h["listed"])
        self._scale, self._ids, self._seqs = np.array(a["scale"]), np.array(a["ids"]), np.array(a["seqs"])
        self._hash = np.array(a["hashes"])
        self._list = np.array(a["lists"])
        self._sorted_ids, self._sorted_rows, self._recent = a["sorted_ids"], a["sorted_rows"], {}
        self._offsets = np.array(a["offsets"])
        self._centroids = np.array(a["centroids"]) if int(h["nlist"]) else None
        self._version = (int(h["ann"][0]), int(h["ann"][1])) if h["ann"] else None
        self._moved = np.flatnonzero(self._list[: self._listed] < 0).tolist()
        self.file_state = "mapped"

    def _save_if_behind(self, conn: sqlite3.Connection) -> None:
        n = self._n
        if self.file_rows is None or n < self.file_rows:
            return
        if not self._dirty and self._unsaved < max(ann.EXTEND_MIN, ann.EXTEND_SHARE * n):
            return
        path = self._file(conn)
        if path is None:
            return
        root = vf.table_root(conn)
        ver = list(self._version) if self._version is not None else None
        on_disk = vf.peek(path) if self.file_state != "corrupt" else None
        if on_disk is not None and on_disk.get("model") == self.model and on_disk.get("table_root") == root \
                and on_disk.get("ann") == ver and int(on_disk.get("hwm_seq", -1)) >= self._seq:
            self._dirty, self._unsaved = False, 0  # another process wrote it
            return
        # rows deleted from hm_embeddings since they were read stay out of the file
        present = np.fromiter((r[0] for r in conn.execute(
            f"SELECT message_id FROM {emb.TABLE} WHERE seq <= ?", (self._seq,))), dtype=np.int64)
        keep = np.isin(self._ids[:n], present)
        rows = np.flatnonzero(keep)
        listed = int(keep[: self._listed].sum())
        lists = self._list[rows]
        nlist = len(self._centroids) if self._centroids is not None else 0
        counts = np.bincount(lists[:listed][lists[:listed] >= 0], minlength=nlist) if nlist else np.zeros(0, np.int64)
        ids = self._ids[rows]
        order = np.argsort(ids, kind="stable")
        header = {"model": self.model, "rows": len(rows), "listed": listed, "nlist": nlist, "hwm_seq": self._seq,
                  "ann": ver, "table_root": root}
        arrays: dict[str, np.ndarray] = {"scale": self._scale[rows], "ids": ids, "seqs": self._seqs[rows],
                                          "hashes": self._hash[rows], "lists": lists,
                  "offsets": np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
                  "centroids": self._centroids if self._centroids is not None else np.zeros((0, emb.DIM), np.float32),
                  "sorted_ids": ids[order], "sorted_rows": order.astype(np.int64)}
        all_rows = len(rows) == n
        if vf.write(path, header, (lambda a, b: self._qr(a, b)) if all_rows else (lambda a, b: self._qrows(rows[a:b])),
                    arrays):
            self.file_state = "written"
        # written, or not (another writer holds the lock: its file is as new; a read-only folder):
        # this process does not try again before as many rows again were read
        self._dirty, self._unsaved = False, 0

    def _load_rows(self, conn: sqlite3.Connection, top: int) -> None:
        cur = conn.cursor()
        cur.row_factory = None  # plain tuples: sqlite3.Row objects double the load time
        rows = [r for r in cur.execute(f"SELECT message_id, scale, vec, seq, text_hash FROM {emb.TABLE} WHERE model = ? "
                                       "AND seq > ? AND seq <= ?", (self.model, self._seq, top))
                if len(r[2]) == emb.DIM]  # empty: no text
        self._seq = top
        self._unsaved += len(rows)
        if not rows:
            return
        # one buffer for all new vectors: a Python loop per row took 8 s for 100,000 on a busy machine
        mids = np.fromiter((int(r[0]) for r in rows), dtype=np.int64, count=len(rows))
        scale = np.fromiter((float(r[1]) for r in rows), dtype=np.float32, count=len(rows))
        seqs = np.fromiter((int(r[3]) for r in rows), dtype=np.int64, count=len(rows))
        hashes = np.fromiter((int(r[4]) & 0xFFFFFFFF for r in rows), dtype=np.uint32, count=len(rows))
        quantised = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.int8).reshape(len(rows), emb.DIM)
        fresh = np.ones(len(rows), dtype=bool)
        if self._n:
            for k, mid in enumerate(mids.tolist()):
                at = self._row_of(mid)
                if at is not None:  # re-embedded: replace in place, out of its list
                    self._qset(at, quantised[k])
                    self._scale[at], self._seqs[at], self._hash[at] = scale[k], seqs[k], hashes[k]
                    if at < self._listed and self._list[at] >= 0:
                        self._list[at] = -1
                        self._moved.append(at)
                    fresh[k] = False
        count = int(fresh.sum())
        if not count:
            return
        self._grow(count)
        start, end = self._n, self._n + count
        self._q[start - self._b:end - self._b], self._scale[start:end] = quantised[fresh], scale[fresh]
        self._ids[start:end], self._seqs[start:end], self._list[start:end] = mids[fresh], seqs[fresh], -1
        self._hash[start:end] = hashes[fresh]
        self._n = end
        if start == 0 or count > len(self._sorted_ids) // 20:
            self._resort()
        else:
            self._recent.update({mid: start + k for k, mid in enumerate(mids[fresh].tolist())})

    def _load_lists(self, conn: sqlite3.Connection, want: tuple[int, int] | None) -> None:
        """Group the rows by the lists of build ``want`` (rows its assignments do not cover, or
        cover with an older vector, go to the tail), or drop the lists (``None``)."""
        n = self._n
        self._dirty = True  # the file's lists are not these
        self._version, self._centroids, self._moved = want, None, []
        self._list[:n] = -1
        self._listed, self._offsets = 0, np.zeros(1, dtype=np.int64)
        if want is None or n == 0:
            return
        build = ann.current(conn, self.model)
        if build is None or build.build_id != want[0]:
            self._version = None
            return
        ids, lists, upto = ann.assignments(conn, build.build_id)
        at = np.searchsorted(ids, self._ids[:n]) if len(ids) else np.zeros(n, dtype=np.int64)
        at = np.minimum(at, max(0, len(ids) - 1))
        valid = (len(ids) > 0) & (ids[at] == self._ids[:n]) & (self._seqs[:n] <= upto[at]) if len(ids) else \
            np.zeros(n, dtype=bool)
        row_list = np.where(valid, lists[at] if len(ids) else 0, build.nlist).astype(np.int64)
        order = np.argsort(row_list, kind="stable")  # grouped by list, the tail (nlist) last
        self._q, self._bq, self._b, self._base = self._qrows(order), self._bq[:0], 0, None  # all in memory now
        self._scale[:n], self._ids[:n] = self._scale[order], self._ids[order]
        self._seqs[:n], self._hash[:n] = self._seqs[order], self._hash[order]
        self._list[:n] = np.where(valid[order], row_list[order], -1).astype(np.int32)
        self._listed = int(valid.sum())
        self._offsets = np.concatenate([[0], np.cumsum(np.bincount(row_list[valid], minlength=build.nlist))])
        self._centroids = np.array(build.centroids, dtype=np.float32)
        self._resort()

    # --- search --------------------------------------------------------------------------------

    def _scores(self, start: int, end: int, q: np.ndarray) -> np.ndarray:
        out = np.empty(end - start, dtype=np.float32)
        for at in range(start, end, CHUNK):
            stop = min(end, at + CHUNK)
            # einsum's own loop, not BLAS: a threaded BLAS call is 10-50x slower on a busy machine
            out[at - start:stop - start] = np.einsum("ij,j->i", self._qr(at, stop).astype(np.float32), q)
        return out * self._scale[start:end]

    def _rows_scores(self, rows: np.ndarray, q: np.ndarray) -> np.ndarray:
        if not len(rows):
            return np.zeros(0, dtype=np.float32)
        return np.einsum("ij,j->i", self._qrows(rows).astype(np.float32), q) * self._scale[rows]

    def _ann_ready(self, neighbour: float) -> str:
        """``""`` when this search may use the index, else why not (logged once per reason)."""
        floor = ann.MIN_VECTORS if self.min_vectors is None else self.min_vectors
        if self._n < floor:
            return "small"
        if neighbour > 0:
            return "neighbour"
        if self._centroids is None:
            return "no index"
        return ""

    def nearest(
        self, conn: sqlite3.Connection, qvec: np.ndarray, k: int, cond: str = "", params: list[Any] | None = None,
        needs_session: bool = False, neighbour: float = 0.0, exact: bool = False,
    ) -> list[tuple[int, float]]:
        """The ``k`` messages nearest ``qvec`` (``(message_id, cosine)``, best first, ties by
        message id) that satisfy the search filters (``cond``/``params``/``needs_session`` of
        :func:`hermes_memory.sessions.message_search.filter_sql`) and whose text is still the one
        embedded. From at least :data:`hermes_memory.sessions.ann.MIN_VECTORS` vectors with a
        ready index, only the nearest lists and the tail are scored, more lists when fewer than
        ``k`` candidates pass; else (or ``exact``) every vector. ``neighbour`` adds that share of
        the better cosine of the messages at id -1 / +1 (when indexed; an exact scan)."""
        try:
            return self._nearest(conn, qvec, k, cond, params, needs_session, neighbour, exact)
        except vf.VectorFileCorrupt as exc:  # found damaged while reading it: read state.db instead
            logger.warning("vector file ignored and written again: %s", exc)
            self._reset()
            self.file_state, self._dirty = "corrupt", True
            return self._nearest(conn, qvec, k, cond, params, needs_session, neighbour, exact)

    def _nearest(self, conn: sqlite3.Connection, qvec: np.ndarray, k: int, cond: str, params: list[Any] | None,
                 needs_session: bool, neighbour: float, exact: bool) -> list[tuple[int, float]]:
        self.refresh(conn)
        n = self._n
        if n == 0 or k <= 0:
            return []
        q = np.asarray(qvec, dtype=np.float32)
        why = "exact" if exact else self._ann_ready(neighbour)
        if why:
            if why == "no index" and self._reason_logged != why:
                logger.info("semantic search scans all %d vectors exactly: no vector index built yet "
                            "(the background indexer or `sessions reindex` builds it)", n)
            self._reason_logged = why
            self.last_mode, self.last_scored = "exact", n
            scores = self._scores(0, n, q)
            if neighbour > 0:
                scores = scores + neighbour * self._neighbour_best(scores)
            return self._best_passing(conn, np.arange(n), scores, k, cond, params or [], needs_session, {})
        self.last_mode = "ann"
        assert self._centroids is not None
        nlist = len(self._centroids)
        order = np.argsort(-(self._centroids @ q), kind="stable")
        tail = np.concatenate([np.arange(self._listed, n), np.asarray(self._moved, dtype=np.int64)])
        tail_scores = self._scores(self._listed, n, q)
        if self._moved:
            tail_scores = np.concatenate([tail_scores, self._rows_scores(np.asarray(self._moved), q)])
        probe = ann.nprobe_for(nlist)
        checked: dict[int, bool] = {}
        got: list[tuple[int, float]] = []
        while True:
            parts, part_scores = [tail], [tail_scores]
            for lst in order[:probe].tolist():
                a, b = int(self._offsets[lst]), int(self._offsets[lst + 1])
                if b > a:
                    rows = np.arange(a, b)
                    s = self._scores(a, b, q)
                    if self._moved:
                        keep = self._list[a:b] == lst
                        rows, s = rows[keep], s[keep]
                    parts.append(rows)
                    part_scores.append(s)
            rows, scores = np.concatenate(parts), np.concatenate(part_scores)
            self.last_scored = len(rows)
            got = self._best_passing(conn, rows, scores, k, cond, params or [], needs_session, checked)
            if len(got) >= k or probe >= nlist:
                return got
            probe = min(nlist, probe * 4)  # the filters rejected too many: widen

    def _best_passing(self, conn: sqlite3.Connection, rows: np.ndarray, scores: np.ndarray, k: int, cond: str,
                      params: list[Any], needs_session: bool, checked: dict[int, bool]) -> list[tuple[int, float]]:
        """The best ``k`` of ``rows`` (row numbers, their ``scores``) that pass the check, read in
        growing chunks (``checked`` caches the answers by message id across calls)."""
        n = len(rows)
        ids = self._ids[rows]
        out: list[tuple[int, float]] = []
        start, take = 0, k + CHECK_FIRST
        while len(out) < k and start < n:
            end = min(n, start + take)
            if end < n:  # every row scoring at least the end-th best (ties at the cut included)
                cut = np.partition(-scores, end - 1)[end - 1]
                top = np.flatnonzero(-scores <= cut)
            else:
                top = np.arange(n)
            top = top[np.lexsort((ids[top], -scores[top]))][:end]  # best first, ties by message id
            chunk = [int(ids[i]) for i in top[start:end]]
            todo = [m for m in chunk if m not in checked]
            if todo:
                hashes = {int(ids[i]): int(self._hash[rows[i]]) for i in top[start:end]}
                ok = self._check(conn, todo, hashes, cond, params, needs_session)
                checked.update((m, m in ok) for m in todo)
            out += [(int(ids[i]), float(scores[i])) for i in top[start:end] if checked[int(ids[i])]]
            start = end
            take *= 4
        return out[:k]

    def _neighbour_best(self, scores: np.ndarray) -> np.ndarray:
        ids = self._ids[: self._n]
        order = np.argsort(ids)
        sorted_ids = ids[order]
        best = np.zeros_like(scores)
        for step in (-1, 1):
            at = np.searchsorted(sorted_ids, ids + step)
            at = np.clip(at, 0, len(sorted_ids) - 1)
            hit = sorted_ids[at] == ids + step
            best = np.maximum(best, np.where(hit, scores[order[at]], 0.0))
        return best

    def _check(self, conn: sqlite3.Connection, ids: list[int], hashes: dict[int, int], cond: str,
               params: list[Any], needs_session: bool) -> set[int]:
        """The ``ids`` whose message exists, passes the filters and still has the text embedded
        (its hash is ``hashes[id]``, the ``text_hash`` read with the vector: ``messages`` alone is
        read, not ``hm_embeddings``, whose pages a fresh process would fetch one per candidate)."""
        join = " JOIN sessions s ON s.id = m.session_id" if needs_session else ""
        ok: set[int] = set()
        for at in range(0, len(ids), 500):
            chunk = ids[at:at + 500]
            rows = conn.execute(
                f"SELECT m.id, m.role, m.content FROM messages m{join} "
                f"WHERE m.id IN ({','.join('?' * len(chunk))}){cond}", [*chunk, *params]).fetchall()
            ok.update(int(r[0]) for r in rows
                      if emb.text_hash(emb.embed_text(r[1], r[2])) & 0xFFFFFFFF == hashes[int(r[0])])
        return ok


def persist(db: Any, model: str, index: VectorIndex | None = None) -> dict[str, Any]:
    """Bring the vector file of ``db`` (a SessionDB) up to date for ``model`` after the indexer or
    ``sessions reindex`` changed the vectors or the lists: ``index`` (the process's own, when it
    is of ``model``) or a new one is refreshed under the database's lock, which maps the file,
    reads what is newer from SQLite and writes the file when it fell behind (module doc).
    Returns ``{"vectors", "file": "mapped" | "written" | "none" | "corrupt" | "stale"}``. Raises
    ``sqlite3.Error`` as a search would."""
    ix = index if index is not None and index.model == model else VectorIndex(model)
    with db._lock:
        ix.refresh(db._live())
    return {"vectors": len(ix), "file": ix.file_state}
