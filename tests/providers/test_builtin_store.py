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
