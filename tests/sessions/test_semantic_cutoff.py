"""With semantic search on, a result still means "matched": messages found by meaning alone join
only above fusion.SEMANTIC_FLOOR, so a query about nothing stored finds nothing and the count a
user sees is not every indexed message (SQLite: vectors live in state.db)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_memory.config import SearchConfig
from hermes_memory.sessions import embeddings as emb
from hermes_memory.sessions import fusion, indexer
from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.search import session_search
from tests.sessions.test_embeddings import CORPUS, _fill

UNRELATED = ["xyzzy plugh", "weather in Paris tomorrow"]


@pytest.fixture(scope="module")
def embedder() -> emb.Embedder:
    return emb.Embedder()


def _indexed(tmp_path: Path, embedder: emb.Embedder) -> tuple[SessionDB, list[int]]:
    db = SessionDB(tmp_path / "state.db")
    ids = _fill(db)
    assert fusion.attach(db, SearchConfig(embeddings=True)) == "on"
    assert indexer.index_pending(db, embedder)["embedded"] == sum(1 for r, _ in CORPUS if r in emb.EMBED_ROLES)
    return db, ids


def test_a_query_about_nothing_stored_finds_nothing_with_embeddings_on(tmp_path: Path, embedder: emb.Embedder,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    db, _ = _indexed(tmp_path, embedder)
    with db:
        for q in UNRELATED:
            assert db.search_messages(q) == [], q
            out = json.loads(session_search({"query": q}, db))
            assert out["success"] and out["count"] == 0, (q, out)
        monkeypatch.setattr(fusion, "SEMANTIC_FLOOR", 0.0)  # no cutoff: every indexed message "matches"
        assert len(db.search_messages(UNRELATED[0], limit=50)) == sum(1 for r, _ in CORPUS if r in emb.EMBED_ROLES)


def test_a_paraphrase_is_still_found_and_alone(tmp_path: Path, embedder: emb.Embedder) -> None:
    db, ids = _indexed(tmp_path, embedder)
    with db:
        rows = db.search_messages("automobile", limit=50)
        assert rows and rows[0]["id"] == ids[0] and rows[0]["rank"] is None
        assert len(rows) < 3, [r["snippet"] for r in rows]


def test_lexical_matches_are_kept_whatever_their_cosine(tmp_path: Path, embedder: emb.Embedder) -> None:
    db, _ = _indexed(tmp_path, embedder)
    with db:
        fused = {r["id"] for r in db.search_messages("database", limit=50)}
        sem, db.semantic = db.semantic, None
        lexical = {r["id"] for r in db.search_messages("database", limit=50)}
        db.semantic = sem
        assert lexical and lexical <= fused
    assert fusion.fuse([5], [(9, fusion.SEMANTIC_FLOOR - 0.01), (5, 0.1)]) == [5]
    assert fusion.fuse([5], [(9, fusion.SEMANTIC_FLOOR)]) == [5, 9]
