"""The vector file next to state.db (sessions/vector_file.py): a new process maps it instead of
reading every vector, and gets the same results; a file behind state.db is extended and finds the
new rows; a writer killed mid-file leaves the old file or none, never a torn one that is used; a
damaged file is written again and the search still returns; deleted conversations leave it;
with embeddings off nothing is written. Real SQLite files, real processes, real kills."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from hermes_memory.sessions import ann, fusion
from hermes_memory.sessions import embeddings as emb
from hermes_memory.sessions import vector_file as vf
from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.vector_index import VectorIndex
from tests.sessions.test_ann import MODEL, clustered, fill

ROWS = 3000
FILE_ROWS = 1000


def _index() -> VectorIndex:
    return VectorIndex(MODEL, min_vectors=0, file_rows=FILE_ROWS)


def _reference(db: SessionDB, queries: np.ndarray, k: int = 50) -> list[list[tuple[int, float]]]:
    """What an index read from state.db alone (no file) returns."""
    ix = VectorIndex(MODEL, min_vectors=0, file_rows=None)
    return [ix.nearest(db.conn, q, k) for q in queries]


def _queries(centres: np.ndarray, n: int = 12) -> np.ndarray:
    g = np.random.default_rng(5)
    return (centres[:n] + 0.02 * g.standard_normal((n, emb.DIM))).astype(np.float32)


def _built(tmp_path: Path, rows: int = ROWS) -> tuple[Path, np.ndarray]:
    vecs, centres = clustered(rows)
    state = tmp_path / "state.db"
    with SessionDB(state) as db:
        fill(db, vecs)
        ann.maintain(db, MODEL, force=True)
    return state, centres


def test_a_new_process_maps_the_vector_file_and_gets_the_same_results(tmp_path: Path):
    state, centres = _built(tmp_path)
    qs = _queries(centres)
    with SessionDB(state) as db:
        first = _index()
        got = [first.nearest(db.conn, q, 50) for q in qs]
        assert first.file_state == "written" and vf.path_for(state).exists()
        assert oct(vf.path_for(state).stat().st_mode & 0o777) == "0o600"
        assert got == _reference(db, qs)
    with SessionDB(state) as db:  # a new process: the file is mapped, no vector read from SQLite
        fresh = _index()
        again = [fresh.nearest(db.conn, q, 50) for q in qs]
        assert fresh.file_state == "mapped" and fresh._unsaved == 0 and fresh.last_mode == "ann"
        assert again == got
        # the fused ranking is the same whether the vectors came from the file or from state.db
        sem = emb.SemanticSearch.__new__(emb.SemanticSearch)
        sem.weight, sem.k = None, None
        sem.query_vector = lambda text: qs[len(text) % len(qs)]  # type: ignore[method-assign,assignment]
        orders = {}
        for name, ix in (("file", fresh), ("state.db", VectorIndex(MODEL, min_vectors=0, file_rows=None))):
            sem.index = ix
            db.semantic = sem
            orders[name] = [[r["id"] for r in db.search_messages(t, limit=20)]
                            for t in ("message 17", "message", "message 2999 x")]
        db.semantic = None
        assert orders["file"] == orders["state.db"] and all(orders["file"])


def test_a_file_behind_state_db_is_extended_and_finds_the_new_rows(tmp_path: Path):
    state, centres = _built(tmp_path)
    with SessionDB(state) as db:
        _index().nearest(db.conn, centres[0], 10)
        old = vf.peek(vf.path_for(state))
        assert old is not None and old["rows"] == ROWS
        g = np.random.default_rng(9)
        odd = g.standard_normal(emb.DIM).astype(np.float32)  # a direction no earlier vector has
        odd /= np.linalg.norm(odd)
        more, _ = clustered(1500, seed=3)
        more[700] = odd
        new_ids = fill(db, more, start=ROWS)
    with SessionDB(state) as db:
        ix = _index()
        got = ix.nearest(db.conn, odd, 5)
        assert ix.file_state == "written"  # mapped, 1,500 rows read since (>= EXTEND_MIN): saved again
        assert got[0][0] == new_ids[700] and got[0][1] > 0.99
        assert got == VectorIndex(MODEL, min_vectors=0, file_rows=None).nearest(db.conn, odd, 5)
        head = vf.peek(vf.path_for(state))
        assert head is not None and head["rows"] == ROWS + 1500 and head["hwm_seq"] > old["hwm_seq"]
    with SessionDB(state) as db:
        ix = _index()
        assert ix.nearest(db.conn, odd, 5) == got
        assert ix.file_state == "mapped" and ix._unsaved == 0


WRITER = textwrap.dedent("""
    import sys, time
    from hermes_memory.sessions import vector_file as vf
    from hermes_memory.sessions.db import SessionDB
    from hermes_memory.sessions.vector_index import VectorIndex
    import numpy as np
    put, calls = vf._put, [0]
    def slow_put(f, a):
        calls[0] += 1
        if calls[0] == 3:  # q and two sections written, the rest not: stop here until killed
            f.flush()
            print("mid", flush=True)
            time.sleep(600)
        return put(f, a)
    vf._put = slow_put
    with SessionDB(sys.argv[1]) as db:
        VectorIndex("test-model", min_vectors=0, file_rows=1000).nearest(db.conn, np.ones(384, np.float32) / 384 ** 0.5, 5)
