"""A SQLite home read without writing to it: the sessions and messages of ``state.db`` and the
curated memory files (``MEMORY.md``, ``USER.md``, ``memories/users/<id>/USER.md``).

``state.db`` is opened read-only (``mode=ro``): no migration, no index build, no checkpoint, so
the file's bytes are never changed (SQLite may create the empty ``-wal``/``-shm`` side files a
reader needs). Export dicts have the shape of :meth:`SessionDB.export_session
<hermes_memory.sessions.db.SessionDB.export_session>` (the session row, all columns, plus
``messages`` decoded by the same codec), so what a target stores is what ``SessionDB`` would
have exported.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_memory.errors import SessionStoreError
from hermes_memory.home import HermesHome
from hermes_memory.memory.store import TARGETS, MemoryStore, validate_user_id
from hermes_memory.sessions.codec import row_to_message


@dataclass
class MemorySet:
    """The entries of one memory file: ``target`` (``"memory"``/``"user"``), ``user_id`` (``None``
    for the shared files), ``path``, ``entries`` in file order, ``error`` (why the file could not
    be read, else ``None``)."""

    target: str
    user_id: str | None
    path: Path
    entries: list[str] = field(default_factory=list)
    error: str | None = None


class SqliteHomeSource:
    """The data of one SQLite home, read-only. ``home``: the :class:`HermesHome`.

    A missing ``state.db`` reads as no sessions. Raises :class:`SessionStoreError` when the file
    exists but cannot be read. Use as a context manager or call :meth:`close`.
    """

    def __init__(self, home: HermesHome) -> None:
        self.home = home
        self._conn: sqlite3.Connection | None = None
        if home.state_db.exists():
            try:
                self._conn = sqlite3.connect(f"{home.state_db.resolve().as_uri()}?mode=ro", uri=True,
                                             check_same_thread=False)
                self._conn.row_factory = sqlite3.Row
                self._conn.execute("SELECT count(*) FROM sessions").fetchone()
            except sqlite3.Error as exc:
                raise SessionStoreError(f"cannot read {home.state_db}: {exc}") from exc

    def __enter__(self) -> SqliteHomeSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the read-only connection (idempotent)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        if self._conn is None:
            return []
        try:
            return self._conn.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise SessionStoreError(f"cannot read {self.home.state_db}: {exc}") from exc

    # -- sessions ---------------------------------------------------------------------------------
    def session_ids(self) -> list[str]:
        """Every session id, parents before their children (then by ``started_at``, ``id``), so a
        target that checks parent links can insert them in this order. A parent id that is not in
        the file (a dangling link) does not hold its child back."""
        rows = self._rows("SELECT id, parent_session_id FROM sessions ORDER BY started_at, id")
        parent = {r[0]: r[1] for r in rows}
        out: list[str] = []
        placed: set[str] = set()
        for sid in parent:
            chain = []
            node: str | None = sid
            while node is not None and node in parent and node not in placed and node not in chain:
                chain.append(node)
                node = parent[node]
            for n in reversed(chain):
                placed.add(n)
                out.append(n)
        return out

    def counts(self) -> tuple[int, int]:
        """``(sessions, messages)`` in the file."""
        if self._conn is None:
            return 0, 0
        return (int(self._rows("SELECT count(*) FROM sessions")[0][0]),
                int(self._rows("SELECT count(*) FROM messages")[0][0]))

    def message_counts(self) -> dict[str, int]:
        """Messages per session id (sessions without messages absent)."""
        return {r[0]: int(r[1]) for r in self._rows("SELECT session_id, count(*) FROM messages GROUP BY session_id")}

    def export_session(self, session_id: str) -> dict[str, Any] | None:
        """The session row plus ``messages`` (ordered by id, decoded), as ``SessionDB.export_session``."""
        rows = self._rows("SELECT * FROM sessions WHERE id = ?", (session_id,))
        if not rows:
            return None
        out = dict(rows[0])
        out["messages"] = [row_to_message(r) for r in
                           self._rows("SELECT * FROM messages WHERE session_id = ? ORDER BY id", (session_id,))]
        return out

    def iter_exports(self, session_ids: list[str] | None = None) -> Iterator[dict[str, Any]]:
        """:meth:`export_session` of each id in ``session_ids`` (default :meth:`session_ids`)."""
        for sid in session_ids if session_ids is not None else self.session_ids():
            export = self.export_session(sid)
            if export is not None:
                yield export

    # -- curated memory ---------------------------------------------------------------------------
    def user_ids(self) -> list[str]:
        """Gateway users with a profile (``memories/users/<id>/USER.md``), sorted; unsafe names skipped."""
        users = self.home.memories_dir / "users"
        out = []
        try:
            for d in users.iterdir():
                try:
                    if (d / "USER.md").is_file() and validate_user_id(d.name) == d.name:
                        out.append(d.name)
                except ValueError:
                    continue
        except OSError:
            return []
        return sorted(out)

    def memory_sets(self) -> list[MemorySet]:
        """The shared ``MEMORY.md`` and ``USER.md``, then each user's ``USER.md``, read through
        :class:`MemoryStore` (the same parsing as the agent: delimiters, newlines, duplicates).
        Reading never writes (no lock is taken, nothing is swept)."""
        out = []
        shared = MemoryStore(self.home.memories_dir)
        for target in TARGETS:
            out.append(self._set(shared, target, None))
        for uid in self.user_ids():
            out.append(self._set(MemoryStore(self.home.memories_dir, user_id=uid), "user", uid))
        return out

    @staticmethod
    def _set(store: MemoryStore, target: str, user_id: str | None) -> MemorySet:
        usage = store.usage(target)
        return MemorySet(target, user_id, store.path_for(target), store.entries(target), usage["read_error"])
