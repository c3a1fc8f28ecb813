"""Each turn indexed with the previous turn's text (SQLite layout 3, PostgreSQL schema 3): a
question whose words are split across two turns finds the turn that answers it; one-word lookups,
query syntax and time-ordered listings still match only a row's own text; deleted or moved turns
leave their neighbours' context. Both engines (``db``), real SQLite files and a real PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest

from hermes_memory.sessions.pg import context_schema, schema
from tests.helpers.values import present
from tests.sessions.backend_sql import is_postgres, sql


def _chat(db: Any) -> dict[str, int]:
    db.create_session("weather")
    db.create_session("tides")
    for i in range(12):  # each word alone is common; next to each other only in the quiz
        db.append_message("weather", "user" if i % 2 else "assistant", f"Caroline talked about the weather, day {i}")
        db.append_message("tides", "user" if i % 2 else "assistant", f"Some research on tides, note {i}")
    db.create_session("quiz")
    ids = {"question": db.append_message("quiz", "user", "What did Caroline research last spring?", timestamp=100.0)}
    ids["answer"] = db.append_message("quiz", "assistant", "Adoption agencies, mostly in Ohio.", timestamp=101.0)
    ids["later"] = db.append_message("quiz", "user", "Thanks, that helps a lot.", timestamp=102.0)
    return ids


def _ids(db: Any, query: str, **kw: Any) -> list[int]:
    return [r["id"] for r in db.search_messages(query, limit=30, raise_errors=True, **kw)]


def test_a_question_split_across_two_turns_finds_the_answer_turn(db: Any) -> None:
    ids = _chat(db)
    got = _ids(db, "What did Caroline research?")
    # the answer holds none of the words (before layout 3 it was not found at all); with the
    # rerank's question/answer rule (ranking.ANSWER_SHARE) the answer comes first, then the question
    assert got[:2] == [ids["answer"], ids["question"]], got
    assert ids["later"] not in got  # two turns on: not its neighbour


def test_lookups_syntax_and_time_order_match_only_a_rows_own_text(db: Any) -> None:
    ids = _chat(db)
    assert _ids(db, "adoption") == [ids["answer"]]  # one word: not the turn after it
    assert ids["answer"] not in _ids(db, "Caroline research", sort="newest")
    assert ids["answer"] not in _ids(db, "Caroline OR research", query_syntax=True)
    assert ids["answer"] not in _ids(db, '"caroline research"')


def test_a_deleted_turn_leaves_the_context_of_the_turn_after_it(db: Any) -> None:
    ids = _chat(db)
    db.delete_message(ids["question"]) if hasattr(db, "delete_message") else _delete(db, ids["question"])
    got = _ids(db, "What did Caroline research?")
    assert ids["answer"] not in got, got  # the deleted question's words are gone from the index
    assert ids["later"] not in got


def _delete(db: Any, message_id: int) -> None:
    mark = "%s" if is_postgres(db) else "?"
    if is_postgres(db):
        sql(db, f"DELETE FROM messages WHERE id = {mark}", (message_id,))
    else:
        db._execute_write(lambda c: c.execute("DELETE FROM messages WHERE id = ?", (message_id,)))


def test_a_turn_inserted_before_a_later_one_becomes_its_previous_turn(db: Any) -> None:
    ids = _chat(db)
    between = db.append_message("quiz", "user", "Tell me about the walrus exhibit.", timestamp=101.5)
    got = _ids(db, "walrus exhibit thanks")
    assert got[:2] == [ids["later"], between] or got[:2] == [between, ids["later"]], got
    assert ids["answer"] not in _ids(db, "walrus exhibit")  # the earlier turn is not indexed with it


@pytest.mark.backends("postgres")
def test_rows_written_before_schema_3_get_their_context_in_bounded_resumable_batches(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import psycopg

    from hermes_memory.sessions.pg import PgSessionDB

    with monkeypatch.context() as m:  # a database at schema 2, as the previous release left it
        m.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:2])
        m.setattr(schema, "SCHEMA_VERSION", 2)
        old = PgSessionDB(pg_url)
        ids = _chat(old)
        old.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        schema.migrate(conn)  # migration 3 alone: the column and triggers, no row filled yet
        assert present(conn.execute("SELECT count(*) FROM messages WHERE hm_context IS NOT NULL").fetchone())[0] == 0
        monkeypatch.setattr(context_schema, "BACKFILL_CHUNK", 10)
        first = context_schema.backfill_step(conn)  # then the process stops (killed) after one batch
        assert first == {"filled": 10, "pending": True}
        assert present(conn.execute("SELECT value FROM hm_meta WHERE key = 'context_next_id'").fetchone())[0] != "0"
    db = PgSessionDB(pg_url)  # the next open resumes and finishes
    try:
        assert db.migration["context_backfilled"] == 27 - 10
        assert sql(db, "SELECT count(*) FROM hm_meta WHERE key LIKE 'context%%'") == [(0,)]  # the backfill's marks
        # every turn but the first of each of the three sessions
        assert sql(db, "SELECT count(*) FROM messages WHERE hm_context IS NOT NULL") == [(24,)]
        got = _ids(db, "What did Caroline research?")
        assert ids["answer"] in got[:3], got
    finally:
        db.close()
