"""The memory tool's ``read`` with a ``target``, through a real MCP client over stdio: only that
store's live entries and only its block of the frozen snapshot come back (a client asking for
USER.md must not get MEMORY.md's notes in the snapshot)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio

from hermes_memory.mcp.read import snapshot_block
from hermes_memory.mcp.server import URI_SNAPSHOT
from hermes_memory.memory import MemoryStore
from hermes_memory.memory.entries import render_block
from tests.mcp.helpers import read_text, stdio_session, text_of


def test_read_with_a_target_returns_only_that_stores_snapshot_block_and_entries(hermes_home: Path) -> None:
    seed = MemoryStore(hermes_home / "memories")
    seed.load_from_disk()
    seed.add("memory", "Project uses Python 3.12\n\nand ruff")  # a blank line inside an entry
    seed.add("user", "Name is Dana")
    alice = MemoryStore(hermes_home / "memories", user_id="alice")
    alice.add("user", "Alice prefers tea")

    async def main() -> tuple[dict, dict, dict, dict, str]:
        async with stdio_session(hermes_home) as s:
            async def read(**args: str) -> dict:
                return json.loads(text_of((await s.call_tool("memory", {"action": "read", **args})).content[0]))
            return (await read(target="user"), await read(target="memory"), await read(),
                    await read(target="user", user_id="alice"), await read_text(s, URI_SNAPSHOT))

    user, memory, both, alice_user, whole = anyio.run(main)
    assert user["success"] and "Name is Dana" in user["snapshot"]
    assert "Python 3.12" not in user["snapshot"] and "MEMORY" not in user["snapshot"]
    assert user["user"]["entries"] == ["Name is Dana"] and "memory" not in user
    assert "Python 3.12" in memory["snapshot"] and "Name is Dana" not in memory["snapshot"]
    assert memory["memory"]["entries"] == ["Project uses Python 3.12\n\nand ruff"] and "user" not in memory
    assert both["snapshot"] == whole == memory["snapshot"] + "\n\n" + user["snapshot"]
    assert "Alice prefers tea" in alice_user["snapshot"] and "Python 3.12" not in alice_user["snapshot"]


def test_snapshot_block_of_an_empty_store_is_empty() -> None:
    memory = render_block("memory", ["a note"], 2200)
    user = render_block("user", ["Name is Dana"], 1375)
    assert snapshot_block(memory, "user") == "" and snapshot_block(memory, "memory") == memory
    assert snapshot_block(user, "memory") == "" and snapshot_block(user, "user") == user
    assert snapshot_block("", "memory") == snapshot_block("", "user") == ""
    over = render_block("user", ["x" * 3000], 1375)  # an over-budget header still splits
    assert snapshot_block(memory + "\n\n" + over, "user") == over
