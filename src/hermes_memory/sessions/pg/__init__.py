"""The session store on PostgreSQL (issue 16): :class:`PgSessionDB`, with the public methods of
:class:`~hermes_memory.sessions.db.SessionDB`, for many processes and hosts sharing one database.

Needs the ``postgres`` extra (psycopg 3 and psycopg-pool): ``pip install 'hermes-memory[postgres]'``.
Modules: :mod:`.schema` (versioned migrations), :mod:`.connection` (pool, writes, reads),
:mod:`.dsn` (URLs without passwords), :mod:`.copy` (``copy_session``), :mod:`.db` (the class).
"""

try:
    import psycopg  # noqa: F401
    import psycopg_pool  # noqa: F401
except ImportError as exc:  # the optional extra is missing: say how to install it
    raise ImportError(
        "PostgreSQL storage needs psycopg 3 and psycopg-pool: pip install 'hermes-memory[postgres]'"
    ) from exc

from hermes_memory.sessions.pg.copy import unstorable_values  # noqa: E402
from hermes_memory.sessions.pg.db import PgSessionDB  # noqa: E402
from hermes_memory.sessions.pg.dsn import redact_url  # noqa: E402

__all__ = ["PgSessionDB", "redact_url", "unstorable_values"]
