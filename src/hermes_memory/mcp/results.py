"""What a tool call or a snapshot read returns to an MCP client: the tool's JSON wrapped as a CallToolResult, and the frozen snapshot text."""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types

# The loopback rule, Host/Origin checks, bearer-token gate and socket binding live in one module
# shared with the web dashboard; these names stay importable from here.


def _stored_text(store: Any, target: str) -> str:
    """The live text of ``target`` in a database-backed store, as the file would hold it (entries
    joined by the delimiter); raises OSError when the database cannot be read."""
    stored = store.backend.read(target)
    if stored.error:
        raise OSError(stored.error)
    return stored.text


def _read_or_empty(path: Any) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return ""


def render_snapshot(store: Any) -> str:
    """The frozen snapshot text: the memory block and the user block, joined by a blank line.

    Same rendering the agent puts into its system prompt (``format_for_system_prompt``); ``""``
    when both stores are empty.
    """
    parts = [store.format_for_system_prompt(t) for t in ("memory", "user")]
    return "\n\n".join(p for p in parts if p)


def tool_result(text: str, *, structured: bool = False) -> types.CallToolResult:
    """Wrap a tool's JSON string as an MCP result.

    The text content is the tool's JSON, unchanged. When it parses to an object it is also sent
    as ``structuredContent``; ``isError`` is set when it reports ``"success": false`` or carries an
    ``"error"`` without a success flag. With ``structured=True`` (the tool declares an
    ``outputSchema``) a result that is not a JSON object is sent as ``{"result": value}`` (the
    parsed value, or the text itself), in the text too, so ``structuredContent`` is never missing
    and ``content[0].text`` always parses to the same object.
    """
    is_error = False
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None if not structured else text
    if structured and not isinstance(parsed, dict):
        parsed = {"result": parsed}
        text = json.dumps(parsed, ensure_ascii=False)
    if not isinstance(parsed, dict):
        return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=None, is_error=False)
    success = parsed.get("success")
    is_error = success is False or (success is None and "error" in parsed)
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=parsed, is_error=is_error)
