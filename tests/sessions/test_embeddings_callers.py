"""Every caller of search gets semantic search when ``search.embeddings`` is on: the MCP server
(whose background indexer embeds what is stored), ``sessions search`` and the hooks' recall."""

from __future__ import annotations

import json
import time
from pathlib import Path

import anyio

from hermes_memory.sessions.db import SessionDB
from tests.hooks.helpers import cli, run_hook
from tests.mcp.helpers import call, stdio_session

CAR = "I left my car at the mechanic on Baker Street for new brakes"


def _home_with_history(home: Path, embeddings: str = "on") -> None:
    (home / "config.yaml").write_text(f"search:\n  embeddings: {embeddings}\n", encoding="utf-8")
    with SessionDB(home / "state.db") as db:
        db.create_session("old", source="cli")
        db.append_message("old", "user", CAR)
        db.append_message("old", "assistant", "Noted: the brakes get replaced on Thursday.")
        db.create_session("other", source="cli")
        db.append_message("other", "user", "Our picnic is on Sunday by the river")


def test_serve_indexes_in_the_background_and_session_search_finds_a_paraphrase(hermes_home: Path) -> None:
    _home_with_history(hermes_home)

    async def main() -> dict:
        async with stdio_session(hermes_home) as s:
            deadline = time.monotonic() + 240
            while True:  # the server's indexer thread embeds the history meanwhile
                found = await call(s, "session_search", {"query": "automobile repair"})
                if found["count"] or time.monotonic() > deadline:
                    return found
                await anyio.sleep(0.5)

    found = anyio.run(main)
    assert found["success"] is True and found["count"] >= 1
    assert found["results"][0]["session_id"] == "old"


def test_cli_search_and_hook_recall_use_the_vectors_and_ignore_them_when_off(hermes_home: Path) -> None:
    _home_with_history(hermes_home)
    home = ["--home", str(hermes_home)]
    before = json.loads(cli(*home, "sessions", "search", "automobile", "--json").stdout)
    assert before["count"] == 0  # nothing embedded yet: lexical results (none share a word)
    status = json.loads(cli(*home, "sessions", "reindex", "--status", "--json").stdout)
    assert (status["indexed"], status["pending"], status["search_embeddings"]) == (0, 3, "on")
    r = cli(*home, "sessions", "reindex", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["embedded"] == 3
    status = json.loads(cli(*home, "sessions", "reindex", "--status", "--json").stdout)
    assert (status["indexed"], status["pending"]) == (3, 0)
    after = json.loads(cli(*home, "sessions", "search", "automobile", "--json").stdout)
    assert after["results"][0]["session_id"] == "old"  # both turns about the car repair lead
    assert CAR in [r["snippet"] for r in after["results"][:2]]
    prompt = {"session_id": "live", "hook_event_name": "UserPromptSubmit", "cwd": "/tmp",
              "prompt": "where is my automobile being repaired?"}
    recall = run_hook("UserPromptSubmit", prompt, budget=30)
    assert recall.returncode == 0, recall.stderr
    assert "Baker Street" in json.loads(recall.stdout)["hookSpecificOutput"]["additionalContext"]
    (hermes_home / "config.yaml").write_text("search:\n  embeddings: off\n", encoding="utf-8")
    off = json.loads(cli(*home, "sessions", "search", "automobile", "--json").stdout)
    assert off["count"] == 0
