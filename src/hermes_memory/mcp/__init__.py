"""The MCP memory server (``hermes-memory serve``): see :mod:`hermes_memory.mcp.server`.

Modules: ``server`` (MemoryServer over the official ``mcp`` SDK, stdio and streamable HTTP),
``handlers`` (its resources and prompt), ``results`` (tool results as MCP results), ``validation``
(tool arguments checked against their JSON Schema before dispatch), ``clients`` (ready-to-paste
configuration for Claude Code, Cursor, Codex CLI and Claude Desktop). ``MemoryServer`` is exported
lazily, so ``import hermes_memory`` stays fast; the SDK loads only when it is first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_memory.mcp.server import MemoryServer

__all__ = ["MemoryServer"]


def __getattr__(name: str) -> Any:
    if name == "MemoryServer":
        from hermes_memory.mcp.server import MemoryServer

        return MemoryServer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
