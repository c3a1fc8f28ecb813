"""Property: after any sequence of operations, a fresh load equals the live state (B01 round trip)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_memory.memory import ENTRY_DELIMITER
from tests.memory.backing import Backing
from tests.memory.strategies import memory_ops


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(ops=st.lists(memory_ops, min_size=1, max_size=12))
def test_fresh_load_equals_live_state(backing: Backing, ops: list[tuple]) -> None:
    """On both backends; each example gets storage of its own (a folder, or a profile in the database)."""
    b = backing.sibling()
    s = b.new(memory_char_limit=120, user_char_limit=100)
    for op in ops:
        kind, target = op[0], op[1]
        before = s.entries(target)
        if kind == "add":
            r = s.add(target, op[2])
        elif kind == "replace":
            r = s.replace(target, op[2], op[3])
        elif kind == "remove":
            r = s.remove(target, op[2])
        else:
            r = s.apply_batch(target, op[2])
        if not r["success"]:
            assert s.entries(target) == before  # a refusal changes nothing
        fresh = b.new(memory_char_limit=120, user_char_limit=100)
        for t in ("memory", "user"):
            assert fresh.entries(t) == s.entries(t)
            live = s.entries(t)
            assert len(live) == len(set(live))
            assert all(e == e.strip() and e for e in live)
            stored = b.text(t)
            if stored is not None:
                assert "\r" not in stored
                assert stored == ENTRY_DELIMITER.join(live)
        s.reset_consolidation_failures()
