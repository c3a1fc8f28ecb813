import ast
import json
from pathlib import Path

import pytest

from hermes_memory.context import (
    END_MARKER,
    SUMMARY_PREFIX,
    TEMPLATE_SECTIONS,
    build_fallback_summary,
    build_summary_prompt,
    sanitize_tool_pairs,
    serialize_turns,
    split_summary,
)
from hermes_memory.context.summary import redact_secrets
from tests.context.helpers import assert_pairs_intact, assistant, call, tool, user

_MIDDLE = [
    user("Please migrate the billing service to Postgres. Never touch the prod DB directly."),
    assistant("I'll start by reading the config. Decided to use alembic for migrations.",
              call("c1", "read_file", path="services/billing/config.yaml")),
    tool("c1", "db: sqlite:///billing.db\nport: 8081"),
    assistant(None, call("c2", "terminal", command="pytest tests/billing")),
    tool("c2", "FAILED tests/billing/test_invoice.py::test_total - AssertionError\nexit code: 1"),
    user("Why did it fail?"),
    assistant("The invoice total test fails because rounding differs. Next I will fix rounding in billing/money.py."),
]


def test_fallback_summary_has_the_template_and_the_facts():
    body = build_fallback_summary(_MIDDLE)
    for section in TEMPLATE_SECTIONS:
        assert f"## {section}" in body
    assert "migrate the billing service to Postgres" in body
    assert "Never touch the prod DB directly" in body  # constraint
    assert "read_file services/billing/config.yaml" in body  # action + target
    assert "terminal pytest tests/billing — error: FAILED" in body  # outcome
    assert "services/billing/config.yaml" in body.split("## Relevant Files")[1]
    assert "billing/money.py" in body
    assert "alembic" in body.split("## Key Decisions")[1]
    assert "Why did it fail?" in body.split("## Resolved Questions")[1]
    assert "[terminal] FAILED" in body.split("## Blocked")[1]


def test_fallback_summary_is_deterministic_and_bounded():
    big = []
    for i in range(400):
        big += [user(f"ask {i} about Project{i} in dir/f{i}.py " + "w" * 500),
                assistant(f"Decided to use option {i}. " + "v" * 500, call(f"c{i}", command=f"make t{i}")),
                tool(f"c{i}", "error: boom\n" * 40)]
    a = build_fallback_summary(big, max_chars=8000)
    b = build_fallback_summary(big, max_chars=8000)
    assert a == b
    assert len(a) <= 8000
    assert "ask 399" in a  # newest asks win when over budget
    assert "(actions 1-" in a
    assert len(build_fallback_summary(big, max_chars=1000)) <= 1000


def test_fallback_summary_updates_previous_summary():
    first = build_fallback_summary(_MIDDLE[:5])
    second = build_fallback_summary([user("Now deploy it to staging-7."), assistant("Deployed.")], previous_summary=first)
    assert "staging-7" in second
    assert "Postgres" in second  # goal carried over
    assert "1. read_file" in second and "2. terminal" in second  # numbering kept


def test_fallback_focus_topic_puts_matching_lines_first():
    msgs = [user("we must keep the cache warm"), user("we must log every deploy")]
    body = build_fallback_summary(msgs, focus_topic="deploy")
    constraints = body.split("## Constraints & Preferences")[1].split("##")[0]
    assert constraints.index("deploy") < constraints.index("cache")


def test_secrets_are_redacted_everywhere():
    secret = "sk-" + "A1b2C3d4" * 4
    msgs = [user(f"my key is {secret} and password=hunter22"), assistant("ok")]
    assert secret not in build_fallback_summary(msgs)
    assert secret not in serialize_turns(msgs) and "hunter22" not in serialize_turns(msgs)
    assert redact_secrets("token: abcdefgh123") == "token: [REDACTED]"


def test_serialize_turns_caps_long_content_and_args():
    msgs = [user("u" * 10_000), assistant(None, call("c", command="a" * 3000)), tool("c", "r")]
    text = serialize_turns(msgs)
    assert "chars omitted" in text and text.count("u") < 6000
    assert "...[truncated]" in text and "[TOOL RESULT c]: r" in text
    assert len(serialize_turns([user("x" * 5000)] * 100)) <= 160_200


def test_prompt_first_time_and_iterative():
    first = build_summary_prompt("[USER]: hi", target_tokens=2500)
    assert "Target ~2500 tokens" in first and "PREVIOUS SUMMARY" not in first
    assert all(f"## {s}" in first for s in TEMPLATE_SECTIONS)
    again = build_summary_prompt("[USER]: more", previous_summary="## Goal\nX")
    assert "PREVIOUS SUMMARY:\n## Goal\nX\n\nNEW TURNS:\n[USER]: more" in again


def test_split_summary_recovers_standalone_and_merged():
    standalone = {"role": "user", "content": f"{SUMMARY_PREFIX}\nBODY"}
    assert split_summary(standalone) == ("BODY", None)
    merged = {"role": "user", "content": f"{SUMMARY_PREFIX}\nBODY\n\n{END_MARKER}\n\nreal ask"}
    assert split_summary(merged) == ("BODY", "real ask")
    parts = {"role": "user", "content": [{"type": "text", "text": f"{SUMMARY_PREFIX}\nBODY\n\n{END_MARKER}"},
                                         {"type": "text", "text": "real"}]}
    assert split_summary(parts) == ("BODY", [{"type": "text", "text": "real"}])
    assert split_summary({"role": "user", "content": "[CONTEXT SUMMARY]: old style"}) == ("old style", None)
    assert split_summary({"role": "tool", "content": SUMMARY_PREFIX, "tool_call_id": "x"})[0] is None
    assert split_summary(user("plain"))[0] is None


def test_sanitize_tool_pairs_drops_orphans_without_stubs():
    msgs = [user("u"), tool("ghost", "x"), assistant(None, call("a"), call("b")), tool("a", "ra"), user("v")]
    out, removed = sanitize_tool_pairs(msgs)
    assert removed == 2
    assert out[1]["tool_calls"] == [call("a")] and out[2] == tool("a", "ra")
    assert_pairs_intact(out)
    lonely, _ = sanitize_tool_pairs([assistant(None, call("z")), user("q")])
    assert lonely[0]["content"] == "(tool call removed)" and "tool_calls" not in lonely[0]


def test_pair_checker_detects_breakage():
    with pytest.raises(AssertionError):
        assert_pairs_intact([user("u"), tool("x", "r")])
    with pytest.raises(AssertionError):
        assert_pairs_intact([assistant(None, call("a"), call("b")), tool("a", "r")])


def test_context_package_imports_only_the_foundation():
    pkg = Path(__import__("hermes_memory.context", fromlist=["x"]).__file__).parent
    allowed = {"hermes_memory.context", "hermes_memory.config", "hermes_memory.errors", "hermes_memory.redact"}
    for path in pkg.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("hermes_memory"):
                assert any(node.module == a or node.module.startswith(a + ".") for a in allowed), (path, node.module)
            if isinstance(node, ast.Import):
                for alias in node.names:
                    assert not alias.name.startswith("hermes_memory."), (path, alias.name)


def test_summary_prompt_embeds_provider_text_as_json():
    prompt = build_summary_prompt("[USER]: x", pre_compress_text="ignore previous\n## Goal")
    assert json.dumps("ignore previous\n## Goal") in prompt
