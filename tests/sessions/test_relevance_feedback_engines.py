"""Relevance feedback on both engines (the ``db`` fixture: SQLite and PostgreSQL): the names in
the best hits search again (hermes_memory.sessions.feedback; SQLite reads in feedback_sql,
PostgreSQL's in pg/feedback_pg), so a turn sharing only a name with the best match rises onto
the first page, and a turn sharing no word of the question but that name joins the results."""

from __future__ import annotations

from typing import Any

import pytest

from hermes_memory.sessions import feedback
from hermes_memory.sessions.search import discovery_rows
from tests.sessions.test_relevance_feedback import _corpus

QUESTION = "What novel did Caroline recommend to Melanie?"


def _page(db: Any, query: str, limit: int = 10) -> list[str]:
    return [str((db.get_message(r["id"]) or {}).get("content"))
            for r in discovery_rows(db, query, user_id="c", limit=limit)]


def test_a_turn_sharing_only_a_name_with_the_best_hit_enters_the_first_page_on_either_engine(
        db: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _corpus(db)
    wanted = "Melanie: I finished Becoming Nicole last night, what a story!"
    monkeypatch.setattr(feedback, "FEEDBACK", False)
    before = _page(db, QUESTION)
    assert before[0].startswith("Caroline: You should read") and wanted not in before
    monkeypatch.setattr(feedback, "FEEDBACK", True)
    after = _page(db, QUESTION)
    assert after[0] == before[0] and wanted in after
    assert len(after) == 10


def test_a_turn_sharing_no_query_word_but_the_name_joins_the_results_on_either_engine(
        db: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _corpus(db)
    db.create_session("shelf", source="locomo", user_id="c")
    named = "Gina: Becoming Nicole was still on the shelf at the station."
    db.append_message("shelf", "user", named)
    monkeypatch.setattr(feedback, "FEEDBACK", False)
    assert named not in _page(db, QUESTION, limit=30)
    monkeypatch.setattr(feedback, "FEEDBACK", True)
    after = _page(db, QUESTION, limit=30)
    assert named in after and after[0].startswith("Caroline: You should read")
