"""Raw SQL on either session backend, for the few tests that look under the API (the index
exists, a table is gone, an index row is gone). Each helper names what it checks on both."""

from __future__ import annotations

from typing import Any


def is_postgres(db: Any) -> bool:
    return getattr(db, "backend", "sqlite") == "postgres"


def sql(db: Any, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Run ``statement`` (the backend's own dialect and placeholders) and return its rows."""
    if is_postgres(db):
        with db._connection() as conn:
            cur = conn.execute(statement, params or None)
            return [tuple(r) for r in cur.fetchall()] if cur.description else []
    return [tuple(r) for r in db.conn.execute(statement, params).fetchall()]


def drop_message_table_under_the_store(db: Any) -> None:
    """Rename ``messages`` away while the store is open: nothing can heal that."""
    sql(db, "ALTER TABLE messages RENAME TO messages_elsewhere")


def search_index_exists(db: Any) -> bool:
    """Our full-text index exists: SQLite's FTS5 table, PostgreSQL's GIN index on search_vector."""
    if is_postgres(db):
        return bool(sql(db, "SELECT 1 FROM pg_indexes WHERE indexname = 'hm_messages_search'"))
    return bool(sql(db, "SELECT name FROM sqlite_master WHERE name='hm_messages_fts'"))


def index_is_consistent(db: Any) -> bool:
    """SQLite: FTS5 ``integrity-check`` of our index. PostgreSQL: every row's stored vector is the
    one the search expression gives for its text now (nothing stale after updates)."""
    if not is_postgres(db):
        sql(db, "INSERT INTO hm_messages_fts(hm_messages_fts, rank) VALUES('integrity-check', 1)")
        return db.fts_integrity_check()
    from hermes_memory.sessions.pg.search_schema import VECTOR_SQL

    return sql(db, f"SELECT count(*) FROM messages WHERE search_vector IS DISTINCT FROM ({VECTOR_SQL})")[0][0] == 0


def cjk_rows(db: Any) -> int:
    """Rows the CJK lookups can see: SQLite's trigram side table, PostgreSQL's partial-index rows."""
    if is_postgres(db):
        from hermes_memory.sessions.pg.search_schema import CONTENT_CJK_PREDICATE

        return int(sql(db, f"SELECT count(*) FROM messages WHERE {CONTENT_CJK_PREDICATE}")[0][0])
    return int(sql(db, "SELECT count(*) FROM hm_messages_cjk")[0][0])


def raw_write(db: Any, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> int:
    """Run one statement (``?`` placeholders) in a write transaction on ``db`` (either engine), for tests
    that set up rows the public methods cannot (an old start time, a corrupt cycle); returns the rowcount."""
    return db._execute_write(lambda c: c.execute(sql, params).rowcount)
