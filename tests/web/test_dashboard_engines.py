"""Every dashboard page in a real Chromium over a home on SQLite and over one on PostgreSQL
(sessions and curated memory both in the database): each page answers 200 with no script error,
shows the seeded data, and the insights chart spreads a session over the days of its replies."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from hermes_memory.config import load_config
from hermes_memory.home import HermesHome
from hermes_memory.memory import open_memory_store
from hermes_memory.sessions.factory import open_session_db
from tests.mcp.helpers import PY, HttpServer, child_env
from tests.sessions.backend_sql import raw_write

DAY = 86_400.0


def _seed(home: Path) -> dict[str, str]:
    config = load_config(home / "config.yaml")
    store = open_memory_store(HermesHome(home), config)
    store.load_from_disk()
    assert store.add("memory", "The staging database is pg-stg-2")["success"]
    assert store.add("user", "Prefers metric units")["success"]
    db = open_session_db(HermesHome(home), config)
    try:
        now = time.time()
        sid = db.create_session(source="cli", title="Migrating the billing service", model="test-model")
        raw_write(db, "UPDATE sessions SET started_at = ? WHERE id = ?", (now - 2 * DAY, sid))
        for i, ts in enumerate((now - 2 * DAY, now - DAY, now - DAY + 60, now)):
            db.append_message(sid, "user", f"step {i}: what next for the billing migration?", timestamp=ts)
            db.append_message(sid, "assistant", f"Step {i} done; run the pgbouncer check next.", timestamp=ts)
        db.update_token_counts(sid, input_tokens=40_000, cache_read_tokens=30_000, output_tokens=4_000)
        other = db.create_session(source="telegram", title="Weekend plans")
        db.append_message(other, "user", "Any ideas for Saturday?")
        db.append_message(other, "assistant", "A walk by the river.")
        db.update_token_counts(other, input_tokens=1_000, output_tokens=100)
    finally:
        db.close()
    return {"agent": sid}


@pytest.mark.parametrize("engine", ["sqlite", "postgres"])
def test_every_page_renders_on_both_engines(request: pytest.FixtureRequest, engine: str, hermes_home: Path,
                                           browser: Any, shots_dir: Path) -> None:
    if engine == "postgres":
        url = request.getfixturevalue("pg_url")
        (hermes_home / "config.yaml").write_text(f"storage:\n  backend: postgres\n  url: {url}\n")
    ids = _seed(hermes_home)
    argv = [PY, "-m", "hermes_memory", "--home", str(hermes_home), "ui", "--port", "0", "--no-open", "--json"]
    pages = {"memory": ("memory", "pg-stg-2"), "sessions": ("sessions", "Migrating the billing service"),
             "session": (f"sessions/{ids['agent']}", "run the pgbouncer check"),
             "search": ("sessions/search?q=billing+migration", "billing"),
             "insights": ("insights", "Tokens per day"), "providers": ("providers", "Built-in memory only")}
    with HttpServer(hermes_home, argv=argv, env=child_env()) as srv:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        try:
            for name, (path, marker) in pages.items():
                response = page.goto(srv.info["url"] + path)
                assert response is not None and response.status == 200, (engine, name)
                assert marker in page.locator("main").inner_text(), (engine, name, marker)
                page.screenshot(path=str(shots_dir / f"{engine}-{name}.png"), full_page=True)
            # the memory page: where profiles live on this engine, no empty session picker, cards apart
            page.goto(srv.info["url"] + "memory")
            text = page.locator("section.profiles").inner_text()
            assert ("in the database" if engine == "postgres" else "memories/users/") in text, text
            assert page.locator("select[name=snapshot]").count() == 0
            assert page.locator("#no-stored-snapshots").is_visible()
            gap = page.evaluate("document.querySelector('section.snapshot').getBoundingClientRect().top"
                                " - document.querySelector('.blocks').getBoundingClientRect().bottom")
            assert gap >= 8, gap
            assert errors == [], errors
            insights = httpx.get(srv.info["url"] + "api/insights", timeout=30).json()
        finally:
            context.close()
    # the 3-day session counts on each of its days (1 + 2 + 1 replies), not all on its first
    outputs = [d["output"] for d in insights["tokens_per_day"][-3:]]
    assert outputs == [1_000, 2_000, 1_000 + 100], outputs
