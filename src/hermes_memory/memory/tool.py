"""The ``memory`` tool: JSON schema for the model and ``memory_tool(...)`` dispatch (docs/reference.md §1).

``memory_tool`` never raises: every outcome is a JSON string. Success (NEWEST shape)::

    {"success": true, "done": true, "target": "memory", "usage": "12% — 270/2,200 chars",
     "entry_count": 3, "message": "Entry added.", "note": "Write saved. ..."}

Failures are ``{"success": false, "error": "..."}`` plus, where the model can fix the call,
``current_entries`` (sanitised) and ``usage`` (``"C/L"``). After more than three counted failures
in one turn the answer is terminal: ``{"success": false, "done": true, "error": "... Stop retrying ..."}``.
"""

from __future__ import annotations

import json
from typing import Any

from hermes_memory.errors import MemoryStoreError
from hermes_memory.memory.store import TARGETS, MemoryStore

MEMORY_TOOL_DESCRIPTION = (
    "Save durable facts to your persistent memory. Two stores: 'memory' (your own notes about the "
    "environment, tools, conventions and lessons learned) and 'user' (who the user is: name, role, "
    "preferences, corrections they gave you). Both are injected into the system prompt of every future "
    "session, so keep them short and dense.\n"
    "Save proactively, without being asked, when you learn something that will still matter next "
    "session. Priority: the user's preferences and corrections first, then facts about the environment, "
    "then procedures that worked.\n"
    "Do NOT save: trivia, task progress, temporary state, logs or long outputs. Multi-step procedures "
    "belong in a skill or document, not here.\n"
    "Actions: add (new entry), replace (old_text picks one entry; the whole entry becomes content), "
    "remove (old_text picks one entry). old_text may be the full entry or a unique part of it.\n"
    "Make all related changes in ONE call with `operations` (a list of {action, content, old_text}); it is "
    "all-or-nothing and the size limit is checked on the final state. When a store is full, remove or "
    "merge stale entries and add the new one in that same batch.\n"
    "When a call returns done=true the update is complete; do not repeat it."
)

MEMORY_TOOL_SCHEMA: dict[str, Any] = {
    "name": "memory",
    "description": MEMORY_TOOL_DESCRIPTION,
    "parameters": {
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": ["add", "replace", "remove"],
                "description": "Single operation. Omit when passing `operations`.",
            },
            "target": {
                "type": "string",
                "enum": list(TARGETS),
                "description": "'memory' for your notes, 'user' for the user profile.",
            },
            "content": {
                "type": "string",
                "description": "Entry text for add, or the full new text of the entry for replace.",
            },
            "old_text": {
                "type": "string",
                "description": "For replace/remove: the entry's full text or a part that appears in only one entry.",
            },
            "operations": {
                "type": "array",
                "description": "Batch of operations applied all-or-nothing, in order.",
                "items": {
                    "type": "object",
                    "properties": {
                        "action": {"type": "string", "enum": ["add", "replace", "remove"]},
                        "content": {"type": "string"},
                        "old_text": {"type": "string"},
                    },
                    "required": ["action"],
                },
            },
        },
        "required": ["target"],
    },
}


def _dump(result: dict[str, Any]) -> str:
    return json.dumps(result, ensure_ascii=False)


def _err(message: str, **extra: Any) -> str:
    return _dump({"success": False, "error": message, **extra})


def memory_tool(
    action: str | None = None,
    target: str = "memory",
    content: str | None = None,
    old_text: str | None = None,
    operations: Any = None,
    store: MemoryStore | None = None,
    new_text: str | None = None,
    origin: str = "foreground",
    exact: object = False,
    **_: Any,
) -> str:
    """Run one ``memory`` tool call against ``store`` and return the result as a JSON string.

    Checks, in order: no store -> "Memory is not available..."; bad target; ``operations`` ->
    batch (must be a list); neither action nor operations -> "Missing required parameter...";
    add without content; replace/remove without ``old_text`` (recoverable: ``current_entries``,
    ``usage`` and a retry hint); replace without content; unknown action. ``new_text`` is an alias
    of ``content`` (``content`` wins). ``origin="background_review"`` may only add. ``exact``
    (not in the model's schema; the dashboard's forms): replace/remove only an entry equal to
    ``old_text`` (only the value ``True`` turns it on). Extra keyword
    arguments from the model are ignored. Never raises.
    """
    if store is None:
        return _err("Memory is not available. It may be disabled in config or this environment.")
    if target not in TARGETS:
        return _err(f"Invalid target '{target}'. Use 'memory' or 'user'.")
    if content is None or (isinstance(content, str) and not content.strip() and new_text):
        content = new_text if new_text is not None else content
    try:
        if operations is not None:
            if not isinstance(operations, list):
                return _err("operations must be a list of {action, content, old_text} objects.")
            return _dump(store.apply_batch(target, operations, origin=origin))
        if not action:
            return _err(
                "Missing required parameter: pass 'action' (add, replace or remove) for one change, or "
                "'operations' (a list of {action, content, old_text}) for a batch."
            )
        if action == "add":
            if content is None or not str(content).strip():
                return _err("Content is required for 'add' action.")
            return _dump(store.add(target, content, origin=origin))
        if action in ("replace", "remove"):
            if old_text is None or not str(old_text).strip():
                return _err(
                    f"old_text is required for '{action}' action: old_text must be non-empty text copied from "
                    "the entry you mean. Pick it from current_entries and retry.",
                    current_entries=store.current_entries(target),
                    usage=f"{store.usage(target)['chars']:,}/{store.usage(target)['limit']:,}",
                )
            if action == "replace":
                if content is None or not str(content).strip():
                    return _err("content is required for 'replace' action. Use 'remove' to delete an entry.")
                return _dump(store.replace(target, old_text, content, origin=origin, exact=exact is True))
            return _dump(store.remove(target, old_text, origin=origin, exact=exact is True))
        return _err(f"Unknown action '{action}'. Use: add, replace, remove")
    except (MemoryStoreError, OSError) as exc:
        return _err(f"Memory write failed: {exc}")
