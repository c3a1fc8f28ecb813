"""A ``state.db`` as hermes-memory left it before layout 4: our layout-3 index (content, tool_name,
tool_calls, before) holding JSON text as stored, escapes and all, its CJK side table of content and
tool name only, and its triggers, written with plain SQL the way that version wrote them, for the
migration tests."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hermes_memory.sessions import hmcontext, hmindex

_BODY = "CASE WHEN {p}.role = 'tool' THEN substr({p}.content, 1, 8192) ELSE {p}.content END"
_CJK = "(coalesce({p}.content, '') || ' ' || coalesce({p}.tool_name, '')) GLOB '" + hmindex.CJK_GLOB + "'"
_CUT = "substr({c}, 1, 1000)"


def _context(p: str) -> str:
    before = hmcontext._neighbour(p, "before", _CUT.format(c="n.content"))
    return f"CASE WHEN {hmcontext.is_turn(p)} THEN {before} END"


def _after_insert(p: str) -> str:
    return (f"UPDATE hm_messages_fts SET before = {_CUT.format(c=p + '.content')} "
            f"WHERE rowid = {hmcontext.neighbour_id(p, 'after')} AND {hmcontext.is_turn(p)};")


def _after_remove(p: str) -> str:
    return (f"UPDATE hm_messages_fts SET before = (SELECT {_CUT.format(c='t.content')} FROM messages t "
            f"WHERE t.id = {hmcontext.neighbour_id(p, 'before')}) WHERE rowid = {hmcontext.neighbour_id(p, 'after')} "
            f"AND {hmcontext.is_turn(p)};")


def _values(p: str) -> str:
    return f"{p}.id, {_BODY.format(p=p)}, {p}.tool_name, {p}.tool_calls, {_context(p)}"


def _add(p: str) -> str:
    return (f"INSERT INTO hm_messages_fts(rowid, content, tool_name, tool_calls, before) VALUES ({_values(p)}); "
            f"{_after_insert(p)} "
            f"INSERT INTO hm_messages_cjk(rowid, content, tool_name) SELECT {p}.id, {_BODY.format(p=p)}, "
            f"{p}.tool_name WHERE {_CJK.format(p=p)};")


def _drop(p: str) -> str:
    return (f"DELETE FROM hm_messages_fts WHERE rowid = {p}.id; {_after_remove(p)} "
            f"DELETE FROM hm_messages_cjk WHERE rowid = {p}.id;")


LAYOUT3_TRIGGERS = [
    f"CREATE TRIGGER hm_messages_index_ai AFTER INSERT ON messages BEGIN {_add('new')} END",
    f"CREATE TRIGGER hm_messages_index_ad AFTER DELETE ON messages BEGIN {_drop('old')} END",
    "CREATE TRIGGER hm_messages_index_au AFTER UPDATE OF content, tool_name, tool_calls, role ON messages "
    "WHEN old.content IS NOT new.content OR old.tool_name IS NOT new.tool_name "
    "OR old.tool_calls IS NOT new.tool_calls OR old.role IS NOT new.role OR old.id IS NOT new.id "
    f"BEGIN {_drop('old')} {_add('new')} END",
]


def to_layout3(path: Path) -> None:
    """Turn the (closed) hermes-memory ``state.db`` at ``path`` into layout 3, index filled."""
    conn = sqlite3.connect(path)
    try:
        for name in hmindex.INDEX_TRIGGER_NAMES:
            conn.execute(f"DROP TRIGGER IF EXISTS {name}")
        conn.execute("DELETE FROM hm_messages_fts")
        conn.execute("DELETE FROM hm_messages_cjk")
        conn.execute(f"INSERT INTO hm_messages_fts(rowid, content, tool_name, tool_calls, before) "
                     f"SELECT {_values('m')} FROM messages m")
        conn.execute(f"INSERT INTO hm_messages_cjk(rowid, content, tool_name) SELECT m.id, {_BODY.format(p='m')}, "
                     f"m.tool_name FROM messages m WHERE {_CJK.format(p='m')}")
        for sql in LAYOUT3_TRIGGERS:
            conn.execute(sql)
        conn.execute("UPDATE hm_meta SET value = '3' WHERE key = 'layout'")
        conn.commit()
    finally:
        conn.close()
