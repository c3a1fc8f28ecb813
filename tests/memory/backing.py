"""The stored form behind a test's memory stores, for both entries backends (see conftest.py).

``new(...)`` makes another store on the same storage (``MemoryStore``'s limit arguments, ``user_id``);
``raw(target)`` is an opaque snapshot of what is stored (file bytes, or every row with its row
version), equal before and after only if nothing was rewritten; ``text(target)`` is the stored text
(``None`` when nothing is stored); ``seed(target, text)`` writes a stored form behind the store's back
(a hand edit: file text, or rows that join to ``text``); ``sibling()`` is an independent storage.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from hermes_memory.memory import ENTRY_DELIMITER, MemoryStore


class Backing:
    kind = ""
    #: Text every drift refusal's error names its backup by.
    backup_marker = ""

    def new(self, memory_char_limit: int | str = 2200, user_char_limit: int | str = 1375, *,
            user_id: str | None = None) -> MemoryStore:
        raise NotImplementedError

    def raw(self, target: str, user_id: str | None = None) -> Any:
        raise NotImplementedError

    def text(self, target: str, user_id: str | None = None) -> str | None:
        raise NotImplementedError

    def seed(self, target: str, text: str, user_id: str | None = None) -> None:
        raise NotImplementedError

    def backup_text(self, ref: str) -> str:
        raise NotImplementedError

    def sibling(self) -> Backing:
        raise NotImplementedError

    def close(self) -> None:
        pass


class FileBacking(Backing):
    kind = "file"
    backup_marker = ".bak."

    def __init__(self, mem_dir: Path) -> None:
        self.mem_dir = mem_dir

    def _path(self, target: str, user_id: str | None) -> Path:
        if target == "user":
            return self.mem_dir / "users" / user_id / "USER.md" if user_id else self.mem_dir / "USER.md"
        return self.mem_dir / "MEMORY.md"

    def new(self, memory_char_limit: int | str = 2200, user_char_limit: int | str = 1375, *,
            user_id: str | None = None) -> MemoryStore:
        return MemoryStore(self.mem_dir, memory_char_limit, user_char_limit, user_id=user_id)

    def raw(self, target: str, user_id: str | None = None) -> bytes | None:
        p = self._path(target, user_id)
        return p.read_bytes() if p.exists() else None

    def text(self, target: str, user_id: str | None = None) -> str | None:
        raw = self.raw(target, user_id)
        return None if raw is None else raw.decode("utf-8")

    def seed(self, target: str, text: str, user_id: str | None = None) -> None:
        p = self._path(target, user_id)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")

    def backup_text(self, ref: str) -> str:
        return Path(ref).read_text(encoding="utf-8")

    def sibling(self) -> FileBacking:
        other = self.mem_dir.parent / f"other-{uuid.uuid4().hex[:8]}"
        other.mkdir()
        return FileBacking(other)


class PgBacking(Backing):
    kind = "postgres"
    backup_marker = "hm_memory_drift_backups row"

    def __init__(self, url: str, profile: str = "default", conn: Any = None) -> None:
        import psycopg

        from hermes_memory.memory.pg.schema import get_pool

        self.url, self.profile = url, profile
        get_pool(url)  # creates the schema, as opening a store does
        self._owns_conn = conn is None
        self.conn = psycopg.connect(url, autocommit=True) if conn is None else conn

    def _key(self, target: str, user_id: str | None) -> tuple[str, str, str]:
        return self.profile, target, (user_id or "") if target == "user" else ""

    def new(self, memory_char_limit: int | str = 2200, user_char_limit: int | str = 1375, *,
            user_id: str | None = None) -> MemoryStore:
        from hermes_memory.memory.pg import PgMemoryStore

        return PgMemoryStore(self.url, memory_char_limit, user_char_limit, profile=self.profile, user_id=user_id)

    def raw(self, target: str, user_id: str | None = None) -> tuple:
        return tuple(self.conn.execute(
            "SELECT position, content, xmin::text, updated_at FROM hm_memory_entries "
            "WHERE profile = %s AND target = %s AND user_id = %s ORDER BY position", self._key(target, user_id),
        ).fetchall())

    def text(self, target: str, user_id: str | None = None) -> str | None:
        rows = self.raw(target, user_id)
        return ENTRY_DELIMITER.join(r[1] for r in rows) if rows else None

    def seed(self, target: str, text: str, user_id: str | None = None) -> None:
        key = self._key(target, user_id)
        with self.conn.transaction():
            self.conn.execute("DELETE FROM hm_memory_entries WHERE profile = %s AND target = %s AND user_id = %s", key)
            for i, piece in enumerate(text.replace("\r\n", "\n").split(ENTRY_DELIMITER) if text else []):
                self.conn.execute(
                    "INSERT INTO hm_memory_entries (profile, target, user_id, position, content) "
                    "VALUES (%s, %s, %s, %s, %s)", (*key, i, piece),
                )

    def backup_text(self, ref: str) -> str:
        table, _, ident = ref.partition(":")
        assert table == "hm_memory_drift_backups", ref
        row = self.conn.execute("SELECT content FROM hm_memory_drift_backups WHERE id = %s", (int(ident),)).fetchone()
        assert row is not None, f"no drift backup {ref}"
        return str(row[0])

    def sibling(self) -> PgBacking:
        return PgBacking(self.url, profile=f"other-{uuid.uuid4().hex[:8]}", conn=self.conn)

    def close(self) -> None:
        from hermes_memory.memory.pg import close_pools

        if self._owns_conn:
            self.conn.close()
        close_pools()  # a server stopping with SIGTERM waits for every open session
