"""Speaker-aware ranking: a turn that starts with the ``Name:`` tag of the person a query names
rises over turns that only mention them (hermes_memory.sessions.speakers, ranking.SPEAKER_WEIGHT),
pure and on both engines (``db`` runs each test on SQLite and PostgreSQL)."""

from __future__ import annotations

from typing import Any

import pytest

from hermes_memory.sessions import ranking, signals, speakers
from hermes_memory.sessions.search import discovery_rows


@pytest.mark.parametrize(("text", "tag"), [
    ("Melanie: We love painting together", {"melanie"}),
    ("  Jon Smith: hi", {"jon", "smith"}),
    ("Gina's Mom: hey", {"gina", "s", "mom"}),
    ("Zoë: salut", {"zoë"}),
])
def test_speaker_of_reads_a_leading_name_tag(text: str, tag: set[str]) -> None:
    assert speakers.speaker_of(text) == frozenset(tag)


@pytest.mark.parametrize("text", [
    "note: lower-case start", "https://example.org/a: b", "7:40 from terminal 2", "Caroline:no space",
    "Mary Ann Lee Fox: four words", "Hey Jon, about this: a sentence", "Jon  Smith: double space",
    "李明: 你好", "A" * 60 + ": too long", "", None, ["Melanie: in a list"], ":", ": x",
])
def test_speaker_of_turns_down_what_is_not_a_name_tag(text: Any) -> None:
    assert speakers.speaker_of(text) is None


def test_query_names_are_the_informative_words_in_any_case() -> None:
    assert speakers.query_names("What did Caroline's kids like?") >= {"caroline", "kids"}
    assert "what" not in speakers.query_names("What did Caroline's kids like?")
    assert speakers.query_names("what has melanie painted") >= {"melanie"}
    assert speakers.query_names("") == frozenset() and speakers.query_names(None) == frozenset()  # type: ignore[arg-type]


def test_spoken_keeps_the_rows_said_by_a_named_speaker() -> None:
    rows = [(1, "Melanie: I painted a lake"), (2, "Caroline: Thanks, Melanie!"), (3, None),
            (4, "Melanie: another one"), (5, "plain text about Melanie"), (6, "Mel: short name")]
    assert speakers.spoken(frozenset({"melanie", "painted"}), rows) == {1, 4}
    assert speakers.spoken(frozenset(), rows) == set()


def test_apply_signals_multiplies_a_named_speakers_score_before_the_answer_share() -> None:
    sig = signals.RankSignals(answers={1: (2, "a")}, spoken={1, 7})
    hits, _ = ranking.apply_signals({1: -10.0, 5: -6.0, 7: -4.0}, {1: "a", 5: "b", 7: "c"}, sig)
    boosted = -10.0 * (1 + ranking.SPEAKER_WEIGHT)
    assert hits[1] == pytest.approx(boosted * ranking.QUESTION_KEEP)
    assert hits[2] == pytest.approx(boosted * ranking.ANSWER_SHARE)
    assert hits[7] == pytest.approx(-4.0 * (1 + ranking.SPEAKER_WEIGHT)) and hits[5] == -6.0


def _chat(db: Any) -> None:
    """A two-person chat imported with speaker tags: Caroline thanks Melanie for paintings in
    several sessions (each mentions both words), Melanie says once what she painted; other talk
    keeps both words rare (BM25 gives a word in most rows no weight)."""
    db.create_session("other", source="locomo")
    for n in range(40):
        db.append_message("other", "user" if n % 2 else "assistant",
                          f"{'Caroline' if n % 2 else 'Melanie'}: the weather on day {n} was fine for a walk.")
    for n in range(4):
        db.create_session(f"s{n}", source="locomo")
        db.append_message(f"s{n}", "user", f"Caroline: Thanks, Melanie! I painted it, day {n}.")
        db.append_message(f"s{n}", "assistant", f"Melanie: It is lovely, Caroline. Tell me more, day {n}.")
    db.create_session("s9", source="locomo")
    db.append_message("s9", "assistant", "Melanie: Yesterday I finally painted a horse for the kids; it took"
                      " all afternoon.")
    db.append_message("s9", "user", "Caroline: Wow, that sounds great.")


def _first(db: Any, query: str) -> str:
    rows = discovery_rows(db, query, limit=10)
    return str(db.get_message(rows[0]["id"])["content"])


def test_a_question_about_a_person_finds_what_they_said_first(db: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _chat(db)
    query = "What has Melanie painted?"
    assert _first(db, query).startswith("Melanie: Yesterday I finally painted a horse")
    monkeypatch.setattr(ranking, "SPEAKER_WEIGHT", 0.0)  # without the rule a turn thanking her wins
    assert _first(db, query).startswith("Caroline: Thanks, Melanie!")


def test_untagged_histories_rank_exactly_as_without_the_rule(db: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    db.create_session("a", source="cli")
    for text in ("Melanie said the deploy failed", "Ask Melanie about the deploy key", "The deploy is green",
                 "note: deploy at noon", "Error: deploy refused"):
        db.append_message("a", "user", text)
    # "Error:" reads as a tag, but no query names it; "note:" is lower-case, no tag
    queries = ["what did Melanie say about the deploy?", "deploy note", "green deploy at noon"]
    with_rule = [[r["id"] for r in discovery_rows(db, q, limit=10)] for q in queries]
    assert all(with_rule)
    monkeypatch.setattr(ranking, "SPEAKER_WEIGHT", 0.0)
    assert with_rule == [[r["id"] for r in discovery_rows(db, q, limit=10)] for q in queries]
