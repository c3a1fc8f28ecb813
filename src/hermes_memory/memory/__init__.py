"""Layer 1: bounded, curated memory (``MEMORY.md`` / ``USER.md``), its threat scan and the ``memory`` tool.

``PgMemoryStore`` (entries in PostgreSQL, the ``postgres`` extra) is imported on first use, so the
file store never needs psycopg.
"""

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
    "PgMemoryStore",
    "find_threats",
    "memory_tool",
    "open_memory_store",
    "scan_memory_content",
    "validate_user_id",
]


def __getattr__(name: str):
    if name == "PgMemoryStore":
        from hermes_memory.memory.pg import PgMemoryStore

        return PgMemoryStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
