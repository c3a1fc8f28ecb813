"""The reference agent's writes (appends, replace, clear, delete, prune, on its own connection and
process) keep our cached document frequencies exact while our SessionDB stays open on the home."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_memory.sessions.db import SessionDB
from tests.compat.helpers import REFERENCES, WRITE_REFERENCE_CONFIG, ref

WORDS = ["walrus", "penguin", "kubectl", "narwhal", "beluga", "marmot", "otter", "migration", "deployment"]


def _truth(db: SessionDB) -> dict[str, int]:
    return {w: db.conn.execute("SELECT count(*) FROM hm_messages_fts WHERE hm_messages_fts MATCH ?",
                               ('"' + w + '"',)).fetchone()[0] for w in WORDS}


def _cached(db: SessionDB) -> dict[str, int]:
    stems = db._term_stats.stems(db.conn, WORDS)
    return dict(zip(WORDS, db._term_stats.doc_freqs(db.conn, [[(w, stems[w])] for w in WORDS]), strict=True))


@pytest.mark.parametrize("version", sorted(REFERENCES))
def test_reference_writes_keep_cached_document_frequencies_exact(version: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    ref(version, "build", home, {"config": WRITE_REFERENCE_CONFIG})
    db = SessionDB(home / "state.db")
    try:
        before = _cached(db)
        # warm, and not vacuous: 3 rows say "walrus", and the reply after the question is indexed
        # with it as its previous turn
        assert before == _truth(db) and before["walrus"] == 4
        ref(version, "ops", home, {"delete": "ref-s1", "deleted_word": "kubectl", "old_word": "walrus"})
        after = _cached(db)
        assert after == _truth(db)
        assert after["walrus"] == 0 and after["kubectl"] == 0  # its session was deleted meanwhile
    finally:
        db.close()
