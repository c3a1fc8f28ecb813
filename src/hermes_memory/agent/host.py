"""What the agent's mixins (review.py, compaction.py) use of :class:`~hermes_memory.agent.loop.Agent`.

Declared here, for the type checker, so each mixin states its contract with the class it is
mixed into; :class:`~hermes_memory.agent.loop.Agent` sets every attribute in ``__init__`` or at
session start, and defines every method.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_memory.agent.flush import FlushOutcome
    from hermes_memory.context.compressor import ContextCompressor
    from hermes_memory.llm.base import ChatModel, ModelResponse
    from hermes_memory.memory import MemoryStore
    from hermes_memory.providers.manager import MemoryManager
    from hermes_memory.sessions.db import SessionDB


class AgentHost:
    """Attributes and methods of ``Agent`` its mixins rely on (declarations only, no behaviour)."""

    model: ChatModel
    aux_model: ChatModel
    source: str
    store: MemoryStore | None
    db: SessionDB
    compressor: ContextCompressor
    manager: MemoryManager
    messages: list[dict[str, Any]]
    system_prompt: str
    session_id: str
    flush_min_turns: int
    flush_force_tool: bool | None
    last_flush: FlushOutcome | None
    _session_created: bool
    _rotation_failed_this_turn: bool
    _turns_since_flush: int

    if TYPE_CHECKING:
        @property
        def memory_tool_enabled(self) -> bool: ...
        def tool_schemas(self) -> list[dict[str, Any]]: ...
        def run_memory_tool(self, args: dict[str, Any], *, origin: str = "foreground") -> str: ...
        @staticmethod
        def _plain(messages: list[dict[str, Any]]) -> list[dict[str, Any]]: ...
        def _prepare(self, api: list[dict[str, Any]]) -> list[dict[str, Any]]: ...
        def _account(self, resp: ModelResponse, *, main: bool) -> None: ...
        def _build_system_prompt(self) -> str: ...
        def _flush(self, *, min_turns: int | None) -> FlushOutcome: ...
