"""The ``session_search`` tool: the agent's view of its own past sessions (docs/reference.md §7).

The mode follows from the arguments (reference NEWEST):

* **discovery** -- ``query`` given: full-text search (up to :data:`MAX_FTS_ROWS` rows, roles
  ``user`` and ``assistant`` unless ``role_filter`` says otherwise), hits grouped by lineage (a
  session and its compression children are one conversation), best ``limit`` conversations
  (default 3, clamped to 1..10). Sessions whose title matches the query come first (an exact
  title, then titles holding every query word); automated sessions (:data:`DEMOTED_SOURCES`)
  rank after the user's own. ``sort`` ``"newest"``/``"oldest"`` orders hits by message time
  instead of relevance; ``query_syntax`` reads upper-case ``AND``/``OR``/``NOT``/``NEAR`` as
  operators (they are plain words otherwise). The best conversation also gets a window of messages around its
  top hit (``window`` before/after, default 5) plus bookends (its first and last 3
  user/assistant messages); the others list their hits only.
* **scroll** -- ``session_id`` and ``around_message_id``: the messages around one message
  (``window`` default 5, clamped to 1..20 on each side).
* **read** -- ``session_id`` only: the whole session; more than :data:`READ_MAX_MESSAGES`
  messages are trimmed to the first 20 and the last 10.
* **browse** -- no ``query`` and no ``session_id``: the most recent sessions (``limit`` default
  10, clamped to 1..50) with their titles and first user message.

The live rows of ``current_session_id`` are excluded from discovery and browse (they are
already in the model's context); its compression ancestors stay findable.

Returned JSON (always a string; ``json.loads`` gives a dict):

``{"success": true, "mode": "discovery", "query": str, "count": int, "results": [...]}`` (``query``:
what was searched, a query over 2,048 characters cut to its first 2,048, and then also
``"query_truncated": true`` and ``"query_chars"``: the length of the query given) where
each result is ``{"session_id", "lineage_root", "lineage": [ids], "title", "title_match"
(``"exact"``, ``"terms"`` or None), "source",
"started_at", "when" (ISO-8601 UTC), "model", "match_count", "hits" (best 5): [{"message_id",
"session_id", "role", "snippet", "timestamp", "when" (the turn's time, ISO-8601 UTC),
"session_when" (when the hit's own session started, ISO-8601 UTC; hits of a lineage may come from
several sessions)}], "link": "@session:<id>"}`` and the first result
also has ``"window": [messages]`` and ``"bookends": {"first": [...], "last": [...]}``; each
message is ``{"message_id", "role", "content", "timestamp", "when" (ISO-8601 UTC), "tool_name"?}`` with content cut to
:data:`MESSAGE_CHARS` chars. With a ``summarizer`` each result may carry ``"summary"`` (str) or
``"summary_error"`` (str). ``"note"`` (str), when present, says what was not searched as asked:
a query over 2,048 characters cut to its first 2,048 (:mod:`hermes_memory.sessions.query_notes`), or
a ``query_syntax`` query searched as plain words, or a query of common words only searched as typed.

``{"success": true, "mode": "scroll", "session_id", "around_message_id", "messages": [...],
"more_before": bool, "more_after": bool}``

``{"success": true, "mode": "read", "session": {session fields}, "messages": [...],
"truncated": bool, "omitted_messages": int}``

``{"success": true, "mode": "browse", "count": int, "sessions": [{"session_id", "title",
"source", "started_at", "when", "ended_at", "end_reason", "message_count", "preview",
"parent_session_id"}]}``

Refusals and failures: ``{"success": false, "error": "<what went wrong and how to fix it>"}``
(unknown session, bad argument types, or a database error -- never an empty success).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from hermes_memory.errors import SessionStoreError
from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.fts import MAX_QUERY_CHARS
from hermes_memory.sessions.query_notes import search_note
from hermes_memory.sessions.search_filters import role_problem

logger = logging.getLogger(__name__)

MAX_FTS_ROWS = 300
"""Discovery reads at most this many FTS rows before grouping (reference NEWEST)."""
DEFAULT_LIMIT, MAX_LIMIT = 3, 10
DEFAULT_WINDOW, MAX_WINDOW = 5, 20
READ_MAX_MESSAGES = 30
READ_HEAD, READ_TAIL = 20, 10
BOOKEND_COUNT = 3
MESSAGE_CHARS = 2000
"""Characters of one message's content returned by the tool (longer text is cut with "...")."""
HIDDEN_SOURCES = ("tool", "subagent", "kanban")
"""Session sources left out of discovery/browse unless asked for explicitly (reference NEWEST)."""
DEMOTED_SOURCES = ("cron",)
"""Automated session sources ranked after the user's own sessions in discovery (still found when
they are the only match): scheduled jobs repeat the same words and would otherwise crowd out
interactive conversations (reference NEWEST)."""
SORTS = ("newest", "oldest")
"""Accepted ``sort`` values; omitted (or ``"relevance"``) means BM25 relevance."""

