"""bench/agent_cache.py's claim, checked on a short session: the flush reads the session's cache."""

import runpy
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "agent_cache.py"


def test_shared_prefix_flush_reads_the_cache_and_costs_less_than_a_memory_only_flush():
    run_session = runpy.run_path(str(BENCH))["run_session"]  # the bench's own code, not __main__
    shared = run_session(8, variant="shared_prefix")
    forced = run_session(8, variant="forced_tool")
    memory_only = run_session(8, variant="memory_only_tools")
    assert shared["flush"]["requests"] == memory_only["flush"]["requests"] == 1
    assert memory_only["flush"]["cache_read_tokens"] == 0  # a changed tool list: a cold write
    assert shared["flush"]["cache_share"] > 0.9
    assert 0 < forced["flush"]["cache_read_tokens"] < shared["flush"]["cache_read_tokens"]
    assert shared["cost_uncached_equiv"] < forced["cost_uncached_equiv"] < memory_only["cost_uncached_equiv"]
    # the turns themselves are untouched by how the flush is made
    assert shared["cache_share_without_flush"] == memory_only["cache_share_without_flush"]
    assert shared["system_prompt_changes"] == 1
