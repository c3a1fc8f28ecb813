"""The MCP server starts and its ``session_search`` read tool answers from the stored data while a
second process holds a long write transaction on state.db (``BEGIN IMMEDIATE`` / ``EXCLUSIVE``,
as the Hermes Agent's own writes or an import do), and the file stays byte-identical. Before, the
server's open of the store synced its index in a write transaction and failed after about 20 s."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_memory.config import load_config
from hermes_memory.home import HermesHome
from hermes_memory.mcp.server import MemoryServer
from hermes_memory.sessions.db import SessionDB
from tests.helpers.foreign_lock import file_bytes, foreign_write_lock


@pytest.mark.parametrize("mode", ["IMMEDIATE", "EXCLUSIVE"])
def test_session_search_answers_while_another_process_holds_a_write_transaction(
        hermes_home: Path, mode: str) -> None:
    db_path = hermes_home / "state.db"
    with SessionDB(db_path) as db:
        db.create_session("s1", source="cli")
        db.append_message("s1", "user", "where do sea otters sleep")
    with foreign_write_lock(db_path, mode):
        before = file_bytes(db_path)
        server = MemoryServer(HermesHome(hermes_home), load_config(hermes_home / "config.yaml"))
        try:
            got = json.loads(server.call_tool("session_search", {"query": "otters"}))
        finally:
            server.close()
        assert file_bytes(db_path) == before
    assert "s1" in json.dumps(got) and "otters" in json.dumps(got), got
