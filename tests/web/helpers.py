"""Constants and a helper shared by the dashboard tests (the fixtures are in conftest.py)."""

from __future__ import annotations

import re

TOKEN = "Tok-dashboard-5f1c9e"
"""The dashboard token the auth and sign-in tests start ``hermes-memory ui`` with."""

HOSTILE_MEMORY = ['<img src=x onerror="window.__pwn=1">', "**bold<script>window.__pwn=2</script>**"]
HOSTILE_TITLE = '"><svg onload=window.__pwn=3>'
HOSTILE_LINK = "see [the docs](javascript:window.__pwn=4) for details"


def match_group(pattern: str, text: str, flags: int = 0) -> str:
    """Group 1 of ``pattern``'s first match in ``text``; fails the test, showing ``text``, when nothing matches."""
    match = re.search(pattern, text, flags)
    assert match is not None, f"{pattern!r} not found in:\n{text[:2000]}"
    return match.group(1)
