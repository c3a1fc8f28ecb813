"""The memory server: the agent's memory, exposed over MCP (stdio and streamable HTTP).

Built on the official ``mcp`` SDK's low-level :class:`mcp.server.lowlevel.Server` (tool schemas
are the agent's own JSON Schemas, so no decorator layer is needed). What a client sees:

Tools (each with annotations and an ``outputSchema``; see :mod:`hermes_memory.mcp.schemas`)
    ``memory``          the agent's memory tool: same schema, same dispatcher
                        (:func:`hermes_memory.memory.memory_tool`), same JSON results, plus
                        the MCP-only action ``read`` (:mod:`hermes_memory.mcp.read`).
    ``session_search``  the agent's session-history search over ``state.db``.
    provider tools      the tools of the external provider named by ``memory.provider`` in
                        ``config.yaml`` (e.g. Holographic's ``fact_store``), routed through
                        :class:`~hermes_memory.providers.MemoryManager`.
    ``memory`` accepts an optional ``user_id`` (per-user ``USER.md`` profiles), unless the
    server was started with a fixed ``--user-id``.

Resources
    ``hermes-memory://memory/snapshot``  the frozen snapshot (both blocks exactly as the agent's
                                         system prompt renders them).
    ``hermes-memory://memory/MEMORY.md`` the live file.
    ``hermes-memory://memory/USER.md``   the live file (of the server's ``--user-id`` if set).
    Templates: one user's profile and one session's transcript and messages; URIs are matched
    by :func:`hermes_memory.mcp.resources.match_uri` (unknown or traversal: ``-32602``).

Prompt
    ``memory_guidance``  the agent's memory and session-search guidance, the frozen snapshot and
                         the external provider's prompt block.

Frozen snapshot: one per *client session*, taken when the session starts, like the agent's
session-start snapshot. Over stdio a client starts one server process per session, so the
snapshot is taken at server start. Over streamable HTTP each MCP session (``Mcp-Session-Id``)
gets its own snapshot and its own memory-store instance, taken at the session's first request
after ``initialize``; requests that carry no session id (stateless clients) share the snapshot
taken at server start. A session's state goes when the SDK ends the session (the client's DELETE,
its idle timeout; :mod:`hermes_memory.mcp.http_sessions`). Writes reach disk at once and show in ``MEMORY.md``/``USER.md`` and in
tool results, never in an existing snapshot. The memory tool's per-turn failure cap counts per
client session too (MCP has no turns; a success resets it, as in the agent).

Safety with several clients on one home: every memory mutation takes the store's file lock and
re-reads the file first; every session write is a SQLite transaction. Inside one server process
tool calls run one at a time on a worker thread (the event loop keeps serving other clients), and
the tool calls of one client session run in the order they arrived, reads included, so a pipelined
``add`` then ``replace`` of the same entry never runs the replace first.

Invalid tool arguments are rejected before dispatch with a JSON-RPC ``-32602`` error whose
message names the field (see :mod:`hermes_memory.mcp.validation`), so nothing is written.
"""

from __future__ import annotations

import inspect
import json
import logging
import socket
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from hermes_memory import __version__
from hermes_memory.config import HermesConfig
from hermes_memory.errors import HermesMemoryError, UnknownTool  # noqa: F401 - UnknownTool re-exported
from hermes_memory.home import HermesHome

# The loopback rule, Host/Origin checks, bearer-token gate and socket binding live in one module
# shared with the web dashboard; these names stay importable from here.
from hermes_memory.httpguard import (  # noqa: F401
    LOOPBACK_HOSTS,
    BearerTokenGate,
    base_url,
    bind_socket,
    is_loopback,
    transport_security,
)
from hermes_memory.mcp import resources as res
from hermes_memory.mcp.handlers import MCP_BEHAVIOUR, PROMPT_GUIDANCE, ResourcesAndPrompts  # noqa: F401 - re-exported
from hermes_memory.mcp.http_body import SurrogateRepair
from hermes_memory.mcp.http_sessions import SessionWatch
from hermes_memory.mcp.read import READ_ACTION, check_read_arguments, mcp_memory_schema, memory_read
from hermes_memory.mcp.results import (  # noqa: F401 - moved there, re-exported
    render_snapshot,
    tool_result,
)
from hermes_memory.mcp.schemas import provider_metadata, tool_extras
from hermes_memory.mcp.validation import ArgumentProblem, InvalidArguments, check_arguments

