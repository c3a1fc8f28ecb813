"""The Claude.ai export and Codex CLI importers on realistic files written here from the documented
formats (no personal data): imported content, re-import adding nothing, a grown file topped up,
and malformed records reported with their location while the rest is imported."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hermes_memory.cli.main import app
from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.importers import FORMATS, import_path
from hermes_memory.sessions.importers.claude_ai import ROOT_PARENT
from tests.helpers.values import present
from tests.sessions.importer_data import CODEX_ID, codex_rollout, rollout_line, write_jsonl

# ------------------------------------------------------------------ Claude.ai export
ACCOUNT = {"uuid": "6f1e3a52-8d0b-4c57-9a43-0c9f1b2e7d11"}


def _block(text: str, start: str) -> dict:
    return {"start_timestamp": start, "stop_timestamp": start, "type": "text", "text": text, "citations": []}


def _msg(uuid: str, sender: str, created: str, content: list | None, parent: str | None = None, text: str = "",
         attachments: list | None = None, files: list | None = None) -> dict:
    m = {"uuid": uuid, "text": text, "sender": sender, "created_at": created, "updated_at": created,
         "attachments": attachments or [], "files": files or []}
    if content is not None:
        m["content"] = content
    if parent is not None:
        m["parent_message_uuid"] = parent
    return m


def claude_ai_export() -> list:
    """Three conversations as claude.ai exports them, then three malformed records."""
    bread = {
        "uuid": "0811c458-706c-4673-87e4-8146857bea96",
        "name": "Sourdough hydration",
        "summary": "The person asked about the hydration of their sourdough recipe.",
        "created_at": "2025-09-14T08:00:00.000000Z",
        "updated_at": "2025-09-14T08:05:00.000000Z",
        "account": ACCOUNT,
        "chat_messages": [
            _msg("019d8248-31f4-7a84-bfca-23c88f2618e0", "human", "2025-09-14T08:00:01.000000Z",
                 [_block("What hydration is my recipe? It feels too wet.", "2025-09-14T08:00:01.000000Z")],
                 parent=ROOT_PARENT, text="What hydration is my recipe? It feels too wet.",
                 attachments=[{"file_name": "recipe.txt", "file_size": 42, "file_type": "txt",
                               "extracted_content": "500 g flour, 375 g water, 100 g levain"}],
                 files=[{"file_uuid": "019d8248-00b6-769d-a7ff-fe95364a4142", "file_name": "crumb.png"}]),
            _msg("019d8248-9a1e-7c0d-8f41-5b2a6d3e9c07", "assistant", "2025-09-14T08:00:30.000000Z", [
                {"start_timestamp": "2025-09-14T08:00:02.000000Z", "stop_timestamp": "2025-09-14T08:00:04.000000Z",
                 "type": "thinking", "thinking": "Hydration is water over flour.", "summaries": [], "cut_off": False},
                {"start_timestamp": "2025-09-14T08:00:05.000000Z", "stop_timestamp": "2025-09-14T08:00:05.100000Z",
                 "type": "tool_use", "id": "toolu_01A6zfPtFxbTK1xa8gCUhpbE", "name": "web_search",
                 "input": {"query": "levain hydration contribution"}, "message": "Searching the web"},
                {"start_timestamp": None, "stop_timestamp": None, "type": "tool_result",
                 "tool_use_id": "toolu_01A6zfPtFxbTK1xa8gCUhpbE", "name": "web_search", "is_error": False,
                 "content": [{"type": "knowledge", "title": "Baker's percentages", "url": "https://example.org/bp",
                              "text": "A 100% hydration levain adds equal flour and water."}]},
                _block("About 78% counting the levain: 425 g water over 550 g flour.", "2025-09-14T08:00:29.000000Z"),
            ], parent="019d8248-31f4-7a84-bfca-23c88f2618e0"),
            _msg("019d8249-0b7c-71f2-a3d5-e8c4b6a1f290", "human", "2025-09-14T08:04:00.000000Z",
                 [_block("Thanks, I will drop to 70%.", "2025-09-14T08:04:00.000000Z")],
                 parent="019d8248-9a1e-7c0d-8f41-5b2a6d3e9c07"),
        ],
    }
    older = {  # an older export: no content blocks, no parent links
        "uuid": "28d595a3-5db0-492d-a49a-af74f13de505", "name": "", "account": ACCOUNT,
        "created_at": "2024-03-02T15:59:23.000000+00:00", "updated_at": "2024-03-02T16:01:00.000000+00:00",
        "chat_messages": [
            _msg("9a7f", "human", "2024-03-02T15:59:24.000000+00:00", None, text="Explain the ferry timetable to Vis."),
            _msg("9a80", "assistant", "2024-03-02T15:59:40.000000+00:00", None, text="The Jadrolinija ferry leaves Split."),
        ],
    }
    branched = {  # the first answer was retried and the second prompt edited: the newest branch wins
        "uuid": "5b0c1e7a-2f4d-4e9b-8c3a-7d6e5f4a3b21", "name": "Trip budget", "account": ACCOUNT,
        "created_at": "2025-10-01T09:00:00Z", "updated_at": "2025-10-01T09:10:00Z",
        "chat_messages": [
            _msg("h1", "human", "2025-10-01T09:00:00Z", [_block("Budget for a week in Lisbon?", "x")], ROOT_PARENT),
            _msg("a1", "assistant", "2025-10-01T09:00:10Z", [_block("Roughly 900 euros.", "x")], "h1"),
            _msg("h2", "human", "2025-10-01T09:01:00Z", [_block("Without hotels?", "x")], "a1"),
            _msg("a2", "assistant", "2025-10-01T09:01:10Z", [_block("About 400 euros.", "x")], "h2"),
            _msg("h2b", "human", "2025-10-01T09:05:00Z", [_block("Without flights?", "x")], "a1"),
            _msg("a2b", "assistant", "2025-10-01T09:05:10Z", [_block("About 650 euros.", "x")], "h2b"),
        ],
    }
    bad_sender = {"uuid": "7e9d", "name": "Bad sender", "account": ACCOUNT, "created_at": "2025-01-01T00:00:00Z",
                  "updated_at": "2025-01-01T00:00:00Z", "chat_messages": [
                      _msg("m1", "human", "2025-01-01T00:00:00Z", None, text="Hello there"),
                      _msg("m2", "robot", "2025-01-01T00:00:01Z", None, text="beep")]}
    return [bread, older, branched, "not a conversation", {"uuid": "no-messages", "name": "x"}, bad_sender]


def _write_json(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_claude_ai_export_keeps_text_tools_attachments_and_the_visible_branch(db: SessionDB, tmp_path: Path) -> None:
    f = _write_json(tmp_path / "conversations.json", claude_ai_export())
    rep = import_path(db, f, "claude_ai")
    assert rep.sessions_created == 4
    assert rep.errors == [
        f"{f}:[3]: conversation without a chat_messages list, skipped",
        f"{f}:[4]: conversation without a chat_messages list, skipped",
        f"{f}:[5].chat_messages[1]: unknown sender 'robot' (expected human or assistant), skipped",
    ]
    sid = "claude_ai-0811c458-706c-4673-87e4-8146857bea96"
    s = present(db.get_session(sid))
    assert (s["source"], s["title"], s["end_reason"]) == ("claude_ai", "Sourdough hydration", "imported")
    assert s["started_at"] == pytest.approx(1757836800.0) and s["ended_at"] == pytest.approx(1757837100.0)
    msgs = db.get_messages(sid)
    assert [m["role"] for m in msgs] == ["user", "assistant", "tool", "assistant", "user"]
    assert msgs[0]["content"] == ("What hydration is my recipe? It feels too wet.\n[attachment: recipe.txt]\n"
                                  "500 g flour, 375 g water, 100 g levain\n[file: crumb.png]")
    assert msgs[1]["reasoning"] == "Hydration is water over flour."
    call = msgs[1]["tool_calls"][0]
    assert call["id"] == "toolu_01A6zfPtFxbTK1xa8gCUhpbE" and call["function"]["name"] == "web_search"
    assert json.loads(call["function"]["arguments"]) == {"query": "levain hydration contribution"}
    assert (msgs[2]["tool_name"], msgs[2]["tool_call_id"]) == ("web_search", "toolu_01A6zfPtFxbTK1xa8gCUhpbE")
    assert msgs[2]["content"] == "A 100% hydration levain adds equal flour and water."
    assert msgs[3]["content"].startswith("About 78%")
    assert msgs[0]["timestamp"] == pytest.approx(1757836801.0)
    assert db.search_messages("levain")[0]["session_id"] == sid  # attachment text is searchable

    older = present(db.get_session("claude_ai-28d595a3-5db0-492d-a49a-af74f13de505"))
    assert older["title"] == "Explain the ferry timetable to Vis."  # no name: the first prompt
    assert [m["content"] for m in db.get_messages(older["id"])] == [
        "Explain the ferry timetable to Vis.", "The Jadrolinija ferry leaves Split."]
    branch = [m["content"] for m in db.get_messages("claude_ai-5b0c1e7a-2f4d-4e9b-8c3a-7d6e5f4a3b21")]
    assert branch == ["Budget for a week in Lisbon?", "Roughly 900 euros.", "Without flights?", "About 650 euros."]
    assert [m["content"] for m in db.get_messages("claude_ai-7e9d")] == ["Hello there"]

    again = import_path(db, f, "claude_ai")
    assert (again.sessions_created, again.messages_imported, again.sessions_unchanged) == (0, 0, 4)
    data = claude_ai_export()
    data[0]["chat_messages"].append(_msg("019d824a-1111-7000-8000-000000000001", "assistant",
                                         "2025-09-14T08:04:10.000000Z", [_block("70% will be easier.", "x")],
                                         parent="019d8249-0b7c-71f2-a3d5-e8c4b6a1f290"))
    grown = import_path(db, _write_json(f, data), "claude_ai")
    assert (grown.messages_imported, grown.sessions_updated) == (1, 1)
    assert db.message_count(sid) == 6


def test_claude_ai_export_reads_the_zip_and_the_folder(db: SessionDB, tmp_path: Path) -> None:
    archive = tmp_path / "data-2025-09-14-08-10-00-batch-0000.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("conversations.json", json.dumps(claude_ai_export()[:2]))
        zf.writestr("users.json", json.dumps([{"uuid": ACCOUNT["uuid"]}]))
    rep = import_path(db, archive, "claude_ai")
    assert (rep.sessions_created, rep.errors) == (2, [])
    folder = tmp_path / "export"
    folder.mkdir()
    _write_json(folder / "conversations.json", claude_ai_export()[:2])
    assert import_path(db, folder, "claude_ai").sessions_unchanged == 2
    broken = tmp_path / "broken.json"
    broken.write_text("{ not json", encoding="utf-8")
    assert import_path(db, broken, "claude_ai").errors[0].startswith(f"{broken}: not a Claude.ai conversations.json")


# ------------------------------------------------------------------ Codex CLI


def test_codex_rollouts_new_and_legacy_with_malformed_lines_reported(db: SessionDB, tmp_path: Path) -> None:
    codex_home = tmp_path / ".codex"
    (codex_home).mkdir()
    write_jsonl(codex_home / "history.jsonl", [{"session_id": CODEX_ID, "ts": 1761699578, "text": "why"}])
    new = write_jsonl(codex_home / "sessions" / "2025" / "10" / "29" / f"rollout-2025-10-29T00-59-38-{CODEX_ID}.jsonl",
                       codex_rollout(), ["{not json", json.dumps(rollout_line("2025-10-29T01:00:00Z", "response_item", {
                           "type": "message", "role": "narrator", "content": []}))])
    legacy_id = "5973b6c0-94b8-487b-a530-2aeb6098ae0e"
    write_jsonl(codex_home / "sessions" / "2025" / "05" / "01" / f"rollout-2025-05-01T10-00-00-{legacy_id}.jsonl", [
        {"id": legacy_id, "timestamp": "2025-05-01T10:00:00.000Z", "instructions": None,
         "git": {"commit_hash": "aa11", "branch": "main"}},
        {"record_type": "state"},
        {"type": "message", "id": None, "role": "user",
         "content": [{"type": "input_text", "text": "Rename the ferry timetable module"}]},
        {"type": "message", "id": None, "role": "assistant",
         "content": [{"type": "output_text", "text": "Renamed timetable.py to ferries.py."}]},
        {"record_type": "state"},
    ])
    rep = import_path(db, codex_home, "codex")  # history.jsonl is not a rollout and is left alone
    assert rep.sessions_created == 2
    assert rep.errors == [f"{new}:11: not JSON (Expecting property name enclosed in double quotes at column 2)",
                          f"{new}:12: message without a known role and content list (role 'narrator')"]
    s = present(db.get_session(f"codex-{CODEX_ID}"))
    assert (s["source"], s["model"], s["end_reason"]) == ("codex", "gpt-5-codex", "imported")
    assert s["title"] == "Why does pgbouncer refuse connections after the deploy?"
    assert s["started_at"] == pytest.approx(1761699578.308)
    assert s["ended_at"] == pytest.approx(1761699585.7)
    msgs = db.get_messages(s["id"])
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "tool", "assistant"]
    assert msgs[0]["content"].startswith("<environment_context>")
    call = msgs[2]["tool_calls"][0]
    assert (call["id"], call["function"]["name"]) == ("call_Jw3xZ5", "shell")
    assert json.loads(call["function"]["arguments"])["command"][-1] == "grep -n max_client_conn pgbouncer.ini"
    assert msgs[2]["reasoning"] == "**Checking the pool config**"
    assert (msgs[3]["tool_name"], msgs[3]["tool_call_id"]) == ("shell", "call_Jw3xZ5")
    assert "max_client_conn = 20" in msgs[3]["content"]
    assert msgs[4]["content"].startswith("max_client_conn is 20")
    assert msgs[1]["timestamp"] == pytest.approx(1761699580.1)
    hits = db.search_messages("pgbouncer")
    assert {h["session_id"] for h in hits} == {s["id"]}
    old = present(db.get_session(f"codex-{legacy_id}"))
    assert old["started_at"] == pytest.approx(1746093600.0)
    assert [m["content"] for m in db.get_messages(old["id"])] == [
        "Rename the ferry timetable module", "Renamed timetable.py to ferries.py."]

    again = import_path(db, codex_home / "sessions", "codex")
    assert (again.sessions_created, again.messages_imported, again.sessions_unchanged) == (0, 0, 2)
    write_jsonl(new, codex_rollout() + [
        rollout_line("2025-10-29T01:02:00.000Z", "response_item", {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "Raise it to 64 then."}]})])
    grown = import_path(db, new, "codex")
    assert (grown.messages_imported, grown.sessions_updated, grown.errors) == (1, 1, [])
    assert db.message_count(s["id"]) == 6


def test_codex_file_without_session_meta_is_named_after_its_file(db: SessionDB, tmp_path: Path) -> None:
    f = write_jsonl(tmp_path / f"rollout-2025-10-29T00-59-38-{CODEX_ID}.jsonl", codex_rollout()[1:3])
    rep = import_path(db, f, "codex")
    assert rep.errors == [f"{f}: no session_meta record; session id {CODEX_ID} taken from the file name"]
    assert db.message_count(f"codex-{CODEX_ID}") == 2
    other = write_jsonl(tmp_path / "notes.jsonl", [{"role": "user", "content": "hi"}])
    assert import_path(db, other, "codex").errors == [
        f"{other}:1: not a Codex rollout record (no type/payload)",
        f"{other}: no Codex messages found (is it another format? see --format)"]


def test_sessions_import_cli_takes_both_new_formats(tmp_path: Path, hermes_home: Path) -> None:
    assert {"claude_ai", "codex"} <= set(FORMATS)
    export = _write_json(tmp_path / "conversations.json", claude_ai_export()[:1])
    rollout = write_jsonl(tmp_path / f"rollout-2025-10-29T00-59-38-{CODEX_ID}.jsonl", codex_rollout())
    runner = CliRunner()
    for path, fmt in ((export, "claude_ai"), (rollout, "codex")):
        result = runner.invoke(app, ["--home", str(hermes_home), "sessions", "import", str(path), "--format", fmt,
                                     "--json"])
        assert result.exit_code == 0, result.output
        report = json.loads(result.output)
        assert (report["format"], report["sessions_created"], report["errors"]) == (fmt, 1, [])
    help_text = runner.invoke(app, ["sessions", "import", "--help"]).output
    assert "claude_ai" in help_text and "codex" in help_text


def test_files_saved_with_a_utf8_bom_import_like_plain_utf8(db: SessionDB, tmp_path: Path) -> None:
    # Editors on Windows save JSON with a byte-order mark; the whole export was refused and a
    # rollout lost its session_meta (cwd, git branch) as "line 1: not JSON".
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps(claude_ai_export(), ensure_ascii=False), encoding="utf-8-sig")
    assert import_path(db, export, "claude_ai").sessions_created == 4
    rollout = tmp_path / "sessions" / f"rollout-2025-10-29T00-59-38-{CODEX_ID}.jsonl"
    rollout.parent.mkdir(parents=True)
    rollout.write_text("\n".join(json.dumps(x) for x in codex_rollout()) + "\n", encoding="utf-8-sig")
    rep = import_path(db, rollout, "codex")
    assert rep.sessions_created == 1
    assert not [e for e in rep.errors if ":1:" in e or "session_meta" in e]


def test_a_claude_ai_export_nested_too_deep_is_reported_not_raised(db: SessionDB, tmp_path: Path) -> None:
    f = tmp_path / "conversations.json"
    f.write_text("[" * 100_000 + "]" * 100_000)
    rep = import_path(db, f, "claude_ai")
    assert rep.sessions_created == 0 and len(rep.errors) == 1 and str(f) in rep.errors[0]


def test_exports_saved_with_a_utf8_bom_import_as_without_one(db: SessionDB, tmp_path: Path) -> None:
    export = _write_json(tmp_path / "conversations.json", claude_ai_export()[:2])
    export.write_bytes(b"\xef\xbb\xbf" + export.read_bytes())  # as Windows editors save "UTF-8"
    rep = import_path(db, export, "claude_ai")
    assert (rep.sessions_created, rep.errors) == (2, [])
    rollout = write_jsonl(tmp_path / "codex" / f"rollout-2025-10-29T00-59-38-{CODEX_ID}.jsonl", codex_rollout())
    rollout.write_bytes(b"\xef\xbb\xbf" + rollout.read_bytes())
    rep = import_path(db, rollout, "codex")
    assert rep.errors == [] and present(db.get_session(f"codex-{CODEX_ID}"))["source"] == "codex"


def test_a_codex_session_continued_later_ends_at_its_new_last_line_so_prune_keeps_it(db: SessionDB,
                                                                                     tmp_path: Path) -> None:
    from hermes_memory.sessions.importers import iso_time

    f = write_jsonl(tmp_path / f"rollout-2025-10-29T00-59-38-{CODEX_ID}.jsonl", codex_rollout())
    import_path(db, f, "codex")
    with open(f, "a", encoding="utf-8") as fh:  # `codex resume` a month later appends to the rollout
        for ts, role, kind, text in (("2025-11-30T09:00:00.000Z", "user", "input_text", "And the read replica?"),
                                     ("2025-11-30T09:00:05.000Z", "assistant", "output_text", "Same limit there.")):
            fh.write(json.dumps(rollout_line(ts, "response_item", {"type": "message", "role": role,
                                                            "content": [{"type": kind, "text": text}]})) + "\n")
    rep = import_path(db, f, "codex")
    assert rep.messages_imported == 2
    assert present(db.get_session(f"codex-{CODEX_ID}"))["ended_at"] == iso_time("2025-11-30T09:00:05.000Z")
