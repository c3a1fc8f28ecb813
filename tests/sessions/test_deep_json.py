"""JSON nested deeper than Python's parser can read (a tool call or reasoning details of 5,000
nested arrays, from a misbehaving model or another program's row) is stored and read back as
text: appending it, showing its session and searching never raise RecursionError."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import httpx
from typer.testing import CliRunner

from hermes_memory.cli.main import app
from hermes_memory.sessions.db import SessionDB
from tests.mcp.helpers import HttpServer

DEEP = "[" * 5000 + '"quokka"' + "]" * 5000


def test_a_tool_call_nested_too_deep_to_parse_is_stored_and_read_back_as_text(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    db = SessionDB(home / "state.db")
    try:
        db.create_session("s")
        mid = db.append_message("s", "assistant", "deep call wombat", tool_calls=DEEP, reasoning_details=DEEP)
        assert [m["tool_calls"] for m in db.get_messages("s")] == [DEEP]
    finally:
        db.close()
    conn = sqlite3.connect(home / "state.db")  # another program's row, just as deep
    conn.execute("INSERT INTO messages (session_id, role, content, tool_calls, timestamp) "
                 "VALUES ('s', 'assistant', ?, ?, 1e9)", ("\x1ejson:" + DEEP, DEEP))
    call = [{"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": DEEP}}]
    conn.execute("INSERT INTO messages (session_id, role, content, tool_calls, timestamp) "
                 "VALUES ('s', 'assistant', 'deep arguments', ?, 1e9 + 1)", (json.dumps(call),))
    conn.commit()
    conn.close()
    runner = CliRunner()
    shown = runner.invoke(app, ["--home", str(home), "sessions", "show", "s", "--json"])
    assert shown.exit_code == 0, shown.output
    found = runner.invoke(app, ["--home", str(home), "sessions", "search", "wombat", "--json"])
    assert found.exit_code == 0 and f'"id": {mid}' in found.output, found.output
    with HttpServer(home) as srv, httpx.Client(base_url=srv.info["dashboard"].rstrip("/"), timeout=60) as c:
        page = c.get("/sessions/s")
        assert page.status_code == 200 and "deep arguments" in page.text, page.text[-1500:]
