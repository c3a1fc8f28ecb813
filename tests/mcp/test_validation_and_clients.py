"""Argument validation and client snippets, in-process (no server needed)."""

from __future__ import annotations

import json
import shlex
import tomllib

import pytest

from hermes_memory.mcp.clients import TOKEN_ENV, all_snippets
from hermes_memory.mcp.server import endpoint_url, is_loopback, tool_result
from hermes_memory.mcp.validation import InvalidArguments, check_arguments
from tests.mcp.helpers import text_of

SCHEMA = {
    "type": "object",
    "properties": {
        "target": {"type": "string", "enum": ["memory", "user"]},
        "content": {"type": "string"},
        "operations": {"type": "array", "items": {
            "type": "object", "properties": {"action": {"type": "string", "enum": ["add", "remove"]}},
            "required": ["action"]}},
    },
    "required": ["target"],
}


def test_valid_arguments_come_back_as_a_plain_dict() -> None:
    assert check_arguments("memory", SCHEMA, {"target": "user", "content": "x"}) == {"target": "user", "content": "x"}
    with pytest.raises(InvalidArguments):
        check_arguments("memory", SCHEMA, None)  # None is {} and target is required


@pytest.mark.parametrize(
    ("args", "fields"),
    [
        ({}, ["target"]),
        ({"target": "nope"}, ["target"]),
        ({"target": "memory", "content": ["x"]}, ["content"]),
        ({"target": "memory", "operations": [{"action": "add"}, {}]}, ["operations[1].action"]),
        ({"target": "memory", "operations": [{"action": "zap"}]}, ["operations[0].action"]),
        ({"target": 1, "content": 2}, ["content", "target"]),
    ],
)
def test_every_invalid_field_is_named(args: dict, fields: list[str]) -> None:
    with pytest.raises(InvalidArguments) as info:
        check_arguments("memory", SCHEMA, args)
    assert sorted(info.value.fields) == sorted(fields)
    assert str(info.value).startswith(f"invalid arguments for tool 'memory': field '{info.value.fields[0]}'")


def test_strict_mode_names_undeclared_fields_but_allows_aliases() -> None:
    with pytest.raises(InvalidArguments) as info:
        check_arguments("memory", SCHEMA, {"target": "memory", "conten": "x"}, strict=True)
    assert info.value.fields == ["conten"]
    ok = check_arguments("memory", SCHEMA, {"target": "memory", "new_text": "x"}, strict=True,
                         allowed_extra=["new_text"])
    assert ok["new_text"] == "x"
    assert check_arguments("memory", SCHEMA, {"target": "memory", "extra": 1}) == {"target": "memory", "extra": 1}


def test_a_broken_provider_schema_is_reported_not_raised_as_a_crash() -> None:
    with pytest.raises(InvalidArguments) as info:
        check_arguments("fact_store", {"type": "object", "properties": {"a": {"type": "no-such-type"}}}, {"a": 1})
    assert info.value.fields == ["(schema)"]


def test_tool_results_keep_the_json_text_and_flag_failures() -> None:
    ok = tool_result('{"success": true, "message": "Entry added."}')
    assert text_of(ok.content[0]) == '{"success": true, "message": "Entry added."}'
    assert ok.structured_content == {"success": True, "message": "Entry added."} and ok.is_error is False
    assert tool_result('{"success": false, "error": "No entry matched"}').is_error is True
    assert tool_result('{"error": "provider down"}').is_error is True
    plain = tool_result("not json")
    assert plain.structured_content is None and plain.is_error is False


def test_a_tool_with_an_output_schema_always_sends_an_object_as_structured_content() -> None:
    """Failure case C10: a provider answering with a list or plain text still gets structuredContent,
    and the text content parses to the same object."""
    for text, expected in (('[1, 2]', {"result": [1, 2]}), ("plain words", {"result": "plain words"}),
                           ('"a string"', {"result": "a string"}), ('{"count": 2}', {"count": 2})):
        result = tool_result(text, structured=True)
        assert result.structured_content == expected and result.is_error is False, text
        assert json.loads(text_of(result.content[0])) == expected, text


def test_loopback_detection_and_urls() -> None:
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "192.168.1.5", "example.com"))
    assert endpoint_url("127.0.0.1", 8765) == "http://127.0.0.1:8765/mcp"
    assert endpoint_url("::1", 9000) == "http://[::1]:9000/mcp"


@pytest.mark.parametrize("token", [False, True])
def test_client_snippets_parse_in_each_clients_format_and_never_hold_the_secret(token: bool) -> None:
    url = "http://127.0.0.1:8765/mcp"
    stdio = ["/opt/venv/bin/hermes-memory", "--home", "/home/me/.hermes", "serve", "--transport", "stdio"]
    snippets = {s.client: s for s in all_snippets(url, token=token, stdio_command=stdio)}
    assert list(snippets) == ["Claude Code", "Cursor", "Codex CLI", "Claude Desktop"]

    argv = shlex.split(snippets["Claude Code"].text)
    assert argv[:7] == ["claude", "mcp", "add", "--scope", "user", "--transport", "http"]
    assert argv[7:9] == ["hermes-memory", url]

    cursor = json.loads(snippets["Cursor"].text)["mcpServers"]["hermes-memory"]
    assert cursor["url"] == url

    codex = tomllib.loads(snippets["Codex CLI"].text)["mcp_servers"]["hermes-memory"]
    assert codex["url"] == url

    desktop = json.loads(snippets["Claude Desktop"].text)["mcpServers"]["hermes-memory"]
    assert [desktop["command"], *desktop["args"]] == stdio

    if token:
        assert argv[9:] == ["--header", f"Authorization: Bearer ${TOKEN_ENV}"]
        assert cursor["headers"] == {"Authorization": f"Bearer ${{env:{TOKEN_ENV}}}"}
        assert codex["bearer_token_env_var"] == TOKEN_ENV
    else:
        assert len(argv) == 9 and "headers" not in cursor and "bearer_token_env_var" not in codex


@pytest.mark.parametrize("plugin", ["mem0", "honcho", "hindsight", "supermemory", "retaindb", "openviking",
                                    "byterover", "holographic"])
def test_every_bundled_provider_tool_is_described_for_mcp(plugin: str) -> None:
    """A bundled provider's tool gets real hints (not the may-destroy defaults) and an object output schema."""
    import importlib

    from hermes_memory.mcp.schemas import (
        BUNDLED_TOOL_HINTS,
        UNKNOWN_TOOL_HINTS,
        provider_metadata,
        tool_extras,
    )
    from hermes_memory.providers.base import MemoryProvider

    mod = importlib.import_module(f"hermes_memory.plugins.{plugin}")
    (cls,) = [v for k, v in vars(mod).items()
              if isinstance(v, type) and issubclass(v, MemoryProvider) and v is not MemoryProvider]
    provider = cls()
    meta = provider_metadata(provider)
    for schema in provider.get_tool_schemas():
        name = schema["name"]
        assert name in meta or name in BUNDLED_TOOL_HINTS, f"{plugin} tool {name} has no MCP hints"
        hints, output = tool_extras("provider", name, meta)
        assert hints != UNKNOWN_TOOL_HINTS, name
        assert output["type"] == "object"
