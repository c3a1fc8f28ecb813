"""Defects found by trying Layer 2 as a new user and attacking it (review of issue 3).

Each test reproduces one defect seen from outside: a raw exception where a clear error or a
result was promised, or a wrong answer.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_memory.errors import SessionStoreError
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


# ----------------------------------------------------------------- corrupt database and odd ids
def _corrupt_copy(tmp_path: Path) -> Path:
    path = tmp_path / "state.db"
    db = SessionDB(path)
    db.create_session("s1")
    for i in range(400):
        db.append_message("s1", "user", f"message number {i} " + "padding " * 40)
    db.close()
    with open(path, "r+b") as fh:  # overwrite the middle pages, keep the header
        fh.seek(4096 * 3)
        fh.write(b"\xde\xad" * 8192)
    return path


def test_corrupt_database_reads_raise_session_store_error(tmp_path: Path) -> None:
    path = _corrupt_copy(tmp_path)
    try:
        db = SessionDB(path)
    except SessionStoreError:
        return  # refused at open: also a clear error
    for read in (db.list_sessions, lambda: db.get_messages("s1"), db.export_all):
        with pytest.raises(SessionStoreError, match="malformed"):
            read()
    db.close()


def test_corrupt_database_tool_returns_json_error(tmp_path: Path) -> None:
    path = _corrupt_copy(tmp_path)
    try:
        db = SessionDB(path)
    except SessionStoreError:
        return
    for args in ({}, {"session_id": "s1"}, {"query": "padding"}):
        out = json.loads(session_search(args, db))
        assert out["success"] is False and out["error"], args
    db.close()


def test_surrogate_session_id_is_unknown_not_a_crash(db: SessionDB) -> None:
    db.create_session("s1")
    assert db.resolve_session_id("\udcff") is None
    assert db.get_session("\udcff") is None
    assert db.delete_session("\udcff") is False
    out = json.loads(session_search({"session_id": "\ud800"}, db))
    assert out["success"] is False and "No session matches" in out["error"]


# ----------------------------------------------------------------- session_search bad arguments
@pytest.mark.parametrize(
    "args",
    [
        {"query": "kafka", "limit": float("inf")},
        {"query": "kafka", "limit": float("-inf")},
        {"query": "kafka", "window": float("inf")},
        {"limit": float("inf")},
        {"session_id": "s1", "around_message_id": 10**30},
        {"session_id": "s1", "around_message_id": float("inf")},
        {"session_id": "s1", "around_message_id": 1, "window": float("nan")},
        {"source": ["cli"]},
        {"source": {"a": 1}},
        {"query": "kafka", "source": {"a": 1}},
        {"query": "kafka", "user_id": {"a": 1}},
        {"query": "kafka", "role_filter": {"a": 1}},
    ],
)
def test_B22_tool_bad_arguments_never_raise(db: SessionDB, args: dict) -> None:
    db.create_session("s1", source="cli")
    db.append_message("s1", "user", "the kafka consumer lag")
    out = json.loads(session_search(args, db))
    assert isinstance(out["success"], bool)
    if not out["success"]:
        assert out["error"]


def test_tool_source_list_filters_instead_of_empty_success(db: SessionDB) -> None:
    db.create_session("s1", source="cli")
    db.append_message("s1", "user", "the kafka consumer lag")
    db.create_session("s2", source="telegram")
    db.append_message("s2", "user", "kafka on telegram")
    out = json.loads(session_search({"query": "kafka", "source": ["cli"]}, db))
    assert out["success"] is True and [r["session_id"] for r in out["results"]] == ["s1"]
    out = json.loads(session_search({"source": ["telegram"]}, db))
    assert out["success"] is True and [s["session_id"] for s in out["sessions"]] == ["s2"]


# ----------------------------------------------------------------- CJK results under newest/oldest sort
@pytest.mark.parametrize("query", ["记忆断裂", "悬空", "테스트", "테"])
def test_B23_cjk_sort_newest_oldest_is_by_time_even_beyond_50_matches(db: SessionDB, query: str) -> None:
    """Imported history arrives in any order: row ids do not follow timestamps. More CJK matches
    than the side-table read size must still give the truly newest / oldest rows."""
    db.create_session("s1")
    for i in range(70):  # later rows are OLDER (an import of old history after new)
        db.append_message("s1", "user", f"记忆断裂 第{i}条 悬空 테스트입니다", timestamp=1000.0 - i)
    newest = [r["timestamp"] for r in db.search_messages(query, sort="newest", limit=3)]
    oldest = [r["timestamp"] for r in db.search_messages(query, sort="oldest", limit=3)]
    assert newest == [1000.0, 999.0, 998.0]
    assert oldest == [931.0, 932.0, 933.0]


def test_B23_cjk_sort_ties_are_broken_by_id(db: SessionDB) -> None:
    db.create_session("s1")
    ids = [db.append_message("s1", "user", f"悬空 {i}", timestamp=5.0) for i in range(60)]
    assert [r["id"] for r in db.search_messages("悬空", sort="newest", limit=3)] == ids[::-1][:3]
    assert [r["id"] for r in db.search_messages("悬空", sort="oldest", limit=3)] == ids[:3]



# ----------------------------------------------------------------- NOT next to CJK text
def _not_rows(db: SessionDB) -> None:
    db.create_session("s1")
    db.append_message("s1", "user", "deploy kafka today")
    db.append_message("s1", "user", "deploy 记忆断裂 issue")
    db.append_message("s1", "user", "记忆断裂 only")


def _texts(db: SessionDB, query: str) -> set[str]:
    return {db.get_message(r["id"])["content"] for r in db.search_messages(query, query_syntax=True)}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("kafka NOT deploy", set()),  # the NOT-ed word must not turn into a match via the CJK side
        ("记忆断裂 NOT deploy", {"记忆断裂 only"}),
        ("deploy NOT 记忆断裂", {"deploy kafka today"}),
        ("deploy NOT 断裂", {"deploy kafka today"}),
        ("deploy NOT 记忆断裂 kafka", {"deploy kafka today"}),  # NOT applies to the CJK word only
    ],
)
def test_B23_not_is_honoured_next_to_cjk_with_query_syntax(db: SessionDB, query: str, expected: set[str]) -> None:
    _not_rows(db)
    assert _texts(db, query) == expected


def test_negated_words_are_not_highlighted(db: SessionDB) -> None:
    _not_rows(db)
    rows = db.search_messages("记忆断裂 NOT kafka", query_syntax=True)
    assert rows and all(">>>kafka<<<" not in r["snippet"] for r in rows)


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


# ----------------------------------------------------------------- the posting budget must not lose matches
@pytest.fixture
def frequent_and_rare(db: SessionDB) -> SessionDB:
    """'deploy' in 3,000 rows (over the posting budget), 'kafka' in one; session B is small."""
    db.create_session("A", user_id="ua")
    db.append_messages("A", [{"role": "user", "content": f"deploy step {i}"} for i in range(3000)])
    db.append_message("A", "user", "kafka broke")
    db.create_session("B", user_id="ub", source="telegram")
    for i in range(5):
        db.append_message("B", "user", f"deploy on telegram {i}")
    return db


def test_dropped_frequent_word_still_fills_the_page(frequent_and_rare: SessionDB) -> None:
    rows = frequent_and_rare.search_messages("deploy kafka", limit=20)
    assert len(rows) == 20
    assert frequent_and_rare.get_message(rows[0]["id"])["content"] == "kafka broke"  # rarest word ranks first


@pytest.mark.parametrize(
    "filters", [{"session_id": "B"}, {"user_id": "ub"}, {"source_filter": "telegram"}]
)
def test_filtered_search_finds_rows_of_a_frequent_word(frequent_and_rare: SessionDB, filters: dict) -> None:
    rows = frequent_and_rare.search_messages("deploy kafka", limit=20, **filters)
    assert len(rows) == 5 and {r["session_id"] for r in rows} == {"B"}


def test_tool_discovery_with_source_finds_the_frequent_word(frequent_and_rare: SessionDB) -> None:
    out = json.loads(session_search({"query": "deploy kafka", "source": "telegram"}, frequent_and_rare))
    assert out["success"] is True and out["count"] == 1 and out["results"][0]["session_id"] == "B"


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
