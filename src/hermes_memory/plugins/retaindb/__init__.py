"""RetainDB memory provider: the RetainDB cloud REST API through ``httpx`` (there is no SDK on PyPI).

Behaviour follows the reference plugin (docs/providers.md §5):

* Tools (10): ``retaindb_profile``, ``retaindb_search``, ``retaindb_context``, ``retaindb_remember``,
  ``retaindb_forget``, ``retaindb_upload_file``, ``retaindb_list_files``, ``retaindb_read_file``,
  ``retaindb_ingest_file``, ``retaindb_delete_file``. Results are the server's JSON as is; failures
  are ``{"error": ...}`` with the HTTP status and the server's ``message``/``error``.
* Writes go through a durable SQLite queue, ``$HERMES_HOME/retaindb_queue.db`` (table ``pending``):
  ``sync_turn`` enqueues the turn then drains the queue with ``POST /v1/memory/ingest/session``; a
  failed row stays with its ``last_error`` and is retried on the next turn, at ``initialize``
  (up to 200 rows) and at ``shutdown``. ``initialize`` also seeds the agent identity from
  ``$HERMES_HOME/SOUL.md`` (``POST /v1/memory/agent/{agent}/seed``), once per distinct content.
* ``queue_prefetch`` (after a turn) fetches, in one background thread: the context overlay (profile
  + context query), the user "dialectic" (``/ask``, reasoning level low/medium/high by query
  length) and the agent self-model; the next ``prefetch`` serves that batch (on the first turn, or
  after a session switch, it fetches synchronously) as ``[RetainDB Context]``,
  ``[RetainDB User Synthesis]`` and ``[RetainDB Agent Self-Model]`` sections.
* ``on_session_switch`` moves writes to the new session and drops cached recall.
* ``on_memory_write`` mirrors built-in ``add`` writes (``preference`` for the user profile,
  ``factual`` otherwise). Only the primary agent context writes.

Configuration: ``RETAINDB_API_KEY`` (secret), ``RETAINDB_BASE_URL`` (default
``https://api.retaindb.com``), ``RETAINDB_PROJECT`` (else ``project`` in config.yaml's ``retaindb:`` section or ``retaindb.json``, else
``default``), ``timeout`` seconds per request (default 10).
"""

from __future__ import annotations

import hashlib
import json
import logging
import mimetypes
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hermes_memory.plugins.retaindb.client import (  # noqa: F401 - moved there, re-exported
    BLOCKED_DIRS,
    BLOCKED_NAMES,
    BLOCKED_SUFFIXES,
    DEFAULT_BASE_URL,
    DEFAULTS,
    FILE_SCOPES,
    MEMORY_TYPES,
    READ_LIMIT_CHARS,
    REPLAY_LIMIT,
    RetainDBError,
    _Client,
    _home,
    file_settings,
    load_settings,
)
from hermes_memory.providers.base import (
    ConfigField,
    MemoryProvider,
    ToolArgumentError,
    is_trivial_prompt,
    non_ascii_problem,
    number_arg,
    path_segment,
)

log = logging.getLogger(__name__)