SESSION_SEARCH_SCHEMA: dict[str, Any] = {
    "name": "session_search",
    "description": (
        "Search or read your past conversations with this user (every session is stored). "
        "Use it when the user refers to something from before ('last time', 'as we discussed', "
        "'that bug from yesterday') or when earlier context would help. Modes, chosen by the "
        "arguments: query -> find matching past sessions (keywords or a plain question both work); "
        "session_id + around_message_id -> scroll the messages around a hit; session_id alone -> "
        "read that session; no arguments -> list recent sessions."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "Words or a question to look for (session titles are searched too). Quote "
                "\"exact phrases\"; any of the words may match. Capitalised AND/OR/NOT/NEAR are ordinary "
                "words unless query_syntax is true. Empty or omitted: the most recent sessions.",
            },
            "query_syntax": {
                "type": "boolean",
                "description": "Read upper-case AND, OR, NOT, NEAR between words as operators "
                "(\"deploy NOT staging\", \"kafka NEAR timeout\"). Default false. A query left with no "
                "positive word is searched as plain words.",
            },
            "sort": {
                "type": "string",
                "enum": list(SORTS),
                "description": "Discovery only. Omit for best matches first; 'newest' for recency questions "
                "('where did we leave X'), 'oldest' for origin questions ('how did X start').",
            },
            "session_id": {"type": "string", "description": "A session id (or unique prefix) to read or scroll."},
            "around_message_id": {
                "type": "integer",
                "description": "With session_id: show messages around this message id (from a search hit).",
            },
            "window": {"type": "integer", "description": "Messages before/after in scroll mode (1-20, default 5)."},
            "limit": {"type": "integer", "description": "Sessions to return (discovery 1-10, default 3; browse 1-50)."},
            "role_filter": {
                "type": "string",
                "description": ("Comma-separated roles to search: user, assistant, system, tool (default: user,assistant; "
                                "add tool to include tool output)."),
            },
            "source": {"type": "string", "description": "Only sessions from this source (cli, telegram, ...)."},
        },
        "required": [],
    },
}

Summarizer = Callable[[str, str], str]
"""``summarizer(transcript_text, query) -> summary``: an optional auxiliary-LLM call."""


def _iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(float(ts), tz=UTC).isoformat(timespec="seconds")


