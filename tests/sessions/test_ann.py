"""The approximate vector index of semantic search (SQLite only: vectors live in state.db):
it returns the exact scan's top k on clustered vectors while scoring a fraction of them, another
process's new vectors and index changes are seen, a killed build leaves exact search working and
resumes, appends never wait for a build. Real SQLite files and real processes; vectors are
written directly (no model needed), as the background indexer writes them."""

from __future__ import annotations

import logging
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from hermes_memory.sessions import ann
from hermes_memory.sessions import embeddings as emb
from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.vector_index import VectorIndex

MODEL = "test-model"
CENTRES = 40


def clustered(n: int, seed: int = 0, centres: int = CENTRES, spread: float = 0.02) -> tuple[np.ndarray, np.ndarray]:
    """``(unit vectors (n, 384), centre of each)``: ``centres`` random directions, each vector its
    centre plus gaussian noise of ``spread`` per dimension (cosine to the centre ~0.93)."""
    g = np.random.default_rng(seed)
    c = g.standard_normal((centres, emb.DIM)).astype(np.float32)
    c /= np.linalg.norm(c, axis=1, keepdims=True)
    label = g.integers(0, centres, n)
    v = c[label] + spread * g.standard_normal((n, emb.DIM)).astype(np.float32)
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32), c


def fill(db: SessionDB, vecs: np.ndarray, session: str = "s", start: int = 0) -> list[int]:
    """Messages ``message <i>`` in ``session`` (user and assistant alternating) with ``vecs``."""
    if db.get_session(session) is None:
        db.create_session(session)
    texts = [f"message {start + i}" for i in range(len(vecs))]
    ids = []
    for at in range(0, len(vecs), 2000):
        ids += db.append_messages(session, [{"role": "user" if (start + at + i) % 2 else "assistant", "content": t}
                                            for i, t in enumerate(texts[at:at + 2000])])
    def store(rows: list[tuple[int, str]], block: np.ndarray) -> Callable[[sqlite3.Connection], int]:
        return lambda c: emb.store(c, MODEL, rows, block)

    for at in range(0, len(vecs), 2000):
        db._execute_write(store(list(zip(ids[at:at + 2000], texts[at:at + 2000], strict=True)), vecs[at:at + 2000]))
    return ids


