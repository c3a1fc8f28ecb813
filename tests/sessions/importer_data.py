"""A Codex rollout as the `codex` CLI writes it, for the importer tests (Claude.ai/Codex and Codex origin)."""

from __future__ import annotations

import json
from pathlib import Path

CODEX_ID = "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"
"""The session id of :func:`codex_rollout`."""


def rollout_line(ts: str, kind: str, payload: object) -> dict:
    """One line of a Codex rollout file: ``{timestamp, type, payload}``."""
    return {"timestamp": ts, "type": kind, "payload": payload}


def codex_rollout() -> list:
    """A `codex` TUI session: context, a question, a shell call and its output, the answer."""
    env = "<environment_context>\n  <cwd>/home/dev/shop</cwd>\n  <approval_policy>on-request</approval_policy>\n</environment_context>"
    return [
        rollout_line("2025-10-29T00:59:38.317Z", "session_meta", {
            "id": CODEX_ID, "timestamp": "2025-10-29T00:59:38.308Z", "cwd": "/home/dev/shop",
            "originator": "codex_cli_rs", "cli_version": "0.46.0", "instructions": None, "source": "cli",
            "git": {"commit_hash": "4f2c1d9", "branch": "fix/pgbouncer", "repository_url": "git@example.org:shop.git"}}),
        rollout_line("2025-10-29T00:59:38.317Z", "response_item", {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": env}]}),
        rollout_line("2025-10-29T00:59:40.100Z", "response_item", {
            "type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "Why does pgbouncer refuse connections after the deploy?"}]}),
        rollout_line("2025-10-29T00:59:40.100Z", "event_msg", {
            "type": "user_message", "message": "Why does pgbouncer refuse connections after the deploy?",
            "kind": "plain"}),
        rollout_line("2025-10-29T00:59:40.101Z", "turn_context", {
            "cwd": "/home/dev/shop", "approval_policy": "on-request", "sandbox_policy": {"mode": "workspace-write"},
            "model": "gpt-5-codex", "effort": "medium", "summary": "auto"}),
        rollout_line("2025-10-29T00:59:42.522Z", "response_item", {
            "type": "reasoning", "summary": [{"type": "summary_text", "text": "**Checking the pool config**"}],
            "content": None, "encrypted_content": "gAAAAABo..."}),
        rollout_line("2025-10-29T00:59:43.000Z", "response_item", {
            "type": "function_call", "name": "shell", "call_id": "call_Jw3xZ5",
            "arguments": json.dumps({"command": ["bash", "-lc", "grep -n max_client_conn pgbouncer.ini"],
                                     "workdir": "/home/dev/shop"})}),
        rollout_line("2025-10-29T00:59:43.400Z", "response_item", {
            "type": "function_call_output", "call_id": "call_Jw3xZ5",
            "output": json.dumps({"output": "12:max_client_conn = 20\n", "metadata": {"exit_code": 0,
                                                                                   "duration_seconds": 0.1}})}),
        rollout_line("2025-10-29T00:59:45.644Z", "response_item", {
            "type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "max_client_conn is 20; the new workers open 32 connections."}]}),
        rollout_line("2025-10-29T00:59:45.700Z", "event_msg", {
            "type": "token_count", "info": {"total_token_usage": {"input_tokens": 2946, "cached_input_tokens": 0,
                                                                  "output_tokens": 57, "total_tokens": 3003}}}),
    ]


def write_jsonl(path: Path, lines: list, extra: list[str] | None = None) -> Path:
    """Write ``lines`` as JSON lines (then the raw ``extra`` lines, e.g. malformed ones) to ``path``; returns it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join([json.dumps(x) for x in lines] + (extra or [])) + "\n", encoding="utf-8")
    return path
