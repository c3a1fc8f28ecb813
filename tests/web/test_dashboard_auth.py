"""Sign-in, secrets and who may reach the dashboard (failure case C24), over real server processes."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import httpx

from tests.mcp.helpers import PY, HttpServer, child_env, serve_argv
from tests.web.helpers import TOKEN, match_group

DATA_MARKERS = ("Project uses pytest", "Prefers short answers", "pgbouncer", "Alice is allergic")
GET_PATHS = ["", "memory", "memory?user=alice", "sessions", "sessions/search?q=pgbouncer", "insights", "providers",
             "api/memory", "api/memory?user=alice", "api/sessions", "api/search?q=pgbouncer", "api/insights",
             "api/providers", "static/app.js", "static/style.css", "login"]


def _ui_argv(home: Path, *extra: str) -> list[str]:
    return [PY, "-m", "hermes_memory", "--home", str(home), "ui", "--port", "0", "--no-open", "--json", *extra]


def _everything(base: str, extra_paths: list[str], **kw: Any) -> list[httpx.Response]:
    with httpx.Client(follow_redirects=False, timeout=30, **kw) as c:
        return [c.get(base + p) for p in GET_PATHS + extra_paths]


def _assert_no_secret(responses: list[httpx.Response], *secrets: str) -> None:
    for r in responses:
        blob = r.text + "\n".join(f"{k}: {v}" for k, v in r.headers.items())
        for s in secrets:
            assert s not in blob, (str(r.url), s)


def test_with_a_token_an_unauthenticated_request_gets_no_data(hermes_home: Path, seeded: dict[str, Any]) -> None:
    with HttpServer(hermes_home, "--token", TOKEN) as srv:
        base = srv.info["dashboard"]
        sessions = [f"sessions/{seeded['agent']}", f"sessions/{seeded['agent']}/export",
                    f"sessions/{seeded['agent']}/delete", f"api/sessions/{seeded['agent']}"]
        responses = _everything(base, sessions)
        for r in responses:
            path = r.url.path
            if path.startswith("/static/") or path == "/login":
                assert r.status_code == 200, path
                continue
            assert r.status_code in (303, 401), (path, r.status_code)
            if r.status_code == 303:
                assert r.headers["location"] == "/login"
            for marker in DATA_MARKERS:
                assert marker not in r.text, (path, marker)
        _assert_no_secret(responses, "SECRET123", TOKEN, str(hermes_home))
        # The MCP endpoint on the same port still wants its bearer token.
        assert httpx.post(srv.url, json={}).status_code == 401
        # A wrong token signs nobody in; a POST without sign-in writes nothing.
        before = (hermes_home / "memories" / "MEMORY.md").read_bytes()
        with httpx.Client(base_url=base, follow_redirects=False) as c:
            login = c.get("login")
            csrf = match_group(r'name="csrf" value="([^"]+)"', login.text)
            bad = c.post("login", data={"csrf": csrf, "token": "wrong"})
            assert bad.status_code == 401 and TOKEN not in bad.text
            assert c.get("api/memory").status_code == 401
            assert c.post("memory", data={"csrf": csrf, "action": "add", "target": "memory",
                                          "content": "planted"}).status_code == 401
        assert (hermes_home / "memories" / "MEMORY.md").read_bytes() == before
        # The bearer header opens the JSON API for scripts.
        r = httpx.get(base + "api/memory", headers={"Authorization": f"Bearer {TOKEN}"})
        assert r.status_code == 200 and "Project uses pytest" in r.text


def test_secrets_appear_in_no_response_and_settings_show_them_masked(hermes_home: Path,
                                                                     seeded: dict[str, Any]) -> None:
    (hermes_home / "config.yaml").write_text(
        "memory:\n  provider: holographic\nholographic:\n  auth_token: sk-test-SECRET123-holo\n"
        "model:\n  provider: openai\n  name: gpt-test\n  api_key: sk-test-SECRET123-model\n")
    with HttpServer(hermes_home) as srv:
        base = srv.info["dashboard"]
        responses = _everything(base, [f"sessions/{seeded['agent']}", f"api/sessions/{seeded['agent']}"])
        assert [(str(r.url), r.status_code) for r in responses
                if r.status_code != 200 and r.url.path != "/login"] == []  # no token: /login sends you on
        _assert_no_secret(responses, "SECRET123")
        providers = httpx.get(base + "providers").text
        assert "sk-…T123" in providers  # OPENAI_API_KEY from .env, masked
        assert "hc-…cdef" in providers  # HONCHO_API_KEY
        assert "holographic" in providers and "loaded and available" in providers
        api = httpx.get(base + "api/providers").json()
        assert api["settings"]["auth_token"] == "sk-…holo"
        assert api["model"]["api_key"] == "sk-…odel"


def test_a_non_loopback_bind_without_a_token_refuses_to_start(hermes_home: Path) -> None:
    for argv in (_ui_argv(hermes_home, "--host", "0.0.0.0"),
                 serve_argv(hermes_home, "--host", "0.0.0.0", "--port", "0", transport="http")):
        done = subprocess.run(argv, capture_output=True, text=True, env=child_env(HERMES_MCP_TOKEN=""), timeout=60)
        assert done.returncode == 2, done
        assert "refusing to serve on 0.0.0.0" in done.stderr and "--token" in done.stderr


def test_on_all_interfaces_with_a_token_the_sign_in_page_holds_no_token_or_data(hermes_home: Path,
                                                                               seeded: dict[str, Any]) -> None:
    with HttpServer(hermes_home, argv=_ui_argv(hermes_home, "--host", "0.0.0.0", "--token", TOKEN)) as srv:
        port = int(srv.info["url"].rsplit(":", 1)[1].strip("/"))
        base = f"http://127.0.0.1:{port}/"
        responses = _everything(base, [])
        _assert_no_secret(responses, "SECRET123", TOKEN)
        for r in responses:
            for marker in DATA_MARKERS:
                assert marker not in r.text, (str(r.url), marker)


def test_ui_serves_the_dashboard_alone_and_checks_host_and_origin(hermes_home: Path, seeded: dict[str, Any]) -> None:
    with HttpServer(hermes_home, argv=_ui_argv(hermes_home)) as srv:
        base = srv.info["url"]
        assert base.startswith("http://127.0.0.1:") and srv.info["token_required"] is False
        assert "Project uses pytest" in httpx.get(base).text
        assert httpx.post(base + "mcp", json={}).status_code in (403, 404, 405)  # no MCP endpoint here
        # DNS rebinding: a page whose name resolves to 127.0.0.1 sends its own Host / Origin.
        assert httpx.get(base, headers={"Host": "evil.example"}).status_code == 421
        assert httpx.get(base, headers={"Origin": "http://evil.example"}).status_code == 403


def test_serve_announces_the_dashboard_and_no_dashboard_leaves_only_mcp(hermes_home: Path) -> None:
    with HttpServer(hermes_home) as srv:
        assert srv.info["dashboard"] == srv.url.removesuffix("mcp")
        assert httpx.get(srv.info["dashboard"], headers={"Host": "evil.example:1"}).status_code == 421
    with HttpServer(hermes_home, "--no-dashboard") as srv:
        assert srv.info["dashboard"] is None
        assert httpx.get(srv.url.removesuffix("mcp")).status_code == 404


def test_the_snapshot_of_a_live_mcp_client_session_is_shown_beside_the_live_state(
        hermes_home: Path, seeded: dict[str, Any]) -> None:
    import anyio

    from tests.mcp.helpers import call, http_session

    with HttpServer(hermes_home) as srv:
        base = srv.info["dashboard"]

        async def main() -> None:
            async with http_session(srv.url) as s:
                await call(s, "memory", {"action": "add", "target": "memory", "content": "Added over MCP"})
                page = await anyio.to_thread.run_sync(lambda: httpx.get(base + "memory").text)
                key = match_group(r'<option value="(mcp:[0-9a-f]{16})"', page)
                shown = await anyio.to_thread.run_sync(lambda: httpx.get(base + "memory", params={"snapshot": key}).text)
                frozen = match_group(r'<pre class="prompt" id="frozen">(.*?)</pre>', shown, re.S)
                live = match_group(r'<pre class="prompt" id="live">(.*?)</pre>', shown, re.S)
                assert "Project uses pytest" in frozen and "Added over MCP" not in frozen
                assert "Added over MCP" in live and 'id="snapshot-differs"' in shown

        anyio.run(main)


def test_ui_opens_the_dashboard_in_the_browser_unless_no_open(hermes_home: Path, tmp_path: Path) -> None:
    """`ui` hands its URL to the user's browser ($BROWSER, as Python's webbrowser reads it)."""
    import time

    opened = tmp_path / "opened.txt"
    opener = tmp_path / "opener.sh"
    # Written aside and renamed, so the file never exists half-written (the test polls for it).
    opener.write_text(f'#!/bin/sh\nprintf %s "$1" > {opened}.part && mv {opened}.part {opened}\n')
    opener.chmod(0o755)
    argv = [a for a in _ui_argv(hermes_home) if a != "--no-open"]
    with HttpServer(hermes_home, argv=argv, env=child_env(BROWSER=str(opener))) as srv:
        deadline = time.monotonic() + 30
        while not opened.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert opened.read_text() == srv.info["url"]
    opened.unlink()
    with HttpServer(hermes_home, argv=_ui_argv(hermes_home), env=child_env(BROWSER=str(opener))):
        time.sleep(1.5)
    assert not opened.exists()