def test_index_returns_the_exact_top_k_on_clustered_vectors_scoring_a_fraction(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(ann, "NPROBE", 8)  # of 77 lists (32 would be 42 % of this small store)
    vecs, centres = clustered(6000)
    with SessionDB(tmp_path / "state.db") as db:
        fill(db, vecs)
        report = ann.maintain(db, MODEL, force=True)
        assert report["action"] == "built" and report["nlist"] == ann.nlist_for(6000)
        index = VectorIndex(MODEL, min_vectors=0)
        g = np.random.default_rng(1)
        queries = centres + 0.02 * g.standard_normal(centres.shape).astype(np.float32)
        for q in queries:
            for k, cond, params in ((10, "", []), (50, "", []), (20, " AND m.role = ?", ["user"])):
                got = index.nearest(db.conn, q, k, cond, params)
                assert index.last_mode == "ann" and index.last_scored < len(vecs) / 3
                assert got == index.nearest(db.conn, q, k, cond, params, exact=True)
                assert len(got) == k
        # a filter that almost nothing passes widens the probe until k pass (up to every list)
        few = db.conn.execute("SELECT id FROM messages ORDER BY id LIMIT 3").fetchall()
        cond = f" AND m.id IN ({','.join(str(r[0]) for r in few)})"
        got = index.nearest(db.conn, queries[0], 3, cond, [])
        assert sorted(i for i, _ in got) == [r[0] for r in few]


def test_small_store_scans_exactly_without_an_index(tmp_path: Path):
    vecs, centres = clustered(500)
    with SessionDB(tmp_path / "state.db") as db:
        fill(db, vecs)
        assert ann.maintain(db, MODEL)["action"] == "none"  # below MIN_VECTORS: nothing built
        assert ann.status(db.conn, MODEL)["state"] == "small"
        index = VectorIndex(MODEL)
        index.nearest(db.conn, centres[0], 10)
        assert index.last_mode == "exact" and index.last_scored == 500


def test_a_re_embedded_vector_leaves_its_list_and_is_found_by_its_new_meaning(tmp_path: Path):
    vecs, centres = clustered(4000)
    with SessionDB(tmp_path / "state.db") as db:
        ids = fill(db, vecs)
        ann.maintain(db, MODEL, force=True)
        index = VectorIndex(MODEL, min_vectors=0)
        target = ids[7]
        old = vecs[7]
        assert index.nearest(db.conn, old, 1)[0][0] == target
        new = np.random.default_rng(9).standard_normal(emb.DIM).astype(np.float32)
        new /= np.linalg.norm(new)
        db._execute_write(lambda c: emb.store(c, MODEL, [(target, "message 7")], new[None, :]))
        found = index.nearest(db.conn, new, 5)
        assert index.last_mode == "ann" and found[0][0] == target and found[0][1] > 0.99
        assert target not in [i for i, _ in index.nearest(db.conn, old, 50)]
        assert index.nearest(db.conn, old, 50) == index.nearest(db.conn, old, 50, exact=True)


WRITER = textwrap.dedent("""
    import sys
    import numpy as np
    sys.path.insert(0, sys.argv[3])
    from test_ann import MODEL, fill
    from hermes_memory.sessions import ann
    from hermes_memory.sessions.db import SessionDB
    vecs = np.load(sys.argv[2])
    with SessionDB(sys.argv[1]) as db:
        fill(db, vecs, session="other", start=100000)
        if sys.argv[4] == "extend":
            ann.EXTEND_MIN, ann.MIN_VECTORS = 1, 1000
            print(ann.maintain(db, MODEL)["action"])
""")


def test_vectors_another_process_adds_are_seen_by_this_process_search(tmp_path: Path):
    vecs, _ = clustered(4000)
    state = tmp_path / "state.db"
    with SessionDB(state) as db:
        fill(db, vecs)
        ann.maintain(db, MODEL, force=True)
        index = VectorIndex(MODEL, min_vectors=0)
        index.nearest(db.conn, vecs[0], 5)
        before = index._version
        assert index.last_mode == "ann" and before is not None
        g = np.random.default_rng(5)
        for step in ("tail", "extend"):
            new = g.standard_normal((30, emb.DIM)).astype(np.float32)
            new /= np.linalg.norm(new, axis=1, keepdims=True)
            np.save(tmp_path / "new.npy", new)
            out = subprocess.run([sys.executable, "-c", WRITER, str(state), str(tmp_path / "new.npy"),
                                  str(Path(__file__).parent), step], capture_output=True, text=True, timeout=120)
            assert out.returncode == 0, out.stderr
            theirs = [r[0] for r in db.conn.execute(
                "SELECT id FROM messages WHERE session_id = 'other' ORDER BY id DESC LIMIT 30")][::-1]
            for v, mid in zip(new, theirs, strict=True):
                got = index.nearest(db.conn, v, 3)
                assert index.last_mode == "ann" and got[0][0] == mid
            if step == "extend":
                assert out.stdout.strip() == "extended"
                assert index._version != before and index._version == ann.version(db.conn, MODEL)
                assert index._listed == index._n  # the other process's extension listed them all
            else:
                assert index._version == before and index._n - index._listed == 30  # scanned in the tail


BUILDER = textwrap.dedent("""
    import sys, time
    from hermes_memory.sessions import ann
    from hermes_memory.sessions.db import SessionDB
    ann.BUILD_CHUNK = 500
    def slow(done, total):
        print(done, flush=True)
        time.sleep(0.3)
    with SessionDB(sys.argv[1]) as db:
        print(ann.maintain(db, sys.argv[2], progress=slow, force=True)["action"], flush=True)
""")


def _parts(state: Path) -> list[tuple[int, int, bytes, bytes]]:
    conn = sqlite3.connect(state)
    try:
        return conn.execute(f"SELECT build_id, part, ids, lists FROM {ann.PARTS} ORDER BY build_id, part").fetchall()
    except sqlite3.OperationalError:  # not made yet
        return []
    finally:
        conn.close()


def _kill_builder_after_parts(state: Path, parts: int) -> None:
    proc = subprocess.Popen([sys.executable, "-c", BUILDER, str(state), MODEL], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 180
        while len(_parts(state)) < parts and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert proc.poll() is None, "the build ended before it could be killed: " + (proc.stderr.read() if proc.stderr else "")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)


def test_a_killed_build_leaves_exact_search_with_a_reason_then_resumes(tmp_path: Path,
                                                                         caplog: pytest.LogCaptureFixture):
    vecs, centres = clustered(6000)
    state = tmp_path / "state.db"
    with SessionDB(state) as db:
        fill(db, vecs)
    _kill_builder_after_parts(state, 3)
    with SessionDB(state, timeout=1.0, write_retries=3) as db:
        assert ann.current(db.conn, MODEL) is None
        building = ann.current(db.conn, MODEL, "building")
        assert building is not None and ann.status(db.conn, MODEL)["state"] == "building"
        kept = _parts(state)
        assert 3 <= len(kept) < 12  # 6,000 vectors in parts of 500: the kill came midway
        index = VectorIndex(MODEL, min_vectors=0)
        with caplog.at_level(logging.INFO, logger="hermes_memory.sessions.vector_index"):
            got = index.nearest(db.conn, centres[0], 10)
        assert index.last_mode == "exact" and got == index.nearest(db.conn, centres[0], 10, exact=True)
        assert "no vector index built yet" in caplog.text
        db.append_message("s", "user", "an append while a build is pending")  # never waits on the index
        report = ann.maintain(db, MODEL)
        assert report["action"] == "resumed"
        after = _parts(state)
        assert after[: len(kept)] == kept  # the parts committed before the kill were kept, not redone
        ready = ann.current(db.conn, MODEL)
        assert ready is not None and ready.build_id == building.build_id and ready.vectors == 6000
        for q in centres[:10]:
            got = index.nearest(db.conn, q, 20)
            assert index.last_mode == "ann"  # the resumed build is in use
            assert got == index.nearest(db.conn, q, 20, exact=True)
        # a rebuild killed midway: the ready build stays in use, untouched
        version = ann.version(db.conn, MODEL)
    _kill_builder_after_parts(state, len(after) + 2)
    with SessionDB(state) as db:
        assert ann.version(db.conn, MODEL) == version
        index = VectorIndex(MODEL, min_vectors=0)
        assert index.nearest(db.conn, centres[1], 10) == index.nearest(db.conn, centres[1], 10, exact=True)
        assert ann.maintain(db, MODEL)["action"] == "resumed"
        assert ann.version(db.conn, MODEL) != version
        builds = db.conn.execute(f"SELECT count(*) FROM {ann.BUILDS}").fetchone()[0]
        assert builds == 1  # the replaced build and its parts are gone


def test_appends_go_on_while_another_process_builds_the_index(tmp_path: Path):
    vecs, _ = clustered(6000)
    state = tmp_path / "state.db"
    with SessionDB(state) as db:
        fill(db, vecs)
    proc = subprocess.Popen([sys.executable, "-c", BUILDER, str(state), MODEL], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    appended: list[int] = []
    try:
        with SessionDB(state, timeout=1.0, write_retries=3) as db:
            while not _parts(state) and proc.poll() is None:
                time.sleep(0.05)
            while proc.poll() is None and len(appended) < 40:
                appended.append(db.append_message("s", "user", f"appended during the build {len(appended)}"))
                time.sleep(0.02)
        assert len(appended) >= 10, proc.stderr.read() if proc.stderr else ""
    finally:
        proc.wait(300)
    assert proc.returncode == 0 and proc.stdout is not None and proc.stdout.read().strip().endswith("built")


def test_growth_rebuilds_and_a_shrunk_store_drops_the_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(ann, "MIN_VECTORS", 1000)
    vecs, _ = clustered(6000)
    with SessionDB(tmp_path / "state.db") as db:
        fill(db, vecs[:2000])
        assert ann.maintain(db, MODEL)["action"] == "built"
        first = ann.current(db.conn, MODEL)
        assert first is not None and first.nlist == ann.nlist_for(2000)
        fill(db, vecs[2000:2100], start=2000)
        assert ann.maintain(db, MODEL)["action"] == "none"  # 100 < EXTEND_MIN: left in the tail
        monkeypatch.setattr(ann, "EXTEND_MIN", 50)
        assert ann.maintain(db, MODEL)["action"] == "extended"
        fill(db, vecs[2100:], start=2100)
        assert ann.maintain(db, MODEL)["action"] == "rebuilt"  # 6,000 >= 2 x 2,000
        second = ann.current(db.conn, MODEL)
        assert second is not None and second.nlist == ann.nlist_for(6000) and second.vectors == 6000
        db.delete_session("s")
        assert ann.maintain(db, MODEL)["action"] == "dropped"
        assert ann.current(db.conn, MODEL) is None


def test_an_index_over_a_vector_table_made_again_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(ann, "MIN_VECTORS", 1000)
    vecs, centres = clustered(3000)
    with SessionDB(tmp_path / "state.db") as db:
        ids = fill(db, vecs[:1500])
        fill(db, vecs[1500:], start=1500)  # later seqs than the one batch written again below
        assert ann.maintain(db, MODEL)["action"] == "built"
        other = sqlite3.connect(tmp_path / "state.db")
        other.execute(f"DELETE FROM {emb.TABLE}")  # another program empties the table
        other.commit()
        other.close()
        rows = [(i, f"message {k}") for k, i in enumerate(ids)]
        db._execute_write(lambda c: emb.store(c, MODEL, rows, vecs[:1500]))  # seq starts again at 1
        assert ann.maintain(db, MODEL)["action"] == "rebuilt"
        index = VectorIndex(MODEL, min_vectors=0)
        assert index.nearest(db.conn, centres[0], 10) == index.nearest(db.conn, centres[0], 10, exact=True)
