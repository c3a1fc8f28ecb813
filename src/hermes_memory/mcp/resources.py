"""Resource URIs of the memory server: the fixed ones, the templates, and the one matcher for both.

Fixed resources (listed by ``resources/list``)::

    hermes-memory://memory/snapshot     the frozen snapshot of this client session
    hermes-memory://memory/MEMORY.md    the live file
    hermes-memory://memory/USER.md      the live file (of the server's --user-id if set)

Templates (listed by ``resources/templates/list`` only, RFC 6570)::

    hermes-memory://memory/users/{user_id}/USER.md
        one user's live profile; ``user_id`` passes the same checks as the memory tool's argument
        (and must be the server's ``--user-id`` when one is fixed).
    hermes-memory://sessions/{session_id}
        one session of ``state.db`` as JSON: ``{"session": {...}, "messages": [...]}``, every message
        whole and in order.
    hermes-memory://sessions/{session_id}/messages{?query,around,window,limit}
        that session's messages as JSON ``{"session_id", "mode", "count", "messages"}``: all of them
        (no parameter), the ones matching ``query`` (full-text, best first, at most ``limit``,
        default 20, 1..500), or ``window`` (default 5, 1..20) on each side of message ``around``.

:func:`match_uri` maps a URI to exactly one of these or raises :class:`BadResource` (the server
answers JSON-RPC ``-32602``): unknown scheme, host or path, a fixed resource with a query, an
unknown or repeated query parameter, a bad number, or a path segment that decodes to ``.``/``..``
or holds ``/``, ``\\`` or NUL, or is not UTF-8 (so ``..%2F..%2Fetc`` never reaches a file).
Session ids are looked up exactly, never as prefixes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from hermes_memory.errors import BadResource  # noqa: F401 - re-exported

SCHEME = "hermes-memory"
URI_SNAPSHOT = f"{SCHEME}://memory/snapshot"
URI_MEMORY_MD = f"{SCHEME}://memory/MEMORY.md"
URI_USER_MD = f"{SCHEME}://memory/USER.md"
TEMPLATE_USER_PROFILE = f"{SCHEME}://memory/users/{{user_id}}/USER.md"
TEMPLATE_SESSION = f"{SCHEME}://sessions/{{session_id}}"
TEMPLATE_SESSION_MESSAGES = f"{SCHEME}://sessions/{{session_id}}/messages{{?query,around,window,limit}}"

DEFAULT_WINDOW, MAX_WINDOW = 5, 20
DEFAULT_MATCHES, MAX_MATCHES = 20, 500

_FIXED = {"snapshot": "snapshot", "MEMORY.md": "memory_md", "USER.md": "user_md"}
_MESSAGE_PARAMS = ("query", "around", "window", "limit")


@dataclass(frozen=True)
class ResourceMatch:
    """The handler a URI maps to (``snapshot``, ``memory_md``, ``user_md``, ``user_profile``,
    ``session`` or ``session_messages``), its decoded path variables and its checked query values."""

    handler: str
    variables: dict[str, str] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)


def _segment(raw: str, name: str) -> str:
    try:
        value = unquote(raw, errors="strict")
    except UnicodeDecodeError:
        raise BadResource(f"invalid {name} {raw!r} in the resource URI (not UTF-8 once decoded)", field=name) from None
    if not value or value in (".", "..") or any(c in value for c in "/\\\x00"):
        raise BadResource(f"invalid {name} {value!r} in the resource URI", field=name)
    return value


def _int_param(params: dict[str, str], key: str, low: int, high: int) -> int | None:
    if key not in params:
        return None
    try:
        value = int(params[key])
    except ValueError:
        raise BadResource(f"query parameter {key!r} must be an integer, got {params[key]!r}", field=key) from None
    if not low <= value <= high:
        raise BadResource(f"query parameter {key!r} must be between {low} and {high}, got {value}", field=key)
    return value


def _message_params(query: str) -> dict[str, Any]:
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query), errors="strict")
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadResource(f"malformed query string {query!r}: {exc}") from None
    raw: dict[str, str] = {}
    for key, value in pairs:
        if key not in _MESSAGE_PARAMS:
            raise BadResource(f"unknown query parameter {key!r}; use {', '.join(_MESSAGE_PARAMS)}", field=key)
        if key in raw:
            raise BadResource(f"query parameter {key!r} given twice", field=key)
        raw[key] = value
    out: dict[str, Any] = {}
    if "query" in raw:
        if not raw["query"].strip():
            raise BadResource("query parameter 'query' is empty", field="query")
        out["query"] = raw["query"]
    around = _int_param(raw, "around", -(2**63), 2**63 - 1)
    if around is not None:
        out["around"] = around
    window = _int_param(raw, "window", 1, MAX_WINDOW)
    limit = _int_param(raw, "limit", 1, MAX_MATCHES)
    if "query" in out and "around" in out:
        raise BadResource("use either 'query' or 'around', not both", field="around")
    if window is not None:
        if "around" not in out:
            raise BadResource("'window' needs 'around' (a message id)", field="window")
        out["window"] = window
    if limit is not None:
        if "query" not in out:
            raise BadResource("'limit' needs 'query'", field="limit")
        out["limit"] = limit
    return out


def match_uri(uri: str) -> ResourceMatch:
    """The one handler ``uri`` maps to, with its variables; raises :class:`BadResource` otherwise."""
    try:
        parts = urlsplit(uri)
    except ValueError as exc:
        raise BadResource(f"malformed resource URI {uri!r}: {exc}") from None
    if parts.scheme != SCHEME or parts.fragment:
        raise BadResource(f"unknown resource {uri}")
    segments = parts.path.split("/")[1:] if parts.path.startswith("/") else []
    if parts.netloc == "memory":
        if len(segments) == 1 and segments[0] in _FIXED and not parts.query:
            return ResourceMatch(_FIXED[segments[0]])
        if len(segments) == 3 and segments[0] == "users" and segments[2] == "USER.md" and not parts.query:
            return ResourceMatch("user_profile", {"user_id": _segment(segments[1], "user_id")})
    elif parts.netloc == "sessions":
        if len(segments) == 1 and not parts.query:
            return ResourceMatch("session", {"session_id": _segment(segments[0], "session_id")})
        if len(segments) == 2 and segments[1] == "messages":
            sid = _segment(segments[0], "session_id")
            return ResourceMatch("session_messages", {"session_id": sid}, _message_params(parts.query))
    raise BadResource(f"unknown resource {uri}")


# ---------------------------------------------------------------------------------------------
# Session resources (JSON text)
# ---------------------------------------------------------------------------------------------

_CARD_KEYS = ("id", "title", "source", "model", "user_id", "parent_session_id", "started_at", "ended_at",
              "end_reason", "message_count")


def _message(m: dict[str, Any]) -> dict[str, Any]:
    content = m.get("content")
    if not isinstance(content, str):
        content = "" if content is None else json.dumps(content, ensure_ascii=False)
    out = {"message_id": m["id"], "role": m["role"], "content": content, "timestamp": m.get("timestamp")}
    for key in ("tool_name", "tool_calls", "tool_call_id"):
        if m.get(key):
            out[key] = m[key]
    return out


def _session_or_raise(db: Any, session_id: str) -> dict[str, Any]:
    session = db.get_session(session_id)
    if session is None:
        raise BadResource(f"unknown session {session_id!r} (session ids are matched exactly; "
                          "list them with the session_search tool)", field="session_id")
    return session


def session_transcript(db: Any, session_id: str) -> str:
    """``hermes-memory://sessions/{session_id}``: ``{"session": {...}, "messages": [...]}`` as JSON text."""
    session = _session_or_raise(db, session_id)
    card = {("session_id" if k == "id" else k): session.get(k) for k in _CARD_KEYS}
    messages = [_message(m) for m in db.get_messages(session_id)]
    return json.dumps({"session": card, "messages": messages}, ensure_ascii=False, default=str)


