"""``replace`` whose new text equals another entry: the two become one entry (no duplicate), and
every surface says so: the ``memory`` tool, ``memory replace`` in the CLI, MCP, and a batch. A
refused replace (no match) leaves the file byte-identical."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
from typer.testing import CliRunner

from hermes_memory.cli.main import app
from hermes_memory.memory import MemoryStore, memory_tool
from tests.mcp.helpers import call, stdio_session

runner = CliRunner()
A, B = "deploys go through staging", "the CI runs on every push"


def _store(home: Path) -> MemoryStore:
    store = MemoryStore(home / "memories")
    store.load_from_disk()
    for text in (A, B):
        store.add("memory", text)
    return store


def test_the_tool_says_the_replace_merged_two_entries(tmp_path: Path) -> None:
    store = _store(tmp_path)
    r = json.loads(memory_tool(action="replace", target="memory", old_text="staging", content=B, store=store))
    assert r["success"] is True and r["entry_count"] == 1
    assert r["replaced_entry"] == A and r["merged_with"] == B
    assert "now one entry" in r["message"]
    assert store.entries("memory") == [B]


def test_a_plain_replace_says_nothing_about_merging(tmp_path: Path) -> None:
    store = _store(tmp_path)
    r = store.replace("memory", "staging", "deploys go through canary")
    assert r["success"] and r["message"] == "Entry replaced." and "merged_with" not in r


def test_a_batch_names_the_merged_entries(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.add("memory", "a third note")
    r = store.apply_batch("memory", [{"action": "replace", "old_text": "staging", "content": B},
                                     {"action": "add", "content": "a fourth note"}])
    assert r["success"] and r["merged_entries"] == {1: B}
    assert "Applied 2 operations." in r["message"] and "now one entry" in r["message"]
    assert store.entries("memory") == [B, "a third note", "a fourth note"]


def test_the_cli_says_it_merged_and_a_refused_replace_writes_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _store(home)
    path = home / "memories" / "MEMORY.md"
    before = path.read_bytes()
    r = runner.invoke(app, ["--home", str(home), "memory", "replace", "no such entry", B])
    assert r.exit_code == 1 and path.read_bytes() == before
    r = runner.invoke(app, ["--home", str(home), "memory", "replace", "staging", B])
    assert r.exit_code == 0, r.output
    assert "now one entry" in " ".join(r.output.split())
    r = runner.invoke(app, ["--home", str(home), "memory", "replace", "staging", B, "--json"])
    assert r.exit_code == 1  # the merged entry is gone: nothing matches "staging" any more


def test_mcp_gives_the_same_result_as_the_tool(tmp_path: Path) -> None:
    home, twin = tmp_path / "home", tmp_path / "twin"
    _store(home)
    twin_store = _store(twin)
    args = {"action": "replace", "target": "memory", "old_text": "staging", "content": B}

    async def main() -> dict:
        async with stdio_session(home) as s:
            return await call(s, "memory", args)

    via_mcp = anyio.run(main)
    assert via_mcp == json.loads(memory_tool(store=twin_store, **args))
    assert via_mcp["merged_with"] == B and "now one entry" in via_mcp["message"]
