"""PgSessionDB on a real PostgreSQL: migrations under concurrent opens from real processes,
concurrent appends from real processes, URLs without passwords, clear connection errors, the
search columns the full-text layer reads, copy_session, and the same shapes as SQLite."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import psycopg
import pytest

from hermes_memory.errors import SessionStoreError, StorageUnavailableError, StorageURLError
from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.pg import PgSessionDB, redact_url, unstorable_values
from hermes_memory.sessions.pg.schema import SCHEMA_VERSION
from tests.helpers.http import free_port
from tests.helpers.values import present

BACKENDS = ("postgres",)


def _sql(url: str, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(sql, params or None)
        return cur.fetchall() if cur.description else []


OPEN_WORKER = textwrap.dedent(
    """
    import sys
    from hermes_memory.sessions.pg import PgSessionDB
    db = PgSessionDB(sys.argv[1])
    db.create_session(f"opener{sys.argv[2]}")
    print(db.migration["applied"])
    db.close()
    """
)


def test_migrations_applied_once_when_several_processes_open_a_new_database_at_once(pg_url: str) -> None:
    procs = [subprocess.Popen([sys.executable, "-c", OPEN_WORKER, pg_url, str(n)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for n in range(6)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0] * 6, [o[1] for o in outs]
    applied = [o[0].strip() for o in outs]
    assert applied.count(str(list(range(1, SCHEMA_VERSION + 1)))) == 1  # exactly one process migrated
    assert applied.count("[]") == 5
    assert _sql(pg_url, "SELECT version FROM hm_schema_migrations ORDER BY version") == [
        (v,) for v in range(1, SCHEMA_VERSION + 1)]
    assert _sql(pg_url, "SELECT count(*) FROM sessions") == [(6,)]
    # C20: the lock is transaction-scoped, so nothing is left held (safe behind a transaction pooler)
    assert _sql(pg_url, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'") == [(0,)]


def test_a_database_newer_than_the_code_is_refused_unchanged(pg_url: str) -> None:
    PgSessionDB(pg_url).close()
    _sql(pg_url, "INSERT INTO hm_schema_migrations VALUES (%s, 'future', 0)", (SCHEMA_VERSION + 1,))
    with pytest.raises(SessionStoreError, match="newer than this hermes-memory"):
        PgSessionDB(pg_url)
    assert _sql(pg_url, "SELECT max(version) FROM hm_schema_migrations") == [(SCHEMA_VERSION + 1,)]


APPEND_WORKER = textwrap.dedent(
    """
    import sys
    from hermes_memory.sessions.pg import PgSessionDB
    url, n, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    db = PgSessionDB(url, pool_size=2)
    own = db.create_session(f"proc{n}")
    for i in range(count):
        db.append_message(own, "user", f"proc{n} item{i}")
        db.append_message("shared", "assistant", f"p{n} i{i}", tool_calls=[{"id": f"c{n}-{i}"}])
        if i % 50 == 0:
            db.append_messages(own, [{"role": "user", "content": f"proc{n} batch{i} {k}"} for k in range(3)])
        db.update_token_counts("shared", input_tokens=1, output_tokens=2)
    db.close()
    """
)


def test_concurrent_appends_from_several_processes_lose_nothing(pg_url: str) -> None:
    db = PgSessionDB(pg_url)
    db.create_session("shared")
    n_procs, count = 4, 200
    procs = [subprocess.Popen([sys.executable, "-c", APPEND_WORKER, pg_url, str(n), str(count)],
                              stderr=subprocess.PIPE, text=True) for n in range(n_procs)]
    errs = [p.communicate(timeout=600)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * n_procs, errs
    try:
        batches = len(range(0, count, 50)) * 3
        assert db.message_count() == n_procs * (2 * count + batches)
        shared = present(db.get_session("shared"))
        assert shared["message_count"] == n_procs * count == db.message_count("shared")
        assert shared["tool_call_count"] == n_procs * count
        assert (shared["input_tokens"], shared["output_tokens"]) == (n_procs * count, 2 * n_procs * count)
        msgs = db.get_messages("shared")
        for n in range(n_procs):  # each writer's messages in the order it wrote them
            assert [m["content"] for m in msgs if m["content"].startswith(f"p{n} ")] == [
                f"p{n} i{i}" for i in range(count)]
        for n in range(n_procs):
            own = db.get_messages(f"proc{n}")
            assert len(own) == present(db.get_session(f"proc{n}"))["message_count"] == count + batches
            assert len({m["id"] for m in own}) == len(own)
    finally:
        db.close()


def test_unique_races_between_writers_keep_the_sqlite_answers(db: PgSessionDB, make_db) -> None:
    """Two stores creating the same id at once both get the id; the same title at once: one wins,
    the other gets the ValueError a taken title gives."""
    others = [make_db() for _ in range(6)]
    results: list[Any] = []
    barrier = threading.Barrier(len(others))

    def create(i: int, d: PgSessionDB) -> None:
        barrier.wait()
        try:
            results.append(d.create_session("same-id" if i % 2 else f"t{i}", title=None if i % 2 else "Same title"))
        except ValueError as exc:
            results.append(exc)

    threads = [threading.Thread(target=create, args=(i, d)) for i, d in enumerate(others)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count("same-id") == 3
    errors = [r for r in results if isinstance(r, ValueError)]
    assert len(errors) == 2 and all("already in use" in str(e) for e in errors)
    assert db.session_count() == 2 and db.get_session_by_title("Same title") is not None


def test_location_never_shows_the_password(pg_url: str) -> None:
    with_password = pg_url.replace("postgres@", "postgres:s3cr%40t-pw@")  # trust auth ignores it
    db = PgSessionDB(with_password)
    try:
        assert db.backend == "postgres"
        assert "s3cr" not in db.location and db.location == pg_url.replace("postgres@", "postgres:***@")
    finally:
        db.close()
    assert redact_url("host=db user=u password='a b\\'c' dbname=x") == "host=db user=u password=*** dbname=x"
    assert redact_url("postgresql://u@h/db?password=zz&sslmode=require") == (
        "postgresql://u@h/db?password=***&sslmode=require")


def test_sqlite_store_names_its_backend_and_file(tmp_path: Path) -> None:
    with SessionDB(tmp_path / "state.db") as db:
        assert db.backend == "sqlite" and db.location == str(tmp_path / "state.db")


@pytest.mark.parametrize("url", ["mysql://u:pw@h/db", "postgresql://u:pw@h:notaport/db", "   ", "host=h port='x"])
def test_a_malformed_url_is_a_clear_error_naming_the_fix(url: str) -> None:
    with pytest.raises(StorageURLError) as info:
        PgSessionDB(url)
    text = str(info.value)
    assert "postgresql://USER:PASSWORD@HOST:5432/DATABASE" in text and ":pw@" not in text


def test_an_unreachable_server_is_a_clear_error_without_the_password() -> None:
    port = free_port()  # nothing listens on it
    with pytest.raises(StorageUnavailableError) as info:
        PgSessionDB(f"postgresql://u:hunter2@127.0.0.1:{port}/db", timeout=2)
    text = str(info.value)
    assert "hunter2" not in text and f"postgresql://u:***@127.0.0.1:{port}/db" in text
    assert "storage.url" in text and "HERMES_DATABASE_URL" in text and "running" in text


def test_a_missing_database_is_a_clear_error(pg_url: str) -> None:
    missing = pg_url.rsplit("/", 1)[0] + "/no_such_db"
    with pytest.raises(StorageUnavailableError, match="no_such_db.*does not exist"):
        PgSessionDB(missing)


def test_a_closed_store_raises_the_closed_error(db: PgSessionDB) -> None:
    db.close()
    with pytest.raises(SessionStoreError, match="closed"):
        db.get_session("x")
    db.close()  # twice is fine


def test_search_columns_are_weighted_indexed_and_follow_updates(db: PgSessionDB, pg_url: str) -> None:
    db.create_session("s", title="Penguin research")
    mid = db.append_message("s", "assistant", "penguins migrate south", tool_name="lookup_atlas",
                            tool_calls=[{"function": {"name": "geo", "arguments": "{\"q\": \"walrus\"}"}}])
    vec = _sql(pg_url, "SELECT search_vector::text FROM messages WHERE id = %s", (mid,))[0][0]
    weights = {lexeme.strip("'"): pos[-1] for lexeme, pos in (t.rsplit(":", 1) for t in vec.split())}
    assert weights["penguin"] == "A" and weights["migrat"] == "A"  # content, stemmed
    assert weights["lookup"] == weights["atlas"] == "B"  # the tool name
    assert weights["walrus"] == weights["geo"] == "C"  # the tool calls
    found = _sql(pg_url, "SELECT id FROM messages WHERE search_vector @@ plainto_tsquery('english', 'penguin')")
    assert found == [(mid,)]
    db.update_message_content(mid, "nothing here")
    assert _sql(pg_url, "SELECT id FROM messages WHERE search_vector @@ plainto_tsquery('english', 'penguin')") == []
    indexes = {r[0]: r[1] for r in _sql(pg_url, "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = "
                                                "current_schema()")}
    assert "gin (search_vector)" in indexes["hm_messages_search"]
    assert "gin_trgm_ops" in indexes["hm_messages_cjk_trgm"]  # migration 2: CJK rows only (pg/search_schema.py)
    assert "gin (title gin_trgm_ops)" in indexes["hm_sessions_title_trgm"]
    assert _sql(pg_url, "SELECT count(*) FROM pg_extension WHERE extname = 'pg_trgm'") == [(1,)]
    assert "search_vector" not in present(db.get_message(mid))


def test_nul_characters_are_stored_as_replacement_characters(db: PgSessionDB) -> None:
    """PostgreSQL text cannot hold NUL: the message is kept, with U+FFFD in its place."""
    db.create_session("s")
    mid = db.append_message("s", "tool", "bin\x00ary", tool_name="cat")
    assert present(db.get_message(mid))["content"] == "bin\ufffdary"


def test_C17_a_sqlite_session_with_nul_bytes_copies_completely_and_once(tmp_path: Path, db: PgSessionDB) -> None:
    import sqlite3

    with SessionDB(tmp_path / "state.db") as lite:
        lite.create_session("s", title="clean")
        lite.append_message("s", "user", "abc\x00def")
        lite.append_message("s", "assistant", None, tool_calls='[{"id": "c", "arguments": "\\u0000"}]')
        lite.append_message("s", "tool", [{"type": "text", "text": "n\x00ul"}], tool_name="t\x00ool")
    raw = sqlite3.connect(tmp_path / "state.db")  # a title with NUL, as another program might write it
    raw.execute("UPDATE sessions SET title = ? WHERE id = 's'", ("ti\x00tle",))
    raw.commit()
    raw.close()
    with SessionDB(tmp_path / "state.db") as lite:
        export = present(lite.export_session("s"))
    # text content, tool name, title; NUL inside JSON (list content, tool calls) is stored as the escape \u0000
    assert unstorable_values(export) == 3
    assert db.copy_session(export) == (1, 3)
    assert db.copy_session(export) == (0, 0)
    got = present(db.export_session("s"))
    assert got["title"] == "ti\ufffdtle" and db.message_count("s") == 3
    assert [m["content"] for m in got["messages"]][0] == "abc\ufffddef"
    assert got["messages"][1]["tool_calls"] == export["messages"][1]["tool_calls"] == [{"id": "c", "arguments": "\x00"}]
    assert got["messages"][2]["content"] == [{"type": "text", "text": "n\x00ul"}]  # JSON keeps it exactly
    assert got["messages"][2]["tool_name"] == "t\ufffdool"


def _fill(db: Any) -> None:
    db.create_session("root", source="cli", model="m", model_config={"t": 0.2}, title="Trip plan",
                      started_at=1000.25, user_id="u1")
    db.append_message("root", "system", "SYS", timestamp=1000.5)
    db.append_message("root", "user", [{"type": "text", "text": "plan it"}], timestamp=1001.125, token_count=3)
    db.append_message("root", "assistant", None, tool_calls=[{"id": "c1", "function": {"name": "f"}}],
                      reasoning="", reasoning_details=[{"r": 1}], finish_reason="tool_calls", timestamp=1002.0)
    db.append_message("root", "tool", "done", tool_call_id="c1", tool_name="f", timestamp=1003.0)
    db.update_token_counts("root", input_tokens=10, output_tokens=4, cost_usd=0.125, api_call_count=2)
    db.end_session("root", "compression")
    db.create_session("child", parent_session_id="root", started_at=1004.0)
    db.set_session_title("child", "Trip plan")
    db.append_messages("child", [{"role": "user", "content": "more", "timestamp": 1005.0},
                                 {"role": "assistant", "content": "ok", "timestamp": 1006.0}])


def _shape(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items() if k not in ("ended_at",)}
    if isinstance(value, list):
        return [_shape(v) for v in value]
    return (type(value).__name__, value)


def test_the_same_calls_give_the_same_dicts_on_sqlite_and_postgres(db: PgSessionDB, tmp_path: Path) -> None:
    with SessionDB(tmp_path / "state.db") as lite:
        for store in (lite, db):
            _fill(store)
        for call in (lambda d: d.export_all(), lambda d: d.list_sessions(), lambda d: d.get_lineages(["child"]),
                     lambda d: d.get_messages_as_conversation("child", include_ancestors=True),
                     lambda d: d.get_bookends("root", 2), lambda d: d.get_messages_window("root", 2, 1),
                     lambda d: d.session_id_candidates("r"), lambda d: d.list_sessions(cwd_prefix="/x"),
                     lambda d: d.resolve_session("Trip plan"), lambda d: d.get_next_title_in_lineage("Trip plan")):
            assert _shape(call(db)) == _shape(call(lite))


def test_copy_session_preserves_everything_and_is_idempotent(tmp_path: Path, db: PgSessionDB) -> None:
    with SessionDB(tmp_path / "state.db") as lite:
        _fill(lite)
        lite.create_session("other")
        for i in range(3):
            lite.append_message("other", "user", f"x{i}")
        exports = lite.export_all()
    by_id = {e["id"]: e for e in exports}
    assert db.copy_session(by_id["child"]) == (1, 2)  # the child first: its parent arrives later
    assert present(db.get_session("child"))["parent_session_id"] is None
    assert db.copy_session(by_id["root"]) == (1, 4)
    assert db.copy_session(by_id["other"]) == (1, 3)
    assert present(db.get_session("child"))["parent_session_id"] == "root"
    assert [db.copy_session(e) for e in exports] == [(0, 0)] * 3
    assert _shape(db.export_all()) == _shape(exports)  # ids, times, order, titles, counters, links
    new = db.append_message("other", "user", "after the copy")
    assert new > max(m["id"] for e in exports for m in e["messages"])


def test_copy_session_resumes_a_grown_session_and_renumbers_a_taken_title(tmp_path: Path, db: PgSessionDB) -> None:
    with SessionDB(tmp_path / "state.db") as lite:
        lite.create_session("s", title="Notes")
        lite.append_message("s", "user", "one")
        first = present(lite.export_session("s"))
        lite.append_message("s", "assistant", "two", tool_calls=[{"id": "a"}])
        grown = present(lite.export_session("s"))
    db.create_session("mine", title="Notes")
    db.append_message("mine", "user", "takes id 1")
    assert db.copy_session(first) == (1, 1)
    got = present(db.get_session("s"))
    assert got["title"] == "Notes #2"
    assert db.copy_session(grown) == (0, 1)
    assert db.copy_session(grown) == (0, 0)
    assert [m["content"] for m in db.get_messages("s")] == ["one", "two"]
    row = present(db.get_session("s"))
    assert row["message_count"] == 2 and row["tool_call_count"] == 1
    ids = [m["id"] for m in db.get_messages("s")]
    assert ids == sorted(ids) and present(db.get_message(1))["session_id"] == "mine"  # a taken id was not reused


def _drop_connections(url: str) -> int:
    return len(_sql(url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
                         "AND pid <> pg_backend_pid()"))


def test_pooled_connections_the_server_dropped_are_replaced(db: PgSessionDB, pg_url: str) -> None:
    """A server restart (or an idle timeout) drops the pooled connections: the next write and
    read find out at BEGIN / on the query, take a fresh connection, and succeed."""
    db.create_session("s")
    assert _drop_connections(pg_url) >= 1
    db.append_message("s", "user", "after the drop")
    assert _drop_connections(pg_url) >= 1
    assert present(db.get_session("s"))["message_count"] == 1
    assert [m["content"] for m in db.get_messages("s")] == ["after the drop"]


def test_C16_huge_messages_are_stored_whole_and_stay_searchable_by_their_start(db: PgSessionDB, pg_url: str) -> None:
    """A tsvector holds at most 1 MB: the generated column indexes a bounded prefix, so a message
    of several MB of distinct words, of 200k distinct tokens or a 5 MB base64 blob is stored whole
    instead of being refused."""
    import random

    rnd = random.Random(7)
    words = ["".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randint(3, 9))) for _ in range(600_000)]
    text = "zebrafirst " + " ".join(words)
    db.create_session("s")
    user = db.append_message("s", "user", text)
    tool = db.append_message("s", "tool", text, tool_name="dump")
    assert len(text) > 3_000_000
    assert present(db.get_message(user))["content"] == text and present(db.get_message(tool))["content"] == text
    hits = _sql(pg_url, "SELECT id FROM messages WHERE search_vector @@ to_tsquery('english', 'zebrafirst') ORDER BY id")
    assert hits == [(user,), (tool,)]
    import base64

    tokens = " ".join(f"w{i}" for i in range(200_000))
    blob = "kiwistart " + base64.b64encode(rnd.randbytes(3_750_000)).decode()
    ids = [db.append_message("s", role, body) for role in ("tool", "assistant") for body in (tokens, blob)]
    assert [present(db.get_message(i))["content"] for i in ids] == [tokens, blob, tokens, blob]
    for word, expected in (("w1234", [ids[0], ids[2]]), ("kiwistart", [ids[1], ids[3]])):
        found = _sql(pg_url, "SELECT id FROM messages WHERE search_vector @@ to_tsquery('simple', %s) ORDER BY id",
                     (word,))
        assert [r[0] for r in found] == expected


def test_copy_session_from_several_writers_at_once_inserts_each_session_once(
    tmp_path: Path, db: PgSessionDB, make_db
) -> None:
    """Two migrations of the same home running at once (and an agent appending meanwhile): every
    session and message lands exactly once, and the appends never collide with copied ids."""
    with SessionDB(tmp_path / "state.db") as lite:
        for n in range(8):
            lite.create_session(f"s{n}", title=f"T{n}")
            lite.append_messages(f"s{n}", [{"role": "user", "content": f"s{n} m{i}"} for i in range(20)])
        exports = lite.export_all()
    db.create_session("live")
    copiers = [make_db() for _ in range(2)]
    totals: list[tuple[int, int]] = []
    lock = threading.Lock()

    def copy(store: PgSessionDB) -> None:
        for e in exports:
            got = store.copy_session(e)
            with lock:
                totals.append(got)

    def append() -> None:
        for i in range(60):
            db.append_message("live", "user", f"live {i}")

    threads = [threading.Thread(target=copy, args=(c,)) for c in copiers] + [threading.Thread(target=append)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(s for s, _ in totals) == 8 and sum(m for _, m in totals) == 160
    assert db.message_count() == 160 + 60 and present(db.get_session("live"))["message_count"] == 60
    for e in exports:
        assert [m["content"] for m in db.get_messages(e["id"])] == [m["content"] for m in e["messages"]]


def test_copied_ids_move_a_fresh_sequence_past_them(tmp_path: Path, db: PgSessionDB, pg_url: str) -> None:
    with SessionDB(tmp_path / "state.db") as lite:
        lite.create_session("s")
        lite.append_message("s", "user", "the only message, id 1")
        export = present(lite.export_session("s"))
    assert db.copy_session(export) == (1, 1)
    assert _sql(pg_url, "SELECT nextval(pg_get_serial_sequence('messages', 'id'))") == [(2,)]


def test_deleting_a_session_while_another_process_appends_to_it(db: PgSessionDB, make_db) -> None:
    """The delete locks the session row first: an append either lands before it (and is deleted
    with the session) or waits and is refused as an unknown session; never a foreign-key error."""
    import time

    writer = make_db()
    for n in range(10):
        sid = f"s{n}"
        db.create_session(sid)
        errors: list[str] = []

        def append(sid: str = sid, errors: list[str] = errors) -> None:
            while True:
                try:
                    writer.append_message(sid, "user", "x")
                except SessionStoreError as exc:
                    errors.append(str(exc))
                    return

        t = threading.Thread(target=append)
        t.start()
        time.sleep(0.02)
        assert db.delete_session(sid) is True
        t.join()
        assert db.message_count(sid) == 0 and db.get_session(sid) is None
        assert len(errors) == 1 and "unknown session" in errors[0], errors


def test_a_row_lock_held_past_the_timeout_is_an_explicit_error(pg_url: str) -> None:
    """B26 on PostgreSQL: a writer stuck holding the session's row lock makes an append wait at
    most ``timeout`` seconds, then fail loudly; nothing is half-written and it works once freed."""
    db = PgSessionDB(pg_url, timeout=1)
    try:
        db.create_session("s1")
        holder = psycopg.connect(pg_url)
        holder.execute("SELECT 1 FROM sessions WHERE id = 's1' FOR UPDATE")
        try:
            with pytest.raises(SessionStoreError, match="stayed locked for 1 s"):
                db.append_message("s1", "user", "blocked")
        finally:
            holder.rollback()
            holder.close()
        assert db.message_count("s1") == 0 and present(db.get_session("s1"))["message_count"] == 0
        db.append_message("s1", "user", "after release")
        assert db.message_count("s1") == 1
    finally:
        db.close()
