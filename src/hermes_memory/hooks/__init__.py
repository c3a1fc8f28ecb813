"""Automatic memory inside other agents' CLIs, through their hook mechanisms.

Top layer (beside :mod:`hermes_memory.cli` and :mod:`hermes_memory.mcp`): it calls the same
services as the agent loop -- :class:`~hermes_memory.memory.MemoryStore`,
:class:`~hermes_memory.providers.manager.MemoryManager`, :class:`~hermes_memory.sessions.db.SessionDB`,
:func:`~hermes_memory.sessions.search.session_search` and the Claude Code importer -- and holds no
memory logic of its own.

* :mod:`.clients`  -- Claude Code and Gemini CLI: settings locations, events, timeouts.
* :mod:`.settings` -- install / uninstall / list our entries in a ``settings.json``, byte for byte.
* :mod:`.jsonedit` -- the span-preserving JSON (and JSON-with-comments) text edits behind it.
* :mod:`.backups`  -- copies of a settings file as it was before each change.
* :mod:`.runtime`  -- one hook call: snapshot, recall, transcript import, session end.
"""
