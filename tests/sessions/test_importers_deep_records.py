"""One record nested past what Python's recursion can walk (50,000 levels of ``[[...]]``) is
reported with its place and "nested too deeply" and skipped; the records around it are imported,
in every importer format (JSONL lines and the elements of a whole-file JSON list)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hermes_memory.cli.main import app
from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.importers import MAX_DEPTH, NestedTooDeep, import_path, load_json
from tests.sessions.importer_data import CODEX_ID, codex_rollout

DEEP = "[" * 50_000 + "]" * 50_000


def _openai(word: str) -> str:
    return json.dumps({"id": word, "messages": [{"role": "user", "content": f"deploy {word}"}]})


def _cc(word: str) -> str:
    return json.dumps({"type": "user", "sessionId": word, "uuid": f"u-{word}", "timestamp": "2025-03-01T10:00:00Z",
                       "message": {"role": "user", "content": f"deploy {word}"}})


def _hermes(word: str) -> str:
    return json.dumps({"id": word, "source": "cli", "started_at": 1.0e9,
                       "messages": [{"role": "user", "content": f"deploy {word}", "timestamp": 1.0e9}]})


def _chatgpt(word: str) -> str:
    return json.dumps({"id": word, "title": word, "create_time": 1.0e9, "current_node": "n1", "mapping": {
        "n1": {"id": "n1", "parent": None, "children": [], "message": {
            "author": {"role": "user"}, "create_time": 1.0e9,
            "content": {"content_type": "text", "parts": [f"deploy {word}"]}}}}})


def _claude_ai(word: str) -> str:
    return json.dumps({"uuid": word, "name": word, "created_at": "2025-03-01T10:00:00Z", "chat_messages": [
        {"uuid": f"m-{word}", "sender": "human", "text": f"deploy {word}", "created_at": "2025-03-01T10:00:00Z"}]})


def _locomo(word: str) -> str:
    return json.dumps({"sample_id": word, "conversation": {"speaker_a": "Ana", "speaker_b": "Ben",
                       "session_1_date_time": "1:56 pm on 8 May, 2023",
                       "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": f"deploy {word}"}]}})


def _words(db: SessionDB) -> set[str]:
    return {m["content"] for s in db.list_sessions(limit=100) for m in db.get_messages(s["id"])}


@pytest.mark.parametrize("fmt, record", [("openai", _openai), ("hermes", _hermes), ("claude_code", _cc)])
def test_a_jsonl_line_nested_too_deeply_is_reported_by_line_and_the_others_imported(
        tmp_path: Path, fmt: str, record) -> None:
    f = tmp_path / "mixed.jsonl"
    f.write_text("\n".join([record("alpha"), DEEP, record("omega")]) + "\n", encoding="utf-8")
    db = SessionDB(tmp_path / "state.db")
    try:
        rep = import_path(db, f, fmt)
        assert rep.errors == [f"{f}:2: nested too deeply (more than {MAX_DEPTH} levels of arrays/objects), skipped"]
        assert _words(db) == {"deploy alpha", "deploy omega"}
    finally:
        db.close()


def test_a_codex_rollout_line_nested_too_deeply_is_reported_and_the_rollout_imported(tmp_path: Path) -> None:
    lines = [json.dumps(x) for x in codex_rollout()]
    f = tmp_path / "rollout-2025-10-29T00-59-38-x.jsonl"
    f.write_text("\n".join([*lines[:3], DEEP, *lines[3:]]) + "\n", encoding="utf-8")
    db = SessionDB(tmp_path / "state.db")
    try:
        rep = import_path(db, f, "codex")
        assert rep.errors == [f"{f}:4: nested too deeply (more than {MAX_DEPTH} levels of arrays/objects), skipped"]
        assert rep.sessions_created == 1 and db.message_count(f"codex-{CODEX_ID}") > 0
    finally:
        db.close()


@pytest.mark.parametrize("fmt, record", [("chatgpt", _chatgpt), ("claude_ai", _claude_ai), ("locomo", _locomo),
                                         ("hermes", _hermes)])
def test_an_element_of_a_json_list_nested_too_deeply_is_reported_by_index_and_the_others_imported(
        tmp_path: Path, fmt: str, record) -> None:
    f = tmp_path / "conversations.json"
    f.write_text("[" + ",\n".join([record("alpha"), DEEP, record("omega")]) + "]", encoding="utf-8")
    db = SessionDB(tmp_path / "state.db")
    try:
        rep = import_path(db, f, fmt)
        assert rep.errors == [f"{f}:[1]: nested too deeply (more than {MAX_DEPTH} levels of arrays/objects), skipped"]
        assert {w.split(": ")[-1] for w in _words(db)} == {"deploy alpha", "deploy omega"}
    finally:
        db.close()


def test_C25_cli_import_reports_the_deep_line_and_imports_the_rest(tmp_path: Path) -> None:
    f = tmp_path / "mixed.jsonl"
    f.write_text("\n".join([_openai("alpha"), DEEP, _openai("omega")]) + "\n", encoding="utf-8")
    res = CliRunner().invoke(app, ["--home", str(tmp_path / "home"), "sessions", "import", str(f), "--format", "openai"])
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert "mixed.jsonl:2: nested too deeply" in " ".join(res.output.split()), res.output
    found = CliRunner().invoke(app, ["--home", str(tmp_path / "home"), "sessions", "search", "omega", "--json"])
    assert found.exit_code == 0 and "deploy omega" in found.output, found.output


def test_load_json_takes_max_depth_levels_and_refuses_one_more() -> None:
    assert load_json("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    with pytest.raises(NestedTooDeep):
        load_json("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