logger = logging.getLogger(__name__)

SERVER_NAME = "hermes-memory"
URI_SNAPSHOT = res.URI_SNAPSHOT
URI_MEMORY_MD = res.URI_MEMORY_MD
URI_USER_MD = res.URI_USER_MD
HTTP_PATH = "/mcp"
DEFAULT_PORT = 8765
"""Default TCP port of ``serve --transport http`` (override with ``--port``; 0 picks a free one)."""

MAX_CLIENT_SESSIONS = 1000
"""Most HTTP client sessions open at once (the SDK refuses more) and per-session states kept.

Beyond it, states of sessions the SDK has ended are dropped first, so a live session keeps its
frozen snapshot however many other sessions came and went."""

USER_ID_PROPERTY = {
    "type": "string",
    "description": "Optional user id: reads and writes that user's own profile (USER.md) instead of "
    "the default one. MEMORY.md is shared by all users.",
}

"""What the server instructions and the ``memory_guidance`` prompt say about MCP itself."""

SERVER_INSTRUCTIONS = (
    "Persistent memory shared with the hermes-memory agent. Use the `memory` tool to save durable facts "
    "(who the user is, their preferences and corrections, environment facts, standing conventions) and to "
    "correct or remove stale ones; both stores have a hard character budget, so consolidate rather than "
    "append. Use `session_search` to find what was said in past sessions before asking the user to repeat it. "
    + MCP_BEHAVIOUR
)


# ---------------------------------------------------------------------------------------------
# Adapters over the layers (kept together so the wiring is visible in one place)
# ---------------------------------------------------------------------------------------------


