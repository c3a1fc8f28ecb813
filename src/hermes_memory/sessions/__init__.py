"""Layer 2: the session history (``SessionDB`` over ``state.db``) and the ``session_search`` tool.

Public names: :class:`SessionDB`, :func:`sanitize_title`, :data:`SESSION_SEARCH_SCHEMA`,
:func:`session_search`, :func:`open_session_db` (SQLite or PostgreSQL, as ``storage:`` says).
Importers live in :mod:`hermes_memory.sessions.importers`.
"""

from hermes_memory.sessions.db import SessionDB, sanitize_title
from hermes_memory.sessions.factory import open_session_db
from hermes_memory.sessions.search import SESSION_SEARCH_SCHEMA, session_search

__all__ = ["SESSION_SEARCH_SCHEMA", "SessionDB", "sanitize_title", "open_session_db", "session_search"]
