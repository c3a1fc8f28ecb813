"""Holographic provider: store, HRR algebra, tools, hooks, the no-numpy fallback and persistence."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from hermes_memory.config import update_config
from hermes_memory.plugins.holographic import HolographicProvider, hrr, parse_bool
from hermes_memory.plugins.holographic.entities import extract_entities
from hermes_memory.plugins.holographic.store import FactStore, fts_query
from hermes_memory.providers.manager import MemoryManager

SRC = str(Path(__file__).resolve().parents[2] / "src")


@pytest.fixture
def provider(hermes_home):
    p = HolographicProvider()
    p.initialize("s1", hermes_home=str(hermes_home), platform="cli", agent_context="primary")
    yield p
    p.shutdown()


def call(p, tool="fact_store", **args):
    return json.loads(p.handle_tool_call(tool, args))


def add(p, content, **kw):
    out = call(p, action="add", content=content, **kw)
    assert out["status"] == "added", out
    return out["fact_id"]


# --------------------------------------------------------------------------- HRR algebra
def test_atoms_are_deterministic_and_match_the_sha256_recipe():
    import hashlib

    a = hrr.atom("coffee", 64)
    raw = b"".join(hashlib.sha256(f"coffee:{i}".encode()).digest() for i in range(4))
    expected = np.frombuffer(raw, dtype="<u2")[:64] * (2 * np.pi / 65536)
    assert np.allclose(a, expected)
    assert np.array_equal(hrr.atom("coffee", 64), a)
    assert abs(hrr.similarity(hrr.atom("coffee"), hrr.atom("tea"))) < 0.15


def test_bind_unbind_roundtrip_and_bundle_keeps_members():
    a, b, c = hrr.atom("a"), hrr.atom("b"), hrr.atom("c")
    assert hrr.similarity(hrr.unbind(hrr.bind(a, b), a), b) > 0.999
    bundled = hrr.bundle(a, b, c)
    for v in (a, b, c):
        assert hrr.similarity(bundled, v) > 0.3
    assert abs(hrr.similarity(bundled, hrr.atom("unrelated"))) < 0.15


def test_vector_serialisation_roundtrip_and_legacy_float64():
    v = hrr.encode_text("hello world")
    assert hrr.to_bytes(v)[:4] == b"HRR1"
    assert np.allclose(hrr.from_bytes(hrr.to_bytes(v), 1024), v, atol=1e-5)
    assert np.allclose(hrr.from_bytes(v.astype("<f8").tobytes()), v)
    assert hrr.from_bytes(None) is None


# --------------------------------------------------------------------------- store
def test_entity_extraction_rules():
    assert extract_entities('Alice Smith works at Acme Corp in Berlin.') == ["Alice Smith", "Acme Corp", "Berlin"]
    assert extract_entities('The user prefers "dark mode" in VS Code') == ["dark mode", "VS Code"]
    assert extract_entities("Bob aka Bobby likes tea") == ["Bob", "Bobby"]
    assert extract_entities("Project Status: all green") == []
    assert extract_entities("I met Carol's brother") == ["Carol"]


def test_duplicate_content_returns_existing_id_unchanged(provider):
    fid = add(provider, "Uses uv for Python packaging")
    again = call(provider, action="add", content="  Uses uv for Python packaging ")
    assert again == {"fact_id": fid, "status": "exists", "entities": ["Python"]}
    assert provider.store.count() == 1


def test_fts_index_follows_update_and_remove(provider):
    fid = add(provider, "Deploys with Ansible")
    assert [r["fact_id"] for r in call(provider, action="search", query="ansible")["results"]] == [fid]
    call(provider, action="update", fact_id=fid, content="Deploys with Terraform")
    assert call(provider, action="search", query="ansible")["count"] == 0
    assert call(provider, action="search", query="terraform")["count"] == 1
    assert call(provider, action="remove", fact_id=fid) == {"removed": True, "fact_id": fid}
    assert call(provider, action="search", query="terraform")["count"] == 0
    assert "no fact" in call(provider, action="remove", fact_id=fid)["error"]


@pytest.mark.parametrize("query", ['C++', '"unterminated', "(problem", "hello AND", "***", "{test}", "OR hello",
                                   "a AND OR b", "NEAR(x y)", "col:val", "", "   "])
def test_malformed_search_never_raises(provider, query):
    add(provider, "hello world from C++ code")
    out = call(provider, action="search", query=query)
    assert "results" in out or "error" in out


def test_fts_query_quotes_every_term():
    assert fts_query('C++ AND "drop" table*') == '"drop" OR "table"'
    assert fts_query("the a an") == ""


def test_created_and_updated_times(provider):
    fid = add(provider, "Team standup is at 9:30")
    fact = call(provider, action="list")["facts"][0]
    assert fact["created_at"] == fact["updated_at"] and fact["created_at"].endswith("+00:00")
    with provider.store.lock:
        provider.store.conn.execute("UPDATE facts SET created_at = created_at - 100, updated_at = updated_at - 100")
    out = call(provider, action="update", fact_id=fid, content="Team standup is at 10:00")
    assert out["updated"] is True
    assert out["fact"]["updated_at"] > out["fact"]["created_at"]


# --------------------------------------------------------------------------- tools
def test_reason_across_two_entities(provider):
    a = add(provider, "Alice Smith works at Acme Corp")
    add(provider, "Acme Corp is based in Berlin")
    add(provider, "Bob Jones works at Acme Corp")
    add(provider, "Alice Smith likes green tea")
    direct = call(provider, action="reason", entities=["Alice Smith", "Acme Corp"])
    assert [r["fact_id"] for r in direct["results"]] == [a]
    assert set(direct["results"][0]["entity_scores"]) == {"Alice Smith", "Acme Corp"}
    # no single fact links Alice and Berlin: a two-fact chain through Acme Corp does
    chain = call(provider, action="reason", entities=["Alice Smith", "Berlin"])
    assert chain["count"] >= 1
    first = chain["results"][0]
    assert first["via"] == "Acme Corp"
    assert [f["content"] for f in first["chain"]] == ["Alice Smith works at Acme Corp", "Acme Corp is based in Berlin"]
    assert "error" in call(provider, action="reason", entities=[])


def test_probe_and_related(provider):
    a1 = add(provider, "Alice Smith works at Acme Corp")
    a2 = add(provider, "Alice Smith likes green tea")
    b = add(provider, "Acme Corp is based in Berlin")
    add(provider, "Carol King plays chess")
    probe = call(provider, action="probe", entity="Alice Smith")
    assert {r["fact_id"] for r in probe["results"][:2]} == {a1, a2}
    related = call(provider, action="related", entity="Alice Smith")
    ids = [r["fact_id"] for r in related["results"]]
    assert set(ids[:2]) == {a1, a2} and b in ids
    assert next(r for r in related["results"] if r["fact_id"] == b)["via"] == "Acme Corp"
    assert all("Carol" not in r["content"] for r in related["results"])


def test_contradiction_found_and_explained(provider):
    paris = add(provider, "Alice Smith lives in Paris")
    london = add(provider, "Alice Smith lives in London")
    tea = add(provider, "Bob Jones likes green tea")
    no_tea = add(provider, "Bob Jones dislikes green tea")
    add(provider, "Carol King plays chess on Sundays")
    out = call(provider, action="contradict")
    pairs = {frozenset((r["fact_a"]["fact_id"], r["fact_b"]["fact_id"])): r for r in out["results"]}
    assert frozenset((paris, london)) in pairs and frozenset((tea, no_tea)) in pairs
    assert len(pairs) == 2
    where = pairs[frozenset((paris, london))]
    assert where["shared_entities"] == ["Alice Smith"]
    assert "different values" in where["reason"] and "paris" in where["reason"] and "london" in where["reason"]
    assert "opposite" in pairs[frozenset((tea, no_tea))]["reason"]
    for r in out["results"]:
        assert set(r) >= {"fact_a", "fact_b", "entity_overlap", "content_similarity", "contradiction_score",
                          "shared_entities", "reason"}


def test_negation_contradiction(provider):
    add(provider, "Dana Scully drinks coffee every morning")
    add(provider, "Dana Scully never drinks coffee")
    (r,) = call(provider, action="contradict")["results"]
    assert "negation" in r["reason"] and "never" in r["reason"]


def test_trust_feedback_changes_and_clamps(provider):
    fid = add(provider, "Prefers tabs over spaces")
    up = call(provider, "fact_feedback", action="helpful", fact_id=fid)
    assert up == {"fact_id": fid, "old_trust": 0.5, "new_trust": 0.55, "helpful_count": 1}
    down = call(provider, "fact_feedback", action="unhelpful", fact_id=fid)
    assert down["old_trust"] == 0.55 and down["new_trust"] == 0.45 and down["helpful_count"] == 1
    for _ in range(10):
        call(provider, "fact_feedback", action="unhelpful", fact_id=fid)
    assert call(provider, action="list")["facts"][0]["trust_score"] == 0.0
    # low trust hides the fact from recall, but not from list
    assert call(provider, action="search", query="tabs spaces")["count"] == 0
    assert provider.prefetch("tabs or spaces?") == ""
    call(provider, action="update", fact_id=fid, trust_delta=5)
    assert call(provider, action="list")["facts"][0]["trust_score"] == 1.0
    assert "no fact" in call(provider, "fact_feedback", action="helpful", fact_id=999)["error"]
    assert "helpful" in call(provider, "fact_feedback", action="maybe", fact_id=fid)["error"]


def test_trust_orders_search_results(provider):
    low = add(provider, "Deploy target is staging cluster")
    high = add(provider, "Deploy target is production cluster")
    for _ in range(3):
        call(provider, "fact_feedback", action="helpful", fact_id=high)
    call(provider, "fact_feedback", action="unhelpful", fact_id=low)
    ids = [r["fact_id"] for r in call(provider, action="search", query="deploy target cluster")["results"]]
    assert ids == [high, low]


def test_tool_argument_errors_are_json(provider):
    assert "unknown action" in call(provider, action="explode")["error"]
    assert "content is empty" in call(provider, action="add", content="  ")["error"]
    assert "fact_id" in call(provider, action="remove")["error"]
    assert "integer" in call(provider, action="update", fact_id="abc")["error"]
    assert "unknown tool" in call(provider, "nope")["error"]


def test_prefetch_format_and_trivial_prompt(provider):
    add(provider, "User drinks oolong tea", category="user_pref")
    text = provider.prefetch("what tea should I buy?")
    assert text == "## Holographic Memory\n- [0.50] User drinks oolong tea"
    assert provider.prefetch("ok") == ""
    assert "1 facts stored" in provider.system_prompt_block()


def test_empty_store_prompt_invites_adding_facts(provider):
    assert "empty" in provider.system_prompt_block() and "Proactively" in provider.system_prompt_block()


def test_subagent_context_is_read_only(hermes_home):
    p = HolographicProvider()
    p.initialize("s", hermes_home=str(hermes_home), platform="cli", agent_context="subagent")
    try:
        assert "read-only" in call(p, action="add", content="x y z")["error"]
        p.on_memory_write("add", "user", "likes tea")
        assert p.store.count() == 0
        assert call(p, action="list")["count"] == 0
    finally:
        p.shutdown()


# --------------------------------------------------------------------------- hooks
def test_on_memory_write_mirrors_add_replace_remove(provider):
    provider.on_memory_write("add", "user", "Prefers dark mode")
    provider.on_memory_write("add", "memory", "Repo uses pytest")
    facts = {f["content"]: f for f in call(provider, action="list")["facts"]}
    assert facts["Prefers dark mode"]["category"] == "user_pref"
    assert facts["Repo uses pytest"]["category"] == "general"
    provider.on_memory_write("replace", "user", "Prefers light mode", {"old_text": "dark mode"})
    provider.on_memory_write("remove", "memory", "", {"old_text": "pytest"})
    assert [f["content"] for f in call(provider, action="list")["facts"]] == ["Prefers light mode"]
    # a user-curated fact is never touched by the mirror
    add(provider, "Prefers light mode in the terminal")
    provider.on_memory_write("remove", "user", "", {"old_text": "terminal"})
    assert provider.store.count() == 2


def test_auto_extract_strict_boolean_and_summary_skipping(hermes_home):
    assert parse_bool("false") is False and parse_bool("true") is True and parse_bool("nonsense") is False
    update_config(hermes_home / "config.yaml", {"holographic.auto_extract": "false"})
    p = HolographicProvider()
    p.initialize("s", hermes_home=str(hermes_home), platform="cli", agent_context="primary")
    msgs = [{"role": "user", "content": "I prefer concise answers with code"},
            {"role": "user", "content": "We decided to use Postgres for the project"},
            {"role": "user", "content": "[CONTEXT COMPACTION] I prefer this summary to be stored"},
            {"role": "assistant", "content": "I prefer nothing"}]
    p.on_session_end(msgs)
    assert p.store.count() == 0  # "false" is false
    p.shutdown()
    update_config(hermes_home / "config.yaml", {"holographic.auto_extract": True})
    p.initialize("s", hermes_home=str(hermes_home), platform="cli", agent_context="primary")
    p.on_session_end(msgs)
    cats = {f["content"]: f["category"] for f in call(p, action="list")["facts"]}
    assert cats == {"I prefer concise answers with code": "user_pref",
                    "We decided to use Postgres for the project": "project"}
    p.shutdown()


def test_config_section_sets_db_path(hermes_home, tmp_path):
    update_config(hermes_home / "config.yaml", {"holographic.db_path": "$HERMES_HOME/facts/custom.db"})
    p = HolographicProvider()
    p.initialize("s", hermes_home=str(hermes_home), platform="cli", agent_context="primary")
    add(p, "stored in the custom file")
    p.shutdown()
    assert (hermes_home / "facts" / "custom.db").exists()


def test_corrupt_database_fails_loudly(hermes_home):
    (hermes_home / "memory_store.db").write_bytes(b"this is not sqlite" * 100)
    p = HolographicProvider()
    with pytest.raises(RuntimeError, match="Move the file away"):
        p.initialize("s", hermes_home=str(hermes_home), platform="cli", agent_context="primary")
    assert "cannot open" in call(p, action="list")["error"]


def test_persistence_across_restarts(hermes_home):
    p = HolographicProvider()
    p.initialize("s1", hermes_home=str(hermes_home), platform="cli", agent_context="primary")
    fid = add(p, "Alice Smith works at Acme Corp")
    call(p, "fact_feedback", action="helpful", fact_id=fid)
    p.shutdown()
    code = textwrap.dedent(f"""
        import json
        from hermes_memory.plugins.holographic import HolographicProvider
        p = HolographicProvider()
        p.initialize("s2", hermes_home={str(hermes_home)!r}, platform="cli", agent_context="primary")
        out = json.loads(p.handle_tool_call("fact_store", {{"action": "probe", "entity": "Alice Smith"}}))
        print(json.dumps(out["results"][0]))
        p.shutdown()
    """)
    env = {**os.environ, "PYTHONPATH": SRC}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    fact = json.loads(proc.stdout)
    assert fact["fact_id"] == fid and fact["trust_score"] == 0.55 and fact["content"] == "Alice Smith works at Acme Corp"


def test_bank_running_sum_matches_full_rebuild(hermes_home):
    store = FactStore(hermes_home / "bank.db")
    try:
        ids = store.add_facts([(f"Fact number {i} about Topic{i % 3}", "project", "") for i in range(20)])
        store.update_fact(ids[0], content="Changed fact about Topic9")
        store.remove_fact(ids[1])
        incremental = store.bank("project")
        store.rebuild_banks()
        assert hrr.similarity(incremental, store.bank("project")) > 0.999
    finally:
        store.close()


# --------------------------------------------------------------------------- without numpy
NO_NUMPY = textwrap.dedent("""
    import json, sys
    sys.modules["numpy"] = None          # any `import numpy` now raises ImportError
    from hermes_memory.plugins.holographic import HolographicProvider, hrr
    assert hrr.HAVE_NUMPY is False
    home = sys.argv[1]
    p = HolographicProvider()
    p.initialize("s", hermes_home=home, platform="cli", agent_context="primary")
    call = lambda **a: json.loads(p.handle_tool_call("fact_store", a))
    out = {"prompt": p.system_prompt_block()}
    if sys.argv[2] == "write":
        out["add"] = call(action="add", content="Alice Smith works at Acme Corp")
        call(action="add", content="Alice Smith lives in Paris")
        call(action="add", content="Alice Smith lives in London")
    out["search"] = call(action="search", query="where does Alice work")
    out["probe"] = call(action="probe", entity="Alice Smith")
    out["reason"] = call(action="reason", entities=["Alice Smith", "Acme Corp"])
    out["related"] = call(action="related", entity="Acme Corp")
    out["contradict"] = call(action="contradict")
    out["prefetch"] = p.prefetch("Alice work")
    p.shutdown()
    print(json.dumps(out))
