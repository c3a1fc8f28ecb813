"""``memory_tool`` dispatcher and schema (docs/reference.md §1: messages and result shapes).

``store`` runs every test on both backends (file and PostgreSQL); the symlinked lock file is file-only.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_memory.memory import MEMORY_TOOL_SCHEMA, MemoryStore, memory_tool


def call(**kw) -> dict:
    out = memory_tool(**kw)
    assert isinstance(out, str)
    return json.loads(out)


def test_no_store_is_not_available() -> None:
    r = call(action="add", content="x")
    assert r == {"success": False, "error": "Memory is not available. It may be disabled in config or this environment."}


def test_invalid_target(store: MemoryStore) -> None:
    assert call(action="add", target="notes", content="x", store=store)["error"] == (
        "Invalid target 'notes'. Use 'memory' or 'user'."
    )


@pytest.mark.parametrize("kw", [{}, {"action": None, "operations": None}, {"action": ""}])
def test_missing_action_and_operations(store: MemoryStore, kw: dict) -> None:
    r = call(store=store, **kw)
    assert r["success"] is False and "Missing required parameter" in r["error"]
    assert "action" in r["error"] and "operations" in r["error"]


def test_add_requires_content(store: MemoryStore) -> None:
    assert call(action="add", store=store)["error"] == "Content is required for 'add' action."


def test_replace_without_old_text_is_recoverable(store: MemoryStore) -> None:
    store.add("memory", "fact A")
    r = call(action="replace", content="x", store=store)
    assert r["success"] is False and r["current_entries"] == ["fact A"] and r["usage"] == "6/500"
    assert "retry" in r["error"]


def test_replace_with_old_text_but_no_content(store: MemoryStore) -> None:
    store.add("memory", "fact A")
    r = call(action="replace", old_text="fact", store=store)
    assert "content is required" in r["error"] and "current_entries" not in r


def test_unknown_action(store: MemoryStore) -> None:
    assert call(action="explode", store=store)["error"] == "Unknown action 'explode'. Use: add, replace, remove"


def test_operations_must_be_list(store: MemoryStore) -> None:
    assert "must be a list" in call(operations={"action": "add"}, store=store)["error"]


def test_new_text_alias_for_add_replace_batch_and_content_wins(store: MemoryStore) -> None:
    assert call(action="add", new_text="via alias", store=store)["success"]
    assert call(action="replace", old_text="alias", new_text="via alias 2", store=store)["success"]
    assert call(operations=[{"action": "add", "new_text": "batch alias"}], store=store)["success"]
    assert call(action="add", content="content wins", new_text="loser", store=store)["success"]
    assert store.memory_entries == ["via alias 2", "batch alias", "content wins"]


def test_success_json_shape(store: MemoryStore) -> None:
    r = call(action="add", target="user", content="Prefers metric units", store=store)
    assert set(r) == {"success", "done", "target", "usage", "entry_count", "message", "note"}
    assert r["done"] is True and r["target"] == "user"


def test_batch_json_keys_are_one_based_indexes(store: MemoryStore) -> None:
    store.add("memory", "old fact")
    store.add("memory", "other fact")
    r = call(operations=[{"action": "add", "content": "x"}, {"action": "replace", "old_text": "old", "content": "new fact"}], store=store)
    assert r["replaced_entries"] == {"2": "old fact"}


def test_extra_model_arguments_are_ignored(store: MemoryStore) -> None:
    assert call(action="add", content="x fact", store=store, reasoning="because", confidence=0.9)["success"]


def test_symlinked_lock_becomes_json_error(file_store: MemoryStore, mem_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").write_text("")
    (mem_dir / "MEMORY.md.lock").symlink_to(tmp_path / "elsewhere")
    r = call(action="add", content="x fact", store=file_store)
    assert r["success"] is False and "symlink" in r["error"]


def test_background_review_origin_through_tool(store: MemoryStore) -> None:
    store.add("memory", "keep")
    r = call(action="remove", old_text="keep", store=store, origin="background_review")
    assert r["success"] is False and store.memory_entries == ["keep"]
    assert call(action="add", content="more", store=store, origin="background_review")["success"]


def test_schema_shape() -> None:
    s = MEMORY_TOOL_SCHEMA
    assert s["name"] == "memory"
    params = s["parameters"]
    assert params["required"] == ["target"]
    assert params["properties"]["action"]["enum"] == ["add", "replace", "remove"]
    assert params["properties"]["target"]["enum"] == ["memory", "user"]
    assert params["properties"]["operations"]["type"] == "array"
    assert set(params["properties"]["operations"]["items"]["properties"]) == {"action", "content", "old_text"}
    desc = s["description"].lower()
    for word in ("proactively", "preferences", "operations", "do not save", "skill"):
        assert word in desc
    json.dumps(s)  # serialisable as-is
