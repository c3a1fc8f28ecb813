"""CJK words in message content written as JSON text with escapes are found on PostgreSQL as on SQLite.

SQLite's CJK side table holds the decoded content since layout 4, and PostgreSQL's ``search_vector``
reads ``hm_json_text(content)`` since schema 8, but PostgreSQL's CJK indexes read content as stored
until schema 10, so ``東京タワー`` written as ``\\u6771...`` escapes in JSON content (the reference
agent's multi-part content, an import) was never found there. Schema 10 makes them read
``hm_json_text(content)``; a database at schema 9 is upgraded on its next open without changing a row."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg

from hermes_memory.sessions.pg import schema
from tests.sessions.engine_parity import found_by_name, found_on_both
from tests.sessions.pg_old_schema import stored_rows, write_at_schema

BACKENDS = ("postgres",)


def _parts(text: str) -> str:
    return json.dumps([{"type": "text", "text": text}])  # ensure_ascii: every CJK character a \\u escape


def _write(db: Any) -> dict[str, int]:
    db.create_session("s", started_at=1_700_000_000.0)
    return {
        "escaped": db.append_message("s", "user", _parts("東京タワー 高さ"), timestamp=1_700_000_001.0),
        "glued": db.append_message("s", "assistant", _parts("大阪城はPythonで"), timestamp=1_700_000_002.0),
        "plain": db.append_message("s", "user", "富士山 登山", timestamp=1_700_000_003.0),
        "english": db.append_message("s", "user", "the weather in Paris", timestamp=1_700_000_004.0),
    }


QUERIES = {"東京タワー": ["escaped"], "高さ": ["escaped"], "東京タワー 高さ": ["escaped"], "大阪城": ["glued"],
           "Python": ["glued"], "富士山": ["plain"], "Paris": ["english"]}
"""Each query and the messages (of :func:`_write`) that hold it."""


def test_cjk_words_in_escaped_json_content_are_found_on_postgres_as_on_sqlite(pg_url: str, tmp_path: Path) -> None:
    got_lite, got_pg = found_on_both(pg_url, tmp_path / "state.db", _write, QUERIES)
    assert got_lite == QUERIES
    assert got_pg == got_lite


def test_schema_10_reaches_a_version_9_database_changes_no_row_and_finds_escaped_content_cjk(pg_url: str) -> None:
    from hermes_memory.sessions.pg import PgSessionDB

    ids = write_at_schema(pg_url, 9, _write)  # a database at schema 9, as the previous release left it
    def stored() -> list[dict[str, Any]]:  # search_vector: recomputed on purpose by migration 12 (decoded as SQLite)
        return stored_rows(pg_url, "messages", ("search_vector",))

    before, sessions_before = stored(), stored_rows(pg_url, "sessions")
    db = PgSessionDB(pg_url)
    try:
        assert db.migration["from_version"] == 9 and db.migration["applied"] == list(range(10, schema.SCHEMA_VERSION + 1)), db.migration
        assert stored() == before
        assert stored_rows(pg_url, "sessions") == sessions_before
        with psycopg.connect(pg_url, autocommit=True) as conn:
            # the migration analysed the table: the new index expressions have statistics
            stats = conn.execute("SELECT count(*) FROM pg_stats WHERE tablename IN "
                                 "('hm_messages_cjk_trgm', 'hm_messages_cjk_words')").fetchone()
            assert stats is not None and stats[0] == 2, stats
        assert found_by_name(db, ids, QUERIES) == QUERIES
    finally:
        db.close()
