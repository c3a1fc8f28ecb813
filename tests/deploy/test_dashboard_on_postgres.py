"""The dashboard's data layer on a home migrated to PostgreSQL: the same pages as on SQLite (session
list and filters, a transcript, insights, memory views and writes, profiles), no SQLite SQL."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import yaml

from hermes_memory.config import load_config
from hermes_memory.home import HermesHome
from hermes_memory.mcp.server import MemoryServer
from hermes_memory.web.data import Backend, SessionFilter
from tests.deploy.helpers import hermes_json, populate_home


def _server(home: Path) -> MemoryServer:
    return MemoryServer(HermesHome(home), load_config(home / "config.yaml"))


def test_dashboard_pages_read_and_write_through_postgres(tmp_path: Path, pg_url: str) -> None:
    sqlite_home = tmp_path / "sqlite-home"
    populate_home(sqlite_home, sessions=6, messages=4, users=("alice",))
    assert hermes_json(sqlite_home, "storage", "migrate", "--to", pg_url)["ok"] is True
    sqlite_server = _server(sqlite_home)
    on_sqlite = Backend(sqlite_server)

    pg_home = tmp_path / "pg-home"
    pg_home.mkdir()
    (pg_home / "config.yaml").write_text(yaml.safe_dump({"storage": {"backend": "postgres", "url": pg_url}}))
    server = _server(pg_home)
    try:
        on_pg = Backend(server)
        assert server.db.backend == "postgres"
        assert on_pg.filter_options() == on_sqlite.filter_options()
        for f in (SessionFilter(), SessionFilter(source="telegram"), SessionFilter(title="Talk"),
                  SessionFilter(since="2023-11-14", until="2023-11-14"), SessionFilter(project="/nowhere")):
            assert on_pg.list_sessions(f) == on_sqlite.list_sessions(f), f
        today = datetime.fromtimestamp(1_700_000_000, tz=UTC).date()
        got, want = on_pg.insights(days=3, today=today), on_sqlite.insights(days=3, today=today)
        assert got["tokens_per_day"] == want["tokens_per_day"] and got["totals"] == want["totals"]
        assert got["tokens_per_day"][-1]["sessions"] == 6
        detail = on_pg.session_detail("sess-00001")
        assert detail is not None and detail == on_sqlite.session_detail("sess-00001")
        assert on_pg.profile_ids() == ["alice"]
        view = on_pg.memory_view("alice")
        assert view["targets"]["user"]["entries"] == on_sqlite.memory_view("alice")["targets"]["user"]["entries"]
        assert "postgres" in view["targets"]["memory"]["file"] and "://" in view["targets"]["memory"]["file"]
        r = on_pg.memory_write("alice", {"action": "add", "target": "user", "content": "alice moved to Lisbon"})
        assert r["success"] is True
        assert "alice moved to Lisbon" in on_pg.memory_view("alice")["targets"]["user"]["entries"]
        assert not (pg_home / "memories" / "users").exists() and not (pg_home / "state.db").exists()
    finally:
        server.close()
        sqlite_server.close()
