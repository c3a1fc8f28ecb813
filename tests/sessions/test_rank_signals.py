"""Dates named by a query and question turns answered by the next turn: the rank signals of
message search (hermes_memory.sessions.signals, folded in by ranking.rerank), pure and on both
engines (``db`` runs each test on SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from hermes_memory.sessions import ranking, signals
from hermes_memory.sessions.search import discovery_rows


def _ts(y: int, m: int, d: int) -> float:
    return datetime(y, m, d, 12, tzinfo=UTC).timestamp()


def test_date_hint_reads_days_months_and_years() -> None:
    day = signals.date_hint("What did Maria donate on 3 June, 2023?")
    assert day.matches(_ts(2023, 6, 3)) and day.matches(_ts(2023, 6, 9))  # up to a week after
    assert not day.matches(_ts(2023, 6, 2)) and not day.matches(_ts(2023, 6, 12))
    assert signals.date_hint("on June 3rd, 2023").matches(_ts(2023, 6, 3))
    month = signals.date_hint("what happened in August 2023")
    assert month.matches(_ts(2023, 8, 20)) and not month.matches(_ts(2023, 7, 20))
    assert not month.matches(_ts(2022, 8, 20))
    bare = signals.date_hint("When did Melanie go camping in June?")
    assert bare.months == (6,) and bare.matches(_ts(2021, 6, 27)) and bare.matches(_ts(2023, 7, 2))
    assert not bare.matches(_ts(2023, 5, 1))
    assert signals.date_hint("trips in 2022").matches(_ts(2022, 11, 1))
    december = signals.date_hint("in December")
    assert december.matches(_ts(2024, 1, 3))  # the window of December 2023 ends in January


@pytest.mark.parametrize("query", ["", "no dates here", "may I ask about the deploy", "31 February, 2023",
                                   "99 May 2023", "May 99999", "記憶 2023年6月", "\x00\ud800 June 1, 2023",
                                   "()[]{}*^\"'", "June " * 500])
def test_date_hint_never_raises_and_ignores_what_is_not_a_date(query: str) -> None:
    hint = signals.date_hint(query)
    assert isinstance(hint, signals.DateHint)
    if query in ("", "no dates here", "may I ask about the deploy", "31 February, 2023"):
        assert not hint
    assert not signals.DateHint().matches(_ts(2023, 1, 1))
    assert not hint.matches(None)


def test_is_question_ignores_trailing_notes() -> None:
    assert signals.is_question("What are their names?")
    assert signals.is_question("Do you have pets? [shares a photo: a cat]")
    assert signals.is_question("你叫什么名字？")
    assert not signals.is_question("Luna and Oliver!")
    assert not signals.is_question("Is it? No, it is not.")
    assert not signals.is_question(None) and not signals.is_question(["a?"])


def test_apply_signals_moves_a_question_turns_score_to_its_answer() -> None:
    sig = signals.RankSignals(answers={1: (2, "a")})
    hits, sess = ranking.apply_signals({1: -10.0, 5: -6.0}, {1: "a", 5: "b"}, sig)
    assert hits[1] == pytest.approx(-10.0 * ranking.QUESTION_KEEP)
    assert hits[2] == pytest.approx(-10.0 * ranking.ANSWER_SHARE) and sess[2] == "a"
    assert hits[5] == -6.0


def test_apply_signals_without_signals_changes_nothing() -> None:
    hits = {1: -3.0, 2: -1.0}
    assert ranking.apply_signals(hits, {1: "a", 2: "a"}, None) == (hits, {1: "a", 2: "a"})
    assert ranking.rerank(hits, {1: "a", 2: "a"}) == ranking.rerank(hits, {1: "a", 2: "a"}, signals.RankSignals())


def test_rerank_lifts_rows_of_sessions_in_the_named_dates(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ranking, "BM25_HEAD", 0)
    sig = signals.RankSignals(dates=signals.date_hint("in March 2024"), session_start={1: _ts(2024, 1, 5),
                                                                                       9: _ts(2024, 3, 8)})
    assert ranking.rerank({1: -5.0, 9: -4.0}, {1: "jan", 9: "mar"}) == [1, 9]
    assert ranking.rerank({1: -5.0, 9: -4.0}, {1: "jan", 9: "mar"}, sig) == [9, 1]


def _pets(db: Any) -> None:
    db.create_session("pets", source="cli", started_at=_ts(2023, 5, 8))
    db.append_message("pets", "user", "We adopted two kittens last weekend.")
    db.append_message("pets", "assistant", "Lovely! What are the pets' names?")
    db.append_message("pets", "user", "Luna and Oliver, both tabbies.")
    db.create_session("other", source="cli", started_at=_ts(2023, 6, 1))
    for i in range(6):
        db.append_message("other", "user", f"My neighbour's pets are noisy again, day {i}.")


def test_the_answer_to_a_matching_question_is_found_though_it_shares_no_word(db: Any) -> None:
    _pets(db)
    rows = discovery_rows(db, "What are the names of my pets?", limit=10)
    contents = [db.get_message(r["id"])["content"] for r in rows]
    assert "Luna and Oliver, both tabbies." in contents[:3], contents
    answer = next(r for r in rows if db.get_message(r["id"])["content"].startswith("Luna"))
    # on an index of each turn's own text it matched no word and came in as the question's answer
    # (rank None); with the previous turn indexed too (layout 3) it also matches on its own
    assert answer["session_id"] == "pets"


def test_an_answer_outside_the_role_filter_is_not_added(db: Any) -> None:
    _pets(db)
    rows = db.search_messages("What are the names of my pets?", role_filter=["assistant"], limit=10)
    assert all(r["role"] == "assistant" for r in rows) and rows


def test_a_named_date_brings_that_sessions_rows_first(db: Any) -> None:
    db.create_session("may", source="cli", started_at=_ts(2023, 5, 3))
    db.append_message("may", "user", "Had dinner with my mother at the harbour.")
    db.create_session("july", source="cli", started_at=_ts(2023, 7, 9))
    db.append_message("july", "user", "Dinner with my mother and my aunt, the mother of all dinners.")
    assert discovery_rows(db, "dinner with my mother", limit=5)[0]["session_id"] == "july"
    assert discovery_rows(db, "Who did I have dinner with on May 3, 2023?", limit=5)[0]["session_id"] == "may"
    assert discovery_rows(db, "dinner in May 2023", limit=5)[0]["session_id"] == "may"


@pytest.mark.parametrize("query", ['"unbalanced', "NOT AND OR", "pets?)(*", "июнь 2023 ???", "记忆断裂 June 2023?",
                                   "\x00?", "? ? ?", "May 99, 2023 pets"])
def test_malformed_queries_never_raise_with_the_signals(db: Any, query: str) -> None:
    _pets(db)
    db.create_session("zh", source="cli")
    db.append_message("zh", "user", "我们讨论了记忆断裂的问题吗？")
    db.append_message("zh", "assistant", "是的，记忆断裂在上周修好了。")
    assert isinstance(db.search_messages(query, limit=10, raise_errors=True), list)


def test_cjk_questions_still_find_their_rows(db: Any) -> None:
    db.create_session("zh", source="cli")
    db.append_message("zh", "user", "我们讨论了记忆断裂的问题吗？")
    db.append_message("zh", "assistant", "是的，上周修好了。")
    rows = db.search_messages("记忆断裂", limit=10, raise_errors=True)
    assert [r["session_id"] for r in rows][:1] == ["zh"]


def test_operator_queries_get_no_answers_added(db: Any) -> None:
    _pets(db)
    rows = db.search_messages("names OR pets", query_syntax=True, limit=20, raise_errors=True)
    contents = [db.get_message(r["id"])["content"] for r in rows]
    assert "Lovely! What are the pets' names?" in contents
    assert "Luna and Oliver, both tabbies." not in contents  # holds neither word


def test_phrases_and_one_word_lookups_get_no_answers_added(db: Any) -> None:
    _pets(db)
    for q in ('"pets\' names"', "names"):
        contents = [db.get_message(r["id"])["content"] for r in db.search_messages(q, limit=20, raise_errors=True)]
        assert "Lovely! What are the pets' names?" in contents, q
        assert "Luna and Oliver, both tabbies." not in contents, q
