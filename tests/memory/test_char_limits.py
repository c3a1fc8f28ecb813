"""The character limits of MEMORY.md and USER.md: chars and delimiters both count, a batch whose final state is
over by one is refused whole, a file already over the limit loads whole and may shrink (failure cases B07,
B08 of docs/failure-cases.md). Every test runs on both backends.
"""

from __future__ import annotations

import logging

import pytest

from hermes_memory.memory import ENTRY_DELIMITER
from tests.memory.backing import Backing

D = ENTRY_DELIMITER


# ---------------------------------------------------------------- B07
def test_B07_limit_counts_chars_and_delimiters(backing: Backing) -> None:
    s = backing.new()
    s.add("memory", "a" * 1000)
    s.add("memory", "b" * 1197)  # 1000 + 3 + 1197 = 2200
    assert s.usage("memory")["chars"] == 2200
    before_bytes = backing.raw("memory")
    before = s.entries("memory")
    r1 = s.add("memory", "c")
    assert r1["success"] is False and "2,200/2,200" in r1["error"]
    r2 = s.replace("memory", old_text="b" * 10, new_content="b" * 1198)
    assert r2["success"] is False and "2,200/2,200" in r2["error"] and "2,201/2,200" in r2["error"]
    assert s.entries("memory") == before and backing.raw("memory") == before_bytes
    r3 = s.replace("memory", old_text="b" * 10, new_content="e" * 1197)
    assert r3["success"] and s.usage("memory")["chars"] == 2200
    u = [s.add("user", "한" * 400 + str(i)) for i in range(3)]  # 1205 chars, ~3600 bytes, limit 1375
    assert all(x["success"] for x in u)
    assert s.usage("user")["chars"] == len(D.join(s.entries("user"))) == 1209
    solo = s.add("memory", "d" * 1000)
    assert solo["success"] is False
    r4 = s.apply_batch("memory", [{"action": "remove", "old_text": "a" * 10}, {"action": "add", "content": "d" * 1000}])
    assert r4["success"] and s.usage("memory")["chars"] == 2200
    assert r4["usage"] == "100% — 2,200/2,200 chars"


def test_B07_batch_final_state_over_by_one_is_rejected_whole(backing: Backing) -> None:
    s = backing.new()
    s.add("memory", "a" * 1000)
    s.add("memory", "b" * 1197)
    before = backing.raw("memory")
    r = s.apply_batch("memory", [{"action": "remove", "old_text": "a" * 10}, {"action": "add", "content": "d" * 1001}])
    assert r["success"] is False and "2,201/2,200" in r["error"] and "0 of 2" in r["error"]
    assert backing.raw("memory") == before


# ---------------------------------------------------------------- B08
def test_B08_over_limit_file_loads_whole_and_allows_shrinking(backing: Backing, caplog: pytest.LogCaptureFixture) -> None:
    entries = ["x" * 1000, "y" * 1000, "z" * 594]
    backing.seed("memory", D.join(entries))
    with caplog.at_level(logging.WARNING, logger="hermes_memory.memory.store"):
        s = backing.new()
        s.load_from_disk()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "MEMORY.md" in warnings[0] and "2,600/2,200" in warnings[0]
    assert s.entries("memory") == entries
    r_add = s.add("memory", "new")
    assert r_add["success"] is False and r_add["usage"] == "2,600/2,200" and r_add["current_entries"] == entries
    assert s.remove("memory", "z" * 20)["success"]
    r_rep = s.replace("memory", "y" * 20, "y" * 10)
    assert r_rep["success"] and s.entries("memory") == ["x" * 1000, "y" * 10]