class RetainDBProvider(MemoryProvider):
    """RetainDB (cloud REST API). See the module docstring for behaviour."""

    def __init__(self, hermes_home: str | os.PathLike[str] | None = None) -> None:
        """``hermes_home`` is the data home used by :meth:`is_available` before :meth:`initialize`
        (default: ``$HERMES_HOME``, else ``~/.hermes``)."""
        self.settings: dict[str, Any] = {}
        self.home: Path | None = Path(hermes_home) if hermes_home else None
        self.session_id = ""
        self.user_id = "default"
        self.agent_id = "hermes"
        self.agent_context = "primary"
        self._client: _Client | None = None
        self._db_lock = threading.Lock()
        self._generation = 0
        self._prefetch: dict[str, Any] = {}
        self._prefetch_thread: threading.Thread | None = None
        self._threads: list[threading.Thread] = []
        self._last_recall: dict[str, Any] | None = None

    # -- required ------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return "retaindb"

    def is_available(self) -> bool:
        return not self.unavailable_reason()

    def unavailable_reason(self) -> str:
        key = load_settings(self.home)["api_key"]
        if not key:
            return "RETAINDB_API_KEY is not set: run 'hermes-memory memory setup --provider retaindb'"
        return non_ascii_problem("RETAINDB_API_KEY", str(key))

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self.home = _home(kwargs.get("hermes_home") or self.home)
        self.settings = load_settings(self.home)
        self.session_id = session_id
        self.user_id = str(kwargs.get("user_id") or "default")
        self.agent_id = str(kwargs.get("agent_id") or self.settings.get("agent_id") or "hermes")
        self.agent_context = kwargs.get("agent_context") or "primary"
        self._client = _Client(str(self.settings["base_url"]), str(self.settings["api_key"]),
                               str(self.settings["project"]), float(self.settings["timeout"]))
        self._open_queue()
        if self.writes_allowed(self.agent_context):
            for target, label in ((self._drain_queue, "replay"), (self._seed_identity, "seed")):
                thread = threading.Thread(target=target, name=f"retaindb-{label}", daemon=True)
                self._threads.append(thread)
                thread.start()

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        def tool(name: str, desc: str, props: dict[str, Any], required: list[str]) -> dict[str, Any]:
            return {"name": name, "description": desc,
                    "parameters": {"type": "object", "properties": props, "required": required}}

        s, i = {"type": "string"}, {"type": "integer"}
        return [
            tool("retaindb_profile", "The user's stored RetainDB profile (all known memories).", {}, []),
            tool("retaindb_search", "Search RetainDB memories about the user.",
                 {"query": s, "top_k": {**i, "description": "default 8, max 20"}}, ["query"]),
            tool("retaindb_context", "Context overlay for a query: the most relevant memories, compacted.",
                 {"query": s}, ["query"]),
            tool("retaindb_remember", "Store one memory about the user.",
                 {"content": s, "memory_type": {"type": "string", "enum": list(MEMORY_TYPES)},
                  "importance": {"type": "number", "minimum": 0, "maximum": 1}}, ["content"]),
            tool("retaindb_forget", "Delete a memory by id.", {"memory_id": s}, ["memory_id"]),
            tool("retaindb_upload_file", "Upload a local file to RetainDB (optionally ingest it into memory).",
                 {"local_path": s, "remote_path": s, "scope": {"type": "string", "enum": list(FILE_SCOPES)},
                  "ingest": {"type": "boolean"}}, ["local_path"]),
            tool("retaindb_list_files", "List uploaded files.", {"prefix": s, "limit": i}, []),
            tool("retaindb_read_file", "Read an uploaded file's metadata and text content.", {"file_id": s},
                 ["file_id"]),
            tool("retaindb_ingest_file", "Ingest an uploaded file into memory.", {"file_id": s}, ["file_id"]),
            tool("retaindb_delete_file", "Delete an uploaded file.", {"file_id": s}, ["file_id"]),
        ]

    # -- client calls ------------------------------------------------------------------------------
    @property
    def client(self) -> _Client:
        if self._client is None:
            raise RetainDBError("retaindb provider is not initialised")
        return self._client

    def _scoped(self) -> dict[str, Any]:
        return {"project": self.client.project, "user_id": self.user_id, "session_id": self.session_id}

    def _profile(self) -> Any:
        c = self.client
        return c.with_fallback("GET", f"/v1/memory/profile/{path_segment(self.user_id)}", "/v1/memories",
                               params={"project": c.project, "include_pending": "true", "user_id": self.user_id,
                                       "limit": 200})

    def _search(self, query: str, top_k: int) -> Any:
        return self.client.request("POST", "/v1/memory/search", json_body={
            **self._scoped(), "query": query, "top_k": top_k, "include_pending": True})

    def _context(self, query: str) -> Any:
        return self.client.request("POST", "/v1/context/query", json_body={
            **self._scoped(), "query": query, "include_memories": True, "max_tokens": 1200})

    def _add_memory(self, content: str, memory_type: str, importance: float) -> Any:
        return self.client.with_fallback("POST", "/v1/memory", "/v1/memories", json_body={
            **self._scoped(), "content": content, "memory_type": memory_type, "importance": importance,
            "write_mode": "sync"})

    # -- tools ------------------------------------------------------------------------------------
    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        args = args or {}
        writes = {"retaindb_remember", "retaindb_forget", "retaindb_upload_file", "retaindb_ingest_file",
                  "retaindb_delete_file"}
        if tool_name in writes and not self.writes_allowed(self.agent_context):
            return self.tool_error(f"{tool_name} is disabled in the {self.agent_context!r} agent context; "
                                   "only the primary agent writes to RetainDB")
        try:
            return self._dispatch(tool_name, args)
        except RetainDBError as exc:
            return self.tool_error(f"retaindb: {exc}")
        except ToolArgumentError as exc:
            return self.tool_error(str(exc))

    def _dispatch(self, tool_name: str, args: dict[str, Any]) -> str:
        def need(key: str) -> str | None:
            value = args.get(key)
            return str(value).strip() if value not in (None, "") and str(value).strip() else None

        c = self.client
        if tool_name == "retaindb_profile":
            return self.tool_result(self._profile())
        if tool_name == "retaindb_search":
            if not (q := need("query")):
                return self.tool_error("query is required")
            return self.tool_result(self._search(q, max(1, min(number_arg(args, "top_k", 8) or 8, 20))))
        if tool_name == "retaindb_context":
            if not (q := need("query")):
                return self.tool_error("query is required")
            raw = self._context(q)
            return self.tool_result({"context": _compact(_items(raw, "results")), "raw": raw})
        if tool_name == "retaindb_remember":
            if not (content := need("content")):
                return self.tool_error("content is required")
            mtype = str(args.get("memory_type") or "factual")
            if mtype not in MEMORY_TYPES:
                return self.tool_error(f"memory_type must be one of {', '.join(MEMORY_TYPES)}; got {mtype!r}")
            importance = number_arg(args, "importance", 0.7, float)
            if not 0.0 <= importance <= 1.0:
                return self.tool_error(f"importance must be between 0 and 1; got {importance}")
            return self.tool_result(self._add_memory(content, mtype, importance))
        if tool_name == "retaindb_forget":
            if not (mid := need("memory_id")):
                return self.tool_error("memory_id is required")
            seg = path_segment(mid)
            return self.tool_result(c.with_fallback("DELETE", f"/v1/memory/{seg}", f"/v1/memories/{seg}") or
                                    {"deleted": mid})
        if tool_name == "retaindb_upload_file":
            return self._upload(args)
        if tool_name == "retaindb_list_files":
            params: dict[str, Any] = {"limit": number_arg(args, "limit", 50) or 50}
            if args.get("prefix"):
                params["prefix"] = str(args["prefix"])
            return self.tool_result(c.request("GET", "/v1/files", params=params))
        if tool_name in ("retaindb_read_file", "retaindb_ingest_file", "retaindb_delete_file"):
            if not (fid := need("file_id")):
                return self.tool_error("file_id is required")
            seg = path_segment(fid)
            if tool_name == "retaindb_delete_file":
                return self.tool_result(c.request("DELETE", f"/v1/files/{seg}") or {"deleted": fid})
            if tool_name == "retaindb_ingest_file":
                return self.tool_result(c.request("POST", f"/v1/files/{seg}/ingest",
                                                  json_body={"user_id": self.user_id, "agent_id": self.agent_id}))
            meta = c.request("GET", f"/v1/files/{seg}")
            info = meta.get("file", meta) if isinstance(meta, dict) else {}
            resp = c.request("GET", f"/v1/files/{seg}/content", raw=True)
            mime = str(info.get("mime_type") or resp.headers.get("content-type", ""))
            try:
                text = resp.content.decode("utf-8")
            except UnicodeDecodeError:
                return self.tool_result({"file": info, "content": None,
                                         "note": f"binary file ({mime or 'unknown type'}, {len(resp.content)} bytes); "
                                                 "content not shown"})
            out = {"file": info, "content": text[:READ_LIMIT_CHARS]}
            if len(text) > READ_LIMIT_CHARS:
                out["truncated"] = True
            return self.tool_result(out)
        return self.tool_error(f"unknown tool {tool_name!r} for provider retaindb")

    def _upload(self, args: dict[str, Any]) -> str:
        local = str(args.get("local_path") or "").strip()
        if not local:
            return self.tool_error("local_path is required")
        path = Path(local).expanduser()
        if _blocked(path, self.home):
            return self.tool_error(f"refusing to upload {path}: it looks like a secret or key file")
        if not path.is_file():
            return self.tool_error(f"no such file: {path}")
        scope = str(args.get("scope") or "PROJECT").upper()
        if scope not in FILE_SCOPES:
            return self.tool_error(f"scope must be one of {', '.join(FILE_SCOPES)}; got {scope!r}")
        remote = str(args.get("remote_path") or f"/{path.name}")
        mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        with path.open("rb") as fh:
            out = self.client.request("POST", "/v1/files", files={"file": (path.name, fh, mime)},
                                      data={"path": remote, "scope": scope, "project_id": self.client.project})
        if args.get("ingest"):
            fid = (out.get("file") or {}).get("id") if isinstance(out, dict) else None
            if fid:
                out["ingest"] = self.client.request("POST", f"/v1/files/{path_segment(fid)}/ingest",
                                                    json_body={"user_id": self.user_id, "agent_id": self.agent_id})
        return self.tool_result(out)

    # -- recall -------------------------------------------------------------------------------------
    def system_prompt_block(self) -> str:
        return (f"# External memory: RetainDB (project {self.settings.get('project', 'default')})\n"
                "Relevant memories are recalled automatically. Tools: retaindb_search, retaindb_context, "
                "retaindb_profile, retaindb_remember, retaindb_forget and the retaindb_*_file tools.")

    def _fetch_recall(self, query: str) -> dict[str, Any]:
        """The three recall pieces for ``query``; a failing piece is recorded under ``errors``."""
        out: dict[str, Any] = {"errors": []}
        c = self.client
        try:
            profile = _items(self._profile(), "memories")[:5]
            context = _items(self._context(query), "results")[:5]
            out["context"] = _compact(profile + context)
        except RetainDBError as exc:
            out["errors"].append(str(exc))
        level = "low" if len(query) < 120 else "medium" if len(query) < 400 else "high"
        try:
            ans = c.request("POST", f"/v1/memory/profile/{path_segment(self.user_id)}/ask",
                            json_body={"project": c.project, "query": query, "reasoning_level": level})
            out["synthesis"] = str(ans.get("answer") or "").strip() if isinstance(ans, dict) else ""
        except RetainDBError as exc:
            out["errors"].append(str(exc))
        try:
            model = c.request("GET", f"/v1/memory/agent/{path_segment(self.agent_id)}/model", params={"project": c.project})
            if isinstance(model, dict) and int(model.get("memory_count") or 0) > 0:
                out["agent"] = model
        except RetainDBError as exc:
            out["errors"].append(str(exc))
        return out

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        if is_trivial_prompt(query) or self._client is None:
            return
        if self._prefetch_thread is not None and self._prefetch_thread.is_alive():
            return  # the previous batch is still running (reference)
        generation = self._generation

        def run() -> None:
            result = self._fetch_recall(query)
            if generation == self._generation:
                self._prefetch = {"query": query, "result": result}

        self._prefetch_thread = threading.Thread(target=run, name="retaindb-prefetch", daemon=True)
        self._prefetch_thread.start()

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        if is_trivial_prompt(query) or self._client is None:
            return ""
        thread = self._prefetch_thread
        if thread is not None and thread.is_alive():
            thread.join(float(self.settings.get("timeout", 10.0)))
        # the batch queued after the previous turn is this turn's recall (reference), whatever its query
        cached, self._prefetch = self._prefetch, {}
        result = cached.get("result")
        if result is None:
            result = self._fetch_recall(query)
        self._last_recall = {"ok": not result["errors"], "errors": result["errors"]}
        if result["errors"]:
            log.warning("retaindb recall: %s", "; ".join(result["errors"]))
        parts = []
        if result.get("context"):
            parts.append("[RetainDB Context]\n" + result["context"])
        if result.get("synthesis"):
            parts.append("[RetainDB User Synthesis]\n" + result["synthesis"])
        if agent := result.get("agent"):
            lines = []
            if agent.get("persona"):
                lines.append(f"Persona: {agent['persona']}")
            for item in agent.get("persistent_instructions") or []:
                lines.append(f"- {item}")
            if agent.get("working_style"):
                lines.append(f"Working style: {agent['working_style']}")
            if lines:
                parts.append("[RetainDB Agent Self-Model]\n" + "\n".join(lines))
        return "\n\n".join(parts)

    def recall_status(self) -> dict[str, Any] | None:
        return self._last_recall

    # -- writes: the durable queue -------------------------------------------------------------------
    @property
    def queue_path(self) -> Path:
        return (self.home or _home()) / "retaindb_queue.db"

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        """A connection to the queue database, committed and closed on exit (callers hold ``_db_lock``)."""
        conn = sqlite3.connect(self.queue_path, timeout=5.0)
        try:
            conn.execute("CREATE TABLE IF NOT EXISTS pending (id INTEGER PRIMARY KEY AUTOINCREMENT, user_id TEXT, "
                         "session_id TEXT, messages_json TEXT, created_at REAL, last_error TEXT)")
            yield conn
            conn.commit()
        finally:
            conn.close()

    def _open_queue(self) -> None:
        self.queue_path.parent.mkdir(parents=True, exist_ok=True)
        with self._db_lock, self._db() as conn:
            conn.commit()

    def pending(self) -> list[dict[str, Any]]:
        """Rows still waiting in the queue: ``[{id, session_id, messages, last_error}]``."""
        with self._db_lock, self._db() as conn:
            rows = conn.execute("SELECT id, session_id, messages_json, last_error FROM pending ORDER BY id").fetchall()
        return [{"id": r[0], "session_id": r[1], "messages": json.loads(r[2]), "last_error": r[3]} for r in rows]

    def _drain_queue(self, limit: int = REPLAY_LIMIT) -> int:
        """Send pending rows in order; stop at the first failure (kept, with ``last_error``). Returns rows sent."""
        sent = 0
        try:
            with self._db_lock, self._db() as conn:
                rows = conn.execute("SELECT id, user_id, session_id, messages_json FROM pending ORDER BY id LIMIT ?",
                                    (limit,)).fetchall()
                for rid, user_id, sid, messages_json in rows:
                    try:
                        self.client.request("POST", "/v1/memory/ingest/session", json_body={
                            "project": self.client.project, "user_id": user_id, "session_id": sid,
                            "messages": json.loads(messages_json), "write_mode": "sync"})
                    except RetainDBError as exc:
                        conn.execute("UPDATE pending SET last_error = ? WHERE id = ?", (str(exc), rid))
                        conn.commit()
                        log.warning("retaindb: ingest kept in queue: %s", exc)
                        break
                    conn.execute("DELETE FROM pending WHERE id = ?", (rid,))
                    conn.commit()
                    sent += 1
        except (sqlite3.Error, RetainDBError) as exc:
            log.warning("retaindb: queue drain failed: %s", exc)
        return sent

    def _seed_identity(self) -> None:
        """Send ``SOUL.md`` as the agent's identity seed, unless this exact content was sent before."""
        soul = (self.home or _home()) / "SOUL.md"
        try:
            content = soul.read_text(encoding="utf-8").strip()
        except OSError:
            return
        if not content:
            return
        digest = hashlib.sha256(content.encode()).hexdigest()
        try:
            with self._db_lock, self._db() as conn:
                conn.execute("CREATE TABLE IF NOT EXISTS seeded (agent_id TEXT, project TEXT, sha256 TEXT, "
                             "PRIMARY KEY (agent_id, project, sha256))")
                if conn.execute("SELECT 1 FROM seeded WHERE agent_id=? AND project=? AND sha256=?",
                                (self.agent_id, self.client.project, digest)).fetchone():
                    return
            self.client.request("POST", f"/v1/memory/agent/{path_segment(self.agent_id)}/seed",
                                json_body={"project": self.client.project, "content": content, "source": "soul_md"})
            with self._db_lock, self._db() as conn:
                conn.execute("INSERT OR IGNORE INTO seeded VALUES (?, ?, ?)", (self.agent_id, self.client.project, digest))
                conn.commit()
        except (sqlite3.Error, RetainDBError) as exc:
            log.warning("retaindb: identity seed from SOUL.md failed (retried next session): %s", exc)

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: list[dict[str, Any]] | None = None) -> None:
        if not self.writes_allowed(self.agent_context) or self._client is None:
            return
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        msgs = [{"role": "user", "content": user_content, "timestamp": now},
                {"role": "assistant", "content": assistant_content, "timestamp": now}]
        try:
            with self._db_lock, self._db() as conn:
                conn.execute("INSERT INTO pending (user_id, session_id, messages_json, created_at) VALUES (?,?,?,?)",
                             (self.user_id, self.session_id, json.dumps(msgs, ensure_ascii=False), time.time()))
                conn.commit()
        except sqlite3.Error as exc:
            log.warning("retaindb: cannot queue turn: %s", exc)
            return
        self._drain_queue()

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """At a real session boundary, retry whatever is still queued (the turns themselves went at sync time)."""
        if self.writes_allowed(self.agent_context) and self._client is not None:
            self._drain_queue()

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "", reset: bool = False,
                          rewound: bool = False, **kwargs: Any) -> None:
        self.session_id = new_session_id
        self._generation += 1
        self._prefetch = {}

    def on_memory_write(self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None) -> None:
        if action != "add" or not content or not self.writes_allowed(self.agent_context) or self._client is None:
            return
        try:
            self._add_memory(content, "preference" if target == "user" else "factual", 0.7)
        except RetainDBError as exc:
            log.warning("retaindb: mirror of memory write failed: %s", exc)

    # -- setup, lifecycle -------------------------------------------------------------------------------
    def get_config_schema(self) -> list[ConfigField]:
        return [
            ConfigField("api_key", "RetainDB API key", secret=True, required=True, env_var="RETAINDB_API_KEY",
                        url="https://retaindb.com"),
            ConfigField("base_url", f"API base URL (blank = {DEFAULT_BASE_URL})", default=""),
            ConfigField("project", "Project name (blank = default)", default=""),
            ConfigField("timeout", "Seconds per request", default=10.0, type="float"),
        ]


    def backup_paths(self) -> list[str]:
        home = self.home or _home()
        return [str(p) for p in (home / "retaindb.json", home / "retaindb_queue.db") if p.exists()]

    def shutdown(self) -> None:
        timeout = float(self.settings.get("timeout", 10.0))
        for thread in [self._prefetch_thread, *self._threads]:
            if thread is not None:
                thread.join(timeout)
        self._threads = []
        if self._client is not None:
            if self.writes_allowed(self.agent_context):
                self._drain_queue()
            self._client.close()
            self._client = None


