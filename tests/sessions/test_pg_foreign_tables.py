"""A PostgreSQL database that already holds another program's ``sessions`` table (a team's app DB).

Opening it must change nothing of the app's and say what is wrong: the table is someone else's and
hermes-memory needs a database of its own. It used to blame missing CREATE rights and extensions.
Real PostgreSQL server (``pg_url``: a fresh database), real psycopg connections.
"""

from __future__ import annotations

import psycopg
import pytest

from hermes_memory.errors import SessionStoreError
from hermes_memory.sessions.pg import PgSessionDB


def test_another_programs_sessions_table_is_left_alone_and_named(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE sessions (id serial PRIMARY KEY, user_name text, token text)")
        conn.execute("INSERT INTO sessions (user_name, token) VALUES ('alice', 't1'), ('bob', 't2')")
    with pytest.raises(SessionStoreError) as caught:
        PgSessionDB(pg_url)
    message = str(caught.value)
    assert "another program" in message and "database of its own" in message, message
    assert "CREATE rights" not in message
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute("SELECT user_name, token FROM sessions ORDER BY id").fetchall() == [
            ("alice", "t1"), ("bob", "t2")]
        cols = [r[0] for r in conn.execute("SELECT column_name FROM information_schema.columns "
                                           "WHERE table_name = 'sessions' ORDER BY ordinal_position")]
        assert cols == ["id", "user_name", "token"]
        assert conn.execute("SELECT to_regclass('messages')").fetchone() == (None,)
