"""The session store on PostgreSQL (issue 16): :class:`PgSessionDB`, with the public methods of
:class:`~hermes_memory.sessions.db.SessionDB`, for many processes and hosts sharing one database.

Needs the ``postgres`` extra (psycopg 3 and psycopg-pool): ``pip install 'hermes-memory[postgres]'``.
Modules: :mod:`.schema` (versioned migrations), :mod:`.connection` (pool, writes, reads),
:mod:`.dsn` (URLs without passwords), :mod:`.copy` (``copy_session``), :mod:`.db` (the class).
"""

from hermes_memory.sessions.pg.db import PgSessionDB
from hermes_memory.sessions.pg.dsn import redact_url

__all__ = ["PgSessionDB", "redact_url"]
