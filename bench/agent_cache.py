"""Prompt-cache share of a scripted 50-turn agent session through the Anthropic adapter.

The real ``anthropic`` SDK talks to the local fake Anthropic server (tests/helpers/anthropic_fake.py),
which counts cached prefix tokens the way the service documents it (breakpoints, prefix match
against earlier requests with a 20-block lookback, 1024-token minimum). The agent runs its normal
turn: frozen system prompt, ``system + last 3`` breakpoints, memory tool calls on some turns.

Printed JSON (tokens are the fake server's estimate, chars/4). Two scenarios: ``close`` (a 200K
window: no compression, one memory flush at session end) and ``compressing`` (a window small enough
that the session compresses, so a flush runs before each compression too). For each, three ways of
making the flush request:

* ``shared_prefix`` (what the agent does): the session's own tools and system prompt, so the
  flush reads the prompt cache; restricted to memory by its instruction and by the loop refusing
  other tools;
* ``forced_tool``: the same plus the forced tool choice ``{"type": "tool", "name": "memory"}``,
  which the service documents as invalidating the cached message blocks;
* ``memory_only_tools`` (the agent before this change): only the ``memory`` tool offered, which
  changes the first block of the cached prefix, so the whole request is a cold cache write.

Per variant: requests, input tokens, cache read / write, ``cache_share`` (whole session, goal
>= 0.90) and ``cache_share_without_flush`` (the same without the flush requests),
``cost_uncached_equiv`` (input tokens priced as uncached = 1, cache write = 1.25, cache read = 0.1,
the service's multipliers for the 5-minute cache) and the flush requests' own figures and share of
that cost; ``system_prompt_changes`` is the number of distinct system prompts sent during the
session (1 = the frozen snapshot held all session; each compression that reloads a changed memory
snapshot adds one). ``without_breakpoints`` (caching off) is the lower bound.

Usage: ``python bench/agent_cache.py [--turns 50]``. Runs in a temporary home; no network.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.helpers (the local wire-format servers)

from tests.helpers.anthropic_fake import FakeAnthropicServer  # noqa: E402

from hermes_memory.agent import Agent  # noqa: E402
from hermes_memory.agent.prompt import FLUSH_PROMPT  # noqa: E402
from hermes_memory.config import HermesConfig  # noqa: E402
from hermes_memory.llm.anthropic import AnthropicModel  # noqa: E402
from hermes_memory.memory import MEMORY_TOOL_SCHEMA  # noqa: E402

WRITE_PRICE, READ_PRICE = 1.25, 0.1
"""Cache write / read price relative to an uncached input token (Anthropic, 5-minute cache)."""

MEMORY_TURNS = {5: ("user", "User is a data engineer in Lisbon."),
                18: ("memory", "Warehouse is Postgres 16 with dbt models."),
                33: ("user", "User prefers concise answers with SQL examples.")}

TOPICS = ["partitioning", "vacuum settings", "dbt incremental models", "index bloat", "connection pooling",
          "query plans", "materialized views", "late-arriving data", "CDC pipelines", "backfills"]


def user_message(turn: int) -> str:
    topic = TOPICS[turn % len(TOPICS)]
    return (f"Turn {turn}: I'm looking at {topic} in our warehouse. The nightly job touched about "
            f"{1000 + 37 * turn} rows and took {3 + turn % 7} minutes; what should I check next?")


def responder(turns_seen: dict[str, int]):
    def reply(body: dict[str, Any]) -> Any:
        msgs = body["messages"]
        last = msgs[-1]
        # a tool result came back: answer in text
        if isinstance(last["content"], list) and any(b.get("type") == "tool_result" for b in last["content"]):
            return "Saved that for next time."
        text = "".join(b.get("text", "") for b in last["content"]) if isinstance(last["content"], list) \
            else last["content"]
        if not body.get("system"):
            return "SUMMARY: warehouse tuning discussion."
        if text.startswith("[Memory"):
            return "Nothing to save."
        turn = int(text.split(":", 1)[0].split()[-1]) if text.startswith("Turn ") else -1
        turns_seen["n"] = max(turns_seen["n"], turn)
        if turn in MEMORY_TURNS:
            target, content = MEMORY_TURNS[turn]
            return {"role": "assistant", "content": None, "tool_calls": [{
                "id": f"toolu_{turn}", "type": "function",
                "function": {"name": "memory", "arguments": json.dumps(
                    {"action": "add", "target": target, "content": content})}}]}
        return (f"For turn {turn}, start with the table statistics, then compare the plan before and after; "
                "check autovacuum thresholds and the dbt run log for skipped models. " * 2).strip()
    return reply


class MemoryOnlyFlushAgent(Agent):
    """The flush as it was before sharing the prefix: ``memory`` as its only tool, nothing forced."""

    def _side_call_tools(self, model):  # noqa: ANN001, ANN202 (bench override)
        return [MEMORY_TOOL_SCHEMA], False


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return content or ""


def _kind(body: dict[str, Any]) -> str:
    if not body.get("system"):
        return "summary"
    return "flush" if _text(body["messages"][-1]).startswith(FLUSH_PROMPT[:20]) else "turn"


def _figures(usages: list[dict[str, int]]) -> dict[str, Any]:
    total = sum(u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"] for u in usages)
    read = sum(u["cache_read_input_tokens"] for u in usages)
    write = sum(u["cache_creation_input_tokens"] for u in usages)
    cost = sum(u["input_tokens"] + WRITE_PRICE * u["cache_creation_input_tokens"]
               + READ_PRICE * u["cache_read_input_tokens"] for u in usages)
    return {"requests": len(usages), "input_tokens": total, "cache_read_tokens": read, "cache_write_tokens": write,
            "uncached_tokens": total - read - write, "cache_share": round(read / total, 4) if total else 0.0,
            "cost_uncached_equiv": round(cost, 1)}


def run_session(turns: int, *, caching: bool = True, variant: str = "shared_prefix",
                context_length: int = 200_000) -> dict[str, Any]:
    seen = {"n": 0}
    with tempfile.TemporaryDirectory() as tmp, FakeAnthropicServer(default=responder(seen)) as srv:
        model = AnthropicModel("claude-fake", base_url=srv.url, api_key="bench", max_retries=0,
                               context_length=context_length)
        if not caching:
            model.supports_cache_control = False  # the loop then adds no breakpoints
        cfg = HermesConfig.model_validate({"memory": {"nudge_interval": 0}})
        agent = (MemoryOnlyFlushAgent if variant == "memory_only_tools" else Agent)(model, home=tmp, config=cfg)
        if variant == "forced_tool":
            agent.flush_force_tool = True
        for turn in range(1, turns + 1):
            agent.run_turn(user_message(turn))
        agent.close()
        kinds = [_kind(r.body) for r in srv.requests]
        usages = [r["usage"] for r in srv.responses]
        systems = {json.dumps(r.body.get("system"), sort_keys=True) for r in srv.requests if r.body.get("system")}
        compressions = agent.compressor.compression_count
    every = _figures(usages)
    flush = _figures([u for u, k in zip(usages, kinds, strict=True) if k == "flush"])
    rest = _figures([u for u, k in zip(usages, kinds, strict=True) if k != "flush"])
    per_request = [u["cache_read_input_tokens"] / max(1, u["input_tokens"] + u["cache_read_input_tokens"]
                                                      + u["cache_creation_input_tokens"]) for u in usages]
    return {
        **every,
        "cache_share_without_flush": rest["cache_share"],
        "median_request_cache_share": round(statistics.median(per_request), 4) if per_request else 0.0,
        "flush": {**flush, "share_of_session_cost": round(flush["cost_uncached_equiv"] / every["cost_uncached_equiv"], 4)
                  if every["cost_uncached_equiv"] else 0.0},
        "compressions": compressions,
        "memory_writes": len(MEMORY_TURNS),
        "system_prompt_changes": len(systems),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--compressing-window", type=int, default=12_000,
                        help="context window (tokens) of the 'compressing' scenario")
    args = parser.parse_args()
    out: dict[str, Any] = {"benchmark": "agent_cache", "turns": args.turns,
                           "adapter": "anthropic (official SDK) -> local fake server",
                           "prices": {"uncached": 1.0, "cache_write": WRITE_PRICE, "cache_read": READ_PRICE}}
    for scenario, window in (("close", 200_000), ("compressing", args.compressing_window)):
        variants = {v: run_session(args.turns, variant=v, context_length=window)
                    for v in ("shared_prefix", "forced_tool", "memory_only_tools")}
        base = variants["memory_only_tools"]["cost_uncached_equiv"]
        out[scenario] = {
            "context_length": window,
            **variants,
            "without_breakpoints": run_session(args.turns, caching=False, context_length=window),
            "cost_ratio_shared_vs_memory_only": round(variants["shared_prefix"]["cost_uncached_equiv"] / base, 4)
            if base else None,
        }
    out["goal_cache_share"] = 0.90
    out["meets_goal"] = all(out[s]["shared_prefix"]["cache_share"] >= 0.90 for s in ("close", "compressing"))
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
