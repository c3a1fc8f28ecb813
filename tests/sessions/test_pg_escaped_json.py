"""PostgreSQL stores tool calls as it is given them: arguments the reference's loop re-serialised
(``json.dumps(args)``) keep their ``\\u00eb`` escapes inside the JSON, and tool calls handed over as
JSON text (an import, another program) keep all of theirs. Schema version 8 indexes that text
decoded (``hm_json_text``), so every word is found as on SQLite (layout 4); a database at
version 5 is migrated on its next open, its rows re-indexed (CJK in tool calls: schema 9,
tests/sessions/test_pg_cjk_tool_calls.py)."""

from __future__ import annotations

import json
from typing import Any

import psycopg

from hermes_memory.sessions.pg import schema
from tests.helpers.values import present
from tests.sessions.pg_old_schema import write_at_schema

BACKENDS = ("postgres",)


def _calls(args: dict[str, Any], ensure_ascii: bool) -> list[dict[str, Any]]:
    return [{"id": "c", "type": "function",
             "function": {"name": "memory", "arguments": json.dumps(args, ensure_ascii=ensure_ascii)}}]


def _write(db: Any) -> dict[str, int]:
    db.create_session("s")
    return {
        "once": db.append_message("s", "assistant", "saving", tool_calls=_calls({"content": "café crème"}, False)),
        "twice": db.append_message("s", "assistant", None, tool_calls=_calls({"content": "naïve Zoë"}, True)),
        "text": db.append_message("s", "assistant", None, tool_calls=json.dumps(_calls({"content": "Müller"}, True))),
        "output": db.append_message("s", "tool", json.dumps({"success": True, "message": "Ångström done"}),
                                    tool_name="memory"),
        "odd": db.append_message("s", "assistant", None, tool_calls='{"a": "\\ud800 half quokka", "b": "\\u0000"}'),
        "path": db.append_message("s", "assistant", "C:\\Users\\wombat [not json", tool_calls="[broken \\u00e9"),
    }


WANT = {"café": "once", "naïve": "twice", "Zoë": "twice", "Müller": "text", "Ångström": "output",
        "quokka": "odd", "wombat": "path", "crème": "once"}


def _found(db: Any, ids: dict[str, int]) -> dict[str, bool]:
    return {q: ids[k] in {r["id"] for r in db.search_messages(q, raise_errors=True)} for q, k in WANT.items()}


def test_escaped_tool_call_json_is_found_by_every_word_on_postgres(pg_url: str) -> None:
    from hermes_memory.sessions.pg import PgSessionDB

    db = PgSessionDB(pg_url)
    try:
        ids = _write(db)
        assert _found(db, ids) == dict.fromkeys(WANT, True)
        assert present(db.get_message(ids["text"]))["tool_calls"] == _calls({"content": "Müller"}, True)  # as given
    finally:
        db.close()


def test_a_version5_database_is_migrated_and_its_rows_found_decoded(pg_url: str) -> None:
    from hermes_memory.sessions.pg import PgSessionDB

    ids = write_at_schema(pg_url, 5, _write)
    rows = "SELECT id, session_id, role, content, tool_calls, tool_name, timestamp FROM messages ORDER BY id"
    # read from version 5's vector itself: today's search statements need today's schema (hm_json_text)
    indexed = "SELECT count(*) FROM messages WHERE search_vector @@ plainto_tsquery('hm_search', %s)"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        stored = conn.execute(rows).fetchall()
        before = {w: present(conn.execute(indexed, (w,)).fetchone())[0] for w in ("naïve", "Müller", "café")}
    assert before == {"naïve": 0, "Müller": 0, "café": 1}, before  # version 5 indexed the escapes as stored
    db = PgSessionDB(pg_url)
    try:
        assert db.migration["applied"] == list(range(6, schema.SCHEMA_VERSION + 1)), db.migration
        assert _found(db, ids) == dict.fromkeys(WANT, True)
        with psycopg.connect(pg_url, autocommit=True) as conn:  # no stored value changed
            assert conn.execute(rows).fetchall() == stored
    finally:
        db.close()
