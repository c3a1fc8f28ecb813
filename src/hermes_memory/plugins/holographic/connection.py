"""The Holographic fact database's connection: schema, one shared connection per path (refcounted), and write transactions."""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

logger = logging.getLogger("hermes_memory.plugins.holographic.store")  # the store's logger, as before the split

_SCHEMA = """
CREATE TABLE IF NOT EXISTS facts (
    fact_id INTEGER PRIMARY KEY AUTOINCREMENT,
    content TEXT NOT NULL UNIQUE,
    category TEXT NOT NULL DEFAULT 'general',
    tags TEXT NOT NULL DEFAULT '',
    trust_score REAL NOT NULL DEFAULT 0.5,
    retrieval_count INTEGER NOT NULL DEFAULT 0,
    helpful_count INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    hrr_vector BLOB
);
CREATE TABLE IF NOT EXISTS entities (
    entity_id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    entity_type TEXT NOT NULL DEFAULT 'unknown',
    aliases TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS fact_entities (
    fact_id INTEGER NOT NULL REFERENCES facts(fact_id) ON DELETE CASCADE,
    entity_id INTEGER NOT NULL REFERENCES entities(entity_id) ON DELETE CASCADE,
    PRIMARY KEY (fact_id, entity_id)
);
CREATE INDEX IF NOT EXISTS idx_facts_trust ON facts(trust_score DESC);
CREATE INDEX IF NOT EXISTS idx_facts_category ON facts(category);
CREATE INDEX IF NOT EXISTS idx_facts_updated ON facts(updated_at DESC);
CREATE INDEX IF NOT EXISTS idx_entities_name ON entities(name COLLATE NOCASE);
CREATE INDEX IF NOT EXISTS idx_fact_entities_entity ON fact_entities(entity_id);
CREATE VIRTUAL TABLE IF NOT EXISTS facts_fts USING fts5(
    content, tags, content='facts', content_rowid='fact_id', tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS facts_ai AFTER INSERT ON facts BEGIN
    INSERT INTO facts_fts(rowid, content, tags) VALUES (new.fact_id, new.content, new.tags);
END;
CREATE TRIGGER IF NOT EXISTS facts_ad AFTER DELETE ON facts BEGIN
    INSERT INTO facts_fts(facts_fts, rowid, content, tags) VALUES ('delete', old.fact_id, old.content, old.tags);
END;
CREATE TRIGGER IF NOT EXISTS facts_au AFTER UPDATE OF content, tags ON facts BEGIN
    INSERT INTO facts_fts(facts_fts, rowid, content, tags) VALUES ('delete', old.fact_id, old.content, old.tags);
    INSERT INTO facts_fts(rowid, content, tags) VALUES (new.fact_id, new.content, new.tags);
END;
CREATE TABLE IF NOT EXISTS memory_banks (
    bank_name TEXT NOT NULL UNIQUE,
    vector BLOB,
    dim INTEGER NOT NULL,
    fact_count INTEGER NOT NULL DEFAULT 0,
    updated_at REAL NOT NULL
);
"""


class _Shared:
    """Process-wide shared connections, one per resolved path (refcounted)."""

    lock = threading.Lock()
    conns: dict[str, tuple[sqlite3.Connection, threading.RLock, int]] = {}


def _open(path: str) -> tuple[sqlite3.Connection, threading.RLock]:
    with _Shared.lock:
        if path in _Shared.conns:
            conn, rlock, refs = _Shared.conns[path]
            _Shared.conns[path] = (conn, rlock, refs + 1)
            return conn, rlock
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, timeout=10.0, isolation_level=None, check_same_thread=False)
        conn.row_factory = sqlite3.Row
        try:
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                logger.info("holographic store %s: WAL unavailable (journal_mode=%s)", path, mode)
        except sqlite3.DatabaseError as exc:  # network filesystems
            logger.info("holographic store %s: WAL unavailable (%s)", path, exc)
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA synchronous=FULL")  # an acknowledged fact survives a power cut
        rlock = threading.RLock()
        _Shared.conns[path] = (conn, rlock, 1)
        return conn, rlock


def _close(path: str) -> None:
    with _Shared.lock:
        if path not in _Shared.conns:
            return
        conn, rlock, refs = _Shared.conns[path]
        if refs > 1:
            _Shared.conns[path] = (conn, rlock, refs - 1)
            return
        del _Shared.conns[path]
        conn.close()


@contextmanager
def immediate(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction on ``conn`` (opened with ``isolation_level=None``): ``BEGIN IMMEDIATE``
    (takes the write lock up front, so a reader never has to upgrade), ``COMMIT`` when the block
    ends, ``ROLLBACK`` and re-raise on any exception (``KeyboardInterrupt`` included)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
