"""Importers: one small realistic file per format (written here, no personal data). Each test checks
the imported content, that a re-import adds nothing, and that malformed records are reported with
their location while the rest is imported."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.importers import import_path
from hermes_memory.sessions.importers.locomo import parse_locomo_date
from tests.helpers.values import present


def test_unknown_format_and_missing_path(db: SessionDB, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown import format"):
        import_path(db, tmp_path, "myspace")
    with pytest.raises(FileNotFoundError):
        import_path(db, tmp_path / "nope.json", "chatgpt")


# ------------------------------------------------------------------ Claude Code
CC_LINES = [
    {"type": "summary", "summary": "Fix flaky test", "leafUuid": "u0"},
    {"type": "user", "sessionId": "abc-123", "uuid": "u1", "timestamp": "2025-03-01T10:00:00.000Z",
     "cwd": "/home/dev/app", "message": {"role": "user", "content": "The login test is flaky, can you look?"}},
    {"type": "assistant", "sessionId": "abc-123", "uuid": "u2", "timestamp": "2025-03-01T10:00:05.000Z",
     "message": {"role": "assistant", "model": "claude-sonnet-4", "content": [
         {"type": "thinking", "thinking": "Probably a race in the fixture."},
         {"type": "text", "text": "Let me read the test file."},
         {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "tests/test_login.py"}}]}},
    {"type": "user", "sessionId": "abc-123", "uuid": "u3", "timestamp": "2025-03-01T10:00:06.000Z",
     "message": {"role": "user", "content": [
         {"type": "tool_result", "tool_use_id": "toolu_1", "content": "def test_login(): sleep(0.1) ..."}]}},
]


def _write_cc(path: Path, lines: list, extra: list[str] | None = None) -> None:
    path.write_text("\n".join([json.dumps(x) for x in lines] + (extra or [])) + "\n", encoding="utf-8")


def test_claude_code_jsonl(db: SessionDB, tmp_path: Path) -> None:
    proj = tmp_path / "projects" / "app"
    proj.mkdir(parents=True)
    f = proj / "abc-123.jsonl"
    _write_cc(f, CC_LINES, ["{not json", json.dumps({"type": "user", "sessionId": "abc-123"})])
    rep = import_path(db, tmp_path / "projects", "claude_code")
    assert rep.sessions_created == 1 and rep.messages_imported == 3
    assert len(rep.errors) == 2 and f"{f}:5:" in rep.errors[0] and f"{f}:6:" in rep.errors[1]
    s = present(db.get_session("cc-abc-123"))
    assert s["source"] == "claude_code" and s["model"] == "claude-sonnet-4"
    assert s["title"] == "The login test is flaky, can you look?"
    msgs = db.get_messages("cc-abc-123")
    assert [m["role"] for m in msgs] == ["user", "assistant", "tool"]
    assert msgs[1]["tool_calls"][0]["function"]["name"] == "Read"
    assert msgs[1]["reasoning"] == "Probably a race in the fixture."
    assert msgs[2]["tool_call_id"] == "toolu_1"
    assert msgs[0]["timestamp"] == pytest.approx(1740823200.0)
    assert db.search_messages("flaky")[0]["session_id"] == "cc-abc-123"
    # re-import: nothing twice; a grown transcript is topped up
    again = import_path(db, f, "claude_code")
    assert again.messages_imported == 0 and again.sessions_unchanged == 1
    _write_cc(f, CC_LINES + [{"type": "assistant", "sessionId": "abc-123", "timestamp": "2025-03-01T10:01:00Z",
                              "message": {"role": "assistant", "content": "Fixed by awaiting the fixture."}}])
    grown = import_path(db, f, "claude_code")
    assert grown.messages_imported == 1 and db.message_count("cc-abc-123") == 4


# ------------------------------------------------------------------ ChatGPT
def _chatgpt_export() -> list:
    mapping = {
        "root": {"id": "root", "message": None, "parent": None, "children": ["sys"]},
        "sys": {"id": "sys", "parent": "root", "children": ["u1"], "message": {
            "author": {"role": "system"}, "content": {"content_type": "text", "parts": [""]}, "create_time": None}},
        "u1": {"id": "u1", "parent": "sys", "children": ["a1", "a1b"], "message": {
            "author": {"role": "user"}, "create_time": 1700000000.0,
            "content": {"content_type": "text", "parts": ["Suggest a name for a sourdough starter"]}}},
        "a1": {"id": "a1", "parent": "u1", "children": [], "message": {
            "author": {"role": "assistant"}, "create_time": 1700000005.0, "metadata": {"model_slug": "gpt-4o"},
            "content": {"content_type": "text", "parts": ["Old branch answer: Doughbert"]}}},
        "a1b": {"id": "a1b", "parent": "u1", "children": [], "message": {
            "author": {"role": "assistant"}, "create_time": 1700000009.0, "metadata": {"model_slug": "gpt-4o"},
            "content": {"content_type": "text", "parts": ["How about Clint Yeastwood?"]}}},
    }
    return [
        {"id": "conv-1", "title": "Starter names", "create_time": 1700000000.0, "update_time": 1700000009.0,
         "mapping": mapping, "current_node": "a1b"},
        {"id": "conv-broken", "title": "broken"},
    ]


def test_chatgpt_conversations_json(db: SessionDB, tmp_path: Path) -> None:
    f = tmp_path / "conversations.json"
    f.write_text(json.dumps(_chatgpt_export()), encoding="utf-8")
    rep = import_path(db, tmp_path, "chatgpt")
    assert rep.sessions_created == 1 and rep.messages_imported == 2
    assert len(rep.errors) == 1 and "[1]" in rep.errors[0] and "mapping" in rep.errors[0]
    s = present(db.get_session("chatgpt-conv-1"))
    assert s["title"] == "Starter names" and s["model"] == "gpt-4o" and s["ended_at"] == 1700000009.0
    assert [m["content"] for m in db.get_messages("chatgpt-conv-1")] == [
        "Suggest a name for a sourdough starter", "How about Clint Yeastwood?"]
    assert db.search_messages("Doughbert") == []  # the abandoned branch is not imported
    assert import_path(db, f, "chatgpt").messages_imported == 0


def test_a_chatgpt_export_saved_with_a_utf8_bom_imports_as_without_one(db: SessionDB, tmp_path: Path) -> None:
    f = tmp_path / "conversations.json"
    f.write_bytes(b"\xef\xbb\xbf" + json.dumps(_chatgpt_export()).encode("utf-8"))  # as Windows editors save
    rep = import_path(db, f, "chatgpt")
    assert rep.sessions_created == 1 and rep.messages_imported == 2


# ------------------------------------------------------------------ OpenAI JSONL
def test_openai_jsonl(db: SessionDB, tmp_path: Path) -> None:
    f = tmp_path / "chats.jsonl"
    rows = [
        json.dumps({"id": "run-7", "model": "gpt-4.1", "created": 1710000000, "messages": [
            {"role": "system", "content": "You are a travel agent."},
            {"role": "user", "content": [{"type": "text", "text": "Cheapest way from Lyon to Turin?"}]},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "search_trains", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "name": "search_trains", "content": "TGV 39 EUR"},
            {"role": "assistant", "content": "The TGV at 39 EUR."},
        ]}),
        "garbage line",
        json.dumps([{"role": "user", "content": "bare list conversation about tapirs"}, {"role": "wizard"}]),
    ]
    f.write_text("\n".join(rows) + "\n", encoding="utf-8")
    rep = import_path(db, f, "openai")
    assert rep.sessions_created == 2 and rep.messages_imported == 6
    assert any(":2:" in e and "not JSON" in e for e in rep.errors)
    assert any(":3:" in e and "message 1" in e for e in rep.errors)
    s = present(db.get_session("openai-run-7"))
    assert s["model"] == "gpt-4.1" and s["message_count"] == 5 and s["tool_call_count"] == 1
    msgs = db.get_messages("openai-run-7")
    assert msgs[1]["content"] == "Cheapest way from Lyon to Turin?" and msgs[3]["tool_name"] == "search_trains"
    assert len(db.search_messages("tapirs")) == 1
    assert import_path(db, f, "openai").messages_imported == 0


def test_openai_jsonl_record_without_valid_messages_creates_no_session(db: SessionDB, tmp_path: Path) -> None:
    # A LoCoMo file passed as --format openai parsed as one list of role-less messages: it created
    # an empty session and reported "1 new session(s)", so a wrong --format looked like success.
    f = tmp_path / "wrong.jsonl"
    f.write_text(json.dumps([{"sample_id": "conv-1", "conversation": {}}]) + "\n"
                 + json.dumps({"messages": []}) + "\n", encoding="utf-8")
    rep = import_path(db, f, "openai")
    assert rep.sessions_created == 0 and rep.messages_imported == 0
    assert any(":1:" in e and "no valid messages" in e for e in rep.errors)
    assert any(":2:" in e and "no valid messages" in e for e in rep.errors)
    assert db.list_sessions() == []


# ------------------------------------------------------------------ reference state.db
def test_hermes_state_db(db: SessionDB, tmp_path: Path) -> None:
    src = tmp_path / "ref" / "state.db"
    src.parent.mkdir()
    c = sqlite3.connect(src)
    c.executescript(
        """
        CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (9);
        CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, model TEXT,
          model_config TEXT, system_prompt TEXT, parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL,
          end_reason TEXT, message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0,
          input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0, cache_read_tokens INTEGER DEFAULT 0,
          cache_write_tokens INTEGER DEFAULT 0, reasoning_tokens INTEGER DEFAULT 0, estimated_cost_usd REAL,
          title TEXT, api_call_count INTEGER DEFAULT 0, archived INTEGER DEFAULT 0);
        CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, role TEXT NOT NULL,
          content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL NOT NULL,
          token_count INTEGER, finish_reason TEXT, reasoning TEXT, active INTEGER DEFAULT 1);
        INSERT INTO sessions (id, source, model, started_at, ended_at, end_reason, input_tokens, cache_read_tokens, title)
          VALUES ('20250101_a', 'telegram', 'hermes-3', 100.0, 200.0, 'compression', 1500, 700, 'Garden plans');
        INSERT INTO sessions (id, source, parent_session_id, started_at) VALUES ('20250101_b', 'telegram', '20250101_a', 201.0);
        INSERT INTO messages (session_id, role, content, timestamp) VALUES ('20250101_a', 'user', 'When to plant garlic?', 101.0);
        INSERT INTO messages (session_id, role, content, timestamp, reasoning)
          VALUES ('20250101_a', 'assistant', 'Plant garlic in autumn.', 102.0, 'seasonal');
        INSERT INTO messages (session_id, role, content, timestamp) VALUES ('20250101_b', 'user', 'and onions?', 202.0);
        """
    )
    c.commit()
    c.close()
    before = src.read_bytes()
    rep = import_path(db, src.parent, "hermes")
    assert rep.errors == [] and rep.sessions_created == 2 and rep.messages_imported == 3
    a = present(db.get_session("20250101_a"))
    assert (a["source"], a["title"], a["end_reason"], a["input_tokens"], a["cache_read_tokens"]) == (
        "telegram", "Garden plans", "compression", 1500, 700)
    assert present(db.get_session("20250101_b"))["parent_session_id"] == "20250101_a"
    assert db.get_messages("20250101_a")[1]["reasoning"] == "seasonal"
    assert db.search_messages("garlic")[0]["session_id"] == "20250101_a"
    assert import_path(db, src, "hermes").messages_imported == 0
    assert src.read_bytes() == before  # opened read-only
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"nope" * 50)
    assert import_path(db, bad, "hermes").errors


# ------------------------------------------------------------------ LoCoMo
def test_locomo(db: SessionDB, tmp_path: Path) -> None:
    data = [{
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ana", "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a greyhound!"},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "Lovely, what's her name?",
                 "img_url": ["x"], "blip_caption": "a photo of a dog on a couch"},
                {"speaker": "Ana", "dia_id": "D1:3"},
            ],
            "session_2_date_time": "garbled",
            "session_2": [{"speaker": "Ben", "dia_id": "D2:1", "text": "How is the greyhound?"}],
        },
        "qa": [],
    }]
    f = tmp_path / "locomo.json"
    f.write_text(json.dumps(data), encoding="utf-8")
    rep = import_path(db, f, "locomo")
    assert rep.sessions_created == 2 and rep.messages_imported == 4
    assert any("session_1[3]" in e for e in rep.errors) and any("session_2_date_time" in e for e in rep.errors)
    msgs = db.get_messages("locomo-conv-x-s1")
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    assert msgs[1]["content"] == "Ben: Lovely, what's her name? [shares a photo: a photo of a dog on a couch]"
    assert present(db.get_session("locomo-conv-x-s1"))["user_id"] == "conv-x"
    assert present(db.get_session("locomo-conv-x-s1"))["started_at"] == parse_locomo_date("1:56 pm on 8 May, 2023")
    assert {r["session_id"] for r in db.search_messages("greyhound", user_id="conv-x")} == {
        "locomo-conv-x-s1", "locomo-conv-x-s2"}
    assert import_path(db, f, "locomo").messages_imported == 0


# ----------------------------------------------------------------- imports that find nothing say so
@pytest.mark.parametrize("fmt", ["claude_code", "openai"])
def test_import_of_a_folder_without_jsonl_files_is_reported(db: SessionDB, tmp_path: Path, fmt: str) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    (folder / "notes.txt").write_text("not a transcript", encoding="utf-8")
    report = import_path(db, folder, fmt)
    assert report.messages_imported == 0
    assert len(report.errors) == 1 and "no *.jsonl" in report.errors[0] and str(folder) in report.errors[0]


def test_claude_code_import_of_a_file_of_another_format_is_reported(db: SessionDB, tmp_path: Path) -> None:
    f = tmp_path / "chat.jsonl"
    f.write_text('{"messages": [{"role": "user", "content": "hello"}]}\n', encoding="utf-8")
    report = import_path(db, f, "claude_code")
    assert report.messages_imported == 0
    assert len(report.errors) == 1 and "no Claude Code user/assistant records" in report.errors[0]


# ----------------------------------------------------------------- re-import never splices two histories
def _chatgpt(path: Path, current: str, extra: bool = False) -> None:
    def node(nid: str, parent: str | None, role: str, text: str, children: list[str]) -> dict:
        return {"id": nid, "parent": parent, "children": children,
                "message": {"id": nid, "author": {"role": role}, "create_time": 1.0,
                            "content": {"content_type": "text", "parts": [text]}}}

    mapping = {
        "u1": node("u1", None, "user", "how long to steep green tea?", ["a1", "a2"]),
        "a1": node("a1", "u1", "assistant", "three minutes", []),
        "a2": node("a2", "u1", "assistant", "regenerated: two minutes at 80C", ["u3"] if extra else []),
    }
    if extra:
        mapping["u3"] = node("u3", "a2", "user", "and oolong?", ["a3"])
        mapping["a3"] = node("a3", "u3", "assistant", "five minutes", [])
    path.write_text(json.dumps([{"id": "c1", "title": "Tea", "create_time": 1.0,
                                 "current_node": current, "mapping": mapping}]), encoding="utf-8")


def test_reimport_of_a_switched_branch_is_reported_not_spliced(db: SessionDB, tmp_path: Path) -> None:
    f = tmp_path / "conversations.json"
    _chatgpt(f, "a1")
    import_path(db, f, "chatgpt")
    before = [m["content"] for m in db.get_messages("chatgpt-c1")]
    assert before == ["how long to steep green tea?", "three minutes"]
    _chatgpt(f, "a3", extra=True)  # the user regenerated the answer and went on from there
    report = import_path(db, f, "chatgpt")
    assert [m["content"] for m in db.get_messages("chatgpt-c1")] == before  # no mixed history
    assert report.messages_imported == 0
    assert len(report.errors) == 1 and "chatgpt-c1" in report.errors[0] and "differs" in report.errors[0]


def test_reimport_of_a_grown_transcript_still_tops_up(db: SessionDB, tmp_path: Path) -> None:
    f = tmp_path / "conversations.json"
    _chatgpt(f, "a2")
    import_path(db, f, "chatgpt")
    _chatgpt(f, "a3", extra=True)
    report = import_path(db, f, "chatgpt")
    assert report.errors == [] and report.messages_imported == 2 and report.sessions_updated == 1
    assert db.message_count("chatgpt-c1") == 4
