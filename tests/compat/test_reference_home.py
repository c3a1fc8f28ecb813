"""A home the real reference agent built (0.19.0 / schema 22 and 0.18.0 / schema 17): every command of
ours works on it, and afterwards the reference finds its schema exactly as it left it, its indexes
healthy, and every SessionDB operation working (issue 12, state.db part).

Whether the reference also writes its full default ``config.yaml`` is
:data:`tests.compat.helpers.WRITE_REFERENCE_CONFIG`; the subject here is state.db and the memory files.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import anyio
import pytest

from hermes_memory.sessions.db import SessionDB
from tests.compat.helpers import (
    REFERENCES,
    WRITE_REFERENCE_CONFIG,
    assert_no_malformed,
    assert_reference_healthy,
    hm,
    hm_json,
    our_meta,
    ref,
    reference_objects,
)
from tests.mcp.helpers import call, import_claude_code_transcript, stdio_session

VERSIONS = list(REFERENCES)


def _our_ids(home: Path, query: str) -> set[int]:
    db = SessionDB(home / "state.db")
    try:
        return {r["id"] for r in db.search_messages(query, limit=1000, raise_errors=True)}
    finally:
        db.close()


@pytest.mark.parametrize("version", VERSIONS)
def test_reference_home_every_command_of_ours_then_reference_operations(version: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    built = ref(version, "build", home, {"config": WRITE_REFERENCE_CONFIG})
    assert built["version"] == REFERENCES[version][1]
    before = reference_objects(home)
    assert {o[1] for o in before} >= {"messages_fts", "messages_fts_trigram", "messages_fts_insert",
                                      "messages_fts_trigram_update"}

    # --- our commands, one after the other, on the reference's home
    listed = {s["id"] for s in hm_json(home, "sessions", "list")["sessions"]}
    assert {"ref-s1", "ref-p", "ref-c", "ref-cjk", "ref-old0"} <= listed
    shown = hm_json(home, "sessions", "show", "ref-s1")
    assert shown["title"] == "Kubernetes rollout"
    assert [m.get("tool_name") for m in shown["messages"]].count("terminal") == 1
    assert {h["session_id"] for h in hm_json(home, "sessions", "search", "walrus")["results"]} == {"ref-s1"}
    assert {h["session_id"] for h in hm_json(home, "sessions", "search", "记忆断裂")["results"]} == {"ref-cjk"}
    exported = tmp_path / "export.json"
    hm(home, "sessions", "export", "-o", str(exported))
    assert "ref-c" in exported.read_text(encoding="utf-8")
    import_claude_code_transcript(home)
    assert {h["session_id"] for h in hm_json(home, "sessions", "search", "pgbouncer")["results"]}
    hm(home, "sessions", "delete", "ref-old0", "-y")
    pruned = hm_json(home, "sessions", "prune", "--older-than", "150", "--source", "cron", "-y")
    assert pruned["pruned"] == 2, pruned

    assert "café ☕" in hm(home, "memory", "show")
    hm(home, "memory", "add", "Prefers 日本語 docs — naïve résumé ✓")
    hm(home, "memory", "replace", "staging gateway", "Deploys go through the staging gateway, then prod")
    hm(home, "memory", "remove", "naïve résumé")
    hm(home, "memory", "add", "--target", "user", "Likes otters 🦦")

    async def mcp() -> None:
        async with stdio_session(home) as session:
            found = await call(session, "session_search", {"query": "penguin migration"})
            assert found["success"] and {r["session_id"] for r in found["results"]} & {"ref-p", "ref-c"}, found
            added = await call(session, "memory", {"action": "add", "target": "memory", "content": "via MCP ✓"})
            assert added["success"], added

    anyio.run(mcp)
    assert "holographic" in hm(home, "providers", "list").lower()

    # --- the reference's schema is exactly as it left it; ours is beside it
    assert reference_objects(home) == before
    meta = our_meta(home)
    assert meta["full_builds"] == "1" and "created_by" not in meta

    # --- the reference reopens the home: every operation works and finds what it should
    ops = ref(version, "ops", home, {"delete": "ref-s1", "deleted_word": "kubectl", "old_word": "walrus"})
    assert ops["search_en"] == [ops["append_id"]] and ops["search_phrase"] == [ops["append_id"]]
    assert len(ops["search_cjk"]) == 1 and len(ops["search_old"]) == 3
    assert ops["after_replace"]["narwhal"] == [] and len(ops["after_replace"]["beluga"]) == 1
    assert ops["after_clear"] == [] and ops["delete"] is True and ops["after_delete"] == []
    # the reference prunes ended sessions older than 90 days: its own marmot session, and the Claude
    # Code transcript we imported (ended at its last message, 2026-01-05) once that is 90 days ago
    imported_ended_at = datetime(2026, 1, 5, 10, 1, tzinfo=UTC).timestamp()
    expected_pruned = 1 + (time.time() - imported_ended_at > 90 * 86400)
    assert ops["pruned"] == expected_pruned and ops["after_prune"] == [], ops["pruned"]
    assert ops["rebuilds"] == [], ops
    assert_no_malformed(home, ops)
    assert "ref-s1" not in ops["session_ids"] and "ref-old1" not in ops["session_ids"]
    assert_reference_healthy(version, home)
    assert reference_objects(home) == before
    memory = (home / "memories" / "MEMORY.md").read_text(encoding="utf-8")
    assert "via MCP ✓" in memory and "then prod" in memory and "naïve" not in memory

    # --- and we still work after it, with no rebuild: our triggers ran inside its writes
    assert hm_json(home, "sessions", "search", "beluga")["results"] == []
    assert our_meta(home)["full_builds"] == "1"


@pytest.mark.parametrize("version", VERSIONS)
def test_search_parity_every_reference_hit_is_ours_too(version: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    ref(version, "build", home, {"config": WRITE_REFERENCE_CONFIG})
    theirs = ref(version, "search", home)["results"]
    assert all(theirs.values()), theirs  # every query finds something there: the check below is not vacuous
    missing = {q: sorted(set(ids) - _our_ids(home, q)) for q, ids in theirs.items()}
    assert all(not m for m in missing.values()), json.dumps(missing, ensure_ascii=False)