""")


def _run_no_numpy(home: Path, mode: str) -> dict:
    env = {**os.environ, "PYTHONPATH": SRC}
    proc = subprocess.run([sys.executable, "-c", NO_NUMPY, str(home), mode], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_keyword_fallback_without_numpy(hermes_home):
    out = _run_no_numpy(hermes_home, "write")
    assert "keyword fallback" in out["prompt"]
    assert out["search"]["results"][0]["content"] == "Alice Smith works at Acme Corp"
    assert {r["method"] for r in out["probe"]["results"]} == {"keyword"} and out["probe"]["count"] == 3
    assert out["reason"]["results"][0]["content"] == "Alice Smith works at Acme Corp"
    assert out["related"]["count"] >= 1
    # lexical contradiction checks still work without vectors
    (pair,) = out["contradict"]["results"]
    assert pair["content_similarity"] is None and "different values" in pair["reason"]
    assert out["prefetch"].startswith("## Holographic Memory\n- [0.50] Alice Smith works at Acme Corp")
    # facts written without numpy have no vectors; with numpy back, HRR operations still answer
    p = HolographicProvider()
    p.initialize("s", hermes_home=str(hermes_home), platform="cli", agent_context="primary")
    try:
        assert call(p, action="search", query="Acme")["count"] == 1
    finally:
        p.shutdown()


# --------------------------------------------------------------------------- through the manager
def test_holographic_through_the_manager(hermes_home):
    m = MemoryManager()
    p = HolographicProvider()
    assert m.add_provider(p)
    m.initialize_all("s1", hermes_home=str(hermes_home))
    assert m.get_all_tool_names() == ["fact_store", "fact_feedback"]
    out = json.loads(m.handle_tool_call("fact_store", {"action": "add", "content": "User drinks oolong tea"}))
    assert out["status"] == "added"
    m.on_memory_write("add", "user", "Prefers metric units")
    block = m.build_user_message("what tea do I drink?")
    assert "<memory-context>" in block and "User drinks oolong tea" in block
    m.shutdown_all()
    assert p.store is None


WRITER = textwrap.dedent("""
    import sys
    from hermes_memory.plugins.holographic.store import FactStore
    store = FactStore(sys.argv[1])
    for i in range(60):
        store.add_fact(f"Writer {sys.argv[2]} stored fact number {i} about Topic{i % 5}", "project", "")
    store.close()
