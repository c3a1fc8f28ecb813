"""Layer 1: bounded, curated memory (``MEMORY.md`` / ``USER.md``), its threat scan and the ``memory`` tool."""

from hermes_memory.memory.factory import open_memory_store
from hermes_memory.memory.scan import find_threats, scan_memory_content
from hermes_memory.memory.store import (
    ENTRY_DELIMITER,
    MAX_CONSOLIDATION_FAILURES_PER_TURN,
    LockFileError,
    MemoryStore,
    validate_user_id,
)
from hermes_memory.memory.tool import MEMORY_TOOL_SCHEMA, memory_tool

__all__ = [
    "ENTRY_DELIMITER",
    "MAX_CONSOLIDATION_FAILURES_PER_TURN",
    "MEMORY_TOOL_SCHEMA",
    "LockFileError",
    "MemoryStore",
    "find_threats",
    "memory_tool",
    "open_memory_store",
    "scan_memory_content",
    "validate_user_id",
]
