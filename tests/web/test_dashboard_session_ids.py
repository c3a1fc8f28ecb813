"""Sessions whose id holds a ``/`` (an OpenAI-style JSONL import keeps its records' own ``"id"``):
the dashboard's links reach that session, its export and its delete, never another session's, on a
real server over HTTP (new-user trial finding: such a session's every link answered 404)."""

from __future__ import annotations

import html
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import httpx

from tests.mcp.helpers import PY, HttpServer, child_env
from tests.web.helpers import match_group


def _import_jsonl(home: Path, tmp_path: Path, records: list[dict[str, Any]]) -> None:
    src = tmp_path / "convs.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    proc = subprocess.run([PY, "-m", "hermes_memory", "--home", str(home), "sessions", "import", str(src),
                           "--format", "openai"], capture_output=True, text=True, env=child_env(), timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _href(listing: str, title: str) -> str:
    return html.unescape(match_group(r'<a href="(/sessions/[^"]+)">' + re.escape(title) + "</a>", listing))


def test_a_session_id_with_a_slash_opens_exports_and_deletes_that_session(hermes_home: Path, tmp_path: Path) -> None:
    _import_jsonl(hermes_home, tmp_path, [
        {"id": "team", "title": "Plain team chat",
         "messages": [{"role": "user", "content": "the plain team session about otters"}]},
        {"id": "team/export", "title": "Slashed export chat",
         "messages": [{"role": "user", "content": "the slashed session about walruses"}]},
        {"id": "team/alpha/delete", "title": "Slashed delete chat",
         "messages": [{"role": "user", "content": "the other slashed session about narwhals"}]},
    ])
    with HttpServer(hermes_home) as srv, httpx.Client(base_url=srv.info["dashboard"].rstrip("/"), timeout=60) as c:
        listing = c.get("/sessions").text
        slashed = _href(listing, "Slashed export chat")
        page = c.get(slashed)
        assert page.status_code == 200, (slashed, page.text[-1500:])
        assert "walruses" in page.text and "otters" not in page.text

        export_href = html.unescape(match_group(r'href="([^"]+/export)" download', page.text))
        exported = c.get(export_href)
        assert exported.status_code == 200, (export_href, exported.text[-500:])
        assert exported.json()["id"] == "openai-team/export"

        api = c.get("/api" + slashed)
        assert api.status_code == 200 and api.json()["session"]["id"] == "openai-team/export"

        other = _href(listing, "Slashed delete chat")
        form = c.get(other + "/delete")
        assert form.status_code == 200 and "narwhals" not in form.text
        action = html.unescape(match_group(r'<form method="post" action="([^"]+)"', form.text))
        confirm = html.unescape(match_group(r'name="confirm" value="([^"]+)"', form.text))
        csrf = match_group(r'name="csrf" value="([^"]+)"', form.text)
        assert confirm == "openai-team/alpha/delete"
        done = c.post(action, data={"csrf": csrf, "confirm": confirm})
        assert done.status_code == 303, done.text[-1500:]
        after = {s["id"] for s in c.get("/api/sessions").json()["sessions"]}
        assert after == {"openai-team", "openai-team/export"}
