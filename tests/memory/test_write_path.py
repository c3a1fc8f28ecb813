"""The short write path of the file backend (issue 13 §6) keeps what a re-read would give.

A write no longer parses the text it has just written when the entries it joined are provably that
text's parse, and it lets go of the replaced inode's cached descriptor before the rename. These
tests make the cases where a shortcut would go wrong: an entry that hides a delimiter (a hand edit
the store does not write itself, which an add still accepts), a rename that fails after the cached
descriptor was closed, and a text with a BOM or CR kept from a hand edit.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hermes_memory.errors import MemoryStoreError
from hermes_memory.memory import ENTRY_DELIMITER, MemoryStore, filebackend
from hermes_memory.memory.entries import parse_entries


def _fresh_entries(mem_dir: Path) -> list[str]:
    return MemoryStore(mem_dir, memory_char_limit=100_000).memory_entries


def test_an_add_next_to_an_entry_hiding_a_delimiter_caches_what_a_reread_parses(mem_dir: Path) -> None:
    """``"x\\n§"`` parses from a hand edit; joined again, its ``§`` line forms a delimiter with the next one."""
    path = mem_dir / "MEMORY.md"
    path.write_text("x\n§ \n§\ny")  # a space after the first '§': one entry "x\n§", then "y"
    s = MemoryStore(mem_dir, memory_char_limit=100_000)
    assert s.memory_entries == ["x\n§", "y"]
    assert s.add("memory", "z")["success"]  # a single add is allowed on a drifted file
    on_disk = parse_entries(path.read_text())
    assert on_disk == ["x", "§\ny", "z"]  # what the written text really holds
    assert s.memory_entries == on_disk == _fresh_entries(mem_dir)
    # the next op works from that state (the read cache proves the file unchanged and answers)
    assert s.add("memory", "w")["success"]
    assert _fresh_entries(mem_dir) == ["x", "§\ny", "z", "w"] == s.memory_entries


def test_entries_written_in_the_stores_own_form_are_cached_as_written(mem_dir: Path) -> None:
    s = MemoryStore(mem_dir, memory_char_limit=100_000)
    notes = ["plain", "with § inside a line", "§ at the start", "multi\nline note", "ends with §"]
    for note in notes:
        assert s.add("memory", note)["success"]
    assert s.memory_entries == notes == _fresh_entries(mem_dir)
    assert s.replace("memory", "multi", "one line now")["success"]
    assert s.remove("memory", "plain")["success"]
    want = ["with § inside a line", "§ at the start", "one line now", "ends with §"]
    assert s.memory_entries == want == _fresh_entries(mem_dir)
    assert (mem_dir / "MEMORY.md").read_text() == ENTRY_DELIMITER.join(want)


def test_a_kept_bom_is_cached_as_the_reread_strips_it(mem_dir: Path) -> None:
    path = mem_dir / "MEMORY.md"
    path.write_bytes("\ufeff\ufeffbom entry".encode())  # the read drops one BOM, the entry keeps the other
    s = MemoryStore(mem_dir, memory_char_limit=100_000)
    assert s.add("memory", "second")["success"]
    assert s.memory_entries == _fresh_entries(mem_dir)
    assert s.add("memory", "third")["success"]
    assert s.memory_entries == _fresh_entries(mem_dir)


def test_a_rename_that_fails_leaves_the_file_and_the_next_write_rereads_it(
    mem_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = MemoryStore(mem_dir)
    path = mem_dir / "MEMORY.md"
    assert s.add("memory", "kept alpha")["success"]
    before = path.read_bytes()
    real_replace = os.replace

    def refused(src: str, dst: str) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(filebackend.os, "replace", refused)
    with pytest.raises(MemoryStoreError, match="Permission denied"):
        s.add("memory", "lost")
    monkeypatch.setattr(filebackend.os, "replace", real_replace)
    assert path.read_bytes() == before
    assert sorted(p.name for p in mem_dir.iterdir()) == ["MEMORY.md", "MEMORY.md.lock"]  # no temp file left
    with open(path, "r+b") as f:  # an in-place edit of the same size: only a re-read can see it
        f.seek(len("kept "))
        f.write(b"gamma")
    assert s.add("memory", "next")["success"]
    assert path.read_text() == "kept gamma" + ENTRY_DELIMITER + "next"
