"""The MCP surface seen by a real client (the official SDK over stdio): annotations, output schemas
with structured content (failure case C10), the memory tool's `read` action, resource templates
(failure case C12), one argument rule for every tool, and what the guidance says about MCP."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from mcp.shared.exceptions import MCPError

from hermes_memory.mcp.resources import (
    TEMPLATE_SESSION,
    TEMPLATE_SESSION_MESSAGES,
    TEMPLATE_USER_PROFILE,
    BadResource,
    match_uri,
)
from hermes_memory.mcp.server import MCP_BEHAVIOUR, URI_MEMORY_MD, URI_SNAPSHOT, URI_USER_MD
from hermes_memory.memory import MemoryStore
from hermes_memory.sessions.db import SessionDB
from tests.mcp.helpers import HttpServer, http_session, memory_files, read_text, stdio_session, text_of

SESSION_ID = "20250101_abc"


def _holographic(home: Path) -> None:
    (home / "config.yaml").write_text("memory:\n  provider: holographic\n", encoding="utf-8")


def _seed_session(home: Path) -> list[int]:
    """One session ``20250101_abc`` with four messages; returns their ids."""
    db = SessionDB(home / "state.db")
    try:
        db.create_session(session_id=SESSION_ID, source="cli", title="Staging credentials", started_at=1735725600.0)
        db.append_messages(SESSION_ID, [
            {"role": "user", "content": "How do I rotate the staging database credentials?", "timestamp": 1735725601.0},
            {"role": "assistant", "content": "Run scripts/rotate_creds.sh --env staging, then restart pgbouncer.",
             "timestamp": 1735725605.0},
            {"role": "user", "content": "Thanks, the pgbouncer restart fixed it.", "timestamp": 1735725660.0},
            {"role": "assistant", "content": "Glad it worked.", "timestamp": 1735725662.0},
        ])
        return [m["id"] for m in db.get_messages(SESSION_ID)]
    finally:
        db.close()


async def _checked(session: Any, tools: dict[str, Any], name: str, args: dict[str, Any]) -> tuple[bool, dict]:
    """Call a tool; for a non-error result check structuredContent against the listed outputSchema
    and that the text content parses to the same object. Returns (is_error, object)."""
    result = await session.call_tool(name, args)
    assert result.content and result.content[0].type == "text", result
    parsed = json.loads(text_of(result.content[0]))
    assert result.structured_content is not None, (name, args)
    assert parsed == result.structured_content, (name, args)
    if not result.is_error:
        jsonschema.validate(result.structured_content, tools[name].output_schema)
    return result.is_error, parsed


def test_every_tool_lists_annotations_and_an_output_schema(hermes_home: Path) -> None:
    _holographic(hermes_home)

    async def main() -> dict[str, Any]:
        async with stdio_session(hermes_home) as s:
            return {t.name: t for t in (await s.list_tools()).tools}

    tools = anyio.run(main)
    assert set(tools) == {"memory", "session_search", "fact_store", "fact_feedback"}
    for name, tool in tools.items():
        hints = tool.annotations
        assert hints is not None, name
        assert None not in (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint), name
        assert tool.output_schema is not None and tool.output_schema["type"] == "object", name
        jsonschema.Draft202012Validator.check_schema(tool.output_schema)
    assert tools["session_search"].annotations.read_only_hint is True
    assert tools["memory"].annotations.read_only_hint is False and tools["memory"].annotations.destructive_hint
    assert tools["fact_store"].annotations.destructive_hint is True  # remove deletes
    assert tools["fact_feedback"].annotations.destructive_hint is False


def test_every_mode_of_every_tool_matches_its_output_schema_and_refusals_are_errors(hermes_home: Path) -> None:
    """Failure case C10: each call with isError=false validates; refusals come with isError=true."""
    _holographic(hermes_home)
    ids = _seed_session(hermes_home)

    async def main() -> list[tuple[str, str, bool, dict]]:
        out = []
        async with stdio_session(hermes_home) as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            calls: list[tuple[str, str, dict[str, Any]]] = [
                ("memory", "add", {"action": "add", "target": "memory", "content": "Deploys use make release"}),
                ("memory", "duplicate add", {"action": "add", "target": "memory", "content": "Deploys use make release"}),
                ("memory", "replace", {"action": "replace", "target": "memory", "old_text": "make release",
                                       "content": "Deploys use make ship"}),
                ("memory", "batch", {"target": "user", "operations": [{"action": "add", "content": "Prefers tabs"}]}),
                ("memory", "remove", {"action": "remove", "target": "user", "old_text": "tabs"}),
                ("memory", "read", {"action": "read"}),
                ("memory", "read one store", {"action": "read", "target": "memory"}),
                ("memory", "refusal", {"action": "remove", "target": "memory", "old_text": "no such entry"}),
                ("session_search", "discovery", {"query": "pgbouncer"}),
                ("session_search", "scroll", {"session_id": SESSION_ID, "around_message_id": ids[1]}),
                ("session_search", "read", {"session_id": SESSION_ID}),
                ("session_search", "browse", {}),
                ("session_search", "refusal", {"session_id": "no-such-session"}),
                ("fact_store", "add", {"action": "add", "content": "The staging box runs Debian",
                                       "entities": ["staging box"]}),
                ("fact_store", "search", {"action": "search", "query": "Debian"}),
                ("fact_store", "probe", {"action": "probe", "entity": "staging box"}),
                ("fact_store", "list", {"action": "list"}),
                ("fact_store", "update", {"action": "update", "fact_id": 1, "trust_delta": 0.1}),
                ("fact_feedback", "helpful", {"action": "helpful", "fact_id": 1}),
                ("fact_store", "remove", {"action": "remove", "fact_id": 1}),
                ("fact_store", "refusal", {"action": "remove", "fact_id": 1}),
            ]
            for name, label, args in calls:
                is_error, parsed = await _checked(s, tools, name, args)
                out.append((name, label, is_error, parsed))
        return out

    results = anyio.run(main)
    errors = {(name, label) for name, label, is_error, _ in results if is_error}
    assert errors == {("memory", "refusal"), ("session_search", "refusal"), ("fact_store", "refusal")}
    modes = [p.get("mode") for name, _, _, p in results if name == "session_search" and p.get("success")]
    assert modes == ["discovery", "scroll", "read", "browse"]
    by_label = {(n, label): p for n, label, _, p in results}
    assert by_label[("session_search", "discovery")]["count"] == 1
    assert by_label[("fact_store", "probe")]["count"] == 1  # the entity given to add was linked


def test_read_returns_this_sessions_frozen_snapshot_and_the_live_entries(hermes_home: Path) -> None:
    seed = MemoryStore(hermes_home / "memories")
    seed.load_from_disk()
    seed.add("memory", "Project uses Python 3.12")
    seed.add("user", "Name is Dana")

    async def main() -> tuple[dict, dict, str]:
        async with stdio_session(hermes_home) as s:
            await s.call_tool("memory", {"action": "add", "target": "memory", "content": "CI runs on push"})
            other = MemoryStore(hermes_home / "memories")  # another client writes meanwhile
            other.load_from_disk()
            other.add("user", "Prefers short answers")
            both = json.loads(text_of((await s.call_tool("memory", {"action": "read"})).content[0]))
            one = json.loads(text_of((await s.call_tool("memory", {"action": "read", "target": "user"})).content[0]))
            return both, one, await read_text(s, URI_SNAPSHOT)

    both, one, snapshot_resource = anyio.run(main)
    assert both["success"] is True and both["action"] == "read"
    assert both["snapshot"] == snapshot_resource  # the same frozen text the resource serves
    assert "Project uses Python 3.12" in both["snapshot"] and "Name is Dana" in both["snapshot"]
    assert "CI runs on push" not in both["snapshot"] and "Prefers short answers" not in both["snapshot"]
    assert both["memory"]["entries"] == ["Project uses Python 3.12", "CI runs on push"]
    assert both["user"]["entries"] == ["Name is Dana", "Prefers short answers"]
    assert both["memory"]["entry_count"] == 2 and both["memory"]["limit"] == 2200
    assert both["memory"]["usage"].endswith("/2,200 chars")
    assert set(one) >= {"user", "snapshot"} and "memory" not in one


def test_read_refuses_write_fields_and_writes_still_need_a_target(hermes_home: Path) -> None:
    async def main() -> list[MCPError]:
        errors = []
        async with stdio_session(hermes_home) as s:
            for args in ({"action": "read", "content": "x"}, {"action": "read", "operations": []},
                         {"action": "add", "content": "no target"}, {"action": "read", "target": "nope"}):
                with pytest.raises(MCPError) as info:
                    await s.call_tool("memory", args)
                errors.append(info.value)
        return errors

    before = memory_files(hermes_home)
    errors = anyio.run(main)
    assert [e.error.code for e in errors] == [-32602] * 4
    assert [e.error.data["fields"] for e in errors] == [["content"], ["operations"], ["target"], ["target"]]
    assert memory_files(hermes_home) == before


@pytest.mark.parametrize(("uri", "handler", "variables", "params"), [
    ("hermes-memory://memory/snapshot", "snapshot", {}, {}),
    ("hermes-memory://memory/MEMORY.md", "memory_md", {}, {}),
    ("hermes-memory://memory/USER.md", "user_md", {}, {}),
    ("hermes-memory://memory/users/alice/USER.md", "user_profile", {"user_id": "alice"}, {}),
    ("hermes-memory://sessions/20250101_abc", "session", {"session_id": "20250101_abc"}, {}),
    ("hermes-memory://sessions/20250101_abc/messages", "session_messages", {"session_id": "20250101_abc"}, {}),
    ("hermes-memory://sessions/20250101_abc/messages?around=5", "session_messages", {"session_id": "20250101_abc"},
     {"around": 5}),
    ("hermes-memory://sessions/20250101_abc/messages?around=5&window=2", "session_messages",
     {"session_id": "20250101_abc"}, {"around": 5, "window": 2}),
    ("hermes-memory://sessions/cc-0f6c%3Ax/messages?query=pg%20bouncer&limit=3", "session_messages",
     {"session_id": "cc-0f6c:x"}, {"query": "pg bouncer", "limit": 3}),
])
def test_each_uri_maps_to_exactly_one_handler_with_its_variables(uri: str, handler: str, variables: dict,
                                                                  params: dict) -> None:
    match = match_uri(uri)
    assert (match.handler, match.variables, match.params) == (handler, variables, params)


@pytest.mark.parametrize(("uri", "field"), [
    ("hermes-memory://sessions/..%2F..%2Fetc", "session_id"),
    ("hermes-memory://sessions/..", "session_id"),
    ("hermes-memory://sessions/a/b/c", "uri"),
    ("hermes-memory://memory/nope", "uri"),
    ("hermes-memory://memory/users/..%2F..%2Fetc/USER.md", "user_id"),
    ("hermes-memory://memory/users/a%00b/USER.md", "user_id"),
    ("hermes-memory://memory/users/%FF/USER.md", "user_id"),  # not UTF-8 once decoded: -32602, not -32603
    ("hermes-memory://sessions/%C3", "session_id"),
    ("hermes-memory://memory/snapshot?x=1", "uri"),
    ("hermes-memory://sessions/s1/messages?around=five", "around"),
    ("hermes-memory://sessions/s1/messages?window=3", "window"),
    ("hermes-memory://sessions/s1/messages?around=1&window=99", "window"),
    ("hermes-memory://sessions/s1/messages?around=1&around=2", "around"),
    ("hermes-memory://sessions/s1/messages?query=a&around=1", "around"),
    ("hermes-memory://sessions/s1/messages?sort=newest", "sort"),
    ("file:///etc/passwd", "uri"),
    ("hermes-memory://other/x", "uri"),
])
def test_unknown_or_traversal_uris_are_refused(uri: str, field: str) -> None:
    with pytest.raises(BadResource) as info:
        match_uri(uri)
    assert info.value.field == field


def test_resource_templates_are_listed_and_read_over_mcp(hermes_home: Path) -> None:
    """Failure case C12 through a real client: templates/list lists the templates (resources/list
    does not), each template reads, and unknown or traversal URIs are -32602 with no contents."""
    ids = _seed_session(hermes_home)
    alice = MemoryStore(hermes_home / "memories", user_id="alice")
    alice.load_from_disk()
    alice.add("user", "Alice works nights")

    async def main() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with stdio_session(hermes_home) as s:
            out["templates"] = [t.uri_template for t in (await s.list_resource_templates()).resource_templates]
            out["resources"] = [str(r.uri) for r in (await s.list_resources()).resources]
            base = f"hermes-memory://sessions/{SESSION_ID}"
            out["profile"] = await read_text(s, "hermes-memory://memory/users/alice/USER.md")
            out["session"] = json.loads(await read_text(s, base))
            out["all"] = json.loads(await read_text(s, base + "/messages"))
            out["window"] = json.loads(await read_text(s, f"{base}/messages?around={ids[1]}&window=1"))
            out["search"] = json.loads(await read_text(s, base + "/messages?query=pgbouncer"))
            out["errors"] = []
            for bad in ("hermes-memory://sessions/..%2F..%2Fetc", "hermes-memory://memory/nope",
                        "hermes-memory://sessions/unknown-session", "hermes-memory://memory/users/..%2Fx/USER.md",
                        f"{base}/messages?around=999999"):
                with pytest.raises(MCPError) as info:
                    await s.read_resource(bad)
                out["errors"].append(info.value.error)
        return out

    out = anyio.run(main)
    assert out["templates"] == [TEMPLATE_USER_PROFILE, TEMPLATE_SESSION, TEMPLATE_SESSION_MESSAGES]
    assert out["resources"] == [URI_SNAPSHOT, URI_MEMORY_MD, URI_USER_MD]
    assert out["profile"] == "Alice works nights"
    assert out["session"]["session"]["session_id"] == SESSION_ID
    assert out["session"]["session"]["title"] == "Staging credentials"
    assert [m["message_id"] for m in out["session"]["messages"]] == ids
    assert out["session"]["messages"][1]["content"].startswith("Run scripts/rotate_creds.sh")
    assert out["all"]["mode"] == "all" and out["all"]["count"] == 4
    assert [m["message_id"] for m in out["window"]["messages"]] == ids[0:3]
    assert {m["message_id"] for m in out["search"]["messages"]} == {ids[1], ids[2]}
    assert [e.code for e in out["errors"]] == [-32602] * 5
    assert all("root:" not in e.message for e in out["errors"])  # never file contents


def test_a_fixed_user_server_serves_only_that_users_profile_template(hermes_home: Path) -> None:
    async def main() -> tuple[str, MCPError]:
        async with stdio_session(hermes_home, "--user-id", "bob") as s:
            await s.call_tool("memory", {"action": "add", "target": "user", "content": "Bob likes tea"})
            own = await read_text(s, "hermes-memory://memory/users/bob/USER.md")
            with pytest.raises(MCPError) as info:
                await s.read_resource("hermes-memory://memory/users/alice/USER.md")
            return own, info.value

    own, refused = anyio.run(main)
    assert own == "Bob likes tea"
    assert refused.error.code == -32602 and refused.error.data["field"] == "user_id"
    assert not (hermes_home / "memories" / "users" / "alice").exists()


def test_provider_tools_refuse_unknown_and_mistyped_arguments_naming_the_field(hermes_home: Path) -> None:
    _holographic(hermes_home)

    async def main() -> list[MCPError]:
        errors = []
        async with stdio_session(hermes_home) as s:
            for args in ({"action": "list", "bogus": 1}, {"action": "add", "content": 5},
                         {"action": "add", "content": "x", "entities": "not-a-list"},
                         {"action": "frobnicate"}):
                with pytest.raises(MCPError) as info:
                    await s.call_tool("fact_store", args)
                errors.append(info.value)
            with pytest.raises(MCPError) as info:
                await s.call_tool("fact_feedback", {"action": "helpful", "fact_id": "one"})
            errors.append(info.value)
        return errors

    errors = anyio.run(main)
    assert [e.error.code for e in errors] == [-32602] * 5
    assert [e.error.data["fields"] for e in errors] == [["bogus"], ["content"], ["entities"], ["action"], ["fact_id"]]
    con = sqlite3.connect(hermes_home / "memory_store.db")
    try:
        assert con.execute("SELECT COUNT(*) FROM facts").fetchone()[0] == 0
    finally:
        con.close()


def test_the_holographic_provider_itself_refuses_unknown_arguments_and_links_given_entities(hermes_home: Path) -> None:
    """The agent loop calls the provider without the MCP checks: the provider checks on its own."""
    from hermes_memory.plugins.holographic import HolographicProvider

    provider = HolographicProvider(str(hermes_home))
    provider.initialize("s1", hermes_home=str(hermes_home))
    try:
        refused = json.loads(provider.handle_tool_call("fact_store", {"action": "add", "content": "x", "entitys": ["a"]}))
        assert refused["fields"] == ["entitys"] and "entitys" in refused["error"]
        assert json.loads(provider.handle_tool_call("fact_store", {"action": "list"}))["count"] == 0

        added = json.loads(provider.handle_tool_call(
            "fact_store", {"action": "add", "content": "the deploy box runs debian", "entities": ["deploy box"]}))
        assert added["status"] == "added" and added["entities"] == ["deploy box"]
        again = json.loads(provider.handle_tool_call(
            "fact_store", {"action": "add", "content": "the deploy box runs debian", "entities": ["ops team"]}))
        assert again == {"fact_id": added["fact_id"], "status": "exists", "entities": ["deploy box", "ops team"]}
        for entity in ("deploy box", "ops team"):
            probe = json.loads(provider.handle_tool_call("fact_store", {"action": "probe", "entity": entity}))
            assert [r["fact_id"] for r in probe["results"]] == [added["fact_id"]], entity
        reason = json.loads(provider.handle_tool_call(
            "fact_store", {"action": "reason", "entities": ["deploy box", "ops team"]}))
        assert [r["fact_id"] for r in reason["results"]] == [added["fact_id"]]

        # a field the action does not use is refused, not ignored; update links entities too
        unused = json.loads(provider.handle_tool_call("fact_store", {"action": "list", "entities": ["x"]}))
        assert unused["fields"] == ["entities"] and "not used by fact_store action 'list'" in unused["error"]
        updated = json.loads(provider.handle_tool_call(
            "fact_store", {"action": "update", "fact_id": added["fact_id"], "entities": ["Debian"]}))
        assert updated["updated"] is True
        probe = json.loads(provider.handle_tool_call("fact_store", {"action": "probe", "entity": "Debian"}))
        assert [r["fact_id"] for r in probe["results"]] == [added["fact_id"]]
    finally:
        provider.shutdown()


def test_instructions_and_guidance_say_nothing_is_automatic_over_mcp(hermes_home: Path) -> None:
    from mcp.client.stdio import stdio_client

    from mcp import ClientSession, StdioServerParameters
    from tests.mcp.helpers import child_env, serve_argv

    async def main() -> tuple[str, str]:
        argv = serve_argv(hermes_home)
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=child_env())
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            init = await s.initialize()
            prompt = text_of((await s.get_prompt("memory_guidance")).messages[0].content)
            return init.instructions or "", prompt

    instructions, prompt = anyio.run(main)
    for text in (instructions, prompt):
        assert MCP_BEHAVIOUR in text
        assert "nothing is recalled" in text and "hooks install claude-code" in text
        assert "action `read`" in text


def test_each_http_session_reads_its_own_snapshot_through_the_read_action(hermes_home: Path) -> None:
    MemoryStore(hermes_home / "memories").add("memory", "Known at server start")
    with HttpServer(hermes_home) as srv:

        async def main() -> tuple[dict, dict, str]:
            async with http_session(srv.url) as first:
                await first.call_tool("memory", {"action": "read"})  # first session's snapshot is taken
                async with http_session(srv.url) as second:
                    await second.call_tool("memory", {"action": "add", "target": "memory", "content": "Added later"})
                r1 = json.loads(text_of((await first.call_tool("memory", {"action": "read"})).content[0]))
                async with http_session(srv.url) as third:
                    r3 = json.loads(text_of((await third.call_tool("memory", {"action": "read"})).content[0]))
                    return r1, r3, await read_text(third, URI_SNAPSHOT)

        first, third, third_resource = anyio.run(main)
    assert "Known at server start" in first["snapshot"] and "Added later" not in first["snapshot"]
    assert first["memory"]["entries"] == ["Known at server start", "Added later"]  # live
    assert "Added later" in third["snapshot"] and third["snapshot"] == third_resource
