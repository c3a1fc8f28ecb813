"""The pure ranking rules of message search (hermes_memory.sessions.ranking)."""

from __future__ import annotations

import math

import pytest

from hermes_memory.sessions import ranking


def test_choose_terms_keeps_everything_that_fits_the_budget() -> None:
    assert ranking.choose_terms([10, 20, 30], budget=60) == ([0, 1, 2], [], 60)


def test_choose_terms_drops_the_most_frequent_terms_first() -> None:
    kept, dropped, total = ranking.choose_terms([900, 5, 400, 50], budget=500)
    assert kept == [1, 2, 3]  # query order
    assert dropped == [0]
    assert total == 455


def test_choose_terms_always_keeps_the_rarest_term() -> None:
    kept, dropped, total = ranking.choose_terms([7000, 9000], budget=100)
    assert kept == [0] and dropped == [1] and total == 7000


def test_window_start_only_when_postings_exceed_the_window() -> None:
    assert ranking.window_start(1000, 400, window=500) is None
    assert ranking.window_start(1000, 2000, window=500) == 750


def test_bm25_idf_matches_fts5_formula_and_floor() -> None:
    assert ranking.bm25_idf(1000, 10) == pytest.approx(math.log(990.5 / 10.5))
    assert ranking.bm25_idf(10, 10) == 1e-6


def test_rerank_lifts_a_row_next_to_a_strong_match_in_its_session() -> None:
    # 2 is weaker than 9 on its own, but sits next to the strong row 1 of the same session
    hits = {1: -10.0, 2: -3.0, 9: -3.5}
    sessions = {1: "a", 2: "a", 9: "b"}
    assert ranking.rerank(hits, sessions) == [1, 2, 9]


def test_rerank_neighbours_across_sessions_do_not_count() -> None:
    hits = {1: -10.0, 2: -3.0, 9: -3.5}
    sessions = {1: "a", 2: "c", 9: "b"}
    assert ranking.rerank(hits, sessions)[1] == 9


def test_rerank_ties_go_to_the_newer_row() -> None:
    assert ranking.rerank({4: -1.0, 7: -1.0}, {4: "x", 7: "y"}) == [7, 4]
