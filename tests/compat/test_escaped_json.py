"""The reference agent stores JSON with its escapes (``json.dumps`` defaults to ``ensure_ascii``):
its memory-tool call ``{"content": "café ..."}`` is the text ``caf\\u00e9``. Our index holds that
text decoded (layout 4, sessions/jsontext.py), so every word of the call is found by the CLI, the
session_search tool and the MCP server, its CJK text by the trigram side table too; the
reference's own tables, rows and triggers stay exactly as it wrote them, and a home indexed by
layout 3 is moved to layout 4 on its next open while the reference keeps working on it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import anyio
import pytest

from hermes_memory.sessions import hmindex, hmrelayout
from hermes_memory.sessions.db import SessionDB
from tests.compat.helpers import (
    assert_reference_healthy,
    hm_json,
    our_meta,
    ref,
    reference_fts_consistent,
    schema_shape,
)
from tests.mcp.helpers import call, stdio_session
from tests.sessions.layout3 import to_layout3

VERSION = "0.19.0"
TEXTS = {
    "memory": "Coffee: café crème, no sugar; line one\nzebra line; 日本語メモ 😀",
    "twice": "Zoë likes naïve tea 東京タワー",
    "parts": "résumé attached, 会議室の予約",
}
"""What the agent's turn carries (ref_agent.py ``escaped``): memory-tool arguments escaped once,
arguments escaped twice, multi-part content."""
WORDS = {"café": "call", "crème": "call", "zebra": "call", "日本語メモ": "call", "Zoë": "call_twice",
         "naïve": "call_twice", "東京タワー": "call_twice", "résumé": "parts", "会議室の予約": "parts",
         "sugar": "call", "likes": "call_twice", "attached": "parts"}
"""Query -> the message (by kind) that must be found; the last three are ASCII words of the same
messages, found before the fix too."""


def _agent_rows(path: Path) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT * FROM messages ORDER BY id").fetchall()
    finally:
        conn.close()


def _hit_ids(home: Path, query: str) -> set[int]:
    return {r["id"] for r in hm_json(home, "sessions", "search", query)["results"]}


def test_every_word_of_the_agents_escaped_memory_call_is_found_and_its_rows_stay_as_written(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ref(VERSION, "build", home, {"config": False})
    wrote = ref(VERSION, "escaped", home, TEXTS)
    ids = wrote["ids"]
    # the agent really stored the escapes (the condition this test is about)
    assert "caf\\u00e9" in wrote["stored"]["call"][1] and "\\\\u00eb" in wrote["stored"]["call_twice"][1]
    assert wrote["stored"]["parts"][0].startswith("\x00json:") and "r\\u00e9sum" in wrote["stored"]["parts"][0]
    shape, rows = schema_shape(home / "state.db"), _agent_rows(home / "state.db")
    theirs = ref(VERSION, "search", home, {"queries": list(WORDS)})["results"]

    for query, kind in WORDS.items():
        assert ids[kind] in _hit_ids(home, query), (query, kind)
    assert our_meta(home)["layout"] == str(hmindex.LAYOUT_VERSION)

    async def mcp() -> None:
        async with stdio_session(home) as session:
            for query in ("café", "日本語メモ", "naïve"):
                found = await call(session, "session_search", {"query": query})
                assert found["success"] and "ref-esc" in {r["session_id"] for r in found["results"]}, (query, found)

    anyio.run(mcp)

    # the agent appends more escaped calls through our triggers: found as well, its rows untouched
    more = ref(VERSION, "escaped", home, {"memory": "Señor Müller's bakery", "twice": "Ångström ✓",
                                          "parts": "naïveté 北京", "sid": "ref-esc2"})["ids"]
    for query, kind in {"Señor": "call", "Müller": "call", "Ångström": "call_twice", "naïveté": "parts",
                        "北京": "parts"}.items():
        assert more[kind] in _hit_ids(home, query), (query, kind)
    assert schema_shape(home / "state.db") == shape
    assert _agent_rows(home / "state.db")[:len(rows)] == rows
    assert ref(VERSION, "search", home, {"queries": list(WORDS)})["results"] == theirs
    assert_reference_healthy(VERSION, home)


def test_json_decoding_of_odd_values_never_fails_a_write_and_finds_what_it_can(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    db = SessionDB(path)
    try:
        db.create_session("s")
        odd = {
            "lone": '[{"function": {"arguments": "{\\"content\\": \\"half \\\\ud83d pair quokka\\"}"}}]',
            "deep": "[" * 900 + '"caf\\u00e9 numbat"' + "]" * 900,
            "broken": '[{"function": {"arguments": "{\\"content\\": \\"caf\\\\u00e9 unterminated',
            "path": "C:\\Users\\wombat\\notes.txt",
            "nul": '[{"a": "x\\u0000y platypus"}]',
        }
        got = {k: db.append_message("s", "assistant", f"row {k}", tool_calls=v) for k, v in odd.items()}
        ours = db.append_message("s", "assistant", "ours", tool_calls=[
            {"id": "c", "type": "function", "function": {"name": "memory", "arguments": '{"content": "pav\\u00e9 \\u2615"}'}}])
        assert db.fts_integrity_check()
        assert {r["id"] for r in db.search_messages("pavé", raise_errors=True)} == {ours}
        # a lone surrogate is indexed as stored (its other words still found), the rest as text
        assert got["lone"] in {r["id"] for r in db.search_messages("quokka", raise_errors=True)}
        assert got["path"] in {r["id"] for r in db.search_messages("wombat", raise_errors=True)}
        assert got["broken"] in {r["id"] for r in db.search_messages("unterminated", raise_errors=True)}
        assert got["deep"] in {r["id"] for r in db.search_messages("numbat", raise_errors=True)}
        assert got["nul"] in {r["id"] for r in db.search_messages("platypus", raise_errors=True)}
        stored = db.conn.execute("SELECT c2 FROM hm_messages_fts_content ORDER BY id").fetchall()
        for (text,) in stored:  # every stored copy is readable UTF-8 text
            assert text is None or isinstance(text, str)
    finally:
        db.close()


@pytest.mark.parametrize("agent_writes_during_move", [False, True])
def test_a_layout3_home_is_reindexed_decoded_on_its_next_open_and_the_agent_keeps_working(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent_writes_during_move: bool
) -> None:
    home = tmp_path / "home"
    ref(VERSION, "build", home, {"config": False})
    ids = ref(VERSION, "escaped", home, TEXTS)["ids"]
    SessionDB(home / "state.db").close()
    to_layout3(home / "state.db")  # as hermes-memory before this fix left it
    late = ref(VERSION, "escaped", home, {"memory": "Crêpe stand at the quay", "twice": "Jürgen",
                                          "parts": "über 上海", "sid": "ref-esc3"})["ids"]  # layout-3 triggers
    conn = sqlite3.connect(home / "state.db")
    assert conn.execute("SELECT count(*) FROM hm_messages_fts WHERE hm_messages_fts MATCH 'café'").fetchone() == (0,)
    conn.close()
    shape, rows = schema_shape(home / "state.db"), _agent_rows(home / "state.db")
    if agent_writes_during_move:  # one step per open: the agent writes between the steps
        monkeypatch.setattr(hmrelayout, "CHUNK", 4)
        monkeypatch.setattr(hmrelayout, "BUDGET_S", 0.0)
    db = SessionDB(home / "state.db")
    try:
        assert db.migration["index"]["action"] == "relayout", db.migration
    finally:
        db.close()
    during = None
    if agent_writes_during_move:
        assert our_meta(home).get(hmrelayout.NEXT_KEY) is not None  # still moving
        assert ids["call"] in _hit_ids(home, "sugar")  # the old index serves meanwhile
        during = ref(VERSION, "escaped", home, {"memory": "Smørrebrød order", "twice": "Øresund",
                                                "parts": "façade 広州", "sid": "ref-esc4"})["ids"]
        for _ in range(200):
            if our_meta(home).get(hmrelayout.NEXT_KEY) is None and our_meta(home).get(hmrelayout.DROP_KEY) is None:
                break
            SessionDB(home / "state.db").close()
    meta = our_meta(home)
    assert meta["layout"] == str(hmindex.LAYOUT_VERSION) and hmrelayout.DROP_KEY not in meta
    for query, kind in WORDS.items():
        assert ids[kind] in _hit_ids(home, query), (query, kind)
    for query, kind in {"Crêpe": "call", "Jürgen": "call_twice", "über": "parts", "上海": "parts"}.items():
        assert late[kind] in _hit_ids(home, query), (query, kind)
    if during is not None:
        for query, kind in {"Smørrebrød": "call", "Øresund": "call_twice", "façade": "parts", "広州": "parts"}.items():
            assert during[kind] in _hit_ids(home, query), (query, kind)
    conn = sqlite3.connect(home / "state.db")
    try:
        assert not [n for (n,) in conn.execute("SELECT name FROM sqlite_master") if n.startswith(
            (hmrelayout.NEXT, hmrelayout.CJK_NEXT, hmrelayout.OLD, hmrelayout.CJK_OLD))]
    finally:
        conn.close()
    assert schema_shape(home / "state.db") == shape
    assert _agent_rows(home / "state.db")[:len(rows)] == rows
    assert reference_fts_consistent(home) == {"messages_fts": 0, "messages_fts_trigram": 0}
    assert_reference_healthy(VERSION, home)


def test_the_agents_json_content_and_escaped_calls_are_shown_as_text_not_as_stored_escapes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ref(VERSION, "build", home, {"config": False})
    ids = ref(VERSION, "escaped", home, TEXTS)["ids"]
    shown = {m["id"]: m for m in hm_json(home, "sessions", "show", "ref-esc")["messages"]}
    assert shown[ids["parts"]]["content"] == [{"type": "text", "text": TEXTS["parts"]}]  # the agent's \x00json:
    hits = {r["id"]: r for r in hm_json(home, "sessions", "search", "café")["results"]}
    assert "café" in hits[ids["call"]]["snippet"] and "\\u00e9" not in hits[ids["call"]]["snippet"]
    hits = {r["id"]: r for r in hm_json(home, "sessions", "search", "naïve")["results"]}
    assert "naïve" in hits[ids["call_twice"]]["snippet"] and "\\u" not in hits[ids["call_twice"]]["snippet"]
    hits = {r["id"]: r for r in hm_json(home, "sessions", "search", "résumé")["results"]}
    assert ">>>résumé<<<" in hits[ids["parts"]]["snippet"] and "\\u" not in hits[ids["parts"]]["snippet"]
    assert "\x00" not in json.dumps(hm_json(home, "sessions", "list"))
