"""``hermes-memory ui`` with a configured external provider that cannot be loaded: the dashboard
starts anyway (the user opens it to see what is wrong), shows the provider's error on every page
and in ``/api/providers``, and the rest works (memory edits reach the files); the MCP server still
refuses to start, so its clients never silently lose the provider's tools."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import httpx

from tests.mcp.helpers import PY, HttpServer, child_env, serve_argv

# mem0 without MEM0_API_KEY: the provider loads but is not available (a ProviderError), the way a
# user who set `memory.provider: mem0` and forgot the key meets it.
BROKEN = "memory:\n  provider: mem0\n"
WHY = "MEM0_API_KEY is not set"


def _ui(home: Path) -> HttpServer:
    argv = [PY, "-m", "hermes_memory", "--home", str(home), "ui", "--port", "0", "--no-open", "--json"]
    return HttpServer(home, argv=argv, env=child_env(MEM0_API_KEY=""))


def test_the_dashboard_starts_with_a_broken_provider_and_shows_its_error(
        hermes_home: Path, seeded: dict[str, Any], browser: Any, shots_dir: Path) -> None:
    (hermes_home / "config.yaml").write_text(BROKEN)
    with _ui(hermes_home) as srv:
        base = srv.info["url"]
        assert WHY in srv.info["provider_error"]
        for path in ("", "memory", "sessions", "insights", "providers"):
            r = httpx.get(base + path, timeout=30)
            assert r.status_code == 200, (path, r.status_code)
            assert "failed to load" in r.text and WHY in r.text, path
        assert "Project uses pytest" in httpx.get(base + "memory", timeout=30).text
        api = httpx.get(base + "api/providers", timeout=30).json()
        assert api["configured"] == "mem0" and api["status"]["loaded"] is False
        assert WHY in api["status"]["error"]
        page = browser.new_page()
        try:
            page.goto(base + "providers")
            assert WHY in page.locator("#provider-problem").inner_text()
            assert WHY in page.locator("#provider-error").inner_text()
            page.screenshot(path=str(shots_dir / "broken-provider.png"), full_page=True)
            # the rest works: an entry added in the browser reaches MEMORY.md
            page.goto(base + "memory")
            page.locator("#block-memory form.add textarea[name=content]").fill("The dashboard works without mem0")
            page.locator("#block-memory form.add button").click()
            page.wait_for_load_state()
        finally:
            page.close()
    assert "The dashboard works without mem0" in (hermes_home / "memories" / "MEMORY.md").read_text()


def test_serve_still_refuses_to_start_with_a_broken_provider(hermes_home: Path) -> None:
    (hermes_home / "config.yaml").write_text(BROKEN)
    done = subprocess.run(serve_argv(hermes_home, "--port", "0", transport="http"), capture_output=True, text=True,
                          env=child_env(MEM0_API_KEY=""), timeout=120)
    assert done.returncode != 0 and WHY in done.stderr, done
