"""CJK words written only in tool-call arguments are found on PostgreSQL as on SQLite.

SQLite's CJK side table holds the decoded tool-call text since layout 4; PostgreSQL's CJK indexes
(``hm_messages_cjk_trgm``, ``hm_messages_cjk_words``) covered content and tool name only until
schema 9, so ``東京タワー`` in a tool call's arguments, written as is or as ``\\u6771...`` escapes,
was never found there. Schema 9 extends them to ``hm_json_text(tool_calls)``; a database at
schema 8 is upgraded on its next open without changing a row."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg

from hermes_memory.sessions.pg import schema
from tests.sessions.engine_parity import found_by_name, found_on_both
from tests.sessions.pg_old_schema import stored_rows, write_at_schema

BACKENDS = ("postgres",)
DERIVED = ("search_vector",)


def _calls(args: dict[str, Any], ensure_ascii: bool) -> list[dict[str, Any]]:
    return [{"id": "c", "type": "function",
             "function": {"name": "web_search", "arguments": json.dumps(args, ensure_ascii=ensure_ascii)}}]


def _write(db: Any) -> dict[str, int]:
    db.create_session("s", started_at=1_700_000_000.0)
    return {
        "plain": db.append_message("s", "assistant", "looking it up", timestamp=1_700_000_001.0,
                                   tool_calls=_calls({"query": "東京タワー 高さ"}, False)),
        "escaped": db.append_message("s", "assistant", None, timestamp=1_700_000_002.0,
                                     tool_calls=_calls({"query": "大阪城 歴史"}, True)),
        "as_text": db.append_message("s", "assistant", None, timestamp=1_700_000_003.0,
                                     tool_calls=json.dumps(_calls({"query": "富士山 Kyotoへ"}, True))),
        "english": db.append_message("s", "user", "the weather in Paris", timestamp=1_700_000_004.0),
    }


QUERIES = {"東京タワー": "plain", "大阪城": "escaped", "歴史": "escaped", "富士山": "as_text",
           "東京タワー 高さ": "plain", "Kyoto": "as_text"}
"""Each query and the message (of :func:`_write`) that holds it only in its tool calls."""


def test_cjk_words_only_in_tool_call_arguments_are_found_on_postgres_as_on_sqlite(pg_url: str, tmp_path: Path) -> None:
    want = {q: [k] for q, k in QUERIES.items()}
    got_lite, got_pg = found_on_both(pg_url, tmp_path / "state.db", _write, QUERIES)
    assert got_lite == want
    assert got_pg == want


def test_schema_9_reaches_a_version_8_database_changes_no_row_and_finds_tool_call_cjk(pg_url: str) -> None:
    from hermes_memory.sessions.pg import PgSessionDB

    ids = write_at_schema(pg_url, 8, _write)  # a database at schema 8, as the previous release left it
    # migration 11 recomputes search_vector of rows whose JSON holds escaped quotes; nothing else
    before, sessions_before = stored_rows(pg_url, "messages", DERIVED), stored_rows(pg_url, "sessions")
    db = PgSessionDB(pg_url)
    try:
        assert db.migration["from_version"] == 8 and db.migration["applied"] == list(range(9, schema.SCHEMA_VERSION + 1)), db.migration
        assert stored_rows(pg_url, "messages", DERIVED) == before
        assert stored_rows(pg_url, "sessions") == sessions_before
        with psycopg.connect(pg_url, autocommit=True) as conn:
            # the migration analysed the table: the new index expressions have statistics
            stats = conn.execute("SELECT count(*) FROM pg_stats WHERE tablename IN "
                                 "('hm_messages_cjk_trgm', 'hm_messages_cjk_words')").fetchone()
            assert stats is not None and stats[0] == 2, stats
        assert found_by_name(db, ids, QUERIES) == {q: [k] for q, k in QUERIES.items()}
    finally:
        db.close()
