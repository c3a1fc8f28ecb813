"""The MCP memory server (``hermes-memory serve``): see :mod:`hermes_memory.mcp.server`.

Modules: ``server`` (MemoryServer over the official ``mcp`` SDK, stdio and streamable HTTP),
``validation`` (tool arguments checked against their JSON Schema before dispatch), ``clients``
(ready-to-paste configuration for Claude Code, Cursor, Codex CLI and Claude Desktop). Nothing is
imported here, so ``import hermes_memory`` stays fast; the SDK loads only when serving.
"""
