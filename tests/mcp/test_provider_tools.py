"""The active external provider's tools, served next to the core ones (real discovery + MemoryManager)."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from tests.mcp.helpers import (
    HttpServer,
    call,
    child_env,
    install_notes_plugin,
    serve_argv,
    stdio_session,
    text_of,
)


def test_provider_tools_are_listed_routed_validated_and_memory_writes_mirrored(hermes_home: Path) -> None:
    install_notes_plugin(hermes_home)

    async def main() -> None:
        async with stdio_session(hermes_home) as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert set(tools) == {"memory", "session_search", "notes"}
            assert tools["notes"].input_schema["required"] == ["action"]
            r = await call(s, "notes", {"action": "add", "text": "first note"})
            assert r == {"success": True, "count": 1, "platform": "mcp"}
            assert (await call(s, "notes", {"action": "list"}))["notes"] == ["first note"]
            with pytest.raises(MCPError) as info:
                await s.call_tool("notes", {"action": "erase"})
            assert "field 'action'" in info.value.error.message
            r = await call(s, "memory", {"action": "add", "target": "user", "content": "Name is Sam"})
            assert r["success"] is True
            r = await call(s, "memory", {"action": "add", "target": "user", "content": "Name is Sam"})
            assert r["success"] is True  # duplicate: nothing written, still mirrored as the agent does
            r = await call(s, "memory", {"action": "remove", "target": "user", "old_text": "no such entry"})
            assert r["success"] is False  # a refused write is not mirrored

    anyio.run(main)
    assert json.loads((hermes_home / "notes.json").read_text()) == ["first note"]
    mirrored = [json.loads(line) for line in (hermes_home / "mirrored.jsonl").read_text().splitlines()]
    assert mirrored[0] == ["add", "user", "Name is Sam"]
    assert all(m[0] == "add" for m in mirrored)
    assert (hermes_home / "shutdown.log").read_text() == "shutdown\n"  # client left: provider shut down


def test_sigterm_stops_the_http_server_cleanly_and_shuts_the_provider_down(hermes_home: Path) -> None:
    install_notes_plugin(hermes_home)
    with HttpServer(hermes_home) as srv:
        assert srv.info["tools"] == ["memory", "session_search", "notes"]
        assert srv.proc is not None
        srv.proc.send_signal(signal.SIGTERM)
        assert srv.proc.wait(timeout=60) == 0, srv.stderr()
    assert (hermes_home / "shutdown.log").read_text() == "shutdown\n"


def test_a_configured_provider_that_cannot_load_stops_the_server_with_the_reason(hermes_home: Path) -> None:
    (hermes_home / "config.yaml").write_text("memory:\n  provider: no_such_provider\n", encoding="utf-8")
    proc = subprocess.run(serve_argv(hermes_home), input="", capture_output=True, text=True, env=child_env(),
                          timeout=120)
    assert proc.returncode == 1
    assert "no_such_provider" in proc.stderr
    assert proc.stdout == ""


def test_the_bundled_holographic_provider_serves_fact_store_and_receives_memory_writes(hermes_home: Path) -> None:
    (hermes_home / "config.yaml").write_text("memory:\n  provider: holographic\n", encoding="utf-8")

    async def main() -> None:
        async with stdio_session(hermes_home) as s:
            names = {t.name for t in (await s.list_tools()).tools}
            assert {"memory", "session_search", "fact_store", "fact_feedback"} <= names
            prompt = text_of((await s.get_prompt("memory_guidance")).messages[0].content)
            assert "Holographic Memory" in prompt  # the provider's system_prompt_block rides along
            added = await call(s, "fact_store", {"action": "add", "content": "Sam deploys the shop with Ansible"})
            assert "error" not in added, added
            r = await call(s, "memory", {"action": "add", "target": "user", "content": "Sam prefers Vim keybindings"})
            assert r["success"] is True
            found = await call(s, "fact_store", {"action": "search", "query": "Ansible deploys"})
            assert "Ansible" in json.dumps(found)
            mirrored = await call(s, "fact_store", {"action": "search", "query": "Vim keybindings"})
            assert "Vim" in json.dumps(mirrored)  # the memory write reached the provider
            with pytest.raises(MCPError) as info:
                await s.call_tool("fact_store", {"action": "add", "content": "x", "category": "nonsense"})
            assert "field 'category'" in info.value.error.message

    anyio.run(main)


def test_a_per_call_user_profile_is_not_mirrored_into_the_shared_provider(hermes_home: Path) -> None:
    """The provider is shared by every client (it was initialised for the server's user), so mirroring
    user_id=alice's USER.md writes into it let client B read Alice's profile through provider tools."""
    install_notes_plugin(hermes_home)

    async def main() -> None:
        async with stdio_session(hermes_home) as s:
            r = await call(s, "memory", {"action": "add", "target": "user", "content": "Alice is allergic to penicillin",
                                         "user_id": "alice"})
            assert r["success"] is True
            r = await call(s, "memory", {"action": "replace", "target": "user", "old_text": "penicillin",
                                         "content": "Alice is allergic to penicillin and latex", "user_id": "alice"})
            assert r["success"] is True
            r = await call(s, "memory", {"target": "user", "user_id": "alice",
                                         "operations": [{"action": "add", "content": "Alice lives in Lyon"}]})
            assert r["success"] is True
            for args in ({"action": "add", "target": "user", "content": "Default user prefers tabs"},
                         {"action": "add", "target": "memory", "content": "Shared note from alice's client",
                          "user_id": "alice"}):
                assert (await call(s, "memory", args))["success"] is True

    anyio.run(main)
    assert "Alice is allergic" in (hermes_home / "memories" / "users" / "alice" / "USER.md").read_text()
    mirrored = [json.loads(line) for line in (hermes_home / "mirrored.jsonl").read_text().splitlines()]
    assert mirrored == [["add", "user", "Default user prefers tabs"],
                        ["add", "memory", "Shared note from alice's client"]]
