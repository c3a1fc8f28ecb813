"""BuiltinMemoryProvider over the real Layer 1 MemoryStore (files on disk)."""

from __future__ import annotations

from hermes_memory.memory.store import MemoryStore
from hermes_memory.providers.builtin import BuiltinMemoryProvider
from hermes_memory.providers.manager import MemoryManager
from hermes_memory.testing import FakeProvider


def test_builtin_snapshot_is_frozen_until_reload(hermes_home):
    store = MemoryStore(hermes_home / "memories", 500, 300)
    store.add("memory", "Python 3.12 project")
    store.add("user", "Prefers dark mode")
    provider = BuiltinMemoryProvider(store, memory_enabled=True, user_profile_enabled=True)
    m = MemoryManager()
    assert m.add_provider(provider) and m.add_provider(FakeProvider("ext", system_prompt="EXT"))
    m.initialize_all("s1", hermes_home=str(hermes_home))
    prompt = m.build_system_prompt()
    assert "Python 3.12 project" in prompt and "Prefers dark mode" in prompt and prompt.endswith("EXT")
    store.add("memory", "Written mid-session")
    assert m.build_system_prompt() == prompt            # frozen snapshot
    provider.initialize("s2")                           # next session reloads
    assert "Written mid-session" in m.build_system_prompt()
    only_user = BuiltinMemoryProvider(store, memory_enabled=False, user_profile_enabled=True)
    only_user.initialize("s3")
    assert "Python 3.12" not in only_user.system_prompt_block() and "dark mode" in only_user.system_prompt_block()


def test_builtin_empty_store_gives_empty_block(hermes_home):
    provider = BuiltinMemoryProvider(MemoryStore(hermes_home / "memories"), True, True)
    provider.initialize("s")
    assert provider.system_prompt_block() == ""


def test_memory_tool_writes_are_mirrored_to_holographic(hermes_home):
    import json

    from hermes_memory.memory.tool import memory_tool
    from hermes_memory.plugins.holographic import HolographicProvider

    store = MemoryStore(hermes_home / "memories", 500, 300)
    holo = HolographicProvider()
    m = MemoryManager()
    assert m.add_provider(BuiltinMemoryProvider(store, True, True)) and m.add_provider(holo)
    m.initialize_all("s1", hermes_home=str(hermes_home))

    def tool(**args):
        result = memory_tool(store=store, **args)
        m.notify_memory_tool_write(result, args)
        return json.loads(result)

    assert tool(action="add", target="user", content="Prefers dark mode")["success"]
    assert tool(action="add", content="Deploys with Ansible")["success"]
    assert not tool(action="remove", old_text="no such entry")["success"]           # failed: not mirrored
    assert tool(action="replace", target="user", old_text="dark mode", content="Prefers light mode")["success"]
    assert tool(operations=[{"action": "remove", "old_text": "Ansible"},
                            {"action": "add", "content": "Deploys with Terraform"}])["success"]
    facts = json.loads(holo.handle_tool_call("fact_store", {"action": "list"}))["facts"]
    assert sorted((f["content"], f["category"]) for f in facts) == [("Deploys with Terraform", "general"),
                                                                   ("Prefers light mode", "user_pref")]
    m.shutdown_all()
