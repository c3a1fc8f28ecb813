"""Exception hierarchy shared by every layer.

Every error the package raises on purpose derives from :class:`HermesMemoryError`, so callers
can catch one type. Messages say what went wrong *and* how to fix it.
"""

from __future__ import annotations


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


class ProviderError(HermesMemoryError):
    """An external memory provider failed to load, initialise or answer."""


class ModelError(HermesMemoryError):
    """A language-model call failed (network, auth, bad reply)."""


class ModelNotConfiguredError(ModelError):
    """No chat model is configured; the message says exactly how to configure one."""


class ContextLengthError(ModelError):
    """The model refused the request because the prompt exceeds its context window."""


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
