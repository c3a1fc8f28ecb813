"""Content stored behind the JSON-content prefix (``\\x1ejson:``, list/dict content, or a caller's
text that already starts with it) holding JSON escapes: SQLite strips the prefix and indexes the
decoded text (:func:`hermes_memory.sessions.jsontext.decoded`); PostgreSQL must find the same
rows for the same queries, by word and by CJK word."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hermes_memory.sessions.codec import JSON_CONTENT_PREFIX
from hermes_memory.sessions.pg import schema
from tests.sessions.engine_parity import found_by_name, found_on_both
from tests.sessions.pg_old_schema import stored_rows, write_at_schema

BACKENDS = ("postgres",)


def _write(db: Any) -> dict[str, int]:
    db.create_session("s", started_at=1_700_000_000.0)
    escaped = JSON_CONTENT_PREFIX + json.dumps([{"type": "text", "text": "naïve Müller 東京タワー"}])  # ensure_ascii
    return {
        "prefixed": db.append_message("s", "user", escaped, timestamp=1_700_000_001.0),
        "parts": db.append_message("s", "assistant", [{"type": "text", "text": "first\nwalrus"}],
                                   timestamp=1_700_000_002.0),
        "plain": db.append_message("s", "user", "the weather in Paris", timestamp=1_700_000_003.0),
    }


QUERIES = {"naïve": ["prefixed"], "Müller": ["prefixed"], "東京タワー": ["prefixed"], "walrus": ["parts"],
           "Paris": ["plain"]}
"""Each query and the messages (of :func:`_write`) that hold it."""


def test_prefixed_json_content_with_escapes_is_found_on_postgres_as_on_sqlite(pg_url: str, tmp_path: Path) -> None:
    got_lite, got_pg = found_on_both(pg_url, tmp_path / "state.db", _write, QUERIES)
    assert got_lite == QUERIES
    assert got_pg == got_lite


def test_schema_11_reaches_a_version_10_database_changes_no_stored_value_and_finds_prefixed_content(
    pg_url: str,
) -> None:
    from hermes_memory.sessions.pg import PgSessionDB

    ids = write_at_schema(pg_url, 10, _write)  # a database at schema 10, as the previous release left it

    def stored() -> list[dict[str, Any]]:  # search_vector: recomputed by migration 11, nothing else
        return stored_rows(pg_url, "messages", ("search_vector",))

    before, sessions_before = stored(), stored_rows(pg_url, "sessions")
    db = PgSessionDB(pg_url)
    try:
        assert db.migration["from_version"] == 10 and db.migration["applied"] == list(range(11, schema.SCHEMA_VERSION + 1))
        assert stored() == before
        assert stored_rows(pg_url, "sessions") == sessions_before
        assert found_by_name(db, ids, QUERIES) == QUERIES
    finally:
        db.close()
