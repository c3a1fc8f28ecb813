"""The memory server's resources (snapshot, live files, user profiles, session transcripts) and its memory_guidance prompt."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError

from hermes_memory.errors import HermesMemoryError

# The loopback rule, Host/Origin checks, bearer-token gate and socket binding live in one module
# shared with the web dashboard; these names stay importable from here.
from hermes_memory.mcp import resources as res
from hermes_memory.mcp.resources import URI_MEMORY_MD, URI_SNAPSHOT, URI_USER_MD
from hermes_memory.mcp.results import (
    _read_or_empty,
    _stored_text,
)

if TYPE_CHECKING:
    from hermes_memory.home import HermesHome
    from hermes_memory.mcp.server import ClientState
    from hermes_memory.sessions.db import SessionDB

logger = logging.getLogger("hermes_memory.mcp.server")  # the server's logger, as before the split

PROMPT_GUIDANCE = "memory_guidance"
MCP_BEHAVIOUR = (
    "Over MCP nothing happens by itself: this server does not see your conversation, so nothing is recalled "
    "into it and nothing is saved from it unless you call a tool. At the start of a task read memory (the "
    "`memory` tool with action `read`, the `hermes-memory://memory/snapshot` resource, or the `memory_guidance` "
    "prompt); before asking the user to repeat something, call `session_search`; save what should outlive "
    "this session with `memory`. (A client with hermes-memory hooks installed, e.g. `hermes-memory hooks "
    "install claude-code`, gets the snapshot at session start, recall on each prompt and its transcript "
    "saved; without them, none of that happens.)"
)


class ResourcesAndPrompts:
    """Resource and prompt handlers of :class:`~hermes_memory.mcp.server.MemoryServer` (a mixin: uses its home, stores, snapshots and database)."""

    # What the host (MemoryServer) provides; declared so the type checker sees the contract.
    home: HermesHome
    db: SessionDB
    fixed_user_id: str | None
    provider: Any
    _default: ClientState

    if TYPE_CHECKING:
        @staticmethod
        def _check_user_id(user_id: str) -> None: ...
        def _client(self, key: str | None) -> ClientState: ...
        def _store_for(self, state: ClientState, user_id: str | None) -> Any: ...
        @staticmethod
        def _session_key(ctx: Any) -> str | None: ...
        def _locked(self, fn: Callable[..., Any], *args: Any) -> Any: ...
        def _memory_enabled_targets(self) -> list[str]: ...

    # -- resources ------------------------------------------------------------------------------
    def _file_path(self, which: str) -> Any:
        store = self._default.stores[self.fixed_user_id]
        path_for = getattr(store, "path_for", None)
        if callable(path_for):
            return path_for("memory" if which == "MEMORY.md" else "user")
        if which == "USER.md" and self.fixed_user_id:
            return self.home.memories_dir / "users" / self.fixed_user_id / "USER.md"
        return self.home.memories_dir / which

    async def _on_list_resources(self, ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[
            types.Resource(uri=URI_SNAPSHOT, name="snapshot", title="Frozen memory snapshot",
                           description="MEMORY.md and USER.md as rendered into the agent's system prompt, frozen "
                           "when this client session started.", mime_type="text/plain"),
            types.Resource(uri=URI_MEMORY_MD, name="MEMORY.md", title="MEMORY.md (agent notes, live)",
                           description="The live agent-notes file; entries separated by a line holding '§'.",
                           mime_type="text/markdown"),
            types.Resource(uri=URI_USER_MD, name="USER.md", title="USER.md (user profile, live)",
                           description="The live user-profile file"
                           + (f" of user {self.fixed_user_id!r}." if self.fixed_user_id else "."),
                           mime_type="text/markdown"),
        ])

    async def _on_list_resource_templates(self, ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        who = (f"Only {self.fixed_user_id!r} on this server (started with --user-id)." if self.fixed_user_id
               else "Any user id the memory tool's user_id accepts.")
        return types.ListResourceTemplatesResult(resource_templates=[
            types.ResourceTemplate(uri_template=res.TEMPLATE_USER_PROFILE, name="user-profile",
                                   title="USER.md of one user (live)",
                                   description=f"One user's live profile file. {who}", mime_type="text/markdown"),
            types.ResourceTemplate(uri_template=res.TEMPLATE_SESSION, name="session",
                                   title="One session's transcript",
                                   description="A session of state.db as JSON: its fields and every message, whole "
                                   "and in order. Session ids come from session_search.",
                                   mime_type="application/json"),
            types.ResourceTemplate(uri_template=res.TEMPLATE_SESSION_MESSAGES, name="session-messages",
                                   title="Messages of one session",
                                   description="All messages of a session, those matching `query` (full-text, best "
                                   "first, up to `limit`), or `window` messages each side of message id `around`.",
                                   mime_type="application/json"),
        ])

    def read_resource(self, uri: str, session_key: str | None = None) -> tuple[str, str]:
        """Return ``(mime_type, text)`` of a resource or a template's URI.

        Raises :class:`~hermes_memory.mcp.resources.BadResource` for an unknown, malformed or
        refused URI (nothing is read), :class:`OSError`/:class:`UnicodeDecodeError` when a file
        cannot be read.
        """
        match = res.match_uri(uri)
        if match.handler == "snapshot":
            return "text/plain", self._client(session_key).snapshot
        if match.handler in ("memory_md", "user_md"):
            which = "MEMORY.md" if match.handler == "memory_md" else "USER.md"
            store = self._default.stores[self.fixed_user_id]
            if getattr(store, "backend_kind", "file") != "file":
                return "text/markdown", _stored_text(store, "memory" if which == "MEMORY.md" else "user")
            return "text/markdown", _read_or_empty(self._file_path(which))
        if match.handler == "user_profile":
            user_id = match.variables["user_id"]
            try:
                self._check_user_id(user_id)
            except (ValueError, HermesMemoryError) as exc:
                raise res.BadResource(f"invalid user_id: {exc}", field="user_id") from None
            if self.fixed_user_id is not None and user_id != self.fixed_user_id:
                raise res.BadResource(f"this server serves only user {self.fixed_user_id!r} (--user-id)",
                                      field="user_id")
            store = self._store_for(self._client(session_key), user_id)
            if getattr(store, "backend_kind", "file") != "file":
                return "text/markdown", _stored_text(store, "user")
            return "text/markdown", _read_or_empty(store.path_for("user"))
        if match.handler == "session":
            return "application/json", res.session_transcript(self.db, match.variables["session_id"])
        return "application/json", res.session_messages(self.db, match.variables["session_id"], match.params)

    async def _on_read_resource(self, ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        key = self._session_key(ctx)
        try:
            mime, text = await anyio.to_thread.run_sync(self._locked, self.read_resource, str(params.uri), key)
        except res.BadResource as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc),
                           data={"uri": str(params.uri), "field": exc.field}) from None
        except HermesMemoryError as exc:
            raise MCPError(code=types.INTERNAL_ERROR, message=f"cannot read {params.uri}: {exc}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise MCPError(code=types.INTERNAL_ERROR, message=f"cannot read {params.uri}: {exc}") from None
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=str(params.uri), mime_type=mime, text=text)])

    # -- prompts --------------------------------------------------------------------------------
    async def _on_list_prompts(self, ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[
            types.Prompt(name=PROMPT_GUIDANCE, title="Memory guidance",
                         description="How to use the memory and session_search tools, with the frozen memory snapshot.")
        ])

    def guidance_text(self, session_key: str | None = None) -> str:
        """The ``memory_guidance`` prompt text, sections separated by blank lines: the agent's memory
        guidance (profile-only wording when only USER.md is enabled) and session-search guidance
        (:mod:`hermes_memory.agent.prompt`), what happens over MCP (:data:`MCP_BEHAVIOUR`: nothing
        automatic without client hooks), the session's frozen snapshot (if any), then the
        external provider's ``system_prompt_block`` (if any)."""
        from hermes_memory.agent.prompt import MEMORY_GUIDANCE, SESSION_SEARCH_GUIDANCE, USER_PROFILE_GUIDANCE

        # The agent's own guidance texts, so every client is told the same as our agent.
        targets = self._memory_enabled_targets()
        parts = []
        if "memory" in targets:
            parts.append(MEMORY_GUIDANCE.strip())
        elif targets:
            parts.append(USER_PROFILE_GUIDANCE.strip())
        parts.append(SESSION_SEARCH_GUIDANCE.strip())
        parts.append("## Over MCP\n" + MCP_BEHAVIOUR)
        snapshot = self._client(session_key).snapshot
        if snapshot:
            parts.append("What you remember (frozen at the start of this session):\n\n" + snapshot)
        if self.provider is not None:
            try:
                block = (self.provider.system_prompt_block() or "").strip()
            except Exception:  # a failing provider never breaks the prompt
                logger.exception("provider %s: system_prompt_block failed", getattr(self.provider, "name", "?"))
                block = ""
            if block:
                parts.append(block)
        return "\n\n".join(parts) + "\n"

    async def _on_get_prompt(self, ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        if params.name != PROMPT_GUIDANCE:
            raise MCPError(code=types.INVALID_PARAMS, message=f"unknown prompt {params.name!r}; use {PROMPT_GUIDANCE!r}")
        key = self._session_key(ctx)
        text = await anyio.to_thread.run_sync(self._locked, self.guidance_text, key)
        return types.GetPromptResult(
            description="Memory guidance and the frozen memory snapshot",
            messages=[types.PromptMessage(role="user", content=types.TextContent(text=text))],
        )
