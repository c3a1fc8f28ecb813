"""Span-preserving settings edits: for many layouts, adding our groups then removing them gives back
the original text byte for byte, and the edited text parses to the original plus our groups."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_memory.hooks.clients import CLAUDE_CODE
from hermes_memory.hooks.jsonedit import parse
from hermes_memory.hooks.settings import add_groups, planned_groups, remove_ours

LAYOUTS = {
    "empty object": "{}",
    "empty object, newline": "{}\n",
    "empty with whitespace": "{ \n }",
    "compact": '{"model":"opus","hooks":{"Stop":[{"hooks":[{"type":"command","command":"a"}]}]}}',
    "two-space": json.dumps({"model": "opus", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "guard"}]}]}}, indent=2) + "\n",
    "four-space": json.dumps({"hooks": {}, "env": {"A": "b"}}, indent=4),
    "tabs": '{\n\t"hooks": {\n\t\t"Stop": []\n\t},\n\t"x": [1, 2]\n}\n',
    "crlf": '{\r\n  "model": "opus",\r\n  "hooks": {\r\n    "SessionEnd": [\r\n      {"hooks": []}\r\n    ]\r\n  }\r\n}\r\n',
    "bom": '\ufeff{\n  "model": "opus"\n}\n',
    "inline arrays in pretty file": '{\n  "hooks": {\n    "SessionStart": [{"matcher": "compact", "hooks": []}]\n  }\n}\n',
    "unicode and escapes": '{\n  "name": "Zo\\u00eb \\"q\\" \\\\ \u00e9\u6f22",\n  "n": -1.5e-3\n}',
    "hooks last, no trailing newline": '{"a": true, "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", '
                                       '"command": "mine"}]}]}}',
}


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_add_then_remove_is_byte_identical_and_keeps_every_foreign_value(name: str) -> None:
    text = LAYOUTS[name]
    groups = planned_groups(CLAUDE_CODE, executable="/venv/bin/python")
    edited, empty = add_groups(text, groups, Path("settings.json"))
    body = edited.lstrip("\ufeff")
    parse(body)
    before, after = json.loads(text.lstrip("\ufeff")), json.loads(body)
    for key, value in before.items():
        if key != "hooks":
            assert after[key] == value
    for event, prior in (before.get("hooks") or {}).items():
        assert after["hooks"][event][: len(prior)] == prior
    for event, group in groups:
        assert after["hooks"][event][-1] == group
    restored, events = remove_ours(edited, empty)
    assert restored == text
    assert sorted(events) == sorted(e for e, _ in groups)


def test_a_document_that_is_not_plain_json_is_rejected() -> None:
    for bad in ('{"a": 1,}', "// c\n{}", "{'a': 1}", '{"a": 1} {"b": 2}', '{"a": NaN}'):
        with pytest.raises(ValueError):
            parse(bad)
