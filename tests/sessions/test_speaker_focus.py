"""The named speaker's turns on the first page (hermes_memory.sessions.speaker_focus): a question
about what a person did over several sessions gets each of their turns, not the other speaker's
near misses; pure rules, and on both engines (``db`` runs a test on SQLite and PostgreSQL)."""

from __future__ import annotations

import logging
import sqlite3
from typing import Any

import pytest

from hermes_memory.sessions import speaker_focus, speaker_focus_sql
from hermes_memory.sessions.search import discovery_rows

QUESTION = "What types of yoga has Maria practiced?"


def _yoga_chat(db: Any) -> None:
    """Maria tells of aerial yoga in one session and kundalini yoga in another; in twelve more
    sessions John tells Maria about his own yoga class in the question's very words (types,
    practiced), so his turns outrank both of hers on BM25, speaker bonus and all."""
    db.create_session("other", source="locomo")
    for n in range(60):
        db.append_message("other", "user" if n % 2 else "assistant",
                          f"{'John' if n % 2 else 'Maria'}: the weather on day {n} was fine for a walk.")
    db.create_session("s-aerial", source="locomo")
    db.append_message("s-aerial", "user", "John: How was your week?")
    db.append_message("s-aerial", "assistant", "Maria: Busy! I just started aerial yoga, it is great.")
    for n in range(12):
        db.create_session(f"s-john{n}", source="locomo")
        db.append_message(f"s-john{n}", "assistant", f"Maria: Hi John, what did you do on day {n}?")
        db.append_message(f"s-john{n}", "user", f"John: Maria, I went to my yoga class again on day {n}, the"
                          " types of poses we practiced were new.")
    db.create_session("s-kundalini", source="locomo")
    db.append_message("s-kundalini", "user", "John: Any news?")
    db.append_message("s-kundalini", "assistant", "Maria: I am trying kundalini yoga these days.")


def _first_page(db: Any, query: str) -> list[str]:
    return [str(db.get_message(r["id"])["content"]) for r in discovery_rows(db, query, limit=10)]


def _place(page: list[str], words: str) -> int | None:
    return next((n for n, text in enumerate(page) if words in text), None)


def test_a_two_part_question_over_two_sessions_gets_both_of_the_speakers_turns_in_the_top_10(
        db: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _yoga_chat(db)
    page = _first_page(db, QUESTION)
    assert _place(page, "aerial yoga") is not None and _place(page, "kundalini yoga") is not None, page
    assert page[0].startswith("John: Maria, I went to my yoga class"), "the best BM25 match keeps the top"
    # without both rules (the search before them) neither of Maria's turns is on the page
    monkeypatch.setattr(speaker_focus, "SPOKEN_PASS", False)
    monkeypatch.setattr(speaker_focus, "TAIL_START", 99)
    before = _first_page(db, QUESTION)
    assert _place(before, "aerial yoga") is None and _place(before, "kundalini yoga") is None, before


@pytest.mark.parametrize("rule", ["SPOKEN_PASS", "TAIL_START"])
def test_each_rule_alone_still_brings_the_speakers_turns(db: Any, monkeypatch: pytest.MonkeyPatch,
                                                         rule: str) -> None:
    _yoga_chat(db)
    monkeypatch.setattr(speaker_focus, rule, False if rule == "SPOKEN_PASS" else 99)
    page = _first_page(db, QUESTION)
    assert _place(page, "aerial yoga") is not None and _place(page, "kundalini yoga") is not None, page


def test_a_database_error_in_the_speaker_rules_leaves_the_search_as_without_them(
        sqlite_db: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    _yoga_chat(sqlite_db)

    def broken(conn: Any, texts: Any) -> speaker_focus.Starts:
        def read(ids: list[int]) -> list[tuple[Any, Any]]:
            raise sqlite3.OperationalError("disk I/O error")
        return read

    monkeypatch.setattr(speaker_focus_sql, "starts", broken)
    with caplog.at_level(logging.WARNING, logger="hermes_memory.sessions.db"):
        page = [r["id"] for r in discovery_rows(sqlite_db, QUESTION, limit=10)]
    assert "speaker pass unavailable" in caplog.text and "speaker tail unavailable" in caplog.text
    monkeypatch.setattr(speaker_focus, "SPOKEN_PASS", False)
    monkeypatch.setattr(speaker_focus, "TAIL_START", 99)
    assert page == [r["id"] for r in discovery_rows(sqlite_db, QUESTION, limit=10)]


def test_untagged_histories_rank_exactly_as_without_the_rules(db: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    db.create_session("a", source="cli")
    for n in range(30):
        db.append_message("a", "user" if n % 2 else "assistant",
                                 f"Maria said the deploy {n} failed on the staging yoga box" if n % 3 else
                                 f"ask Maria about deploy key {n}")
    queries = ["what did Maria say about the deploy?", "deploy key staging", "yoga box failed"]
    with_rules = [[r["id"] for r in discovery_rows(db, q, limit=20)] for q in queries]
    assert all(with_rules)
    monkeypatch.setattr(speaker_focus, "SPOKEN_PASS", False)
    monkeypatch.setattr(speaker_focus, "TAIL_START", 99)
    assert with_rules == [[r["id"] for r in discovery_rows(db, q, limit=20)] for q in queries]


def test_spoken_tail_fills_the_last_places_with_the_speakers_rows_and_keeps_the_head() -> None:
    order = list(range(1, 21))
    spoken = {9, 13, 15, 18}  # 18 is past the window (places 6-15 hold ids 7-16)
    out = speaker_focus.spoken_tail(order, spoken, page=10)
    assert out[:6] == [1, 2, 3, 4, 5, 6]
    assert out[6:10] == [9, 13, 15, 7]  # the speaker's rows first, then the best passed over
    assert out[10:] == [8, 10, 11, 12, 14, 16, 17, 18, 19, 20]  # passed over right after the page, in order
    assert sorted(out) == order


@pytest.mark.parametrize(("order", "spoken"), [
    (list(range(1, 21)), set()),  # nobody the query names
    (list(range(1, 21)), {1, 2, 3, 20}),  # their rows already in the head, or past the window
    ([1, 2, 3, 4, 5], {4}),  # an order no longer than the untouched head
])
def test_spoken_tail_leaves_an_order_alone_when_it_has_nothing_to_move(order: list[int], spoken: set[int]) -> None:
    assert speaker_focus.spoken_tail(order, spoken, page=10) == order


def test_fuse_spoken_keeps_the_head_and_every_row_once() -> None:
    order = [10, 11, 12, 13, 14, 15]
    assert speaker_focus.fuse_spoken(order, []) == order
    out = speaker_focus.fuse_spoken(order, [15, 99])
    assert out[: speaker_focus.SPOKEN_HEAD] == order[: speaker_focus.SPOKEN_HEAD]
    assert sorted(out) == sorted([*order, 99])
    assert out.index(15) < order.index(15)  # found by both orders: it rises
    assert out[-1] == 99  # found only by the speaker's order: it joins after the search's rows


def test_the_speakers_pass_is_off_under_semantic_fusion_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    assert speaker_focus.pass_active(False) and not speaker_focus.pass_active(True)
    monkeypatch.setattr(speaker_focus, "SPOKEN_WITH_EMBEDDINGS", True)
    assert speaker_focus.pass_active(True)
    monkeypatch.setattr(speaker_focus, "SPOKEN_PASS", False)
    assert not speaker_focus.pass_active(False)