def _tool_parts(schema: Mapping[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """Unwrap ``{"type":"function","function":{...}}`` and return (name, description, parameters)."""
    if schema.get("type") == "function" and isinstance(schema.get("function"), Mapping):
        schema = schema["function"]
    params = dict(schema.get("parameters") or schema.get("inputSchema") or {"type": "object", "properties": {}})
    params.setdefault("type", "object")
    return str(schema["name"]), str(schema.get("description", "")), params


@dataclass
class ClientState:
    """What one client session owns: its memory stores (one per user id) and its frozen snapshot."""

    key: str
    stores: dict[str | None, Any] = field(default_factory=dict)
    snapshot: str = ""
    started_at: float = field(default_factory=time.time)
    #: Frozen snapshots of per-call ``user_id`` profiles: (text, epoch seconds), taken at first use.
    user_snapshots: dict[str, tuple[str, float]] = field(default_factory=dict)


class MemoryServer(ResourcesAndPrompts):
    """The MCP memory server over one data home.

    ``home``/``config`` are the data home and its validated ``config.yaml``; ``user_id`` fixes the
    per-user profile for every call (``None``: the default profile, and clients may pass
    ``user_id`` per call). Opening the server opens ``state.db`` and loads the configured external
    provider; raises :class:`~hermes_memory.errors.ProviderError` when ``memory.provider`` names a
    provider that cannot be loaded or is unavailable (never silently replaced by built-in only),
    and :class:`ValueError` for an unsafe ``user_id``.

    Call :meth:`close` when done (the ``run_*`` methods do it themselves).
    """

    def __init__(self, home: HermesHome, config: HermesConfig, *, user_id: str | None = None) -> None:
        from hermes_memory.sessions.factory import open_session_db

        self.home = home.ensure()
        self.config = config
        self.fixed_user_id = user_id or None
        self._lock = threading.Lock()  # memory stores, state.db and the client-session table
        self._provider_lock = threading.Lock()  # provider tools: one at a time, never blocking memory
        self._clients: OrderedDict[str, ClientState] = OrderedDict()
        self._call_order: dict[str | None, anyio.Lock] = {}  # per client session (None: stdio, stateless)
        self._http_sessions: SessionWatch | None = None  # set by http_app
        self._closed = False
        self.session_id = f"mcp_{time.strftime('%Y%m%d_%H%M%S')}_{uuid.uuid4().hex[:6]}"
        if self.fixed_user_id is not None:
            self._check_user_id(self.fixed_user_id)
        from hermes_memory.sessions import indexer

        self.db = open_session_db(self.home, config)
        # search.embeddings: fused semantic search, vectors kept up to date by a daemon thread
        self.indexer = indexer.start_background(self.db, config.search)
        carry_on = getattr(self.db, "continue_relayout_in_background", None)  # SQLite only
        if callable(carry_on):  # serve/ui: a pending layout-2 -> 3 index move goes on between requests
            carry_on()
        self.manager: Any = None
        try:
            self.manager, self.provider = self._load_provider()
            self._default = self._new_client("(server)")
            self._tools = self._build_tools()
        except BaseException:
            self.close()
            raise
        self.server: Server[Any] = Server(
            SERVER_NAME,
            version=__version__,
            title="Hermes memory",
            description="Curated memory files, searchable session history and one external memory provider.",
            instructions=SERVER_INSTRUCTIONS,
            on_list_tools=self._on_list_tools,
            on_call_tool=self._on_call_tool,
            on_list_resources=self._on_list_resources,
            on_list_resource_templates=self._on_list_resource_templates,
            on_read_resource=self._on_read_resource,
            on_list_prompts=self._on_list_prompts,
            on_get_prompt=self._on_get_prompt,
        )
        self.server.middleware.append(self._session_middleware)

    # -- layers ---------------------------------------------------------------------------------
    @staticmethod
    def _check_user_id(user_id: str) -> None:
        from hermes_memory.memory import validate_user_id

        validate_user_id(user_id)  # raises ValueError naming the rule when unsafe

    def _new_store(self, user_id: str | None) -> Any:
        from hermes_memory.memory import open_memory_store

        store = open_memory_store(self.home, self.config, user_id=user_id)
        store.load_from_disk()
        return store

    def _load_provider(self) -> tuple[Any, Any]:
        """The agent's MemoryManager (builtin + the ``memory.provider`` plugin) and that plugin (or ``None``)."""
        from hermes_memory.providers.manager import create_memory_manager

        # Raises ProviderError (unknown, failed import, unavailable): never silently built-in only.
        manager = create_memory_manager(self.config, str(self.home.root),
                                        memory_store=self._new_store(self.fixed_user_id))
        manager.initialize_all(
            self.session_id,
            hermes_home=str(self.home.root),
            platform="mcp",
            agent_context="primary",
            **({"user_id": self.fixed_user_id} if self.fixed_user_id else {}),
        )
        return manager, manager.external_provider

    def _memory_enabled_targets(self) -> list[str]:
        mem = self.config.memory
        return [t for t, on in (("memory", mem.memory_enabled), ("user", mem.user_profile_enabled)) if on]

    def _build_tools(self) -> dict[str, dict[str, Any]]:
        """name -> {"kind": "memory"|"session_search"|"provider", "schema": dict, "description": str,
        "annotations": dict, "output_schema": dict}."""
        from hermes_memory.memory import MEMORY_TOOL_SCHEMA
        from hermes_memory.sessions.search import SESSION_SEARCH_SCHEMA

        tools: dict[str, dict[str, Any]] = {}
        targets = self._memory_enabled_targets()
        if targets:
            name, desc, params = _tool_parts(MEMORY_TOOL_SCHEMA)
            params = json.loads(json.dumps(params))
            target = params.get("properties", {}).get("target")
            if isinstance(target, dict) and "enum" in target:
                target["enum"] = [t for t in target["enum"] if t in targets]
            params, desc = mcp_memory_schema(params, desc)
            tools[name] = {"kind": "memory", "schema": self._with_user_id(params), "description": desc}
        name, desc, params = _tool_parts(SESSION_SEARCH_SCHEMA)
        tools[name] = {"kind": "session_search", "schema": json.loads(json.dumps(params)), "description": desc}
        if self.provider is not None:
            for schema in self.manager.get_all_tool_schemas():
                pname, pdesc, pparams = _tool_parts(schema)
                if pname in tools:
                    logger.warning("provider tool %r clashes with a core tool and is not exposed", pname)
                    continue
                tools[pname] = {"kind": "provider", "schema": pparams, "description": pdesc}
        meta = provider_metadata(self.provider) if self.provider is not None else {}
        for tname, spec in tools.items():
            spec["annotations"], spec["output_schema"] = tool_extras(spec["kind"], tname, meta)
        return tools

    def _with_user_id(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.fixed_user_id is None:
            params.setdefault("properties", {})["user_id"] = dict(USER_ID_PROPERTY)
        return params

    # -- client sessions ------------------------------------------------------------------------
    def _new_client(self, key: str) -> ClientState:
        state = ClientState(key)
        store = self._new_store(self.fixed_user_id)
        state.stores[self.fixed_user_id] = store
        state.snapshot = render_snapshot(store)
        return state

    def _client(self, key: str | None) -> ClientState:
        """The state of client session ``key`` (created on first use); ``None`` -> the server's."""
        if key is None:
            return self._default
        state = self._clients.get(key)
        if state is None:
            state = self._new_client(key)
            self._clients[key] = state
            if len(self._clients) > MAX_CLIENT_SESSIONS:
                live = self._live_session_ids()
                if live is not None:
                    for ended in [k for k in self._clients if k not in live and k != key]:
                        del self._clients[ended]
            while len(self._clients) > MAX_CLIENT_SESSIONS:
                self._clients.popitem(last=False)
        else:
            self._clients.move_to_end(key)
        return state

    def _live_session_ids(self) -> set[str] | None:
        """Ids of the HTTP sessions the SDK still holds open; ``None`` when not serving HTTP.

        Followed from the HTTP traffic by :class:`~hermes_memory.mcp.http_sessions.SessionWatch`
        (the SDK keeps no public list of its sessions)."""
        return self._http_sessions.open_ids() if self._http_sessions is not None else None

    def _end_client(self, key: str) -> None:
        """Forget the state of client session ``key``: the SDK ended it (DELETE, or it answered 404)."""
        with self._lock:
            self._clients.pop(key, None)
            self._call_order.pop(key, None)

    def client_states(self) -> list[tuple[str, float, str]]:
        """``[(session id, started_at epoch seconds, frozen snapshot)]`` of the client sessions this
        server holds a state for (``serve --transport http``; ``[]`` otherwise), in the order they
        were last used (oldest first). The id lets a client speak in that session: never show it."""
        with self._lock:
            return [(c.key, float(c.started_at), str(c.snapshot)) for c in self._clients.values()]

    def _store_for(self, state: ClientState, user_id: str | None) -> Any:
        store = state.stores.get(user_id)
        if store is None:
            store = self._new_store(user_id)
            state.stores[user_id] = store
            if user_id is not None:
                state.user_snapshots[user_id] = (render_snapshot(store), time.time())
        return store

    def _snapshot_of(self, state: ClientState, user_id: str | None) -> tuple[str, float]:
        """This client session's frozen snapshot of ``user_id``'s memory: (text, epoch seconds)."""
        if user_id == self.fixed_user_id:
            return state.snapshot, state.started_at
        self._store_for(state, user_id)
        return state.user_snapshots[user_id]  # type: ignore[index]

    @staticmethod
    def _session_key(ctx: Any) -> str | None:
        request = getattr(ctx, "request", None)
        headers = getattr(request, "headers", None)
        if headers is None:
            return None
        return headers.get("mcp-session-id") or None

    async def _session_middleware(self, ctx: Any, call_next: Callable[[Any], Any]) -> Any:
        key = self._session_key(ctx)
        if key is not None and key not in self._clients:
            await anyio.to_thread.run_sync(self._locked, self._client, key)
        return await call_next(ctx)

    def _locked(self, fn: Callable[..., Any], *args: Any) -> Any:
        with self._lock:
            return fn(*args)

    # -- tools ----------------------------------------------------------------------------------
    def tool_list(self) -> list[types.Tool]:
        """The tools as MCP ``Tool`` objects (input schemas exactly as validated)."""
        return [
            types.Tool(name=name, description=spec["description"], input_schema=spec["schema"],
                       output_schema=spec["output_schema"],
                       annotations=types.ToolAnnotations.model_validate(spec["annotations"]))
            for name, spec in self._tools.items()
        ]

    async def _on_list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self.tool_list())

    async def _on_call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        key = self._session_key(ctx)
        # One client session's tool calls run one at a time in the order they arrived: the SDK runs
        # each request as its own task and worker threads take the server lock in any order, so a
        # pipelined add -> replace could run the replace first. anyio's Lock is first come, first
        # served, and the handler asks for it before its first await.
        in_order = self._call_order.get(key)
        if in_order is None:
            in_order = self._call_order[key] = anyio.Lock()
        try:
            async with in_order:
                text = await anyio.to_thread.run_sync(self.call_tool, params.name, params.arguments, key)
        except InvalidArguments as exc:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=str(exc),
                data={"tool": exc.tool, "fields": exc.fields,
                      "problems": [{"field": p.field, "message": p.message} for p in exc.problems]},
            ) from None
        except UnknownTool as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc), data={"tool": params.name}) from None
        return tool_result(text, structured=True)

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None, session_key: str | None = None) -> str:
        """Validate and run one tool call; return the tool's JSON result string.

        Raises :class:`UnknownTool` or :class:`~hermes_memory.mcp.validation.InvalidArguments`
        (nothing has run in either case). Errors while the tool runs are returned as JSON
        (``{"success": false, "error": ...}``), never raised. Thread-safe: memory and session calls
        run one at a time under the server's lock, provider calls under their own lock.
        """
        spec = self._tools.get(name)
        if spec is None:
            raise UnknownTool(f"unknown tool {name!r}; this server offers: {', '.join(self._tools)}")
        kind = spec["kind"]
        if kind == "memory":
            from hermes_memory.memory import memory_tool

            # `new_text` is the dispatcher's documented alias of `content`; nothing else undeclared.
            aliases = [p for p in ("new_text",) if p in inspect.signature(memory_tool).parameters]
            args = check_arguments(name, spec["schema"], arguments, allowed_extra=aliases, strict=True)
            check_read_arguments(args)
            user_id = self._resolve_user_id(args)
            with self._lock:
                if args.get("action") == READ_ACTION:
                    return self._guard(name, lambda: self._run_read(self._client(session_key), user_id, args))
                return self._run_memory(self._client(session_key), user_id, args)
        if kind == "session_search":
            args = check_arguments(name, spec["schema"], arguments, strict=True)
            with self._lock:
                return self._guard(name, lambda: self._run_session_search(args))
        # Same rule for every tool: an undeclared field is refused, unless the provider's schema
        # says extra fields are welcome (additionalProperties) or declares no fields at all.
        schema = spec["schema"]
        open_schema = bool(schema.get("additionalProperties")) or "properties" not in schema
        args = check_arguments(name, schema, arguments, strict=not open_schema)
        with self._provider_lock:
            return self._guard(name, lambda: self.manager.handle_tool_call(name, args))

    def _resolve_user_id(self, args: dict[str, Any]) -> str | None:
        requested = args.pop("user_id", None)
        if self.fixed_user_id is not None:
            return self.fixed_user_id
        if requested in (None, ""):
            return None
        try:
            self._check_user_id(requested)
        except (ValueError, HermesMemoryError) as exc:
            raise InvalidArguments("memory", [ArgumentProblem("user_id", str(exc))]) from None
        return requested

    def _run_read(self, state: ClientState, user_id: str | None, args: dict[str, Any]) -> str:
        store = self._store_for(state, user_id)
        snapshot, taken_at = self._snapshot_of(state, user_id)
        return memory_read(store, snapshot, taken_at, self._memory_enabled_targets(), args.get("target"), user_id)

    def _run_memory(self, state: ClientState, user_id: str | None, args: dict[str, Any]) -> str:
        from hermes_memory.memory import memory_tool

        store = self._store_for(state, user_id)
        result = self._guard("memory", lambda: memory_tool(store=store, **args))
        # The provider is shared by every client and was initialised for the server's own user, so a
        # per-call user_id's USER.md write stays out of it (else other clients read that profile through
        # the provider's tools). MEMORY.md is shared anyway and is mirrored whoever writes it.
        foreign_profile = args.get("target") == "user" and user_id != self.fixed_user_id
        if self.provider is not None and not foreign_profile:
            self._mirror_memory_write(result, args)
        return result

    def _mirror_memory_write(self, result: str, args: dict[str, Any]) -> None:
        """Mirror a committed memory write to the external provider, as the agent loop does."""
        self.manager.notify_memory_tool_write(result, args)

    def _run_session_search(self, args: dict[str, Any]) -> str:
        from hermes_memory.sessions.search import session_search

        # No current session to exclude: the MCP client's own conversation is not in state.db.
        return session_search(args, self.db)

    @staticmethod
    def _guard(tool: str, fn: Callable[[], str]) -> str:
        try:
            out = fn()
        except HermesMemoryError as exc:
            logger.warning("tool %s failed: %s", tool, exc)
            return json.dumps({"success": False, "error": str(exc)}, ensure_ascii=False)
        except Exception as exc:  # a tool failure is a tool result, never a crashed server
            logger.exception("tool %s raised", tool)
            return json.dumps({"success": False, "error": f"{tool} failed: {type(exc).__name__}: {exc}"},
                              ensure_ascii=False)
        return out if isinstance(out, str) else json.dumps(out, ensure_ascii=False, default=str)

    # -- transports -----------------------------------------------------------------------------
    async def run_stdio(self) -> None:
        """Serve one client over stdin/stdout until it disconnects, then close.

        Every stdin line is checked before the SDK parses it (:mod:`hermes_memory.mcp.stdio_lines`):
        a lone surrogate escape is read as U+FFFD, and a line that is no JSON-RPC message gets a
        JSON-RPC error reply instead of being dropped without one. When the client closes stdin, the
        requests already read are answered first (at most
        :data:`~hermes_memory.mcp.stdio_lines.EOF_GRACE_S` seconds), then the server ends.
        """
        from mcp.server.stdio import stdio_server

        from hermes_memory.mcp.stdio_lines import CheckedStdin, claimed_stdin

        try:
            with claimed_stdin() as stdin_bytes:
                stdin = CheckedStdin(stdin_bytes)
                async with stdio_server(stdin=stdin) as (read_stream, write_stream):  # type: ignore[arg-type]
                    stdin.attach(write_stream)
                    await self.server.run(read_stream, stdin.answering(write_stream),
                                          self.server.create_initialization_options())
        finally:
            self.close()

    def http_app(self, *, host: str, token: str | None) -> Any:
        """The ASGI app serving MCP at ``/mcp``; with ``token`` every request needs ``Bearer <token>``."""
        # Host/Origin checks on every loopback bind (httpguard.transport_security says which names).
        sdk_app = self.server.streamable_http_app(streamable_http_path=HTTP_PATH, host=host,
                                                  transport_security=transport_security(host),
                                                  max_sessions=MAX_CLIENT_SESSIONS)
        # the public session_manager exists once the app does; its idle timeout is the SDK's rule
        watch = SessionWatch(sdk_app, self._end_client, self.server.session_manager.session_idle_timeout)
        self._http_sessions = watch
        app = SurrogateRepair(watch)  # a lone surrogate escape is read as U+FFFD, as over stdio
        return BearerTokenGate(app, token) if token else app

    def http_server(self, *, host: str, token: str | None, app: Any = None) -> Any:
        """A ``uvicorn.Server`` for ``app`` (default: :meth:`http_app`), its config already loaded.

        Loading imports every module serving needs, so a SIGTERM that arrives once the URL is
        announced (before uvicorn installs its own handlers) never lands inside an import.
        """
        import uvicorn

        config = uvicorn.Config(app if app is not None else self.http_app(host=host, token=token), log_config=None,
                                access_log=False, lifespan="on", timeout_graceful_shutdown=5)
        config.load()
        return uvicorn.Server(config)

    async def serve_http(self, sock: socket.socket, *, host: str, token: str | None,
                         http_server: Any = None) -> None:
        """Serve streamable HTTP on an already bound, listening socket until SIGINT/SIGTERM; then close.

        ``http_server``: one made by :meth:`http_server` beforehand (default: made here).
        """
        server = http_server if http_server is not None else self.http_server(host=host, token=token)
        try:
            await server.serve(sockets=[sock])
        finally:
            self.close()

    def close(self) -> None:
        """Shut the external provider down and close ``state.db`` (idempotent)."""
        if self._closed:
            return
        self._closed = True
        try:
            if self.manager is not None:
                self.manager.shutdown_all()
        except Exception:  # shutdown must finish closing the database
            logger.exception("provider shutdown failed")
        background = getattr(self, "indexer", None)
        if background is not None:
            background.stop()
        self.db.close()


def endpoint_url(host: str, port: int) -> str:
    """The URL clients use: ``http://HOST:PORT/mcp`` (IPv6 in brackets; wildcard binds name this host)."""
    return base_url(host, port) + HTTP_PATH
