"""How values are stored in the text columns of ``state.db`` (``messages``, ``sessions``).

* Message ``content`` that is a list or dict (multi-part content) is stored as JSON text behind
  :data:`JSON_CONTENT_PREFIX`, and decoded back on read; text is stored as it is.
* JSON columns (``tool_calls``, ``reasoning_details``, codex items) hold JSON text; a value that
  is already text is stored unchanged.
* Lone surrogates (which SQLite cannot store as UTF-8) are replaced before any write
  (:func:`hermes_memory.sessions.fts.scrub_text`).

Pure functions: no database access.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from hermes_memory.sessions import fts as fts_mod

JSON_CONTENT_PREFIX = "\x1ejson:"
"""Prefix marking list/dict message content stored as JSON text (what we write)."""
REFERENCE_JSON_CONTENT_PREFIX = "\x00json:"
"""The reference agent's prefix for the same (``SessionDB._CONTENT_JSON_PREFIX``); read, never written."""
CONTENT_PREFIXES = (JSON_CONTENT_PREFIX, REFERENCE_JSON_CONTENT_PREFIX)

JSON_COLUMNS = ("tool_calls", "reasoning_details", "codex_reasoning_items", "codex_message_items")
"""Message columns holding JSON text, decoded by :func:`row_to_message`."""


def encode_content(content: Any) -> str | None:
    """Message content as stored: ``None`` stays ``None``, a list/dict becomes
    ``JSON_CONTENT_PREFIX + json``, anything else ``str(content)``; lone surrogates scrubbed."""
    if content is None:
        return None
    if isinstance(content, (list, dict)):
        return JSON_CONTENT_PREFIX + fts_mod.scrub_text(json.dumps(content, ensure_ascii=False))
    return fts_mod.scrub_text(str(content))


def strip_content_prefix(content: str) -> str:
    """``content`` without the JSON-content prefix of either program (:data:`CONTENT_PREFIXES`)."""
    for prefix in CONTENT_PREFIXES:
        if content.startswith(prefix):
            return content[len(prefix) :]
    return content


def decode_content(content: str | None) -> Any:
    """Inverse of :func:`encode_content`: JSON behind our prefix or the reference agent's
    (:data:`CONTENT_PREFIXES`) is decoded (left as text when it is not valid JSON); any other
    value is returned unchanged."""
    if isinstance(content, str) and content.startswith(CONTENT_PREFIXES):
        try:
            return json.loads(strip_content_prefix(content))
        except (ValueError, RecursionError):
            return content
    return content


def readable_json(text: str) -> str:
    """``text`` for display: when it is JSON holding an escape (``caf\\u00e9``, as the reference's
    ``json.dumps`` writes tool calls), the same JSON written with its characters as they are, string
    values that are themselves JSON with escapes (tool-call ``arguments`` escaped twice) rewritten
    too; any other text (not JSON, no backslash, too deep to parse) is returned unchanged."""
    if "\\" not in text or not text.lstrip().startswith(("{", "[")):
        return text

    def walk(value: Any) -> Any:
        if isinstance(value, str) and "\\" in value and value.lstrip().startswith(("{", "[")):
            try:
                return walk(json.loads(value))
            except (ValueError, RecursionError):
                return value
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        return value

    try:
        parsed = json.loads(text)
        return fts_mod.scrub_text(json.dumps(walk(parsed), ensure_ascii=False))
    except (ValueError, RecursionError):
        return text


def encode_json(value: Any) -> str | None:
    """A JSON column's stored text: ``None`` stays ``None``, text is kept, anything else is dumped
    as JSON; lone surrogates scrubbed."""
    if value is None:
        return None
    if isinstance(value, str):
        return fts_mod.scrub_text(value)
    return fts_mod.scrub_text(json.dumps(value, ensure_ascii=False))


def decode_json(value: str | None) -> Any:
    """A JSON column's value: parsed JSON, or the text itself when it is not JSON or nested too
    deep for Python's parser (``RecursionError``); ``None`` kept."""
    if value is None:
        return None
    try:
        return json.loads(value)
    except (ValueError, RecursionError):
        return value


def scrub(value: Any) -> Any:
    """``value`` with lone surrogates replaced when it is text (SQLite cannot store them)."""
    return fts_mod.scrub_text(value) if isinstance(value, str) else value


def row_to_message(row: sqlite3.Row) -> dict[str, Any]:
    """A ``messages`` row as a dict: every selected column, ``content`` and the JSON columns decoded."""
    d = dict(row)
    d["content"] = decode_content(d.get("content"))
    for key in JSON_COLUMNS:
        if key in d:
            d[key] = decode_json(d[key])
    return d


def storable(text: str) -> bool:
    """False for text SQLite cannot hold (lone surrogates): no stored id can equal it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
