"""One redactor (hermes_memory.redact) for text sent to providers and to the summariser."""

from __future__ import annotations

from hermes_memory.context import summary
from hermes_memory.providers import manager
from hermes_memory.redact import redact_secrets

PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIabc\n-----END RSA PRIVATE KEY-----"


def test_providers_and_summariser_share_one_redactor():
    assert manager.redact_secrets is redact_secrets
    assert summary.redact_secrets is redact_secrets


def test_every_family_of_secret_is_replaced_and_prose_is_not():
    secrets = ["sk-ant-" + "a1B2" * 6, "pk-" + "x" * 20, "ghs_" + "A" * 24, "github_pat_" + "b" * 24,
               "xoxo-1234567890ab", "AKIA" + "A" * 16, "AIza" + "c" * 32]
    for secret in secrets:
        assert redact_secrets(f"use {secret} now") == "use [REDACTED] now", secret
    assert redact_secrets("Authorization: Bearer abcdefghijklmnop1234") == "Authorization: Bearer [REDACTED]"
    assert redact_secrets("token: abcdefgh123 and password=hunter22") == "token: [REDACTED] and password=[REDACTED]"
    assert redact_secrets(f"key {PEM} end") == "key [REDACTED PRIVATE KEY] end"
    assert redact_secrets("-----BEGIN PRIVATE KEY----- never ends") == "-----BEGIN PRIVATE KEY----- never ends"
    assert redact_secrets("The user prefers dark mode; the key point is tokens.") == (
        "The user prefers dark mode; the key point is tokens.")
    assert redact_secrets(None) == ""
