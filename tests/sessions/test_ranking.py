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


@pytest.fixture
def bonus_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The score bonuses alone: no BM25 head, no reserved session places, the neighbour bonus on
    (0.3, its weight before the index held the previous turn; off by default now)."""
    monkeypatch.setattr(ranking, "NEIGHBOUR_WEIGHT", 0.3)
    monkeypatch.setattr(ranking, "BM25_HEAD", 0)
    monkeypatch.setattr(ranking, "NEW_SESSION_SLOTS", 0)


@pytest.mark.usefixtures("bonus_only")
def test_rerank_lifts_a_row_next_to_a_strong_match_in_its_session() -> None:
    # 2 is weaker than 9 on its own, but sits next to the strong row 1 of the same session
    hits = {1: -10.0, 2: -3.0, 9: -3.5}
    sessions = {1: "a", 2: "a", 9: "b"}
    assert ranking.rerank(hits, sessions) == [1, 2, 9]


@pytest.mark.usefixtures("bonus_only")
def test_rerank_neighbours_across_sessions_do_not_count() -> None:
    hits = {1: -10.0, 2: -3.0, 9: -3.5}
    sessions = {1: "a", 2: "c", 9: "b"}
    assert ranking.rerank(hits, sessions)[1] == 9


def test_rerank_ties_go_to_the_newer_row() -> None:
    assert ranking.rerank({4: -1.0, 7: -1.0}, {4: "x", 7: "y"}) == [7, 4]


def test_rerank_keeps_the_best_bm25_rows_on_top(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ranking, "BM25_HEAD", 1)
    monkeypatch.setattr(ranking, "NEW_SESSION_SLOTS", 0)
    # session a holds many matches, so its weaker rows outscore the single best match in b
    hits = {1: -5.0, 2: -5.0, 3: -5.0, 9: -6.0}
    sessions = {1: "a", 2: "a", 3: "a", 9: "b"}
    order = ranking.rerank(hits, sessions)
    assert order[0] == 9
    assert sorted(order) == [1, 2, 3, 9]


def test_session_slots_give_the_page_end_to_unseen_sessions() -> None:
    order = [1, 2, 3, 4, 5, 6]
    group = {1: "a", 2: "a", 3: "a", 4: "a", 5: "b", 6: "c"}
    assert ranking.session_slots(order, group, page=4, slots=2) == [1, 2, 5, 6, 3, 4]


def test_session_slots_fall_back_to_order_when_no_session_is_unseen() -> None:
    order = [1, 2, 3, 4]
    group = {1: "a", 2: "b", 3: "a", 4: "b"}
    assert ranking.session_slots(order, group, page=3, slots=2) == [1, 2, 3, 4]


def test_rerank_returns_every_candidate_once() -> None:
    hits = {i: -float(i % 7) - 1 for i in range(40)}
    sessions = {i: f"s{i // 5}" for i in range(40)}
    order = ranking.rerank(hits, sessions)
    assert sorted(order) == list(range(40))


@pytest.mark.usefixtures("bonus_only")
def test_rerank_session_bonus_follows_its_best_row_not_its_row_count() -> None:
    # session a: six weak matches; session b: one strong match and one slightly weaker row than a's
    hits = {10 * k: -2.0 for k in range(1, 7)} | {100: -5.0, 102: -1.9}
    sessions = {10 * k: "a" for k in range(1, 7)} | {100: "b", 102: "b"}
    order = ranking.rerank(hits, sessions)
    assert order[:2] == [100, 102]
