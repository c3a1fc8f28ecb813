"""A home hermes-memory created: the real reference opens its state.db as one of its own (schema 22,
same objects, no migration, no index rebuild), both sides keep working on it in turn (issue 12)."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from hermes_memory.sessions.db import SessionDB
from tests.compat.helpers import (
    REFERENCES,
    assert_no_malformed,
    assert_reference_healthy,
    hm,
    hm_json,
    our_meta,
    ref,
    reference_objects,
    schema_shape,
)
from tests.mcp.helpers import call, stdio_session


def build_our_home(home: Path) -> None:
    """The same kind of home ``ref_agent.py build`` writes, written by our code."""
    hm(home, "memory", "add", "User prefers tabs — café ☕ and 日本語 notes")
    hm(home, "memory", "add", "Deploys go through the staging gateway first")
    hm(home, "memory", "add", "--target", "user", "Name: Zoë; timezone Europe/Berlin 🌍")
    db = SessionDB(home / "state.db")
    try:
        db.create_session("our-s1", source="cli", model="anthropic/claude-sonnet-4", title="Kubernetes rollout")
        db.append_message("our-s1", "user", "How do I roll out the walrus deployment on kubernetes?")
        db.append_message("our-s1", "assistant", "Let me check the cluster.", tool_calls=[
            {"id": "call_1", "type": "function",
             "function": {"name": "terminal", "arguments": '{"command": "kubectl get pods"}'}}])
        db.append_message("our-s1", "tool", "walrus-7f9 Running 0 3d", tool_name="terminal", tool_call_id="call_1")
        db.append_message("our-s1", "assistant", "The walrus deployment is healthy; use kubectl rollout restart.")
        db.update_token_counts("our-s1", input_tokens=1200, output_tokens=340)
        db.end_session("our-s1", "user_exit")
        db.create_session("our-p", source="cli")
        db.append_message("our-p", "user", "Plan the penguin migration to postgres")
        db.end_session("our-p", "compression")
        db.create_session("our-c", source="cli", parent_session_id="our-p")
        db.append_message("our-c", "user", "Continue the penguin migration, phase two")
        db.create_session("our-cjk", source="telegram", title="记忆断裂 修复")
        db.append_message("our-cjk", "user", "记忆断裂的问题已经修复了吗？")
        for n in range(3):
            db.create_session(f"our-old{n}", source="cron")
            db.append_message(f"our-old{n}", "user", f"nightly report number {n} about the otter pipeline")
            db.end_session(f"our-old{n}", "cron_complete")
        db.conn.execute("UPDATE sessions SET started_at = ? WHERE id LIKE 'our-old%'", (time.time() - 200 * 86400,))
    finally:
        db.close()


def test_new_database_has_exactly_the_reference_schema(tmp_path: Path) -> None:
    ref("0.19.0", "build", tmp_path / "theirs", {"config": False})
    SessionDB(tmp_path / "ours" / "state.db").close()
    theirs, ours = schema_shape(tmp_path / "theirs" / "state.db"), schema_shape(tmp_path / "ours" / "state.db")
    assert sorted(ours) == sorted(theirs)
    assert [k for k in theirs if ours[k] != theirs[k]] == []
    assert ours["version"] == [(22,)]
    assert our_meta(tmp_path / "ours")["created_by"] == "hermes-memory"


@pytest.mark.parametrize("version", list(REFERENCES))
def test_our_home_is_the_references_own_and_both_keep_working(version: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    build_our_home(home)
    first = reference_objects(home)

    ops = ref(version, "ops", home, {"delete": "our-s1", "deleted_word": "kubectl", "old_word": "walrus"})
    assert ops["rebuilds"] == [], ops  # its first open found all six triggers: nothing to repair
    assert_no_malformed(home, ops)
    assert ops["search_en"] == [ops["append_id"]] and ops["search_phrase"] == [ops["append_id"]]
    assert len(ops["search_cjk"]) == 1 and len(ops["search_old"]) == 3
    assert ops["after_replace"]["narwhal"] == [] and len(ops["after_replace"]["beluga"]) == 1
    assert ops["after_clear"] == [] and ops["delete"] is True and ops["after_delete"] == []
    assert ops["pruned"] == 4 and ops["after_prune"] == []  # our three old cron sessions + its own
    assert reference_objects(home) == first  # the reference changed nothing in our schema: it is its own

    # what the reference cleared or deleted left our index inside its own transactions
    assert hm_json(home, "sessions", "search", "beluga")["results"] == []
    assert hm_json(home, "sessions", "search", "kubectl")["results"] == []
    assert {h["session_id"] for h in hm_json(home, "sessions", "search", "penguin")["results"]} == {"our-p", "our-c"}
    assert hm_json(home, "sessions", "search", "新しい会議")["results"] == []
    hm(home, "sessions", "delete", "our-c", "-y")
    hm(home, "memory", "replace", "staging gateway", "Deploys go through the staging gateway, then prod")

    async def mcp() -> None:
        async with stdio_session(home) as session:
            found = await call(session, "session_search", {"query": "记忆断裂"})
            assert found["success"] and {r["session_id"] for r in found["results"]} == {"our-cjk"}, found

    anyio.run(mcp)
    assert reference_objects(home) == first

    again = ref(version, "ops", home, {"delete": "our-p", "deleted_word": "penguin", "old_word": "otter"})
    assert again["rebuilds"] == [] and again["delete"] is True and again["after_delete"] == []
    assert_reference_healthy(version, home)
    assert reference_objects(home) == first
    assert our_meta(home)["full_builds"] == "1" and "catch_ups" not in our_meta(home)
