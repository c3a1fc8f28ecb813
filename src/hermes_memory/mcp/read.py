"""The MCP ``memory`` tool's ``read`` action: memory for clients that cannot read resources.

MCP only: the agent never needs it (its system prompt already holds the snapshot). The tool's
input schema over MCP is the agent's memory schema with ``read`` added to ``action`` and
``target`` optional for it (:func:`mcp_memory_schema`); every other action still needs a target,
which :func:`check_read_arguments` enforces with the same ``-32602`` error as the schema checks.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from hermes_memory.mcp.validation import ArgumentProblem, InvalidArguments

READ_ACTION = "read"
READ_DESCRIPTION = (
    "\nOver this MCP server there is one more action: read (no other field needed; target optional) returns "
    "the frozen snapshot this client session started with (what an agent would have in its system prompt) "
    "and the live entries and usage of each store, including writes made since; with target, only that "
    "store's entries and its block of the snapshot."
)
_WRITE_ONLY_FIELDS = ("content", "old_text", "operations", "new_text")
_RULE = "\u2550" * 46  # the rule render_block draws around a block's header
_USER_BLOCK = re.compile(re.escape(_RULE) + r"\nUSER PROFILE \(who the user is\) \[\d+% \u2014 [\d,]+/[\d,]+ chars\]"
                         r"(?: \u26a0 OVER BUDGET)?\n" + re.escape(_RULE) + "\n")


def mcp_memory_schema(params: dict[str, Any], description: str) -> tuple[dict[str, Any], str]:
    """The MCP input schema and description of ``memory``, from the agent's (``params`` is a copy, changed in place)."""
    props = params.setdefault("properties", {})
    action = props.get("action")
    if isinstance(action, dict) and isinstance(action.get("enum"), list):
        action["enum"] = [*action["enum"], READ_ACTION]
        action["description"] = (str(action.get("description", "")) + " 'read' returns the snapshot and the "
                                 "live entries.").strip()
    target = props.get("target")
    if isinstance(target, dict):
        target["description"] = (str(target.get("description", "")) + " Required except for action 'read', "
                                 "where it limits the answer to one store.").strip()
    params["required"] = [r for r in params.get("required", []) if r != "target"]
    return params, description + READ_DESCRIPTION


def check_read_arguments(args: dict[str, Any]) -> None:
    """Refuse what the relaxed schema lets through: a missing target on a write, write fields on a read.

    Raises :class:`InvalidArguments` (nothing has run).
    """
    if args.get("action") == READ_ACTION:
        extra = [f for f in _WRITE_ONLY_FIELDS if f in args]
        if extra:
            raise InvalidArguments("memory", [ArgumentProblem(f, "is not used by action 'read'") for f in extra])
        return
    if "target" not in args:
        raise InvalidArguments("memory", [ArgumentProblem("target", "is required (every action but 'read' names "
                                                                    "its store: 'memory' or 'user')")])


def snapshot_block(snapshot: str, target: str) -> str:
    """The frozen block of ``target`` (``"memory"``/``"user"``) in a snapshot made by
    :func:`~hermes_memory.mcp.results.render_snapshot` (``""`` when that store was empty).

    The snapshot is the memory block and the user block joined by a blank line, each starting with
    a rule line and its header line (:func:`hermes_memory.memory.entries.render_block`); the user
    block starts at the first blank line followed by a rule, a well-formed user header and a rule.
    """
    start = _user_block_start(snapshot)
    if target == "user":
        return "" if start is None else snapshot[start:]
    return snapshot if start is None else snapshot[: max(0, start - 2)]


def _user_block_start(snapshot: str) -> int | None:
    for m in _USER_BLOCK.finditer(snapshot):
        if m.start() == 0 or snapshot[m.start() - 2 : m.start()] == "\n\n":
            return m.start()
    return None


def _block(store: Any, target: str) -> dict[str, Any]:
    usage = store.usage(target)
    out = {"entries": store.current_entries(target), "usage": usage["text"], "chars": usage["chars"],
           "limit": usage["limit"], "entry_count": usage["entry_count"]}
    if usage.get("read_error"):
        out["read_error"] = usage["read_error"]
    return out


def memory_read(store: Any, snapshot: str, taken_at: float, targets: list[str], target: str | None,
                user_id: str | None) -> str:
    """The ``read`` result as JSON text.

    ``{"success": true, "action": "read", "user_id", "snapshot" (text, "" when memory was empty),
    "snapshot_taken_at" (ISO-8601 UTC), "memory"/"user": {"entries", "usage", "chars", "limit",
    "entry_count", "read_error"?}, "note"}``; only enabled stores appear. With ``target`` only that
    store appears and ``snapshot`` holds only its frozen block (:func:`snapshot_block`).
    The store is re-read from disk first, so writes by other clients show.
    """
    if target is not None and target not in targets:
        return json.dumps({"success": False, "error": f"target {target!r} is disabled in config.yaml; "
                           f"readable: {', '.join(targets) or 'none'}"})
    store.load_from_disk()
    out: dict[str, Any] = {
        "success": True,
        "action": READ_ACTION,
        "user_id": user_id,
        "snapshot": snapshot if target is None else snapshot_block(snapshot, target),
        "snapshot_taken_at": datetime.fromtimestamp(taken_at, tz=UTC).isoformat(timespec="seconds"),
    }
    for name in targets if target is None else [target]:
        out[name] = _block(store, name)
    out["note"] = ("snapshot: frozen when this client session started; entries: live (writes since then "
                   "show here, not in the snapshot).")
    return json.dumps(out, ensure_ascii=False)
