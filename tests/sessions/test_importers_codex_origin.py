"""Codex CLI rollouts keep where the session ran (cwd, git branch) and what it cost (token totals)."""

from __future__ import annotations

import json
from pathlib import Path

from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.importers import import_path
from tests.helpers.values import present
from tests.sessions.importer_data import CODEX_ID, codex_rollout, rollout_line, write_jsonl


def _usage(inp: int, cached: int, out: int, reasoning: int) -> dict:
    return rollout_line("2025-10-29T01:00:00.000Z", "event_msg", {"type": "token_count", "info": {"total_token_usage": {
        "input_tokens": inp, "cached_input_tokens": cached, "output_tokens": out,
        "reasoning_output_tokens": reasoning, "total_tokens": inp + out}}, "rate_limits": None})


def test_a_codex_rollout_keeps_its_cwd_and_git_branch(db: SessionDB, tmp_path: Path) -> None:
    f = write_jsonl(tmp_path / f"rollout-2025-10-29T00-59-38-{CODEX_ID}.jsonl", codex_rollout())
    import_path(db, f, "codex")
    s = present(db.get_session(f"codex-{CODEX_ID}"))
    assert (s["cwd"], s["git_branch"]) == ("/home/dev/shop", "fix/pgbouncer")


def test_a_codex_rollout_without_meta_cwd_takes_the_turn_context_cwd(db: SessionDB, tmp_path: Path) -> None:
    lines = codex_rollout()
    lines[0]["payload"] = {k: v for k, v in lines[0]["payload"].items() if k not in ("cwd", "git")}
    f = write_jsonl(tmp_path / f"rollout-2025-10-29T00-59-38-{CODEX_ID}.jsonl", lines)
    import_path(db, f, "codex")
    s = present(db.get_session(f"codex-{CODEX_ID}"))
    assert (s["cwd"], s["git_branch"]) == ("/home/dev/shop", None)


def test_codex_token_totals_set_the_session_counters_once_however_often_it_is_imported(db: SessionDB,
                                                                                      tmp_path: Path) -> None:
    # token_count events carry running totals: the last one is the session's, and input_tokens
    # includes the cached part, which the counters keep apart.
    lines = codex_rollout() + [_usage(5000, 3000, 120, 40), json.loads(json.dumps(_usage(9000, 6000, 300, 90)))]
    f = write_jsonl(tmp_path / f"rollout-2025-10-29T00-59-38-{CODEX_ID}.jsonl", lines)
    for _ in range(2):
        import_path(db, f, "codex")
        s = present(db.get_session(f"codex-{CODEX_ID}"))
        assert (s["input_tokens"], s["cache_read_tokens"], s["output_tokens"], s["reasoning_tokens"]) == (
            3000, 6000, 300, 90)
        assert s["api_call_count"] == 3  # three distinct totals: three model responses


def test_rate_limit_only_token_events_leave_the_counters_alone(db: SessionDB, tmp_path: Path) -> None:
    lines = codex_rollout()[:-1] + [rollout_line("2025-10-29T01:00:00Z", "event_msg", {
        "type": "token_count", "info": None, "rate_limits": {"primary": {"used_percent": 7.0}}})]
    f = write_jsonl(tmp_path / f"rollout-2025-10-29T00-59-38-{CODEX_ID}.jsonl", lines)
    rep = import_path(db, f, "codex")
    s = present(db.get_session(f"codex-{CODEX_ID}"))
    assert rep.errors == [] and (s["input_tokens"], s["output_tokens"], s["api_call_count"]) == (0, 0, 0)
