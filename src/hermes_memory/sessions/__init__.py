"""Layer 2: the session history (``SessionDB`` over ``state.db``) and the ``session_search`` tool.

Public names: :class:`SessionDB`, :func:`sanitize_title`, :data:`SESSION_SEARCH_SCHEMA`,
:func:`session_search`. Importers live in :mod:`hermes_memory.sessions.importers`.
"""

from hermes_memory.sessions.db import SessionDB, sanitize_title
from hermes_memory.sessions.search import SESSION_SEARCH_SCHEMA, session_search

__all__ = ["SESSION_SEARCH_SCHEMA", "SessionDB", "sanitize_title", "session_search"]
