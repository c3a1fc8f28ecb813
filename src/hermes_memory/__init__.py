"""hermes-memory: the four-layer memory of the Hermes Agent design for any LLM agent.

Layers (each its own subpackage, imports point downward only; see docs/architecture.md):

1. ``memory``    bounded, curated ``MEMORY.md`` / ``USER.md`` (``MemoryStore``, the ``memory`` tool)
2. ``sessions``  every message in SQLite + FTS5 (``SessionDB``, the ``session_search`` tool)
3. ``context``   the ``ContextCompressor`` and prompt-cache breakpoints
4. ``providers`` one external ``MemoryProvider`` behind a ``MemoryManager``

``agent`` is the only place where the layers meet; ``cli`` and ``mcp`` sit on top.
Importing this package has no side effects.
"""

__version__ = "0.1.0"
