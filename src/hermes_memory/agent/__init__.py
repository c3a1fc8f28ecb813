"""The agent loop: where the four memory layers meet (``Agent``, ``flush_memories``, prompts)."""

from hermes_memory.agent.flush import FlushOutcome, flush_memories
from hermes_memory.agent.loop import Agent, TurnResult, new_session_id

__all__ = ["Agent", "FlushOutcome", "TurnResult", "flush_memories", "new_session_id"]
