"""Prompt-cache share of a scripted 50-turn agent session through the Anthropic adapter.

The real ``anthropic`` SDK talks to the local fake Anthropic server (tests/agent/fakes/servers.py),
which counts cached prefix tokens the way the service documents it (breakpoints, prefix match
against earlier requests with a 20-block lookback, 1024-token minimum). The agent runs its normal
turn: frozen system prompt, ``system + last 3`` breakpoints, memory tool calls on some turns.

Printed JSON (tokens are the fake server's estimate, chars/4):
* ``with_breakpoints``: input tokens, cache read / write, share served from cache (goal >= 0.90),
  median per-request share, requests, memory writes;
* ``without_breakpoints``: the same session with prompt caching off (the adapter sends no markers),
  as the lower bound;
* ``system_prompt_changes``: distinct system prompts sent during the session (1 = frozen snapshot).

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
sys.path.insert(0, str(ROOT))  # for tests.agent.fakes (the local wire-format servers)

from tests.agent.fakes.servers import FakeAnthropicServer  # noqa: E402

from hermes_memory.agent import Agent  # noqa: E402
from hermes_memory.config import HermesConfig  # noqa: E402
from hermes_memory.llm.anthropic import AnthropicModel  # noqa: E402

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


def run_session(turns: int, caching: bool) -> dict[str, Any]:
    seen = {"n": 0}
    with tempfile.TemporaryDirectory() as tmp, FakeAnthropicServer(default=responder(seen)) as srv:
        model = AnthropicModel("claude-fake", base_url=srv.url, api_key="bench", max_retries=0,
                               context_length=200_000)
        if not caching:
            model.supports_cache_control = False  # the loop then adds no breakpoints
        cfg = HermesConfig.model_validate({"memory": {"nudge_interval": 0}})
        agent = Agent(model, home=tmp, config=cfg)
        for turn in range(1, turns + 1):
            agent.run_turn(user_message(turn))
        agent.close()
        usages = [r["usage"] for r in srv.responses]
        systems = {json.dumps(r["body"].get("system"), sort_keys=True) for r in srv.requests}
    total = sum(u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"] for u in usages)
    read = sum(u["cache_read_input_tokens"] for u in usages)
    write = sum(u["cache_creation_input_tokens"] for u in usages)
    per_request = [u["cache_read_input_tokens"] / max(1, u["input_tokens"] + u["cache_read_input_tokens"]
                                                      + u["cache_creation_input_tokens"]) for u in usages]
    return {
        "requests": len(usages),
        "input_tokens": total,
        "cache_read_tokens": read,
        "cache_write_tokens": write,
        "uncached_tokens": total - read - write,
        "cache_share": round(read / total, 4) if total else 0.0,
        "median_request_cache_share": round(statistics.median(per_request), 4) if per_request else 0.0,
        "memory_writes": len(MEMORY_TURNS),
        "system_prompt_changes": len(systems),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=50)
    args = parser.parse_args()
    with_bp = run_session(args.turns, caching=True)
    without = run_session(args.turns, caching=False)
    print(json.dumps({
        "benchmark": "agent_cache",
        "turns": args.turns,
        "adapter": "anthropic (official SDK) -> local fake server",
        "with_breakpoints": with_bp,
        "without_breakpoints": without,
        "goal_cache_share": 0.90,
        "meets_goal": with_bp["cache_share"] >= 0.90,
    }, indent=2))


if __name__ == "__main__":
    main()