""")


@pytest.mark.slow
def test_two_processes_write_concurrently(hermes_home):
    db = hermes_home / "memory_store.db"
    env = {**os.environ, "PYTHONPATH": SRC}
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(db), name], env=env, stderr=subprocess.PIPE, text=True)
             for name in ("alpha", "beta")]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    store = FactStore(db)
    try:
        assert store.count() == 120
        assert len(store.fts("alpha", limit=500)) == 60 and len(store.fts("beta", limit=500)) == 60
        with store.lock:
            fts_rows = store.conn.execute("SELECT count(*) FROM facts_fts").fetchone()[0]
        assert fts_rows == 120
        assert store.conn.execute("SELECT fact_count FROM memory_banks WHERE bank_name='cat:project'").fetchone()[0] == 120
    finally:
        store.close()


def test_bad_setting_is_a_clear_error_and_dim_change_is_tolerated(hermes_home):
    from hermes_memory.errors import ConfigError

    p = HolographicProvider()
    p.initialize("s", hermes_home=str(hermes_home), platform="cli", agent_context="primary")
    add(p, "Alice Smith works at Acme Corp")
    p.shutdown()
    update_config(hermes_home / "config.yaml", {"holographic.hrr_dim": "lots"})
    with pytest.raises(ConfigError, match="holographic.hrr_dim"):
        HolographicProvider().initialize("s", hermes_home=str(hermes_home), platform="cli", agent_context="primary")
    update_config(hermes_home / "config.yaml", {"holographic.hrr_dim": 512})
    p = HolographicProvider()
    p.initialize("s", hermes_home=str(hermes_home), platform="cli", agent_context="primary")
    try:  # old 1024-d vectors are ignored, not mixed with 512-d ones
        assert call(p, action="search", query="Acme")["count"] == 1
        fid = add(p, "Bob Jones works at Acme Corp")
        assert fid in [r["fact_id"] for r in call(p, action="probe", entity="Bob Jones")["results"]]
    finally:
        p.shutdown()


def test_capacity_warning_names_the_limit_instead_of_a_rounded_ratio(tmp_path, caplog):
    # With hrr_dim 64 the bank passes its capacity (dim / 4 = 16 facts) at the 17th fact, where
    # sqrt(64/17) = 1.94; at hrr_dim 1024 the 257th fact printed "signal-to-noise 2.00 < 2".
    store = FactStore(tmp_path / "bank.db", hrr_dim=64)
    with caplog.at_level("WARNING", logger="hermes_memory.plugins.holographic.store"):
        for i in range(17):
            store.add_fact(f"fact number {i} about topic{i}")
    warnings = [r.getMessage() for r in caplog.records if "signal-to-noise" in r.getMessage()]
    assert len(warnings) == 1
    assert "17 facts" in warnings[0] and "16" in warnings[0] and "hrr_dim" in warnings[0]
    assert "2.00 < 2" not in warnings[0]


def test_changing_hrr_dim_reencodes_existing_facts(tmp_path):
    # README: `memory setup --provider holographic --set hrr_dim=2048`. Facts stored at the old
    # dimension kept vectors of the old length, which every HRR path skips: probe/reason/contradict
    # found nothing for them, silently.
    def provider(dim):
        p = HolographicProvider(hermes_home=str(tmp_path), config={"hrr_dim": dim})
        p.initialize("s1", hermes_home=str(tmp_path), platform="cli", agent_context="primary")
        return p

    p = provider(64)
    p.handle_tool_call("fact_store", {"action": "add", "content": "Ann adopted a greyhound named Pixel"})
    p.handle_tool_call("fact_store", {"action": "add", "content": "Bob lives in Oslo"})
    p.shutdown()
    p = provider(128)
    try:
        probe = json.loads(p.handle_tool_call("fact_store", {"action": "probe", "entity": "Ann"}))
        assert [f["content"] for f in probe["results"]] == ["Ann adopted a greyhound named Pixel"]
        reason = json.loads(p.handle_tool_call("fact_store", {"action": "reason", "entities": ["Ann", "Pixel"]}))
        assert reason["count"] >= 1
    finally:
        p.shutdown()
    store = FactStore(tmp_path / "memory_store.db", hrr_dim=128)
    try:
        with store.lock:
            rows = store.conn.execute("SELECT hrr_vector FROM facts").fetchall()
            banks = store.conn.execute("SELECT dim, fact_count FROM memory_banks").fetchall()
        assert all(len(hrr.from_bytes(r[0])) == 128 for r in rows)
        assert [(b[0], b[1]) for b in banks] == [(128, 2)]
    finally:
        store.close()
