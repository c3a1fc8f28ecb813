"""``BuiltinMemoryProvider``: the curated ``MEMORY.md`` / ``USER.md`` store seen as a provider.

docs/reference.md §3. It contributes the frozen snapshots to the system prompt and nothing
else: it has no tools of its own (the agent loop intercepts the ``memory`` tool and calls the
store directly), its ``prefetch`` is empty and it never syncs turns.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from hermes_memory.providers.base import MemoryProvider

if TYPE_CHECKING:  # the store is only used through its public methods
    from hermes_memory.memory.store import MemoryStore


class BuiltinMemoryProvider(MemoryProvider):
    """Adapter over a :class:`~hermes_memory.memory.store.MemoryStore`.

    Args:
        memory_store: the store (``None`` → every block is ``""``).
        memory_enabled: include the ``MEMORY.md`` snapshot in the system prompt.
        user_profile_enabled: include the ``USER.md`` snapshot in the system prompt.
    """

    def __init__(self, memory_store: MemoryStore | None = None, memory_enabled: bool = False,
                 user_profile_enabled: bool = False) -> None:
        self.memory_store = memory_store
        self.memory_enabled = memory_enabled
        self.user_profile_enabled = user_profile_enabled

    @property
    def name(self) -> str:
        return "builtin"

    def is_available(self) -> bool:
        """Always True: plain files need nothing."""
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Take the frozen snapshot: ``memory_store.load_from_disk()`` (no-op without a store)."""
        if self.memory_store is not None:
            self.memory_store.load_from_disk()

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """``[]``: the agent loop intercepts the ``memory`` tool itself."""
        return []

    def system_prompt_block(self) -> str:
        """Memory snapshot (if enabled) and user snapshot (if enabled), joined by a blank line; ``""`` without a store."""
        if self.memory_store is None:
            return ""
        parts: list[str] = []
        if self.memory_enabled:
            parts.append(self.memory_store.format_for_system_prompt("memory") or "")
        if self.user_profile_enabled:
            parts.append(self.memory_store.format_for_system_prompt("user") or "")
        return "\n\n".join(p for p in parts if p and p.strip())

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Always a JSON error: the built-in provider has no tools (``memory`` is handled by the loop)."""
        return json.dumps({"error": f"the builtin memory provider has no tool '{tool_name}'; "
                                    "the agent loop handles the 'memory' tool directly"})
