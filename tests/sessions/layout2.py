"""A ``state.db`` as hermes-memory left it before layout 3: our index of layout 2 (content,
tool_name, tool_calls; no previous turn's text) and its triggers, written with plain SQL the
way that version wrote them, for the migration tests."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hermes_memory.sessions import hmindex

_BODY = "CASE WHEN {p}.role = 'tool' THEN substr({p}.content, 1, 8192) ELSE {p}.content END"
_CJK = "(coalesce({p}.content, '') || ' ' || coalesce({p}.tool_name, '')) GLOB '" + hmindex.CJK_GLOB + "'"


def _add(p: str) -> str:
    return (f"INSERT INTO hm_messages_fts(rowid, content, tool_name, tool_calls) "
            f"VALUES ({p}.id, {_BODY.format(p=p)}, {p}.tool_name, {p}.tool_calls); "
            f"INSERT INTO hm_messages_cjk(rowid, content, tool_name) SELECT {p}.id, {_BODY.format(p=p)}, "
            f"{p}.tool_name WHERE {_CJK.format(p=p)};")


def _drop(p: str) -> str:
    return f"DELETE FROM hm_messages_fts WHERE rowid = {p}.id; DELETE FROM hm_messages_cjk WHERE rowid = {p}.id;"


LAYOUT2_TRIGGERS = [
    f"CREATE TRIGGER hm_messages_index_ai AFTER INSERT ON messages BEGIN {_add('new')} END",
    f"CREATE TRIGGER hm_messages_index_ad AFTER DELETE ON messages BEGIN {_drop('old')} END",
    "CREATE TRIGGER hm_messages_index_au AFTER UPDATE OF content, tool_name, tool_calls, role ON messages "
    "WHEN old.content IS NOT new.content OR old.tool_name IS NOT new.tool_name "
    "OR old.tool_calls IS NOT new.tool_calls OR old.role IS NOT new.role OR old.id IS NOT new.id "
    f"BEGIN {_drop('old')} {_add('new')} END",
]


def to_layout2(path: Path) -> None:
    """Turn the (closed) hermes-memory ``state.db`` at ``path`` into layout 2, index filled."""
    conn = sqlite3.connect(path)
    try:
        for name in hmindex.INDEX_TRIGGER_NAMES:
            conn.execute(f"DROP TRIGGER IF EXISTS {name}")
        conn.execute("DROP TABLE hm_messages_fts")
        conn.execute("CREATE VIRTUAL TABLE hm_messages_fts USING fts5(content, tool_name, tool_calls, "
                     "tokenize='porter unicode61 remove_diacritics 2')")
        conn.execute("INSERT INTO hm_messages_fts(hm_messages_fts, rank) VALUES('rank', 'bm25(1.0, 0.8, 0.4)')")
        conn.execute(f"INSERT INTO hm_messages_fts(rowid, content, tool_name, tool_calls) "
                     f"SELECT m.id, {_BODY.format(p='m')}, m.tool_name, m.tool_calls FROM messages m")
        for sql in LAYOUT2_TRIGGERS:
            conn.execute(sql)
        conn.execute("UPDATE hm_meta SET value = '2' WHERE key = 'layout'")
        conn.commit()
    finally:
        conn.close()


def index_matches_messages(conn: sqlite3.Connection) -> bool:
    """True when every row of our layout-3 index holds exactly what a fresh build would index
    (own text and previous turn), and no message is missing."""
    want = conn.execute(f"SELECT {hmindex._row_values('m')} FROM messages m ORDER BY m.id").fetchall()
    have = conn.execute("SELECT rowid, content, tool_name, tool_calls, before FROM hm_messages_fts "
                        "ORDER BY rowid").fetchall()
    return [tuple(r) for r in want] == [tuple(r) for r in have]
