"""old_text matches the way people type it (issue 13 §2): dashes, quotes, Unicode forms, spacing.

Store tests run on both backends (``store``/``backing``, conftest.py); the CLI and MCP ones go
through the data home's files (the configured store until ``storage:`` exists).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_memory.memory import MemoryStore, memory_tool
from hermes_memory.memory.store import match_key
from tests.memory.backing import Backing

EM = "Server notes \u2014 staging is read-only"


@pytest.mark.parametrize(
    ("stored", "typed"),
    [
        (EM, "Server notes -- staging"),
        (EM, "Server notes - staging"),
        ("Range 1\u20135 is reserved", "Range 1-5"),
        ("Mom says \u201cgn\u201d every night", 'says "gn"'),
        ("User\u2019s editor is vim", "User's editor"),
        ("Ｆｕｌｌ width note about ports", "Full width note"),
        ("Prefers  two\tspaces\nand tabs", "Prefers two spaces and tabs"),
        ("Price is 10\u00a0EUR", "10 EUR"),
        ("Uses the \ufb01le picker", "file picker"),  # NFKC: the fi ligature
    ],
)
def test_replace_and_remove_match_the_typed_form(store: MemoryStore, stored: str, typed: str) -> None:
    store.add("memory", stored)
    store.add("memory", "unrelated fact")
    r = store.replace("memory", typed, "rewritten")
    assert r["success"], r
    assert r["replaced_entry"] == stored
    assert store.memory_entries == ["rewritten", "unrelated fact"]
    store.add("memory", stored)
    r = store.remove("memory", typed)
    assert r["success"] and r["removed_entry"] == stored


def test_matching_never_rewrites_the_stored_text(store: MemoryStore, backing: Backing) -> None:
    store.add("memory", EM)
    store.add("memory", "Second \u201cquoted\u201d note")
    r = store.remove("memory", 'Second "quoted"')
    assert r["success"]
    assert backing.text("memory") == EM


def test_case_is_kept(store: MemoryStore, backing: Backing) -> None:
    store.add("memory", EM)
    before = backing.raw("memory")
    r = store.remove("memory", "server notes -- staging")
    assert r["success"] is False and "No entry matched" in r["error"]
    assert backing.raw("memory") == before


def test_exact_match_wins_over_a_normalised_one(store: MemoryStore) -> None:
    store.add("memory", "Deploy -- staging first")
    store.add("memory", "Deploy \u2014 staging first, then prod")
    # Typed as stored, "Deploy -- staging" is in exactly one entry: that one is picked even though
    # its normalised form is also in the other entry.
    r = store.remove("memory", "Deploy -- staging")
    assert r["success"] and r["removed_entry"] == "Deploy -- staging first"
    assert store.memory_entries == ["Deploy \u2014 staging first, then prod"]


def test_exact_equality_wins_over_normalised_equality(store: MemoryStore) -> None:
    store.add("memory", "a \u2014 b")
    store.add("memory", "a -- b")
    r = store.remove("memory", "a -- b")
    assert r["success"] and r["removed_entry"] == "a -- b"


def test_normalised_ambiguity_is_refused_with_previews(store: MemoryStore, backing: Backing) -> None:
    store.add("memory", "Host \u2014 alpha box")
    store.add("memory", "Host \u2013 beta box")
    before = backing.raw("memory")
    r = store.remove("memory", "Host -- ")
    assert r["success"] is False and r["error"].startswith("Multiple entries matched")
    assert [m["index"] for m in r["matches"]] == [1, 2]
    assert backing.raw("memory") == before


def test_normalised_equality_of_two_distinct_entries_is_ambiguous(store: MemoryStore) -> None:
    store.add("memory", "x \u2014 y")
    store.add("memory", "x \u2013 y")
    r = store.remove("memory", "x - y")
    assert r["success"] is False and "Multiple entries matched" in r["error"]


def test_batch_matches_the_typed_form(store: MemoryStore) -> None:
    store.add("memory", EM)
    store.add("memory", "Mom says \u201cgn\u201d")
    r = store.apply_batch("memory", [
        {"action": "replace", "old_text": "Server notes -- staging", "content": "Staging is writable now"},
        {"action": "remove", "old_text": 'says "gn"'},
    ])
    assert r["success"], r
    assert store.memory_entries == ["Staging is writable now"]


def test_tool_matches_the_typed_form(store: MemoryStore) -> None:
    import json

    store.add("memory", EM)
    r = json.loads(memory_tool(action="replace", target="memory", old_text="Server notes -- staging",
                               content="Staging notes moved", store=store))
    assert r["success"], r
    assert store.memory_entries == ["Staging notes moved"]


def test_cli_matches_the_typed_form(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    home = tmp_path / "home"
    s = MemoryStore(home / "memories")
    s.add("memory", EM)
    env = {**os.environ, "HERMES_HOME": str(home)}
    out = subprocess.run([sys.executable, "-m", "hermes_memory", "memory", "remove", "Server notes -- staging"],
                         env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    assert MemoryStore(home / "memories").memory_entries == []


def test_match_key_folds_only_typography() -> None:
    assert match_key("  A\u2014B \u201cq\u201d\u00a0\u2018s\u2019  ") == "A-B \"q\" 's'"
    assert match_key("Case Kept") == "Case Kept"
    assert match_key("a --- b") == "a - b"


def test_mcp_memory_tool_matches_the_typed_form(hermes_home: Path) -> None:
    """Over a real stdio MCP server with the SDK client: replace and a batch remove by the typed form."""
    import anyio

    from tests.mcp.helpers import call, stdio_session

    seed = MemoryStore(hermes_home / "memories")
    seed.add("memory", EM)
    seed.add("memory", "Mom says \u201cgn\u201d")

    async def main() -> list[dict]:
        async with stdio_session(hermes_home) as s:
            return [
                await call(s, "memory", {"action": "replace", "target": "memory",
                                         "old_text": "Server notes -- staging", "content": "Staging is writable"}),
                await call(s, "memory", {"target": "memory", "operations": [
                    {"action": "remove", "old_text": 'says "gn"'}, {"action": "add", "content": "New note"}]}),
            ]

    r1, r2 = anyio.run(main)
    assert r1["success"] and r1["replaced_entry"] == EM
    assert r2["success"], r2
    assert MemoryStore(hermes_home / "memories").memory_entries == ["Staging is writable", "New note"]
