"""Lone surrogates (text decoded with surrogateescape, broken UTF-16 from another tool) are scrubbed in every
text column, an import carrying one goes through, and a session id made of one is unknown, not a crash.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_memory.sessions import session_search
from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.importers import import_path


# ----------------------------------------------------------------- lone surrogates in every text column
@pytest.mark.parametrize(
    "kwargs",
    [
        {"content": [{"type": "text", "text": "list \ud800 part"}]},
        {"content": {"text": "dict \udcff"}},
        {"content": "x", "tool_calls": [{"id": "c1", "type": "function",
                                         "function": {"name": "f", "arguments": "\udcff"}}]},
        {"content": "x", "reasoning": "think \ud800"},
        {"content": "x", "reasoning_content": "think \ud800"},
        {"content": "x", "tool_name": "tool\ud800"},
        {"content": "x", "reasoning_details": {"a": "\ud800"}},
    ],
)
def test_lone_surrogates_are_scrubbed_in_every_text_column(db: SessionDB, kwargs: dict) -> None:
    db.create_session("s1")
    mid = db.append_message("s1", "assistant", **kwargs)
    assert db.get_message(mid) is not None
    ids = db.append_messages("s1", [{"role": "assistant", **kwargs}])
    assert len(ids) == 1 and db.message_count("s1") == 2


def test_claude_code_import_with_a_lone_surrogate_in_thinking_imports(db: SessionDB, tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    f.write_text(
        '{"type":"user","sessionId":"a","message":{"role":"user","content":"hi there"}}\n'
        '{"type":"assistant","sessionId":"a","message":{"role":"assistant","content":'
        '[{"type":"thinking","thinking":"bad \\ud800 surrogate"},{"type":"text","text":"hello back"}]}}\n',
        encoding="utf-8",
    )
    report = import_path(db, f, "claude_code")
    assert report.messages_imported == 2
    assert db.get_messages("cc-a")[1]["reasoning"] == "bad ? surrogate"


def test_surrogate_session_id_is_unknown_not_a_crash(db: SessionDB) -> None:
    db.create_session("s1")
    assert db.resolve_session_id("\udcff") is None
    assert db.get_session("\udcff") is None
    assert db.delete_session("\udcff") is False
    out = json.loads(session_search({"session_id": "\ud800"}, db))
    assert out["success"] is False and "No session matches" in out["error"]
