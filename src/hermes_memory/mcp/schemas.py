"""What ``tools/list`` says about each tool beyond its input schema: annotations and output schema.

Every tool the server lists carries MCP tool annotations (``readOnlyHint``, ``destructiveHint``,
``idempotentHint``, ``openWorldHint``) and an ``outputSchema`` describing the object it returns as
``structuredContent`` (the same object as the JSON text in ``content[0]``).

* ``memory``: three result shapes, one ``anyOf`` branch each: a committed write, a ``read``, and a
  refusal (``success: false``, sent with ``isError: true``; clients do not validate those).
* ``session_search``: one branch per mode (discovery, scroll, read, browse) plus the refusal.
* provider tools: what the provider declares through an optional ``mcp_tool_metadata()`` method
  (``{tool name: {"annotations": {...}, "output_schema": {...}}}``, see the Holographic provider);
  otherwise, for the other bundled providers' tools, the hints of :data:`BUNDLED_TOOL_HINTS`
  (read from what each tool does) with :data:`GENERIC_PROVIDER_OUTPUT`; a tool nobody describes
  gets the conservative :data:`UNKNOWN_TOOL_HINTS` (the MCP defaults written out: may write, may
  destroy, not idempotent).

The schemas require only the keys each shape always has and allow more (``additionalProperties``
is left open), so a field added to a result later does not break clients that validate.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

logger = logging.getLogger(__name__)

_STR = {"type": "string"}
_INT = {"type": "integer"}
_BOOL = {"type": "boolean"}
_STRS = {"type": "array", "items": _STR}
_NUM_OR_NULL = {"anyOf": [{"type": "number"}, {"type": "null"}]}
_STR_OR_NULL = {"anyOf": [{"type": "string"}, {"type": "null"}]}

REFUSAL = {
    "title": "refusal",
    "description": "The call was refused or failed; sent with isError=true. 'error' says why and how to fix it.",
    "properties": {"success": {"const": False}, "error": _STR},
    "required": ["success", "error"],
}

_READ_BLOCK = {
    "type": "object",
    "description": "One store, live: its entries as a model sees them and its usage.",
    "properties": {
        "entries": _STRS,
        "usage": {"type": "string", "description": "'P% — C/L chars' (characters, delimiters included)."},
        "chars": _INT,
        "limit": _INT,
        "entry_count": _INT,
        "read_error": _STR_OR_NULL,
    },
    "required": ["entries", "usage", "chars", "limit", "entry_count"],
}

MEMORY_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "success": _BOOL,
        "done": _BOOL,
        "target": {"type": "string", "enum": ["memory", "user"]},
        "usage": _STR,
        "entry_count": _INT,
        "message": _STR,
        "note": _STR,
        "error": _STR,
        "current_entries": _STRS,
        "action": _STR,
        "snapshot": _STR,
        "snapshot_taken_at": _STR,
        "user_id": _STR_OR_NULL,
        "memory": _READ_BLOCK,
        "user": _READ_BLOCK,
    },
    "required": ["success"],
    "anyOf": [
        {
            "title": "write",
            "description": "A committed add/replace/remove or batch (also a duplicate add, which writes nothing).",
            "properties": {"success": {"const": True}},
            "required": ["success", "done", "target", "usage", "entry_count", "message"],
        },
        {
            "title": "read",
            "description": "action=read: the frozen snapshot of this client session and the live stores.",
            "properties": {"success": {"const": True}, "action": {"const": "read"}},
            "required": ["success", "action", "snapshot", "snapshot_taken_at"],
        },
        REFUSAL,
    ],
}

_MESSAGE = {
    "type": "object",
    "properties": {"message_id": _INT, "role": _STR, "content": _STR, "timestamp": _NUM_OR_NULL},
    "required": ["message_id", "role", "content"],
}
_MESSAGES = {"type": "array", "items": _MESSAGE}
_SESSION_CARD = {
    "type": "object",
    "properties": {"session_id": _STR, "title": _STR_OR_NULL, "source": _STR_OR_NULL, "started_at": _NUM_OR_NULL},
    "required": ["session_id"],
}

SESSION_SEARCH_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"success": _BOOL, "mode": _STR, "error": _STR},
    "required": ["success"],
    "anyOf": [
        {
            "title": "discovery",
            "description": "query given: the best matching conversations, the first with a window of messages.",
            "properties": {
                "success": {"const": True},
                "mode": {"const": "discovery"},
                "query": _STR,  # what was searched: a query over 2,048 chars cut to its first 2,048
                "query_truncated": {"const": True},  # only when it was cut; query_chars: the length given
                "query_chars": _INT,
                "count": _INT,
                # what was not searched as asked: a query over 2,048 chars cut, or query_syntax read as words
                "note": _STR,
                "results": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "session_id": _STR,
                            "lineage_root": _STR,
                            "lineage": _STRS,
                            "match_count": _INT,
                            "hits": {"type": "array", "items": {
                                "type": "object",
                                "properties": {"message_id": _INT, "session_id": _STR, "role": _STR, "snippet": _STR},
                                "required": ["message_id", "session_id", "role"],
                            }},
                            "window": _MESSAGES,
                            "link": _STR,
                        },
                        "required": ["session_id", "hits"],
                    },
                },
            },
            "required": ["success", "mode", "query", "count", "results"],
        },
        {
            "title": "scroll",
            "description": "session_id + around_message_id: the messages around one message.",
            "properties": {
                "success": {"const": True},
                "mode": {"const": "scroll"},
                "session_id": _STR,
                "around_message_id": _INT,
                "messages": _MESSAGES,
                "more_before": _BOOL,
                "more_after": _BOOL,
            },
            "required": ["success", "mode", "session_id", "around_message_id", "messages", "more_before", "more_after"],
        },
        {
            "title": "read",
            "description": "session_id alone: one session (long ones trimmed to their head and tail).",
            "properties": {
                "success": {"const": True},
                "mode": {"const": "read"},
                "session": _SESSION_CARD,
                "messages": _MESSAGES,
                "truncated": _BOOL,
                "omitted_messages": _INT,
            },
            "required": ["success", "mode", "session", "messages", "truncated", "omitted_messages"],
        },
        {
            "title": "browse",
            "description": "no query and no session_id: the most recent sessions.",
            "properties": {
                "success": {"const": True},
                "mode": {"const": "browse"},
                "count": _INT,
                "sessions": {"type": "array", "items": _SESSION_CARD},
            },
            "required": ["success", "mode", "count", "sessions"],
        },
        REFUSAL,
    ],
}

GENERIC_PROVIDER_OUTPUT: dict[str, Any] = {
    "type": "object",
    "description": "The provider's JSON result as an object (a result that is not an object comes as "
    "{'result': value}); a failure carries 'error' and is sent with isError=true.",
}

UNKNOWN_TOOL_HINTS: dict[str, bool] = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False}
"""Hints for a provider tool its provider does not describe: the MCP specification's defaults."""