def _items(payload: Any, key: str) -> list[Any]:
    if isinstance(payload, list):
        return payload
    if isinstance(payload, dict):
        value = payload.get(key)
        return value if isinstance(value, list) else []
    return []


def _compact(items: list[Any], width: int = 320) -> str:
    """One bullet per distinct item, each cut to ``width`` chars (reference: 320)."""
    seen: set[str] = set()
    lines = []
    for item in items:
        text = str(item.get("content") or item.get("memory") or "") if isinstance(item, dict) else str(item)
        text = " ".join(text.split())[:width]
        if text and text.lower() not in seen:
            seen.add(text.lower())
            lines.append(f"- {text}")
    return "\n".join(lines)


def _blocked(path: Path, home: Path | None) -> bool:
    resolved = path.resolve()
    name = resolved.name.lower()
    if name in BLOCKED_NAMES or name.startswith(".env") or name.endswith(BLOCKED_SUFFIXES):
        return True
    if any(part in BLOCKED_DIRS for part in resolved.parts):
        return True
    return home is not None and resolved == (home / ".env").resolve()


def register(ctx: Any) -> None:
    """Plugin entry point: register the provider with the discovery collector (its ``hermes_home``, if any)."""
    ctx.register_memory_provider(RetainDBProvider(hermes_home=getattr(ctx, "hermes_home", None)))
