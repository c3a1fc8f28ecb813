"""Relevance feedback (hermes_memory.sessions.feedback): the names in a search's best hits search
again, so a turn that shares only a name with the best match rises onto the first page. Pure
parts on plain lists; the whole pass on a real SQLite state.db."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_memory.sessions import feedback, ranking
from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.search import discovery_rows


def test_capitalised_words_leave_out_the_speaker_tag_stopwords_and_short_words() -> None:
    got = feedback.capitalised(["Caroline: I loved Becoming Nicole, The book", "Melanie: ok", None, "Rome! Rome."])
    assert got == [["becoming", "nicole"], [], [], ["rome"]]


def test_expansion_terms_rank_rare_words_first_and_drop_unknown_ones() -> None:
    words = [["nicole", "thanks"], ["nicole", "sweden"], ["ghost"]]
    dfs = {"nicole": 2, "thanks": 400, "sweden": 1}
    assert feedback.expansion_terms(words, dfs, 1000, limit=2) == ["nicole", "sweden"]
    assert feedback.expansion_terms(words, {"thanks": 900}, 1000) == []  # a word in most rows has no IDF


def test_expansion_terms_stay_within_the_posting_budget() -> None:
    words = [["common", "rare"]]
    dfs = {"common": 5_000, "rare": 3}
    assert feedback.expansion_terms(words, dfs, 1_000_000, budget=2_500) == ["rare"]


def test_the_expansion_reads_fewer_postings_than_the_first_statement_by_default() -> None:
    """The second statement's own bound (feedback.FEEDBACK_BUDGET, below ranking.POSTINGS_BUDGET):
    a name in 1,500 of 1M rows fits the first statement's budget but not the expansion's."""
    words = [["lisbon", "rare"]]
    dfs = {"lisbon": 1_500, "rare": 3}
    assert feedback.FEEDBACK_BUDGET < ranking.POSTINGS_BUDGET
    assert feedback.expansion_terms(words, dfs, 1_000_000, budget=ranking.POSTINGS_BUDGET) == ["rare", "lisbon"]
    assert feedback.expansion_terms(words, dfs, 1_000_000) == ["rare"]


def test_fuse_keeps_the_head_and_lifts_rows_high_in_both_orders() -> None:
    first = [1, 2, 3, 4, 5, 6]
    second = [6, 1, 9]
    out = feedback.fuse(first, second, weight=0.5, k=1.0, head=1)
    assert out[0] == 1 and out.index(6) < out.index(4) and 9 in out and sorted(out) == [1, 2, 3, 4, 5, 6, 9]


def _corpus(db: SessionDB) -> None:
    """One turn recommends a novel by name; a later turn of another session names the novel but
    none of the question's words except the other speaker; nine turns that share more of the
    question's words (and no name) push it to place 11 of BM25's order."""
    db.create_session("old", source="locomo", user_id="c")
    db.append_message("old", "assistant", "Melanie: I finished Becoming Nicole last night, what a story!")
    db.create_session("rec", source="locomo", user_id="c")
    db.append_message("rec", "user", "Caroline: You should read a novel I recommend: Becoming Nicole.")
    for n in range(9):
        db.create_session(f"cafe{n}", source="locomo", user_id="c")
        db.append_message(f"cafe{n}", "user", f"Caroline: Melanie, I recommend the cafe on the corner, day {n}.")
    for n in range(30):
        db.create_session(f"w{n}", source="locomo", user_id="c")
        db.append_message(f"w{n}", "assistant", f"Gina: the weather on day {n} was fine for a walk.")


def _page(db: SessionDB, query: str) -> list[str]:
    return [str((db.get_message(r["id"]) or {}).get("content")) for r in discovery_rows(db, query, user_id="c", limit=10)]


def test_a_turn_sharing_only_a_name_with_the_best_hit_enters_the_first_page(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = SessionDB(tmp_path / "state.db")
    try:
        _corpus(db)
        question = "What novel did Caroline recommend to Melanie?"
        wanted = "Melanie: I finished Becoming Nicole last night, what a story!"
        monkeypatch.setattr(feedback, "FEEDBACK", False)
        before = _page(db, question)
        assert before[0].startswith("Caroline: You should read") and wanted not in before
        monkeypatch.setattr(feedback, "FEEDBACK", True)
        after = _page(db, question)
        assert after[0] == before[0] and wanted in after
        assert len(after) == 10
    finally:
        db.close()


def test_a_one_word_search_is_not_expanded(tmp_path: Path) -> None:
    db = SessionDB(tmp_path / "state.db")
    try:
        _corpus(db)
        rows = _page(db, "novel")
        assert rows == ["Caroline: You should read a novel I recommend: Becoming Nicole."]
    finally:
        db.close()
