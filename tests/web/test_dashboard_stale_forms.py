"""An entry's Edit and Remove forms act on the entry the page showed, never on one changed since.

The forms post the entry's text as ``old_text``. The memory tool matches ``old_text`` as a whole entry
or as a part of one, so a page loaded before another writer (the CLI, the agent, an MCP client)
rewrote the entry would, on a click, remove or overwrite the rewritten entry: the other writer's
change is lost. Real ``serve --transport http`` process, real CLI process, real files.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import httpx

from tests.mcp.helpers import PY, child_env
from tests.web.helpers import match_group


def _cli(home: Path, *args: str) -> None:
    done = subprocess.run([PY, "-m", "hermes_memory", "--home", str(home), "memory", *args],
                          capture_output=True, text=True, env=child_env(), timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def _post(client: httpx.Client, csrf: str, **form: str) -> httpx.Response:
    return client.post("memory", data={"csrf": csrf, "target": "memory", "user": "", **form})


def test_a_stale_remove_or_edit_leaves_an_entry_another_writer_changed(hermes_home: Path,
                                                                         dashboard: dict[str, Any]) -> None:
    memory = hermes_home / "memories" / "MEMORY.md"
    with httpx.Client(base_url=dashboard["url"], follow_redirects=False, timeout=60) as c:
        page = c.get("memory")
        csrf = match_group(r'name="csrf" value="([^"]+)"', page.text)
        assert 'name="old_text" value="Deploys go through staging first"' in page.text
        # Meanwhile the CLI rewrites that entry (the old text is now part of the new one).
        rewritten = "Deploys go through staging first, then canary for 1 h (incident 4411)"
        _cli(hermes_home, "replace", "Deploys go through staging first", rewritten)
        before = memory.read_bytes()
        # The user clicks Remove, then Edit, on the row as the page showed it.
        gone = _post(c, csrf, action="remove", old_text="Deploys go through staging first")
        assert gone.status_code == 422, gone.text[:2000]
        assert "changed since" in gone.text
        edit = _post(c, csrf, action="replace", old_text="Deploys go through staging first",
                     content="Deploys go through staging (see Makefile)")
        assert edit.status_code == 422, edit.text[:2000]
        assert memory.read_bytes() == before
        assert rewritten in memory.read_text(encoding="utf-8")
        # The fresh page's forms carry the entry as it is now, and work.
        fresh = c.get("memory").text
        assert f'name="old_text" value="{rewritten}"' in fresh
        ok = _post(c, csrf, action="remove", old_text=rewritten)
        assert ok.status_code == 200, ok.text[:2000]
        assert rewritten not in memory.read_text(encoding="utf-8")


def test_a_form_of_a_multi_line_entry_matches_it_with_the_browsers_crlf(hermes_home: Path,
                                                                        dashboard: dict[str, Any]) -> None:
    memory = hermes_home / "memories" / "MEMORY.md"
    _cli(hermes_home, "add", "Release steps:\n1. make release\n2. tag it")
    with httpx.Client(base_url=dashboard["url"], follow_redirects=False, timeout=60) as c:
        csrf = match_group(r'name="csrf" value="([^"]+)"', c.get("memory").text)
        # Browsers send every line break of a form value as CRLF.
        ok = _post(c, csrf, action="replace", old_text="Release steps:\r\n1. make release\r\n2. tag it",
                   content="Release steps:\r\n1. make release\r\n2. tag it\r\n3. announce")
        assert ok.status_code == 200, ok.text[:2000]
    assert "Release steps:\n1. make release\n2. tag it\n3. announce" in memory.read_text(encoding="utf-8")
