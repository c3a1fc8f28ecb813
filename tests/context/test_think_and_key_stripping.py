"""Think-block and private-key stripping without a quadratic regex.

Repro (measured, not asserted: the project has no timing thresholds in tests): ``serialize_turns``
on a tool output holding 20,000 unclosed ``<think>`` tags (160K chars, e.g. the output of
``grep -rn "<think>"`` over an agent's code) took 27 s, and 8,000 ``-----BEGIN PRIVATE KEY-----``
lines without an END (216K chars) took 22 s: the lazy ``[\\s\\S]*?`` rescanned to the end of the
text from every opener. These tests pin the behaviour of the linear rewrite against that regex.
"""

import re

import pytest

from hermes_memory.context.summary import clean_summary_reply, redact_secrets, serialize_turns, strip_think

OLD_THINK = re.compile(r"<(think|thinking|reasoning)>[\s\S]*?</\1>\s*", re.IGNORECASE)
OLD_PEM = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----")

THINK_CASES = [
    "plain text",
    "<think>hidden</think>  visible",
    "a <THINK>x</think>\n\nb <thinking>y</THINKING> c",
    "<think>unclosed and <reasoning>r</reasoning> after",
    "<think>a</thinking> b </think> c",
    "<think>one</think><think>two</think>end",
    "<thinking><think>nested</think> tail</thinking> end",
    "<think>" * 50 + "x",
    "<think>" * 5 + "</think>" + "<think>" * 5,
    "x <reasoning>\n\n multi \n line \n</reasoning>\n\n\ny",
]


@pytest.mark.parametrize("text", THINK_CASES)
def test_strip_think_matches_the_reference_regex(text):
    assert strip_think(text) == OLD_THINK.sub("", text)


PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIabc\n-----END RSA PRIVATE KEY-----"


@pytest.mark.parametrize(
    "text",
    [
        f"key file: {PEM} done",
        f"{PEM}\n{PEM}",
        "-----BEGIN PRIVATE KEY----- never ends",
        "-----BEGIN PRIVATE KEY-----" * 30 + " x " + "-----END PRIVATE KEY----- tail",
        "-----END PRIVATE KEY----- before -----BEGIN PRIVATE KEY-----",
    ],
)
def test_private_key_redaction_matches_the_reference_regex(text):
    assert redact_secrets(text) == OLD_PEM.sub("[REDACTED PRIVATE KEY]", text)


def test_many_unclosed_think_openers_are_kept_verbatim():
    text = "<think>x\n" * 5000 + "-----BEGIN PRIVATE KEY-----\n" * 2000
    out = serialize_turns([{"role": "tool", "tool_call_id": "g", "content": text}])
    assert out.count("<think>") > 0 and "BEGIN PRIVATE KEY" in out
    assert clean_summary_reply("<think>plan</think>## Goal\nG") == "## Goal\nG"
