"""Holographic tools under hostile arguments: every call returns a JSON object, never raises.

Review findings: non-string categories or update content, ids beyond SQLite's 64-bit range,
an infinite ``limit`` and non-dict argument objects escaped ``handle_tool_call`` as Python
exceptions; a NaN ``trust_delta`` silently zeroed a fact's trust; a float id was truncated to
another fact's id; a megabyte "fact" was stored and then recalled into every prompt.
"""

from __future__ import annotations

import json

import pytest

from hermes_memory.plugins.holographic import HolographicProvider
from hermes_memory.plugins.holographic.store import MAX_FACT_CHARS


@pytest.fixture
def provider(hermes_home):
    p = HolographicProvider()
    p.initialize("s1", hermes_home=str(hermes_home), platform="cli", agent_context="primary")
    p.handle_tool_call("fact_store", {"action": "add", "content": "Alice lives in Paris"})
    yield p
    p.shutdown()


@pytest.mark.parametrize("tool,args", [
    ("fact_store", {"action": "add", "content": "x", "category": ["a"]}),
    ("fact_store", {"action": "add", "content": "y", "category": 5}),
    ("fact_store", {"action": "add", "content": ["a", "b"]}),
    ("fact_store", {"action": "add", "content": {"x": 1}}),
    ("fact_store", {"action": "update", "fact_id": 1, "content": 42}),
    ("fact_store", {"action": "update", "fact_id": 1, "category": 7}),
    ("fact_store", {"action": "update", "fact_id": 1, "tags": 7}),
    ("fact_store", {"action": "update", "fact_id": 10**30}),
    ("fact_store", {"action": "update", "fact_id": 1.7, "content": "Alice lives in Lyon"}),
    ("fact_store", {"action": "update", "fact_id": 1, "trust_delta": float("nan")}),
    ("fact_store", {"action": "update", "fact_id": 1, "trust_delta": float("inf")}),
    ("fact_store", {"action": "remove", "fact_id": 10**30}),
    ("fact_store", {"action": "remove", "fact_id": float("inf")}),
    ("fact_store", {"action": "search", "query": "paris", "limit": float("inf")}),
    ("fact_store", {"action": "search", "query": "paris", "min_trust": float("nan")}),
    ("fact_store", {"action": "list", "category": ["x"]}),
    ("fact_store", {"action": "reason", "entities": 5}),
    ("fact_feedback", {"action": "helpful", "fact_id": 10**30}),
    ("fact_store", ["add"]),
    ("fact_store", "add"),
])
def test_bad_arguments_give_a_json_error_and_change_nothing(provider, tool, args):
    before = json.loads(provider.handle_tool_call("fact_store", {"action": "list"}))
    out = json.loads(provider.handle_tool_call(tool, args))
    assert isinstance(out, dict) and isinstance(out.get("error"), str) and out["error"], out
    after = json.loads(provider.handle_tool_call("fact_store", {"action": "list"}))
    assert after == before


def test_oversized_fact_is_refused_with_the_limit(provider):
    out = json.loads(provider.handle_tool_call("fact_store", {"action": "add", "content": "word " * 400_000}))
    assert str(MAX_FACT_CHARS) in out["error"]
    assert json.loads(provider.handle_tool_call("fact_store", {"action": "list"}))["count"] == 1
    ok = json.loads(provider.handle_tool_call("fact_store", {"action": "add", "content": "a" * MAX_FACT_CHARS}))
    assert ok["status"] == "added"


def test_string_ids_and_numbers_are_still_accepted(provider):
    out = json.loads(provider.handle_tool_call("fact_store", {"action": "update", "fact_id": "1", "trust_delta": "0.1"}))
    assert out["updated"] is True and out["fact"]["trust_score"] == pytest.approx(0.6)
    out = json.loads(provider.handle_tool_call("fact_store", {"action": "update", "fact_id": 1.0, "tags": "home"}))
    assert out["fact"]["tags"] == "home"


def test_cjk_and_sql_special_characters_round_trip(provider):
    for text in ("用户喜欢喝绿茶", "'; DROP TABLE facts; --", "50% of _tests_ pass \\ ok", 'say "hi" NEAR/3 OR *'):
        fid = json.loads(provider.handle_tool_call("fact_store", {"action": "add", "content": text}))["fact_id"]
        found = json.loads(provider.handle_tool_call("fact_store", {"action": "search", "query": text}))
        assert fid in [r["fact_id"] for r in found["results"]], (text, found)


@pytest.mark.parametrize("key,value", [("hrr_dim", -3), ("default_trust", 5), ("hrr_weight", -1),
                                       ("min_trust_threshold", 2), ("temporal_decay_half_life", -1)])
def test_out_of_range_setting_is_a_clear_error_not_clamped(hermes_home, key, value):
    from hermes_memory.config import update_config
    from hermes_memory.errors import ConfigError

    update_config(hermes_home / "config.yaml", {f"holographic.{key}": value})
    with pytest.raises(ConfigError, match=f"holographic.{key}"):
        HolographicProvider().initialize("s", hermes_home=str(hermes_home), platform="cli", agent_context="primary")


def test_db_path_under_a_file_is_a_clear_error(hermes_home):
    (hermes_home / "afile").write_text("")
    p = HolographicProvider(config={"db_path": str(hermes_home / "afile" / "facts.db")})
    with pytest.raises(RuntimeError, match="holographic.db_path"):
        p.initialize("s", hermes_home=str(hermes_home), platform="cli", agent_context="primary")
    assert "holographic.db_path" in json.loads(p.handle_tool_call("fact_store", {"action": "list"}))["error"]


def test_mirroring_a_builtin_entry_longer_than_a_fact_keeps_its_head(provider):
    # built-in entries may be longer than MAX_FACT_CHARS (memory_char_limit is configurable); the
    # size check must not drop the mirror (a replace used to delete the mirrored fact instead)
    long_text = "Project Apollo notes: " + "x" * MAX_FACT_CHARS
    provider.on_memory_write("add", "memory", long_text)
    facts = json.loads(provider.handle_tool_call("fact_store", {"action": "list", "limit": 100}))["facts"]
    mirrored = [f for f in facts if "builtin-memory" in f["tags"]]
    assert len(mirrored) == 1 and mirrored[0]["content"] == long_text[:MAX_FACT_CHARS]
    provider.on_memory_write("replace", "memory", "Project Apollo: " + "y" * MAX_FACT_CHARS,
                             metadata={"old_text": "Project Apollo notes"})
    facts = json.loads(provider.handle_tool_call("fact_store", {"action": "list", "limit": 100}))["facts"]
    mirrored = [f for f in facts if "builtin-memory" in f["tags"]]
    assert len(mirrored) == 1 and mirrored[0]["content"].startswith("Project Apollo: yyy")
