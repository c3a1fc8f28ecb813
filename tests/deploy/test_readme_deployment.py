"""The README's "When one machine is not enough" commands, run as written (only the database
host and port are the test server's): an empty PostgreSQL becomes a migrated, serving deployment."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import anyio
import psycopg

from hermes_memory.mcp.server import URI_MEMORY_MD
from tests.deploy.helpers import cli_env, populate_home
from tests.helpers.http import free_port
from tests.helpers.values import present
from tests.mcp.helpers import HttpServer, call, http_session, read_text

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_commands() -> list[str]:
    section = README.read_text(encoding="utf-8").split("## When one machine is not enough", 1)[1]
    block = section.split("```", 2)[1]
    return [line.strip() for line in block.strip().splitlines() if line.strip()]


def test_the_three_readme_commands_take_an_empty_postgresql_to_a_serving_deployment(tmp_path: Path, pg_server) -> None:
    commands = readme_commands()
    assert len(commands) == 3, commands
    assert commands[0].startswith("createdb ") and "storage migrate --to postgresql://" in commands[1]
    assert commands[2].startswith("hermes-memory serve --transport http")
    pg_server.psql("DROP DATABASE IF EXISTS hermes")
    pg_server.psql("DO $$ BEGIN CREATE ROLE hermes LOGIN CREATEDB PASSWORD 'secret'; "
                   "EXCEPTION WHEN duplicate_object THEN NULL; END $$")
    port = str(pg_server.port)
    home = tmp_path / "hermes-home"
    populate_home(home, sessions=4, messages=4, users=("alice",))
    mcp_port = free_port()
    env = cli_env(HERMES_HOME=str(home), PGPORT=port, HERMES_MCP_TOKEN="tok-" + os.urandom(8).hex(),
                  HERMES_MCP_PORT=str(mcp_port),
                  PATH=os.pathsep.join([str(Path(sys.executable).parent), str(pg_server.bindir), os.environ["PATH"]]))

    def literal(line: str) -> str:  # the README's database host and port are the test server's
        return line.replace("db.internal:5432", f"127.0.0.1:{port}").replace("db.internal", "127.0.0.1")

    import subprocess

    for line in commands[:2]:
        r = subprocess.run(["bash", "-c", literal(line)], capture_output=True, text=True, env=env, timeout=300)
        assert r.returncode == 0, (line, r.stdout, r.stderr)
    assert "Verified" in r.stdout and "secret" not in r.stdout + r.stderr
    assert "storage:" in (home / "config.yaml").read_text() and "secret" not in (home / "config.yaml").read_text()
    url = f"postgresql://hermes@127.0.0.1:{port}/hermes"
    with psycopg.connect(url) as conn:
        assert present(conn.execute("SELECT count(*) FROM messages").fetchone())[0] == 16

    with HttpServer(home, argv=["bash", "-c", literal(commands[2])], env=env, json_output=False) as srv:
        served = re.sub(r"//[^/:]+:", "//127.0.0.1:", srv.url)

        async def main() -> None:
            async with http_session(served, token=env["HERMES_MCP_TOKEN"]) as s:
                found = await call(s, "session_search", {"query": "pgbouncer restart"})
                assert found["success"] is True and found["count"] >= 1
                assert "Deploys go through tools/deploy.sh" in await read_text(s, URI_MEMORY_MD)
                added = await call(s, "memory", {"action": "add", "target": "user", "content": "Served from PostgreSQL"})
                assert added["success"] is True

        anyio.run(main)
    with psycopg.connect(url) as conn:
        rows = [r[0] for r in conn.execute("SELECT content FROM hm_memory_entries WHERE target = 'user'")]
    assert "Served from PostgreSQL" in rows