def session_messages(db: Any, session_id: str, params: dict[str, Any]) -> str:
    """``…/messages{?query,around,window,limit}`` as JSON text (see the module docstring)."""
    _session_or_raise(db, session_id)
    extra: dict[str, Any] = {}
    if "query" in params:
        rows = db.search_messages(params["query"], session_id=session_id, role_filter=None,
                                  limit=params.get("limit", DEFAULT_MATCHES), with_context=False, with_snippet=False,
                                  raise_errors=True)
        by_id = {m["id"]: m for m in (db.get_message(r["id"]) for r in rows) if m is not None}
        messages = [by_id[r["id"]] for r in rows if r["id"] in by_id]
        mode, extra = "search", {"query": params["query"]}
    elif "around" in params:
        anchor = db.get_message(params["around"])
        if anchor is None or anchor["session_id"] != session_id:
            raise BadResource(f"message {params['around']} is not in session {session_id}", field="around")
        messages, before, after = db.get_messages_window(session_id, params["around"],
                                                         params.get("window", DEFAULT_WINDOW))
        mode, extra = "window", {"around": params["around"], "more_before": before, "more_after": after}
    else:
        messages, mode = db.get_messages(session_id), "all"
    out = {"session_id": session_id, "mode": mode, **extra, "count": len(messages),
           "messages": [_message(m) for m in messages]}
    return json.dumps(out, ensure_ascii=False, default=str)