""")


def _kill_writer_mid_file(state: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    p = subprocess.Popen([sys.executable, "-c", WRITER, str(state)], stdout=subprocess.PIPE, env=env)
    assert p.stdout is not None
    assert p.stdout.readline().strip() == b"mid"
    os.kill(p.pid, signal.SIGKILL)
    p.wait(30)


@pytest.mark.parametrize("before", ["no file", "an older file"])
def test_a_writer_killed_mid_file_leaves_the_old_file_or_none(tmp_path: Path, before: str):
    state, centres = _built(tmp_path)
    path = vf.path_for(state)
    if before == "an older file":
        with SessionDB(state) as db:
            _index().nearest(db.conn, centres[0], 5)
            more, _ = clustered(1500, seed=4)
            fill(db, more, start=ROWS)  # the file is now behind: the next process writes it again
    old = path.read_bytes() if path.exists() else None
    _kill_writer_mid_file(state)
    torn = list(tmp_path.glob(path.name + ".tmp-*"))
    assert len(torn) == 1 and torn[0].stat().st_size > vf.HEADER_SPACE  # killed with its bytes half written
    assert (path.read_bytes() if path.exists() else None) == old
    qs = _queries(centres)
    with SessionDB(state) as db:
        ix = _index()
        got = [ix.nearest(db.conn, q, 50) for q in qs]
        assert ix.file_state == "written"
        assert got == _reference(db, qs)
    assert not list(tmp_path.glob(path.name + ".tmp-*"))  # the next writer removed it
    with SessionDB(state) as db:
        ix = _index()
        assert [ix.nearest(db.conn, q, 50) for q in qs] == got and ix.file_state == "mapped"


def _damage(path: Path, how: str) -> None:
    head = vf.peek(path)
    assert head is not None
    data = bytearray(path.read_bytes())
    if how == "truncated":
        data = data[: len(data) // 2]
    elif how == "header":
        data[40] ^= 0xFF
    else:  # a byte inside one section
        offset, nbytes = head["sections"][how][:2]
        data[offset + nbytes // 2] ^= 0x5A
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["truncated", "header", "ids", "q"])
def test_a_damaged_vector_file_is_written_again_and_the_search_returns(tmp_path: Path, how: str):
    state, centres = _built(tmp_path)
    qs = _queries(centres, 40)  # every centre: the damaged block of q is in a probed list
    with SessionDB(state) as db:
        _index().nearest(db.conn, qs[0], 5)
        want = _reference(db, qs)
    _damage(vf.path_for(state), how)
    with SessionDB(state) as db:
        ix = _index()
        got = [ix.nearest(db.conn, q, 50) for q in qs]
        assert got == want
        assert ix.file_state == "written"  # found damaged (opening it, or reading the bad block)
    with SessionDB(state) as db:
        ix = _index()
        assert [ix.nearest(db.conn, q, 50) for q in qs] == want and ix.file_state == "mapped"


def test_a_second_writer_skips_while_the_lock_is_held(tmp_path: Path):
    state, centres = _built(tmp_path)
    lock = os.open(str(vf.path_for(state)) + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        with SessionDB(state) as db:
            ix = _index()
            got = ix.nearest(db.conn, centres[1], 10)
            assert got and ix.file_state == "none" and not vf.path_for(state).exists()
    finally:
        os.close(lock)
    with SessionDB(state) as db:
        ix = _index()
        assert ix.nearest(db.conn, centres[1], 10) == got and ix.file_state == "written"


def test_deleting_a_conversation_removes_its_vectors_from_the_file(tmp_path: Path):
    vecs, centres = clustered(ROWS)
    state = tmp_path / "state.db"
    with SessionDB(state) as db:
        fill(db, vecs[:2000], session="keep")
        gone = fill(db, vecs[2000:], session="gone", start=2000)
        ann.maintain(db, MODEL, force=True)
        ix = _index()
        ix.nearest(db.conn, centres[0], 5)
        assert vf.path_for(state).exists()
        db.delete_session("gone")
        assert not vf.path_for(state).exists()
        VectorIndex(MODEL, min_vectors=0, file_rows=FILE_ROWS).nearest(db.conn, centres[0], 5)
    f = vf.read(vf.path_for(state), MODEL)
    assert f is not None and f.rows == 2000 and not set(gone) & set(f.arrays["ids"].tolist())


def test_with_embeddings_off_no_vector_file_is_written(tmp_path: Path):
    state, _ = _built(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    with SessionDB(state) as db:
        assert fusion.attach(db, SimpleNamespace(embeddings=False)) == "off"
        assert db.search_messages("message 12", limit=5)
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert not any(n.endswith(vf.SUFFIX) for n in before)


def test_mapped_index_recall_at_50_against_the_exact_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """On 3,000 clustered vectors in 55 lists probing 4: recall@50 of the exact top 50 >= 0.9,
    the same from the file as from state.db."""
    monkeypatch.setattr(ann, "NPROBE", 4)
    state, centres = _built(tmp_path)
    g = np.random.default_rng(11)
    qs = (centres[g.integers(0, len(centres), 30)] + 0.06 * g.standard_normal((30, emb.DIM))).astype(np.float32)
    with SessionDB(state) as db:
        _index().nearest(db.conn, qs[0], 5)
        mapped = _index()
        exact = VectorIndex(MODEL, file_rows=None)
        recall = []
        for q in qs:
            a = mapped.nearest(db.conn, q, 50)
            e = exact.nearest(db.conn, q, 50, exact=True)
            recall.append(len({i for i, _ in a} & {i for i, _ in e}) / 50)
        assert mapped.file_state == "mapped" and mapped.last_mode == "ann"
        assert float(np.mean(recall)) >= 0.9
        assert [mapped.nearest(db.conn, q, 50) for q in qs] == _reference(db, qs)
