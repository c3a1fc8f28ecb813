"""The vector file of semantic search: the in-memory copy of
:class:`hermes_memory.sessions.vector_index.VectorIndex` saved next to ``state.db``, so a new
process (the CLI, a hook, a fresh MCP server) maps it instead of reading every row of
``hm_embeddings`` (14-48 s at 1M vectors; docs/benchmarks.md "Vector file").

A cache, never the truth: every vector in it is also in ``hm_embeddings``, every list assignment
in ``hm_ann_parts``; a file that does not match is ignored and written again from ``state.db``.

Layout (little-endian)::

    0      8 bytes   MAGIC
    8      uint32    header length h, uint32 crc32 of the header
    16     h bytes   header, JSON: format, model, dim, rows, listed, nlist, hwm_seq (the rows
                     cover every hm_embeddings row of seq <= hwm_seq), ann ([build_id, generation]
                     of the lists, or null), table_root (rootpage of hm_embeddings: a table made
                     again is another table), file_bytes, block_rows, and per section its
                     [offset, bytes, dtype, shape, crc32]
    HEADER_SPACE     sections, each at a multiple of 64: q int8 (rows, dim), scale float32,
                     ids int64, seqs int64, hashes uint32 (text_hash), lists int32, offsets int64 (nlist + 1), centroids
                     float32 (nlist, dim), sorted_ids int64, sorted_rows int64, block_crc uint32
                     (crc32 of each BLOCK_ROWS rows of q)

Opening checks the magic, the header's crc, the format, model and dimension, the file's size and
the crc of every section but ``q`` (about 44 bytes a row: 40 ms at 1M); the rows of ``q`` are
checked a block at a time the first time a search reads them (:meth:`VectorFile.verify`), so a
process touches only the lists it probes. A mismatch raises :class:`VectorFileCorrupt`.

Written atomically: a temporary file in the same folder, fsync, rename over the old one, fsync of
the folder, under an exclusive ``flock`` of ``<file>.lock`` taken without waiting (a second
writer skips its write). A writer killed at any point leaves the previous file (or none) and a
temporary one, removed by the next writer; readers never open a temporary file. Mode 0600: the
vectors are derived from the user's messages.
"""

from __future__ import annotations

import contextlib
import json
import logging
import mmap
import os
import sqlite3
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hermes_memory.errors import HermesMemoryError
from hermes_memory.sessions import embeddings as emb

logger = logging.getLogger(__name__)

SUFFIX = ".hm-vectors"
"""The file's name is ``state.db``'s plus this (``state.db.hm-vectors``)."""
MAGIC = b"HMVEC\x00\x00\x01"
FORMAT = 2
"""Bumped whenever the sections change (1: before ``hashes``); a file of another format is written again."""
HEADER_SPACE = 16_384
"""Bytes reserved for the magic and the header; the sections start here."""
BLOCK_ROWS = 512
"""Rows of ``q`` per crc (192 KB): a probed list of ~1,000 rows checks 2-3 blocks once."""
MIN_ROWS = 20_000
"""Fewest vectors worth a file: below, reading them from SQLite takes about 0.3 s at most
(0.14 s for 10,000 measured; docs/benchmarks.md "Vector file")."""
SECTIONS = (("q", "int8"), ("scale", "float32"), ("ids", "int64"), ("seqs", "int64"), ("hashes", "uint32"), ("lists", "int32"),
            ("offsets", "int64"), ("centroids", "float32"), ("sorted_ids", "int64"), ("sorted_rows", "int64"),
            ("block_crc", "uint32"))


class VectorFileCorrupt(HermesMemoryError, ValueError):
    """The vector file does not hold what its header says (torn, truncated or damaged bytes);
    the caller reads the vectors from ``state.db`` and writes the file again."""


def path_for(db_path: str | os.PathLike[str]) -> Path:
    """The vector file of the database at ``db_path``."""
    return Path(str(db_path) + SUFFIX)


def db_path_of(conn: sqlite3.Connection) -> Path | None:
    """The file of ``conn``'s main database, or ``None`` (in memory, or a temporary database)."""
    for row in conn.execute("PRAGMA database_list").fetchall():
        if row[1] == "main":
            return Path(row[2]) if row[2] else None
    return None


def table_root(conn: sqlite3.Connection) -> int:
    """Root page of ``hm_embeddings`` (0 when missing): recorded in the file, so a table dropped
    and made again (its ``seq`` counted afresh) is never taken for the one the file covers."""
    row = conn.execute("SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?",
                       (emb.TABLE,)).fetchone()
    return int(row[0]) if row is not None else 0