def _clamp(value: Any, default: int, low: int, high: int) -> int:
    try:
        n = int(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: int(float("inf"))
        return default
    return max(low, min(high, n))


def _msg(m: dict[str, Any]) -> dict[str, Any]:
    content = m.get("content")
    if not isinstance(content, str):
        content = json.dumps(content, ensure_ascii=False) if content is not None else ""
    if len(content) > MESSAGE_CHARS:
        content = content[:MESSAGE_CHARS] + "..."
    out = {"message_id": m["id"], "role": m["role"], "content": content, "timestamp": m.get("timestamp"),
           "when": _iso(m.get("timestamp"))}
    if m.get("tool_name"):
        out["tool_name"] = m["tool_name"]
    if m.get("tool_calls"):
        out["tool_calls"] = m["tool_calls"]
    return out


def _ok(payload: dict[str, Any]) -> str:
    return json.dumps({"success": True, **payload}, ensure_ascii=False, default=str)


def _err(message: str) -> str:
    return json.dumps({"success": False, "error": message}, ensure_ascii=False)


def session_search(
    args: dict[str, Any] | None,
    db: SessionDB,
    current_session_id: str | None = None,
    summarizer: Summarizer | None = None,
) -> str:
    """Run the ``session_search`` tool and return its JSON string (see the module docstring).

    ``args``: the model's arguments (``SESSION_SEARCH_SCHEMA``). ``db``: the :class:`SessionDB`.
    ``current_session_id``: the live session, excluded from results. ``summarizer``: optional
    auxiliary LLM (off by default); its failures are reported per result, never raised.
    Never raises: bad arguments and database errors come back as ``{"success": false, "error"}``.
    """
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return _err("session_search arguments must be a JSON object, e.g. {\"query\": \"deploy bug\"}.")
    try:
        query = args.get("query")
        session_id = args.get("session_id")
        if query is not None and not isinstance(query, str):
            query = str(query)
        if session_id not in (None, "") and not isinstance(session_id, str):
            session_id = str(session_id)
        bad = _bad_filter_args(args) or role_problem(_roles(args), db._read)
        if bad:
            return _err(bad)
        if session_id:
            resolved = db.resolve_session_id(session_id) or db.resolve_session_by_title(session_id)
            if resolved is None:
                return _err(
                    f"No session matches {session_id!r} (unknown or ambiguous prefix). "
                    "Call session_search with a query or with no arguments to list sessions."
                )
            if args.get("around_message_id") is not None:
                return _scroll(db, resolved, args)
            return _read(db, resolved)
        if query and query.strip():
            return _discover(db, query, args, current_session_id, summarizer)
        return _browse(db, args, current_session_id)
    except SessionStoreError as exc:
        return _err(f"session history is unavailable: {exc}")
    except Exception as exc:  # the tool must never break a turn; say what failed instead
        logger.exception("session_search failed on %r", args)
        return _err(f"session_search failed: {type(exc).__name__}: {exc}")


def _bad_filter_args(args: dict[str, Any]) -> str | None:
    """An error message when ``source``/``user_id`` have a type no session can match, else None."""
    source = args.get("source")
    if source is not None and not isinstance(source, str) and not (
        isinstance(source, list) and all(isinstance(x, str) for x in source)
    ):
        return "source must be a string such as \"cli\" (or a list of strings)."
    user_id = args.get("user_id")
    if user_id is not None and not isinstance(user_id, (str, int)):
        return "user_id must be a string."
    sort = args.get("sort")
    if sort not in (None, "") and (not isinstance(sort, str) or sort.strip().lower() not in (*SORTS, "relevance")):
        return f"sort must be one of {', '.join(SORTS)} (or omitted for best matches first); got {sort!r}."
    syntax = args.get("query_syntax")
    if syntax is not None and not isinstance(syntax, bool):
        return "query_syntax must be true or false."
    return None


def _sort(args: dict[str, Any]) -> str | None:
    sort = args.get("sort")
    sort = sort.strip().lower() if isinstance(sort, str) else None
    return sort if sort in SORTS else None


def demote_automated(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` with those from :data:`DEMOTED_SOURCES` moved after the others, each class keeping
    its order (a stable sort)."""
    return sorted(rows, key=lambda r: (r.get("source") or "") in DEMOTED_SOURCES)


def _sources(args: dict[str, Any]) -> list[str] | None:
    source = args.get("source")
    if isinstance(source, list):
        return [x for x in source if x] or None
    return [source] if source else None


def _roles(args: dict[str, Any]) -> list[str]:
    raw = args.get("role_filter")
    if raw is None or raw == "":
        return ["user", "assistant"]
    if isinstance(raw, str):
        return [r.strip() for r in raw.split(",") if r.strip()]
    if isinstance(raw, list):
        return [str(r) for r in raw if r]
    return ["user", "assistant"]


def discovery_rows(
    db: SessionDB,
    query: str,
    role_filter: list[str] | None = None,
    source: str | list[str] | None = None,
    user_id: str | None = None,
    current_session_id: str | None = None,
    limit: int = MAX_FTS_ROWS,
    sort: str | None = None,
    query_syntax: bool = False,
) -> list[dict[str, Any]]:
    """The message rows discovery mode groups, best first (:meth:`SessionDB.search_messages` rows,
    without ``context`` and with ``snippet`` None: discovery builds snippets for the hits it shows).

    Roles default to user and assistant; hidden sources are left out unless ``source`` is given;
    the live session is excluded; ``sort`` is ``None`` (relevance), ``"newest"`` or ``"oldest"``;
    rows of automated sessions (:data:`DEMOTED_SOURCES`) come after the others. Raises
    :class:`SessionStoreError` on a database failure (so the tool can report it). Used by
    ``bench/locomo_recall.py`` to measure exactly this path.
    """
    return demote_automated(db.search_messages(
        query, **_discovery_search_args(role_filter, source, user_id, current_session_id, limit, sort, query_syntax)))


def _discovery_search_args(
    role_filter: list[str] | None,
    source: str | list[str] | None,
    user_id: str | None,
    current_session_id: str | None,
    limit: int,
    sort: str | None,
    query_syntax: bool,
) -> dict[str, Any]:
    """The keyword arguments of ``search_messages`` that discovery reads its rows with (one place,
    for :func:`discovery_rows` and :func:`_discovery_read`): the filters its docstring states."""
    return {
        "source_filter": ([source] if isinstance(source, str) else source) or None,
        "exclude_sources": None if source else list(HIDDEN_SOURCES),
        "role_filter": role_filter or ["user", "assistant"],
        "user_id": user_id,
        "exclude_session_ids": [current_session_id] if current_session_id else None,
        "limit": limit,
        "raise_errors": True,
        "with_context": False,
        "with_snippet": False,
        "sort": sort,
        "query_syntax": query_syntax,
    }


def _discovery_read(
    db: SessionDB,
    query: str,
    role_filter: list[str],
    source: list[str] | None,
    user_id: str | None,
    current_session_id: str | None,
    sort: str | None,
    query_syntax: bool,
) -> list[tuple[int, Any]]:
    """:func:`discovery_rows`' rows, in its order, as ``(message id, row)``: on SQLite the rows as
    read (``SessionDB.search_messages`` with ``as_read``: no dict made for the rows discovery
    does not show), elsewhere its dicts. ``row`` is indexable by ``session_id``, ``role``,
    ``timestamp``, ``source``, ``model``, ``title`` and ``session_started``."""
    if not isinstance(db, SessionDB):
        return [(r["id"], r) for r in discovery_rows(db, query, role_filter, source, user_id, current_session_id,
                                                    sort=sort, query_syntax=query_syntax)]
    read = db.search_messages(
        query, as_read=True,
        **_discovery_search_args(role_filter, source, user_id, current_session_id, MAX_FTS_ROWS, sort, query_syntax))
    # demote_automated's stable sort, on the rows as read
    return [(i, r) for i, r, _ in sorted(read, key=lambda t: (t[1]["source"] or "") in DEMOTED_SOURCES)]


def _discover(
    db: SessionDB,
    query: str,
    args: dict[str, Any],
    current_session_id: str | None,
    summarizer: Summarizer | None,
) -> str:
    limit = _clamp(args.get("limit"), DEFAULT_LIMIT, 1, MAX_LIMIT)
    window = _clamp(args.get("window"), DEFAULT_WINDOW, 1, MAX_WINDOW)
    sort = _sort(args)
    syntax = args.get("query_syntax") is True
    sources = _sources(args)
    user_id = None if args.get("user_id") is None else str(args["user_id"])
    rows = _discovery_read(db, query, _roles(args), sources, user_id, current_session_id, sort, syntax)
    titled = _title_hits(db, query, sources, user_id, current_session_id, sort, syntax)
    groups: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    root_cache = db.get_lineages([*(t["id"] for t in titled), *(r["session_id"] for _, r in rows)])
    for t in titled:  # a session found by its title comes first: the user named it so
        root = (root_cache.get(t["id"]) or [t["id"]])[0]
        if root not in groups:
            groups[root] = {"root": root, "hits": [], "best_session": t["id"], "title_match": t["title_match"]}
            order.append(root)
    for hit in rows:
        sid = hit[1]["session_id"]
        root = (root_cache.get(sid) or [sid])[0]
        g = groups.get(root)
        if g is None:
            g = groups[root] = {"root": root, "hits": [], "best_session": sid, "title_match": None}
            order.append(root)
        if not g["hits"]:
            g["best_session"] = sid
        g["hits"].append(hit)
    results = []
    for root in order[:limit]:
        g = groups[root]
        best_sid = g["best_session"]
        sess = _session_of(db, best_sid, g["hits"])
        results.append(
            {
                "session_id": best_sid,
                "lineage_root": root,
                "lineage": root_cache.get(best_sid) or [best_sid],
                "title": sess.get("title"),
                "title_match": g["title_match"],
                "source": sess.get("source"),
                "started_at": sess.get("started_at"),
                "when": _iso(sess.get("started_at")),
                "model": sess.get("model"),
                "match_count": len(g["hits"]),
                "hits": [
                    {
                        "message_id": i,
                        "session_id": h["session_id"],
                        "role": h["role"],
                        "snippet": None,  # filled in below, for the hits shown only
                        "timestamp": h["timestamp"],
                        "when": _iso(h["timestamp"]),
                        "session_when": _iso(h["session_started"]),
                    }
                    for i, h in g["hits"][:5]
                ],
                "link": f"@session:{best_sid}",
            }
        )
    snippets = db.snippets_for(query, [h["message_id"] for res in results for h in res["hits"]], query_syntax=syntax)
    for res in results:
        for h in res["hits"]:
            h["snippet"] = snippets.get(h["message_id"], "")
    if results:
        top = results[0]
        if top["hits"]:
            anchor_sid, anchor_id = top["hits"][0]["session_id"], top["hits"][0]["message_id"]
        else:  # found by its title only: show how the conversation began
            anchor_sid = top["session_id"]
            first_msgs, _, _ = db.get_bookends(anchor_sid, 1)
            anchor_id = first_msgs[0]["id"] if first_msgs else None
        if anchor_id is not None:
            msgs, _, _ = db.get_messages_window(anchor_sid, anchor_id, window)
            top["window"] = [_msg(m) for m in msgs]
        first, last, n_convo = db.get_bookends(anchor_sid, BOOKEND_COUNT)
        if n_convo > 2 * BOOKEND_COUNT:
            top["bookends"] = {"first": [_msg(m) for m in first], "last": [_msg(m) for m in last]}
    if summarizer is not None:
        for res in results:
            try:
                transcript = "\n".join(
                    f"{m['role']}: {m['content']}"
                    for m in db.get_messages_as_conversation(res["session_id"])
                    if isinstance(m.get("content"), str)
                )[:100_000]
                res["summary"] = str(summarizer(transcript, query))
            except Exception as exc:  # an auxiliary model failure must not break the tool
                logger.warning("session_search summary failed for %s: %s", res["session_id"], exc)
                res["summary_error"] = f"{type(exc).__name__}: {exc}"
    payload: dict[str, Any] = {"mode": "discovery", "query": query[:MAX_QUERY_CHARS], "count": len(results),
                               "results": results}
    if len(query) > MAX_QUERY_CHARS:  # echo what was searched, not megabytes of what was not
        payload["query_truncated"], payload["query_chars"] = True, len(query)
    note = search_note(query, syntax, found=bool(results))
    if note:
        payload["note"] = note
    return _ok(payload)


def _session_of(db: SessionDB, session_id: str, hits: list[tuple[int, Any]]) -> dict[str, Any]:
    """``title``, ``source``, ``started_at``, ``model`` of the session a result shows: from its first
    hit (``(id, row)``, :func:`_discovery_read`) when that hit is in it (a search row carries its
    session's columns: no statement), else :meth:`SessionDB.get_session` (``{}`` when unknown)."""
    if hits and hits[0][1]["session_id"] == session_id:
        h = hits[0][1]
        return {"title": h["title"], "source": h["source"], "started_at": h["session_started"], "model": h["model"]}
    return db.get_session(session_id) or {}


def _title_hits(
    db: SessionDB,
    query: str,
    sources: list[str] | None,
    user_id: str | None,
    current_session_id: str | None,
    sort: str | None,
    syntax: bool,
) -> list[dict[str, Any]]:
    """Sessions found by their title (:meth:`SessionDB.search_titles`) that discovery may show:
    the same source, user and live-session rules as message hits; automated sources last. Under
    a ``sort`` the exact/terms classes stay in that order, each by start time."""
    hits = []
    for t in db.search_titles(query, limit=2 * MAX_LIMIT, query_syntax=syntax):
        if t["id"] == current_session_id:
            continue
        if sources and t.get("source") not in sources:
            continue
        if not sources and t.get("source") in HIDDEN_SOURCES:
            continue
        if user_id is not None and str(t.get("user_id")) != user_id:
            continue
        hits.append(t)
    if sort == "oldest":
        hits.sort(key=lambda t: (t["title_match"] != "exact", t.get("started_at") or 0.0))
    return demote_automated(hits)


def _scroll(db: SessionDB, session_id: str, args: dict[str, Any]) -> str:
    window = _clamp(args.get("window"), DEFAULT_WINDOW, 1, MAX_WINDOW)
    try:
        around = int(args.get("around_message_id"))  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return _err("around_message_id must be an integer message id taken from a search hit.")
    if not -(2**63) <= around < 2**63:  # beyond SQLite INTEGER: no such message
        return _err(f"Message {around} is not in session {session_id}; use a message_id from that session's hits.")
    anchor = db.get_message(around)
    if anchor is None or anchor["session_id"] != session_id:
        return _err(f"Message {around} is not in session {session_id}; use a message_id from that session's hits.")
    msgs, more_before, more_after = db.get_messages_window(session_id, around, window)
    return _ok(
        {
            "mode": "scroll",
            "session_id": session_id,
            "around_message_id": around,
            "messages": [_msg(m) for m in msgs],
            "more_before": more_before,
            "more_after": more_after,
        }
    )


def _session_card(s: dict[str, Any]) -> dict[str, Any]:
    return {
        "session_id": s["id"],
        "title": s.get("title"),
        "source": s.get("source"),
        "started_at": s.get("started_at"),
        "when": _iso(s.get("started_at")),
        "ended_at": s.get("ended_at"),
        "end_reason": s.get("end_reason"),
        "message_count": s.get("message_count"),
        "preview": s.get("preview", ""),
        "parent_session_id": s.get("parent_session_id"),
        "model": s.get("model"),
    }


def _read(db: SessionDB, session_id: str) -> str:
    sess = db.get_session(session_id)
    if sess is None:
        return _err(f"Unknown session {session_id!r}.")
    msgs = db.get_messages(session_id)
    truncated = len(msgs) > READ_MAX_MESSAGES
    omitted = 0
    if truncated:
        omitted = len(msgs) - READ_HEAD - READ_TAIL
        msgs = msgs[:READ_HEAD] + msgs[-READ_TAIL:]
    return _ok(
        {
            "mode": "read",
            "session": _session_card(sess),
            "messages": [_msg(m) for m in msgs],
            "truncated": truncated,
            "omitted_messages": omitted,
        }
    )


def _browse(db: SessionDB, args: dict[str, Any], current_session_id: str | None) -> str:
    limit = _clamp(args.get("limit"), 10, 1, 50)
    sources = _sources(args)
    if sources and len(sources) > 1:
        sessions = [s for src in sources for s in db.list_sessions(source=src, limit=limit + 1)]
        sessions.sort(key=lambda s: (s["started_at"] or 0, s["id"]), reverse=True)
    else:
        sessions = db.list_sessions(source=sources[0] if sources else None, limit=limit + 1 + 20)
    cards = []
    for s in sessions:
        if s["id"] == current_session_id:
            continue
        if not sources and s.get("source") in HIDDEN_SOURCES:
            continue
        cards.append(_session_card(s))
        if len(cards) >= limit:
            break
    return _ok({"mode": "browse", "count": len(cards), "sessions": cards})
