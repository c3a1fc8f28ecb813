"""Signing in with the token in a real headless Chromium (failure case C24).

Its own module: the browser fixture is module-scoped and Playwright's loop must not be running
while other modules' tests start theirs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.mcp.helpers import HttpServer
from tests.web.helpers import TOKEN


def test_the_browser_signs_in_once_and_gets_an_httponly_samesite_cookie(hermes_home: Path, seeded: dict[str, Any],
                                                                        browser: Any, shots_dir: Path) -> None:
    with HttpServer(hermes_home, "--token", TOKEN) as srv:
        base = srv.info["dashboard"]
        context = browser.new_context(viewport={"width": 1280, "height": 700})
        page = context.new_page()
        page.goto(base + "memory")
        assert page.url == base + "login"
        assert TOKEN not in page.content()
        page.screenshot(path=str(shots_dir / "login-desktop.png"))
        page.set_viewport_size({"width": 390, "height": 700})
        page.screenshot(path=str(shots_dir / "login-phone.png"))
        page.fill("input[name=token]", "not-the-token")
        page.click("form.login button")
        assert "not the token" in page.locator(".notice.error").inner_text()
        page.fill("input[name=token]", TOKEN)
        page.click("form.login button")
        assert "Project uses pytest" in page.locator("#block-memory").inner_text()
        cookie = next(c for c in context.cookies() if c["name"] == "hm_sid")
        assert cookie["httpOnly"] is True and cookie["sameSite"] == "Strict"
        assert page.evaluate("document.cookie") == ""
        for path in ("sessions", "insights", "providers"):
            assert page.goto(base + path).status == 200
        # A signed-in browser's form posts carry the CSRF token and go through.
        page.goto(base + "memory")
        page.locator("#block-memory form.add textarea").fill("Signed-in write")
        page.locator("#block-memory form.add button").click()
        assert "Signed-in write" in (hermes_home / "memories" / "MEMORY.md").read_text()
        page.click("header .logout button")
        assert page.url == base + "login"
        assert page.goto(base + "api/memory").status == 401
        context.close()