_READS = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": True}
_ADDS = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": True}
_CHANGES = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True}
BUNDLED_TOOL_HINTS: dict[str, dict[str, bool]] = {
    **dict.fromkeys(("mem0_search", "honcho_profile", "honcho_search", "honcho_reasoning", "honcho_context",
                     "hindsight_recall", "hindsight_reflect", "supermemory_search", "supermemory-search",
                     "supermemory_profile", "supermemory-profile", "retaindb_profile", "retaindb_search",
                     "retaindb_context", "retaindb_list_files", "retaindb_read_file", "viking_search", "viking_read",
                     "viking_browse", "brv_query", "brv_status"), _READS),
    **dict.fromkeys(("mem0_add", "hindsight_retain", "supermemory_store", "supermemory-save", "retaindb_remember",
                     "retaindb_upload_file", "retaindb_ingest_file", "viking_remember", "viking_add_resource",
                     "brv_curate"), _ADDS),
    **dict.fromkeys(("mem0_update", "mem0_delete", "honcho_conclude", "supermemory_forget", "supermemory-forget",
                     "retaindb_forget", "retaindb_delete_file", "viking_forget"), _CHANGES),
}
"""Hints of the bundled providers' tools that do not describe themselves (they talk to a service or
a local server, hence ``openWorldHint``). ``honcho_conclude`` creates or deletes, so it counts as
destructive; the ``*_update``/``*_forget``/``*_delete`` tools overwrite or delete."""

CORE_HINTS: dict[str, dict[str, bool]] = {
    # replace/remove overwrite entries; an add repeated is a no-op but a replace repeated is not.
    "memory": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": False},
    "session_search": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False},
}

CORE_OUTPUT: dict[str, dict[str, Any]] = {"memory": MEMORY_OUTPUT_SCHEMA, "session_search": SESSION_SEARCH_OUTPUT_SCHEMA}

_HINT_KEYS = ("title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


def provider_metadata(provider: Any) -> dict[str, dict[str, Any]]:
    """``provider.mcp_tool_metadata()`` checked (``{}`` when absent or broken, which is logged)."""
    method = getattr(provider, "mcp_tool_metadata", None)
    if not callable(method):
        return {}
    try:
        meta = method()
    except Exception:  # a provider bug must not stop the server; its tools get the generic description
        logger.exception("provider %s: mcp_tool_metadata failed", getattr(provider, "name", "?"))
        return {}
    return {str(k): dict(v) for k, v in meta.items() if isinstance(v, Mapping)} if isinstance(meta, Mapping) else {}


def tool_extras(kind: str, name: str, provider_meta: Mapping[str, Mapping[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(annotations, output_schema)`` of one tool; ``kind`` is ``memory``, ``session_search`` or ``provider``.

    Annotations use the MCP wire names (``readOnlyHint`` ...). Unknown keys a provider declares are
    dropped (logged), so ``tools/list`` never carries a field the protocol does not define.
    """
    if kind in CORE_HINTS:
        return dict(CORE_HINTS[kind]), CORE_OUTPUT[kind]
    meta = provider_meta.get(name) or {}
    hints = dict(BUNDLED_TOOL_HINTS.get(name, UNKNOWN_TOOL_HINTS))
    for key, value in dict(meta.get("annotations") or {}).items():
        if key in _HINT_KEYS:
            hints[key] = value
        else:
            logger.warning("provider tool %s: unknown annotation %r ignored", name, key)
    schema = meta.get("output_schema")
    if not (isinstance(schema, Mapping) and schema.get("type") == "object"):
        schema = GENERIC_PROVIDER_OUTPUT
    return hints, dict(schema)
