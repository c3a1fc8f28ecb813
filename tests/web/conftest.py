"""Fixtures of the dashboard tests: a real ``serve --transport http`` process on 127.0.0.1, a seeded
data home, and Debian's Chromium driven by Playwright (its bundled driver; no browser download).

Chromium is installed with apt-get when it is missing and this process may do so (``.ci/run``
installs it too); when it cannot be installed the tests fail and say why, never skip.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web.helpers import HOSTILE_LINK, HOSTILE_MEMORY, HOSTILE_TITLE

CHROMIUM = os.environ.get("HERMES_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
SHOTS_ENV = "HERMES_DASHBOARD_SHOTS"
"""Folder for the page screenshots (default: the test's own tmp folder)."""


def ensure_chromium() -> str:
    """Path of the system Chromium; installs Debian's ``chromium`` with apt-get when missing."""
    if Path(CHROMIUM).exists():
        return CHROMIUM
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        pytest.fail(f"{CHROMIUM} is missing and cannot be installed here (needs root and apt-get): "
                    "run `apt-get update && apt-get install -y chromium chromium-driver` (as .ci/run does)")
    for argv in ([apt, "update", "-qq"], [apt, "install", "-y", "-qq", "chromium", "chromium-driver"]):
        done = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
        if done.returncode != 0:
            pytest.fail(f"installing Chromium failed ({' '.join(argv)}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    if not Path(CHROMIUM).exists():
        pytest.fail(f"apt-get installed chromium but {CHROMIUM} is still missing")
    return CHROMIUM


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Chromium (Debian's) driven by Playwright's bundled driver.

    Module-scoped: Playwright's sync API keeps an event loop on this thread while it runs, so it is
    stopped at the end of each module, before tests elsewhere start their own loops."""
    path = ensure_chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:  # pragma: no cover - the dev extra installs it
        pytest.fail(f"playwright is not installed ({exc}); `pip install -e '.[dev]'` installs it")
    pw = sync_playwright().start()
    try:
        b = pw.chromium.launch(executable_path=path, headless=True, args=CHROMIUM_ARGS)
    except Exception as exc:
        pw.stop()
        pytest.fail(f"could not start {path} through Playwright: {exc}")
    try:
        yield b
    finally:
        b.close()
        pw.stop()


@pytest.fixture
def shots_dir(tmp_path: Path) -> Path:
    folder = Path(os.environ.get(SHOTS_ENV) or tmp_path / "shots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def seed_home(home: Path) -> dict[str, Any]:
    """A home with memory in both files (hostile entries included), a gateway profile, and sessions:
    an agent session whose system prompt holds the memory snapshot, a tool session with a hostile
    title and a ``javascript:`` link, and a compressed lineage. Returns ids and texts."""
    from hermes_memory.mcp.server import render_snapshot
    from hermes_memory.memory import MemoryStore
    from hermes_memory.sessions.db import SessionDB

    (home / ".env").write_text("OPENAI_API_KEY=sk-test-SECRET123\nHONCHO_API_KEY=hc-test-SECRET123-abcdef\n")
    store = MemoryStore(home / "memories")
    for e in ("Project uses pytest and ruff", "Deploys go through staging first", *HOSTILE_MEMORY):
        assert store.add("memory", e)["success"], e
    assert store.add("user", "Prefers short answers")["success"]
    alice = MemoryStore(home / "memories", user_id="alice")
    assert alice.add("user", "Alice is allergic to penicillin")["success"]
    store.load_from_disk()
    snapshot = render_snapshot(store)
    db = SessionDB(home / "state.db")
    try:
        agent = db.create_session(source="cli", title="Fixing the deploy bug", model="test-model",
                                  system_prompt="You are a helpful agent.\n\n" + snapshot)
        db.append_message(agent, "user", "The deploy to staging fails with a pgbouncer timeout")
        db.append_message(agent, "assistant", "Let me look at the pgbouncer pool settings.",
                          reasoning="I should check the pool size first.",
                          tool_calls=[{"id": "c1", "type": "function",
                                       "function": {"name": "terminal", "arguments": '{"cmd": "cat pgbouncer.ini"}'}}])
        db.append_message(agent, "tool", "pool_size = 5\n<script>window.__pwn=6</script>", tool_name="terminal",
                          tool_call_id="c1")
        db.append_message(agent, "assistant", "Raise pool_size to 20 and restart pgbouncer.")
        db.update_token_counts(agent, input_tokens=12_000, output_tokens=800, cache_read_tokens=9_000,
                               cache_write_tokens=2_000, api_call_count=3)
        db.end_session(agent, "compression")
        child = db.create_session(source="cli", parent_session_id=agent, model="test-model",
                                  title="Fixing the deploy bug #2")
        db.append_message(child, "user", "Did the pgbouncer change hold?")
        db.append_message(child, "assistant", "Yes, no timeouts since.")
        hostile = db.create_session(source="telegram", user_id="alice", title=HOSTILE_TITLE)
        db.append_message(hostile, "user", "<img src=x onerror=window.__pwn=5> what about the docs?")
        db.append_message(hostile, "tool", HOSTILE_LINK, tool_name="web")
        db.append_message(hostile, "assistant", HOSTILE_LINK)
        db.update_token_counts(hostile, input_tokens=3_000, output_tokens=200)
    finally:
        db.close()
    return {"agent": agent, "child": child, "hostile": hostile}


@pytest.fixture
def seeded(hermes_home: Path) -> dict[str, Any]:
    return seed_home(hermes_home)


@pytest.fixture
def dashboard(hermes_home: Path, seeded: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """``serve --transport http`` on a free port of 127.0.0.1 over the seeded home; yields
    ``{"url": base URL ending in '/', "server": HttpServer, **seeded}``."""
    from tests.mcp.helpers import HttpServer

    with HttpServer(hermes_home) as srv:
        yield {"url": srv.info["dashboard"], "server": srv, **seeded}


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    p = context.new_page()
    p.set_default_timeout(20_000)
    try:
        yield p
    finally:
        context.close()