@dataclass
class VectorFile:
    """An opened vector file: the header's fields and numpy views of its sections (``q``
    copy-on-write: a re-embedded row replaced in memory is never written to the file)."""

    path: Path
    header: dict[str, Any]
    arrays: dict[str, np.ndarray]
    verified: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    _map: Any = None

    @property
    def rows(self) -> int:
        return int(self.header["rows"])

    def verify(self, start: int, end: int) -> None:
        """Check the crc of every block of rows ``[start, end)`` of ``q`` not checked yet;
        raises :class:`VectorFileCorrupt` on a mismatch."""
        if end <= start:
            return
        lo, hi = start // BLOCK_ROWS, (min(end, self.rows) - 1) // BLOCK_ROWS + 1
        todo = np.flatnonzero(~self.verified[lo:hi]) + lo
        self._check_blocks(todo)

    def verify_rows(self, rows: np.ndarray) -> None:
        """:meth:`verify` for the blocks of the row numbers ``rows`` (those below :attr:`rows`)."""
        blocks = np.unique(rows[rows < self.rows] // BLOCK_ROWS)
        self._check_blocks(blocks[~self.verified[blocks]])

    def _check_blocks(self, blocks: np.ndarray) -> None:
        q, crcs = self.arrays["q"], self.arrays["block_crc"]
        for b in blocks.tolist():
            if zlib.crc32(q[b * BLOCK_ROWS:(b + 1) * BLOCK_ROWS].tobytes()) != int(crcs[b]):
                raise VectorFileCorrupt(f"{self.path}: rows {b * BLOCK_ROWS}-{(b + 1) * BLOCK_ROWS - 1} "
                                        "do not match their checksum")
            self.verified[b] = True


def read(path: Path, model: str) -> VectorFile | None:
    """The vector file at ``path`` opened for ``model``, or ``None`` when there is none or it was
    written for another model, dimension or format (logged). Raises :class:`VectorFileCorrupt`
    when its bytes do not match its header."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    except OSError as exc:
        logger.warning("vector file %s unreadable (%s): vectors are read from state.db", path, exc)
        return None
    try:
        size = os.fstat(fd).st_size
        if size < HEADER_SPACE:
            raise VectorFileCorrupt(f"{path}: {size} bytes, shorter than its header")
        head = os.pread(fd, HEADER_SPACE, 0)
        if head[:8] != MAGIC:
            raise VectorFileCorrupt(f"{path}: not a vector file (magic {head[:8]!r})")
        length, crc = struct.unpack("<II", head[8:16])
        raw = head[16:16 + length]
        if length > HEADER_SPACE - 16 or zlib.crc32(raw) != crc:
            raise VectorFileCorrupt(f"{path}: header checksum mismatch")
        header = json.loads(raw)
        if header.get("format") != FORMAT or header.get("model") != model or header.get("dim") != emb.DIM:
            logger.info("vector file %s is for %s/%s/%s, not %s/%s/%s: written again", path, header.get("format"),
                        header.get("model"), header.get("dim"), FORMAT, model, emb.DIM)
            return None
        if int(header["file_bytes"]) != size:
            raise VectorFileCorrupt(f"{path}: {size} bytes, its header says {header['file_bytes']} (torn write?)")
        mapped = mmap.mmap(fd, size, access=mmap.ACCESS_COPY)
    finally:
        os.close(fd)
    arrays: dict[str, np.ndarray] = {}
    try:
        for name, want in SECTIONS:
            offset, nbytes, dtype, shape, crc = header["sections"][name]
            if dtype != want:
                raise ValueError(f"section {name} is {dtype}, not {want}")
            a = np.frombuffer(mapped, dtype=np.dtype(dtype), count=nbytes // np.dtype(dtype).itemsize, offset=offset)
            a = a.reshape(shape)
            if name != "q" and zlib.crc32(a.tobytes()) != crc:
                raise VectorFileCorrupt(f"{path}: section {name} does not match its checksum")
            arrays[name] = a
        rows = int(header["rows"])
        for key in ("listed", "nlist", "hwm_seq", "table_root"):
            int(header[key])
    except (KeyError, ValueError, TypeError) as exc:
        if isinstance(exc, VectorFileCorrupt):
            raise
        raise VectorFileCorrupt(f"{path}: header does not describe its sections ({exc!r})") from exc
    if arrays["q"].shape != (rows, emb.DIM) or len(arrays["block_crc"]) != -(-rows // BLOCK_ROWS):
        raise VectorFileCorrupt(f"{path}: sections do not match {rows} rows")
    return VectorFile(path, header, arrays, np.zeros(len(arrays["block_crc"]), dtype=bool), mapped)


def peek(path: Path) -> dict[str, Any] | None:
    """The header of the file at ``path`` (checked by its crc and the file's size), or ``None``
    (none, unreadable, or not matching)."""
    try:
        with open(path, "rb") as f:
            head = f.read(HEADER_SPACE)
        length, crc = struct.unpack("<II", head[8:16])
        raw = head[16:16 + length]
        if head[:8] != MAGIC or zlib.crc32(raw) != crc:
            return None
        header: dict[str, Any] = json.loads(raw)
        return header if int(header.get("file_bytes", -1)) == path.stat().st_size else None
    except (OSError, ValueError, struct.error):
        return None


def _put(f: Any, a: np.ndarray) -> int:
    """Write ``a``'s bytes at the file's end (aligned to 64); returns their crc32."""
    pad = -f.tell() % 64
    if pad:
        f.write(b"\0" * pad)
    data = np.ascontiguousarray(a).tobytes()
    f.write(data)
    return zlib.crc32(data)


def write(path: Path, header: dict[str, Any], q_range: Callable[[int, int], np.ndarray],
          arrays: dict[str, np.ndarray]) -> bool:
    """Write the vector file at ``path`` atomically (module doc): ``header`` (model, rows, listed,
    nlist, hwm_seq, ann, table_root), the rows of ``q`` read through ``q_range(start, end)`` (int8
    ``(end - start, dim)``) and the other sections in ``arrays``. Returns ``False`` when another
    writer holds the lock, or on an OS error (logged; the previous file stays)."""
    import fcntl

    lock = Path(str(path) + ".lock")
    try:
        lfd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        logger.warning("vector file %s not written: %s", path, exc)
        return False
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    try:
        try:
            fcntl.flock(lfd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        for old in path.parent.glob(path.name + ".tmp-*"):  # left by a killed writer (we hold the lock)
            with contextlib.suppress(OSError):
                old.unlink()
        rows = int(header["rows"])
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(b"\0" * HEADER_SPACE)
            sections: dict[str, list[Any]] = {}
            f.write(b"\0" * (-f.tell() % 64))
            q_at, q_crc, blocks = f.tell(), 0, []
            for at in range(0, rows, BLOCK_ROWS):
                data = np.ascontiguousarray(q_range(at, min(rows, at + BLOCK_ROWS)), dtype=np.int8).tobytes()
                f.write(data)
                q_crc = zlib.crc32(data, q_crc)
                blocks.append(zlib.crc32(data))
            sections["q"] = [q_at, rows * emb.DIM, "int8", [rows, emb.DIM], q_crc]
            full = {**arrays, "block_crc": np.asarray(blocks, dtype=np.uint32)}
            for name, dtype in SECTIONS[1:]:
                a = np.asarray(full[name], dtype=np.dtype(dtype))
                crc = _put(f, a)
                sections[name] = [f.tell() - a.nbytes, a.nbytes, dtype, list(a.shape), crc]
            total = f.tell()
            meta = {**header, "format": FORMAT, "dim": emb.DIM, "block_rows": BLOCK_ROWS, "file_bytes": total,
                    "sections": sections}
            raw = json.dumps(meta, separators=(",", ":")).encode()
            if len(raw) > HEADER_SPACE - 16:
                raise OSError(f"header of {len(raw)} bytes does not fit")
            f.seek(0)
            f.write(MAGIC + struct.pack("<II", len(raw), zlib.crc32(raw)) + raw)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
        return True
    except OSError as exc:
        logger.warning("vector file %s not written: %s", path, exc)
        with contextlib.suppress(OSError):
            tmp.unlink()
        return False
    finally:
        os.close(lfd)  # releases the flock


def remove(db_path: str | os.PathLike[str]) -> None:
    """Delete the vector file of ``db_path`` (after vectors were deleted from ``state.db``: the
    file must not keep them). Missing is fine; an OS error is logged."""
    try:
        path_for(db_path).unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        logger.warning("vector file %s not removed: %s", path_for(db_path), exc)
