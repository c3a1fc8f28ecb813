"""state.db and the Holographic facts DB fsync every commit by default (synchronous=FULL, issue 13
§5); ``sessions.synchronous: normal`` in config.yaml switches state.db to NORMAL everywhere it is
opened (CLI, MCP server, agent); batch writers commit once per batch."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import hermes_memory.sessions.db as dbmod
from hermes_memory.agent.loop import Agent
from hermes_memory.cli.main import app
from hermes_memory.config import load_config
from hermes_memory.errors import ConfigError
from hermes_memory.home import HermesHome
from hermes_memory.mcp.server import MemoryServer
from hermes_memory.plugins.holographic.store import FactStore
from hermes_memory.sessions.db import SessionDB
from hermes_memory.testing import ScriptedModel, write_openai_jsonl

FULL, NORMAL = 2, 1  # PRAGMA synchronous values


def _pragma(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA synchronous").fetchone()[0])


def test_state_db_is_opened_with_synchronous_full_by_default(tmp_path: Path) -> None:
    with SessionDB(tmp_path / "state.db") as db:
        assert _pragma(db.conn) == FULL and db.synchronous == "full"


@pytest.mark.parametrize(("value", "expected"), [("normal", NORMAL), ("NORMAL", NORMAL), ("full", FULL)])
def test_state_db_synchronous_option_sets_the_pragma(tmp_path: Path, value: str, expected: int) -> None:
    with SessionDB(tmp_path / "state.db", synchronous=value) as db:
        assert _pragma(db.conn) == expected


def test_state_db_refuses_an_unknown_synchronous_mode(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="full, normal"):
        SessionDB(tmp_path / "state.db", synchronous="off")
    assert not (tmp_path / "state.db").exists()


def test_holographic_facts_db_is_opened_with_synchronous_full(tmp_path: Path) -> None:
    store = FactStore(tmp_path / "facts.db")
    try:
        assert _pragma(store.conn) == FULL
    finally:
        store.close()


def _home(tmp_path: Path, synchronous: str | None) -> HermesHome:
    root = tmp_path / "home"
    root.mkdir()
    if synchronous is not None:
        (root / "config.yaml").write_text(
            f"sessions:\n  auto_prune: false\n  retention_days: 90\n  synchronous: {synchronous}\n", encoding="utf-8"
        )
    return HermesHome(root)


def test_config_sessions_synchronous_defaults_to_full_and_keeps_reference_keys(tmp_path: Path) -> None:
    home = _home(tmp_path, "Normal")
    cfg = load_config(home.config_path)
    assert cfg.sessions.synchronous == "normal"
    assert cfg.sessions.model_extra == {"auto_prune": False, "retention_days": 90}
    assert load_config(None).sessions.synchronous == "full"


def test_config_sessions_synchronous_rejects_other_values(tmp_path: Path) -> None:
    home = _home(tmp_path, "off")
    with pytest.raises(ConfigError, match="sessions.synchronous"):
        load_config(home.config_path)


@pytest.fixture()
def opened(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """PRAGMA synchronous of every SessionDB opened while the test runs (read on the real connection)."""
    seen: list[int] = []
    real_init = dbmod.SessionDB.__init__

    def recording_init(self: SessionDB, *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        seen.append(_pragma(self.conn))

    monkeypatch.setattr(dbmod.SessionDB, "__init__", recording_init)
    return seen


@pytest.mark.parametrize(("option", "expected"), [(None, FULL), ("full", FULL), ("normal", NORMAL)])
def test_every_entry_point_opens_state_db_with_the_configured_mode(
    tmp_path: Path, opened: list[int], option: str | None, expected: int
) -> None:
    home = _home(tmp_path, option)
    conn = sqlite3.connect(home.root / "state.db")  # read-only commands open an existing state.db only
    conn.execute("PRAGMA journal_mode=WAL")  # a database, not a 0-byte file (which they leave alone)
    conn.close()
    res = CliRunner().invoke(app, ["--home", str(home.root), "sessions", "list", "--json"])
    assert res.exit_code == 0, res.output
    server = MemoryServer(home, load_config(home.config_path))
    server.close()
    agent = Agent(ScriptedModel(), home=home)
    agent.close()
    assert len(opened) == 3 and set(opened) == {expected}


def test_append_messages_and_imports_commit_once_per_batch(tmp_path: Path) -> None:
    db = SessionDB(tmp_path / "state.db")
    db.create_session("s1")
    commits: list[str] = []
    db.conn.set_trace_callback(lambda sql: commits.append(sql) if sql.strip().upper() == "COMMIT" else None)
    db.append_messages("s1", [{"role": "user", "content": f"m{i}"} for i in range(500)])
    assert len(commits) == 1 and db.message_count("s1") == 500
    db.close()


def test_cli_import_commits_per_batch_not_per_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    commits: list[int] = []
    real_init = dbmod.SessionDB.__init__

    def tracing_init(self: SessionDB, *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        self.conn.set_trace_callback(lambda sql: commits.append(1) if sql.strip().upper() == "COMMIT" else None)

    monkeypatch.setattr(dbmod.SessionDB, "__init__", tracing_init)
    home = _home(tmp_path, None)
    src = write_openai_jsonl(tmp_path / "chats.jsonl", 600, 4)
    res = CliRunner().invoke(app, ["--home", str(home.root), "sessions", "import", str(src), "-f", "openai", "--json"])
    assert res.exit_code == 0, res.output
    commits_at_import = len(commits)
    with SessionDB(home.state_db) as db:
        assert db.session_count() == 600 and db.message_count() == 2400
    # 600 sessions x (create + append) = 1,200 writes -> a handful of commits, not 1,200
    assert commits_at_import <= 1_200 // dbmod.BATCH_WRITES + 4


def test_a_refused_write_inside_a_batch_undoes_only_itself(tmp_path: Path) -> None:
    with SessionDB(tmp_path / "state.db") as db:
        with db.batch(commit_every=3):
            db.create_session("a", title="Same")
            with pytest.raises(ValueError, match="already in use"):
                db.create_session("b", title="Same")
            db.create_session("c")
            db.append_message("c", "user", "kept")
        assert {s["id"] for s in db.list_sessions()} == {"a", "c"}
        assert db.get_session("b") is None and db.message_count("c") == 1


def test_a_batch_that_raises_keeps_the_committed_chunks_and_drops_the_open_one(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with SessionDB(path) as db:
        with pytest.raises(RuntimeError), db.batch(commit_every=2):
            for i in range(5):
                db.create_session(f"s{i}")
            raise RuntimeError("importer crashed")
        assert not db.conn.in_transaction
    with SessionDB(path) as again:  # what another process sees
        assert {s["id"] for s in again.list_sessions()} == {"s0", "s1", "s2", "s3"}
