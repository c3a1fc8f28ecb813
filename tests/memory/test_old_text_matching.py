"""Which entry an old_text names in replace and remove: an exact entry wins over a substring of a sibling, an
ambiguous match writes nothing and says how to choose, empty old_text is refused (failure cases B02, B03,
B06 of docs/failure-cases.md). Every test runs on both backends.
"""

from __future__ import annotations

import pytest

from hermes_memory.memory import ENTRY_DELIMITER, MemoryStore, memory_tool
from tests.memory.backing import Backing

D = ENTRY_DELIMITER


# ---------------------------------------------------------------- B02
def test_B02_exact_entry_wins_over_substring_of_sibling(big_store: MemoryStore, backing: Backing) -> None:
    s = big_store
    s.add("memory", "test")
    s.add("memory", "stub replies: tests pass via local fakes")
    r = s.remove("memory", old_text="test")
    assert r["success"] and s.entries("memory") == ["stub replies: tests pass via local fakes"]
    s.add("memory", ";")
    s.add("memory", "alpha note;beta")
    r2 = s.replace("memory", old_text=";", new_content="x")
    assert r2["success"]
    assert s.entries("memory") == ["stub replies: tests pass via local fakes", "x", "alpha note;beta"]
    assert backing.new().entries("memory") == s.entries("memory")


def test_B02_substring_of_several_entries_is_ambiguous_and_writes_nothing(big_store: MemoryStore, backing: Backing) -> None:
    big_store.add("memory", "alpha one")
    big_store.add("memory", "alpha two")
    before = backing.raw("memory")
    r = big_store.remove("memory", "alpha")
    assert r["success"] is False
    assert [m["preview"] for m in r["matches"]] == ["alpha one", "alpha two"]
    assert backing.raw("memory") == before


# ---------------------------------------------------------------- B03
def test_B03_ambiguous_replace_error_is_actionable(big_store: MemoryStore, backing: Backing) -> None:
    s = big_store
    s.add("memory", "Editor: uses vim")
    s.add("memory", "Editor plugins: vim-surround, vim-commentary " + "x" * 100)
    before = backing.raw("memory")
    r = s.replace("memory", old_text="vim", new_content="Editor: uses neovim")
    assert r["success"] is False
    assert [m["index"] for m in r["matches"]] == [1, 2]
    assert all(len(m["preview"]) <= 83 for m in r["matches"])
    assert r["matches"][1]["preview"].endswith("...")
    assert "#1: Editor: uses vim" in r["error"]
    assert r["usage"] == f"{len(D.join(s.entries('memory')))}/2,200"
    assert backing.raw("memory") == before
    r2 = s.add("memory", "Editor: uses vim")
    assert r2["success"] and "already exists" in r2["message"] and r2["entry_count"] == 2


def test_B03_error_says_when_new_content_already_exists(big_store: MemoryStore) -> None:
    big_store.add("memory", "Editor: uses vim")
    big_store.add("memory", "Editor plugins: vim-surround")
    r = big_store.replace("memory", "vim", "Editor: uses vim")
    assert r["success"] is False and "already exists verbatim" in r["error"]


def test_B03_replace_onto_existing_text_merges_instead_of_duplicating(big_store: MemoryStore) -> None:
    big_store.add("memory", "Editor: uses neovim")
    big_store.add("memory", "Editor: vim (old)")
    r = big_store.replace("memory", "vim (old)", "Editor: uses neovim")
    assert r["success"] and big_store.entries("memory") == ["Editor: uses neovim"]


# ---------------------------------------------------------------- B06
@pytest.mark.parametrize("needle", ["", "   ", "\n\t"])
def test_B06_empty_or_whitespace_old_text_is_rejected(big_store: MemoryStore, backing: Backing, needle: str) -> None:
    big_store.add("memory", "abc")
    before = backing.raw("memory")
    for r in (
        big_store.replace("memory", old_text=needle, new_content="X"),
        big_store.remove("memory", old_text=needle),
        big_store.apply_batch("memory", [{"action": "replace", "old_text": needle, "content": "X"}]),
        big_store.apply_batch("memory", [{"action": "remove", "old_text": needle}]),
    ):
        assert r["success"] is False and "must be non-empty" in r["error"]
    for action in ("replace", "remove"):
        out = memory_tool(action=action, old_text=needle, content="X", store=big_store)
        assert '"success": false' in out and "must be non-empty" in out
    assert backing.raw("memory") == before
    assert big_store.entries("memory") == ["abc"]
