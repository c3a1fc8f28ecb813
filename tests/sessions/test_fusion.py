"""Reciprocal-rank fusion of lexical and cosine order (pure: plain lists)."""

from __future__ import annotations

import pytest

from hermes_memory.config import load_config
from hermes_memory.errors import ConfigError
from hermes_memory.sessions import fusion


def test_no_semantic_candidates_leave_the_lexical_order_exactly():
    assert fusion.fuse([5, 3, 9], []) == [5, 3, 9]


def test_every_id_appears_once_and_agreement_wins(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(fusion, "LEXICAL_HEAD", 0)
    monkeypatch.setattr(fusion, "SEMANTIC_MARGIN", 1.0)
    # 1 and 3: 1/61 + 1/63 each (tie: lexical order); 2 and 7: 1/62 each (tie: lexical first)
    assert fusion.fuse([1, 2, 3], [(3, 0.9), (7, 0.88), (1, 0.8)], weight=1.0, k=60) == [1, 3, 2, 7]


def test_weight_zero_keeps_lexical_order_and_appends_semantic_only_rows(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(fusion, "LEXICAL_HEAD", 0)
    monkeypatch.setattr(fusion, "SEMANTIC_MARGIN", 1.0)
    assert fusion.fuse([4, 2], [(9, 0.9), (2, 0.8)], weight=0.0) == [4, 2, 9]


def test_a_heavy_semantic_weight_puts_the_nearest_first_except_the_lexical_head(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(fusion, "SEMANTIC_MARGIN", 1.0)
    monkeypatch.setattr(fusion, "LEXICAL_HEAD", 0)
    assert fusion.fuse([1, 2, 3], [(8, 0.9)], weight=10.0)[0] == 8
    monkeypatch.setattr(fusion, "LEXICAL_HEAD", 1)
    assert fusion.fuse([1, 2, 3], [(8, 0.9)], weight=10.0)[:2] == [1, 8]


def test_candidates_far_below_the_best_cosine_are_not_fused(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(fusion, "SEMANTIC_MARGIN", 0.05)
    out = fusion.fuse([1], [(2, 0.9), (3, 0.87), (4, 0.8)])
    assert 4 not in out and {2, 3} <= set(out)


def test_search_section_reads_on_and_off_and_refuses_nonsense(tmp_path):
    cfg = tmp_path / "config.yaml"
    for text, want in (("search:\n  embeddings: on\n", True), ("search:\n  embeddings: 'off'\n", False),
                       ("search:\n  embeddings: true\n", True), ("memory: {}\n", False)):
        cfg.write_text(text, encoding="utf-8")
        assert load_config(cfg).search.embeddings is want
    cfg.write_text("search:\n  embeddings: sometimes\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="search.embeddings"):
        load_config(cfg)


def test_a_short_process_leaves_semantic_search_off_above_its_vector_bound(tmp_path, monkeypatch):
    from hermes_memory.config import SearchConfig
    from hermes_memory.sessions import embeddings
    from hermes_memory.sessions.db import SessionDB

    with SessionDB(tmp_path / "state.db") as db:
        assert fusion.attach(db, SearchConfig(embeddings=True), max_vectors=0) == "on"  # none stored yet
        db.create_session("s")
        mid = db.append_message("s", "user", "hello there")
        import numpy as np
        db._execute_write(lambda c: embeddings.store(c, "m", [(mid, "hello there")], np.ones((1, 384), np.float32)))
        assert fusion.attach(db, SearchConfig(embeddings=True), max_vectors=0) == "too many vectors: 1"
        assert db.semantic is None
        assert fusion.attach(db, SearchConfig(embeddings=True), max_vectors=1) == "on"
