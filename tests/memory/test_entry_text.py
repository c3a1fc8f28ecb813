"""The text an entry may hold and how it is stored: the entry delimiter is refused inside content and a lone
section sign round-trips (B01), CRLF and a BOM become LF (B09), control characters are refused; an unsafe
user id is refused (failure cases of docs/failure-cases.md).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_memory.memory import MemoryStore, validate_user_id
from tests.memory.backing import Backing


def fresh(d: Path, **kw) -> MemoryStore:
    return MemoryStore(d, **kw)


# ---------------------------------------------------------------- B01
@pytest.mark.parametrize(
    "content",
    [
        "Deploy checklist:\n§\nrun the migration first",
        "Deploy checklist:\r\n§\r\nrun the migration first",  # CRLF form of the delimiter
        "§\nleading delimiter line",
        "trailing delimiter line\n§",
        "a\n§\n§\nb",
    ],
)
def test_B01_delimiter_inside_content_is_refused(big_store: MemoryStore, backing: Backing, content: str) -> None:
    big_store.add("memory", "seed")
    before = backing.raw("memory")
    r = big_store.add("memory", content)
    assert r["success"] is False and "delimiter" in r["error"]
    assert backing.raw("memory") == before
    r2 = big_store.replace("memory", "seed", content)
    assert r2["success"] is False and "delimiter" in r2["error"]
    r3 = big_store.apply_batch("memory", [{"action": "add", "content": content}])
    assert r3["success"] is False and "delimiter" in r3["error"]
    assert backing.raw("memory") == before


def test_B01_lone_section_sign_round_trips(backing: Backing) -> None:
    s = backing.new()
    assert s.add("memory", "Use § to cite sections")["success"]
    assert s.add("memory", "§ 4.2 and §§ 7-9 are relevant")["success"]
    assert s.add("memory", "line one\n § \nline three")["success"]
    assert backing.new().entries("memory") == s.entries("memory")
    assert s.remove("memory", "Use § to cite sections")["success"]


# ---------------------------------------------------------------- B09
@pytest.mark.parametrize(
    "raw",
    [
        "alpha\r\n§\r\nbeta\r\n§\r\ngamma".encode(),
        "alpha\r§\rbeta\r§\rgamma".encode(),
        "\ufeffalpha\r\n§\r\nbeta\r\n§\r\ngamma".encode(),
    ],
)
def test_B09_crlf_and_bom_round_trip_to_lf(mem_dir: Path, raw: bytes) -> None:
    path = mem_dir / "MEMORY.md"
    path.write_bytes(raw)
    s = fresh(mem_dir)
    assert s.entries("memory") == ["alpha", "beta", "gamma"]
    assert s.replace("memory", old_text="beta", new_content="beta2")["success"]
    assert path.read_bytes() == "alpha\n§\nbeta2\n§\ngamma".encode()


def test_B09_crlf_inside_written_content_becomes_lf(big_store: MemoryStore, backing: Backing) -> None:
    big_store.add("memory", "line1\r\nline2")
    assert backing.text("memory") == "line1\nline2"


def test_control_characters_are_refused_in_content(backing: Backing) -> None:
    s = backing.new()
    r = s.add("memory", "red \x1b[31mALERT\x1b[0m")
    assert r["success"] is False and "U+001B" in r["error"]
    assert backing.text("memory") is None
    assert s.add("memory", "tabs\tare fine\nand so are newlines")["success"] is True


def test_text_that_is_not_unicode_is_refused_with_the_files_untouched(backing: Backing, mem_dir: Path) -> None:
    # a lone surrogate: what Python makes of undecodable bytes in argv (``memory add $'\xff'``) or a
    # JSON "\ud800" escape from an MCP client; UTF-8 (and PostgreSQL) cannot hold it
    s = backing.new()
    assert s.add("memory", "first entry")["success"] is True
    before = backing.raw("memory")
    for r in (s.add("memory", "bad \udcff bytes"), s.replace("memory", "first", "half \ud800 pair"),
              s.apply_batch("memory", [{"action": "add", "content": "x \udfff"}])):
        assert r["success"] is False and "not valid Unicode" in r["error"], r
    assert backing.raw("memory") == before


def test_memory_add_with_undecodable_bytes_in_argv_says_so_and_writes_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    exe = Path(sys.executable).with_name("hermes-memory")
    ok = subprocess.run([str(exe), "--home", str(home), "memory", "add", "kept entry"], capture_output=True, check=False)
    assert ok.returncode == 0, ok.stderr
    before = (home / "memories" / "MEMORY.md").read_bytes()
    bad = subprocess.run([os.fsencode(str(exe)), b"--home", os.fsencode(str(home)), b"memory", b"add", b"bad \xff bytes"],
                         capture_output=True, check=False)
    assert bad.returncode != 0 and b"Traceback" not in bad.stderr, bad.stderr[-2000:]
    assert b"not valid Unicode" in bad.stderr + bad.stdout
    assert (home / "memories" / "MEMORY.md").read_bytes() == before


def test_user_id_with_trailing_newline_is_refused() -> None:
    with pytest.raises(ValueError, match="unsafe user_id"):
        validate_user_id("alice\n")
    assert validate_user_id("alice") == "alice"
