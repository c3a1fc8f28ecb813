"""The read-only views of the dashboard and the hooks (:mod:`hermes_memory.sessions.browse`), on
SQLite and PostgreSQL: the same answers from both engines, through public methods only."""

from __future__ import annotations

from typing import Any

import pytest

from hermes_memory.sessions.browse import PAGE_COLUMNS, SessionQuery
from tests.sessions.backend_sql import raw_write

DAY = 86400.0
T0 = 1_700_000_000.0  # 2023-11-14 22:13:20 UTC


def _seed(db: Any) -> None:
    db.create_session("a", source="cli", user_id="u1", started_at=T0, title="Shop API 100%")
    db.create_session("b", source="telegram", user_id="u2", started_at=T0 + DAY, parent_session_id="a")
    db.create_session("c", source="cli", started_at=T0 + 2 * DAY, parent_session_id="a",
                      system_prompt="MEMORY (your personal notes) [10% — 220/2,200 chars]\nnote")
    db.append_message("a", "user", "  first\n question  ")
    db.append_message("a", "assistant", "the answer")
    db.append_message("b", "user", [{"type": "text", "text": "json content"}])
    db.update_token_counts("a", input_tokens=100, output_tokens=10, cache_read_tokens=40)
    db.update_token_counts("b", input_tokens=7, output_tokens=3, cache_write_tokens=5)


def test_a_session_page_filters_counts_and_orders_newest_first(db: Any) -> None:
    _seed(db)
    assert db.set_session_cwd("a", "/home/dev/shop/api") is True
    assert db.set_session_cwd("a", "/elsewhere") is True  # the first recorded directory stays
    assert db.set_session_cwd("nope", "/x") is False
    total, rows = db.session_page(SessionQuery(), limit=2)
    assert total == 3 and [r["id"] for r in rows] == ["c", "b"]
    assert set(rows[0]) == set(PAGE_COLUMNS)
    assert db.session_page(SessionQuery(), limit=2, offset=2)[1][0]["id"] == "a"
    assert db.session_page(SessionQuery(source="cli"), limit=10)[0] == 2
    assert db.session_page(SessionQuery(user_id="u2"), limit=10)[1][0]["id"] == "b"
    assert db.session_page(SessionQuery(started_from=T0 + DAY, started_before=T0 + 2 * DAY), limit=10)[0] == 1
    assert db.session_page(SessionQuery(title_contains="api 100%"), limit=10)[0] == 1
    assert db.session_page(SessionQuery(title_contains="1_0"), limit=10)[0] == 0  # '_' is literal
    total, rows = db.session_page(SessionQuery(cwd_prefix="/home/dev/shop"), limit=10)
    assert total == 1 and rows[0]["cwd"] == "/home/dev/shop/api"
    assert db.session_page(SessionQuery(cwd_prefix="/home/dev/sho"), limit=10)[0] == 0


def test_filter_values_previews_and_lineage_views(db: Any) -> None:
    _seed(db)
    db.set_session_cwd("b", "/p")
    assert "cwd" in db.session_columns() and "title" in db.session_columns()
    assert db.distinct_values("source") == ["cli", "telegram"]
    assert db.distinct_values("user_id") == ["u1", "u2"]
    assert db.distinct_values("cwd") == ["/p"]
    with pytest.raises(ValueError):
        db.distinct_values("system_prompt")
    previews = db.first_user_texts(["a", "b", "c"])
    assert previews["a"] == "  first\n question  " and "json content" in previews["b"] and "c" not in previews
    assert db.first_user_texts([]) == {}
    assert set(db.session_summaries(["a", "c", "zz"])) == {"a", "c"}
    assert [c["id"] for c in db.child_sessions("a")] == ["b", "c"]
    page = db.message_page("a", limit=1, offset=1)
    assert [m["content"] for m in page] == ["the answer"]
    assert "search_vector" not in page[0]  # the public columns only, on both engines
    assert db.message_page("b", 10)[0]["content"] == [{"type": "text", "text": "json content"}]


def test_token_sums_per_day_and_source_and_memory_prompts(db: Any) -> None:
    _seed(db)
    rows = {r["id"]: r for r in db.session_tokens_since(T0 + DAY)}
    assert rows["b"] == {"id": "b", "day": "2023-11-15", "input": 7, "cache_read": 0, "output": 3,
                         "started_in_window": True}
    assert rows["c"]["day"] == "2023-11-16" and rows["c"]["input"] == 0
    assert rows["a"]["started_in_window"] is False  # still open, so it may have run in the window
    days = {(r["session_id"], r["day"]): (r["replies"], r["messages"]) for r in db.message_days_since(T0)}
    assert sum(r for r, _m in days.values()) == 1 and sum(m for _r, m in days.values()) == 3
    assert db.token_totals() == {"sessions": 3, "input": 107, "cache_read": 40, "cache_write": 5, "output": 13}
    assert db.sessions_per_source() == [("cli", 2), ("telegram", 1)]
    [row] = db.sessions_with_memory_blocks(10)
    assert row["id"] == "c" and "220/2,200 chars]" in row["system_prompt"]


def test_the_recent_exchange_comes_newest_first_with_content_decoded(db: Any) -> None:
    _seed(db)
    db.append_message("a", "tool", "tool output")
    raw_write(db, "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, NULL, ?)",
              ("a", "assistant", T0))
    assert db.recent_turn_messages("a") == [{"role": "assistant", "content": "the answer"},
                                            {"role": "user", "content": "  first\n question  "}]
    assert db.recent_turn_messages("a", limit=1) == [{"role": "assistant", "content": "the answer"}]
    assert db.recent_turn_messages("b")[0]["content"] == [{"type": "text", "text": "json content"}]
