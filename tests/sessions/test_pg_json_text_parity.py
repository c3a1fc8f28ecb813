"""The JSON that PostgreSQL's ``hm_json_text`` (schema 12) decodes for search as SQLite's
:func:`hermes_memory.sessions.jsontext.decoded` does: a bare JSON string behind the ``\\x1ejson:``
prefix, JSON nested in a JSON string (content and tool calls, a newline two levels down), duplicate
keys. The same rows are written to both engines and the same queries find the same rows; then a
database at schema 11 holding them reaches schema 12 with no stored value changed and finds them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hermes_memory.sessions.codec import JSON_CONTENT_PREFIX
from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.pg import schema
from tests.sessions.pg_old_schema import stored_rows, write_at_schema

BACKENDS = ("postgres",)


def _write(db: Any) -> dict[str, int]:
    db.create_session("s", started_at=1_700_000_000.0)
    twice = json.dumps({"command": "echo first\nplatypus"})  # arguments as the reference escapes them
    calls = json.dumps([{"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": twice}}])
    return {
        # a caller's text already starting with our prefix: a JSON string (decode_content reads "naïve Müller 東京タワー")
        "string": db.append_message("s", "user", JSON_CONTENT_PREFIX + json.dumps("naïve Müller 東京タワー"),
                                    timestamp=1_700_000_001.0),
        # JSON nested in that string: list content escaped twice (an import that dumped it once more)
        "nested": db.append_message("s", "user", JSON_CONTENT_PREFIX + json.dumps(json.dumps(
            [{"type": "text", "text": "first\nnarwhal caf\u00e9"}])), timestamp=1_700_000_002.0),
        "calls": db.append_message("s", "assistant", "", tool_calls=calls, timestamp=1_700_000_003.0),
        # a tool's JSON output with a key twice: SQLite's json_tree reads both values
        "twice": db.append_message("s", "tool", '{"note": "quokka caf\\u00e9", "note": "x"}', tool_name="terminal",
                                   tool_call_id="c1", timestamp=1_700_000_004.0),
        "plain": db.append_message("s", "user", "the weather in Paris", timestamp=1_700_000_005.0),
    }


QUERIES = {"naïve": ["string"], "Müller": ["string"], "東京タワー": ["string"], "narwhal": ["nested"],
           "café": ["nested", "twice"], "platypus": ["calls"], "quokka": ["twice"], "Paris": ["plain"]}
"""Each query and the messages (of :func:`_write`) that hold it, as SQLite finds them."""


def _found(db: Any, ids: dict[str, int]) -> dict[str, list[str]]:
    names = {v: k for k, v in ids.items()}
    return {q: sorted(names[r["id"]] for r in db.search_messages(q, limit=50, raise_errors=True)) for q in QUERIES}


def test_json_strings_nested_json_and_duplicate_keys_are_found_on_postgres_as_on_sqlite(
    pg_url: str, tmp_path: Path
) -> None:
    from hermes_memory.sessions.pg import PgSessionDB

    lite = SessionDB(tmp_path / "state.db")
    pg = PgSessionDB(pg_url)
    try:
        got_lite, got_pg = _found(lite, _write(lite)), _found(pg, _write(pg))
        assert got_lite == QUERIES
        assert got_pg == got_lite
    finally:
        lite.close()
        pg.close()


def test_schema_12_reaches_a_version_11_database_changes_no_stored_value_and_finds_them(pg_url: str) -> None:
    from hermes_memory.sessions.pg import PgSessionDB

    ids = write_at_schema(pg_url, 11, _write)

    def stored() -> list[dict[str, Any]]:  # search_vector: recomputed for the rows holding a backslash, nothing else
        return stored_rows(pg_url, "messages", ("search_vector",))

    before, sessions_before = stored(), stored_rows(pg_url, "sessions")
    db = PgSessionDB(pg_url)
    try:
        assert db.migration["from_version"] == 11 and db.migration["applied"] == list(range(12, schema.SCHEMA_VERSION + 1))
        assert db.migration["json_text_recomputed"] == 4  # every row but "plain"
        assert stored() == before
        assert stored_rows(pg_url, "sessions") == sessions_before
        assert _found(db, ids) == QUERIES
    finally:
        db.close()
