"""``fsutil.atomic_write_text(exclusive=True)``, the write behind ``sessions export -o`` without
``--force``: a file that exists (or appeared while the export was written) is never replaced, and no
temporary file is left behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hermes_memory.fsutil import OutputRefused, atomic_write_text, is_sqlite_file, write_output_file


def test_an_exclusive_write_onto_an_existing_file_raises_and_leaves_it(tmp_path: Path) -> None:
    tmp_path = tmp_path / "out"
    tmp_path.mkdir()
    out = tmp_path / "export.json"
    out.write_text("someone else's file")
    with pytest.raises(FileExistsError):
        atomic_write_text(out, "new", 0o600, exclusive=True)
    assert out.read_text() == "someone else's file"
    assert os.listdir(tmp_path) == ["export.json"]


def test_an_exclusive_write_to_a_new_file_writes_it_whole(tmp_path: Path) -> None:
    tmp_path = tmp_path / "out"
    tmp_path.mkdir()
    out = tmp_path / "export.json"
    atomic_write_text(out, "[]\n", 0o600, exclusive=True)
    assert out.read_text() == "[]\n" and os.listdir(tmp_path) == ["export.json"]


def test_a_forced_write_keeps_the_mode_of_the_file_it_replaces(tmp_path: Path) -> None:
    out = tmp_path / "shared.json"
    out.write_text("old")
    out.chmod(0o644)
    write_output_file(out, "new", force=True)
    assert out.read_text() == "new" and out.stat().st_mode & 0o777 == 0o644


def test_a_file_that_only_starts_like_text_is_not_taken_for_sqlite(tmp_path: Path) -> None:
    text, db = tmp_path / "notes.txt", tmp_path / "x.db"
    text.write_text("SQLite format 3 is a nice format")
    db.write_bytes(b"SQLite format 3\x00" + b"\x00" * 84)
    assert not is_sqlite_file(text) and is_sqlite_file(db)
    with pytest.raises(OutputRefused, match="SQLite database"):
        write_output_file(db, "[]", force=True)
    write_output_file(text, "[]", force=True)
