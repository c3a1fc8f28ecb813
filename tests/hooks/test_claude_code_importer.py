"""The Claude Code importer keeps what users search by: tool names, usage, cwd, git branch, end
times; it reads a growing transcript incrementally; ``--project`` filters by the working directory."""

from __future__ import annotations

import json
import time
from pathlib import Path

from hermes_memory.sessions.db import SessionDB
from hermes_memory.sessions.importers import import_path
from hermes_memory.sessions.importers.claude_code import import_incremental
from tests.helpers.values import present
from tests.hooks.helpers import Transcript, cli


def _db(home: Path) -> SessionDB:
    return SessionDB(home / "state.db")


def _session(tmp_path: Path, sid: str = "s1", cwd: str = "/home/dev/alpha", branch: str = "feature/x") -> Transcript:
    t = Transcript(tmp_path / "projects" / cwd.replace("/", "-") / f"{sid}.jsonl", sid, cwd=cwd, branch=branch)
    t.write(t.user("List the files please"),
            t.tool_use("toolu_01", "Bash", {"command": "ls"}, mid="msg_a"),
            t.tool_result("toolu_01", "README.md\nsetup.py"),
            # one API message written as two records (thinking-less text + tool call) repeating usage
            t.assistant_text("Two files.", mid="msg_b", out_tokens=9),
            t.assistant_text("Anything else?", mid="msg_b", out_tokens=9))
    return t


def test_tool_results_keep_the_tool_name_and_usage_is_counted_once_per_api_message(tmp_path: Path,
                                                                                  hermes_home: Path) -> None:
    t = _session(tmp_path)
    with _db(hermes_home) as db:
        report = import_path(db, t.path, "claude_code")
        assert report.errors == [] and report.sessions_created == 1
        msgs = db.get_messages("cc-s1")
        tool = next(m for m in msgs if m["role"] == "tool")
        assert tool["tool_name"] == "Bash" and tool["tool_call_id"] == "toolu_01"
        row = present(db.get_session("cc-s1"))
        # msg_a (11 in, 4 out, 3 cache read) + msg_b once (11 in, 9 out, 5 cache write, 3 cache read)
        assert (row["input_tokens"], row["output_tokens"]) == (22, 13)
        assert (row["cache_read_tokens"], row["cache_write_tokens"]) == (6, 5)
        assert row["api_call_count"] == 2
        assert row["cwd"] == "/home/dev/alpha" and row["git_branch"] == "feature/x"
        assert row["model"] == "claude-sonnet-4-5"
        found = db.search_messages("Bash", role_filter=["tool"])
        assert found and found[0]["tool_name"] == "Bash"
        # re-import adds nothing, not even tokens
        again = import_path(db, t.path, "claude_code")
        assert again.messages_imported == 0 and present(db.get_session("cc-s1"))["output_tokens"] == 13


def test_imported_sessions_end_at_their_last_message_and_can_be_pruned(tmp_path: Path, hermes_home: Path) -> None:
    t = _session(tmp_path)
    with _db(hermes_home) as db:
        import_path(db, t.path, "claude_code")
        row = present(db.get_session("cc-s1"))
        last = max(m["timestamp"] for m in db.get_messages("cc-s1"))
        assert row["ended_at"] == last and row["end_reason"] == "imported"
        t.turn("one more thing", "sure")
        import_path(db, t.path, "claude_code")  # topped up: the end moves with it
        assert present(db.get_session("cc-s1"))["ended_at"] > last
    age_days = (time.time() - last) / 86400
    r = cli("sessions", "prune", "--older-than", f"{max(age_days - 1, 0):.3f}", "--yes", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["pruned"] == 1


def test_sessions_list_and_search_filter_by_project(tmp_path: Path, hermes_home: Path) -> None:
    a = _session(tmp_path, "sa", cwd="/home/dev/alpha")
    b = _session(tmp_path, "sb", cwd="/home/dev/alpha/sub")
    c = _session(tmp_path, "sc", cwd="/home/dev/alpha_beta")  # a sibling sharing the prefix, and `_`
    with _db(hermes_home) as db:
        for t in (a, b, c):
            import_path(db, t.path, "claude_code")
    listed = json.loads(cli("sessions", "list", "--project", "/home/dev/alpha", "--json").stdout)
    assert {s["id"] for s in listed["sessions"]} == {"cc-sa", "cc-sb"} and listed["total"] == 2
    listed = json.loads(cli("sessions", "list", "--project", "/home/dev/alpha_beta/", "--json").stdout)
    assert {s["id"] for s in listed["sessions"]} == {"cc-sc"}
    found = json.loads(cli("sessions", "search", "files", "--project", "/home/dev/alpha/sub", "--json").stdout)
    assert {r["session_id"] for r in found["results"]} == {"cc-sb"}
    assert json.loads(cli("sessions", "list", "--project", "/elsewhere", "--json").stdout)["total"] == 0


def test_incremental_import_reads_only_new_complete_lines(tmp_path: Path, hermes_home: Path) -> None:
    t = _session(tmp_path)
    with _db(hermes_home) as db:
        report, state = import_incremental(db, t.path, None)
        assert report.messages_imported == 5
        # a line still being written is left for the next call
        partial = json.dumps(t.user("half written line"))
        t.write(t.user("a finished line"), partial=partial[:30])
        report, state = import_incremental(db, t.path, state)
        assert report.messages_imported == 1 and db.message_count("cc-s1") == 6
        with open(t.path, "a") as fh:
            fh.write(partial[30:] + "\n")
        t.write(t.tool_use("toolu_02", "Read", {"file_path": "a.py"}), t.tool_result("toolu_02", "print(1)"))
        report, state = import_incremental(db, t.path, state)
        assert report.messages_imported == 3 and db.message_count("cc-s1") == 9
        # the tool name crossed the read boundary through the state
        assert db.get_messages("cc-s1")[-1]["tool_name"] == "Read"
        assert present(db.get_session("cc-s1"))["ended_at"] is None  # a live session is not ended by importing
        report, state = import_incremental(db, t.path, state)
        assert report.messages_imported == 0


def test_incremental_import_after_a_lost_state_adds_nothing_twice(tmp_path: Path, hermes_home: Path) -> None:
    t = _session(tmp_path)
    with _db(hermes_home) as db:
        _, state = import_incremental(db, t.path, None)
        t.turn("next question", "next answer")
        _, _lost = import_incremental(db, t.path, state)  # committed, but the caller died before saving it
        t.turn("third question", "third answer")
        report, _ = import_incremental(db, t.path, state)  # the stale state: counts disagree -> by position
        assert db.message_count("cc-s1") == 9
        assert [m["content"] for m in db.get_messages("cc-s1")][-2:] == ["third question", "third answer"]
        assert present(db.get_session("cc-s1"))["output_tokens"] == 13 + 7 + 7


def test_recall_blocks_in_a_transcript_are_not_stored(tmp_path: Path, hermes_home: Path) -> None:
    t = Transcript(tmp_path / "x.jsonl", "fenced")
    t.write(t.user("real question\n\n<memory-context>\n[System note: recalled]\nold stuff\n</memory-context>"))
    with _db(hermes_home) as db:
        import_path(db, t.path, "claude_code")
        assert db.get_messages("cc-fenced")[0]["content"] == "real question"


def test_a_50k_message_folder_imports_with_a_progress_bar(tmp_path: Path, hermes_home: Path) -> None:
    from bench.claude_code_import import make_folder

    folder = make_folder(tmp_path / "projects", sessions=100, messages_per_session=500)
    start = time.monotonic()
    r = cli("sessions", "import", str(folder), "--format", "claude_code", "--json",
            env={"COLUMNS": "100", "TERM": "xterm"})
    took = time.monotonic() - start
    assert r.returncode == 0, r.stderr[-2000:]
    data = json.loads(r.stdout)
    assert data["sessions_created"] == 100 and data["messages_imported"] == 50_000 and data["errors"] == []
    print(f"50,000 Claude Code messages in 100 files imported in {took:.1f} s (CLI, incl. start-up)")
    with _db(hermes_home) as db:
        assert db.message_count() == 50_000


def test_incremental_import_after_the_transcript_shrank_then_grew_adds_nothing_twice(tmp_path: Path,
                                                                                    hermes_home: Path) -> None:
    t = _session(tmp_path)
    t.turn("second question", "second answer")
    original = t.path.read_text(encoding="utf-8")
    first_two = "".join(original.splitlines(keepends=True)[:2])
    with _db(hermes_home) as db:
        _, state = import_incremental(db, t.path, None)
        assert db.message_count("cc-s1") == 7
        t.path.write_text(first_two, encoding="utf-8")  # rewritten in place, shorter (same inode)
        _, state = import_incremental(db, t.path, state)
        t.path.write_text(original, encoding="utf-8")  # and back to the full text
        report, state = import_incremental(db, t.path, state)
        assert db.message_count("cc-s1") == 7 and report.messages_imported == 0
        t.path.write_text("", encoding="utf-8")  # emptied, then written again from the start
        _, state = import_incremental(db, t.path, state)
        t.path.write_text(original, encoding="utf-8")
        report, _ = import_incremental(db, t.path, state)
        assert db.message_count("cc-s1") == 7 and report.messages_imported == 0


def test_a_record_whose_content_is_neither_text_nor_blocks_is_reported_and_the_rest_imported(
        tmp_path: Path, hermes_home: Path) -> None:
    t = Transcript(tmp_path / "odd.jsonl", "odd")
    t.write(t.user("first question"))
    bad = t.user("placeholder")
    bad["message"]["content"] = 5
    odd = t.user("placeholder")
    odd["message"]["content"] = {"text": "an object"}
    t.write(bad, odd, t.assistant_text("an answer"))
    with _db(hermes_home) as db:
        report = import_path(db, t.path, "claude_code")
        assert [m["content"] for m in db.get_messages("cc-odd")] == ["first question", "an answer"]
        assert any(":2:" in e and "content" in e for e in report.errors), report.errors
        assert any(":3:" in e for e in report.errors), report.errors


def test_a_timestamp_that_is_not_a_finite_time_is_dropped_not_a_failed_import(tmp_path: Path,
                                                                               hermes_home: Path) -> None:
    t = Transcript(tmp_path / "times.jsonl", "times")
    recs = [t.user("not a number"), t.user("too big"), t.user("a fine one")]
    recs[0]["timestamp"] = float("nan")  # json writes NaN, and json.loads reads it back
    recs[1]["timestamp"] = 10**400
    t.write(*recs)
    with _db(hermes_home) as db:
        report = import_path(db, t.path, "claude_code")
        assert [m["content"] for m in db.get_messages("cc-times")] == ["not a number", "too big", "a fine one"]
        assert report.messages_imported == 3


def test_a_transcript_saved_with_a_utf8_bom_keeps_its_first_record(tmp_path: Path, hermes_home: Path) -> None:
    t = Transcript(tmp_path / "bom.jsonl", "bom")
    t.turn("the first question", "the first answer")
    t.path.write_bytes(b"\xef\xbb\xbf" + t.path.read_bytes())
    with _db(hermes_home) as db:
        report = import_path(db, t.path, "claude_code")
        assert report.errors == [] and db.message_count("cc-bom") == 2
    with _db(tmp_path / "other-home") as db:
        report, _ = import_incremental(db, t.path, None)
        assert report.errors == [] and db.message_count("cc-bom") == 2


def test_a_subagent_transcript_beside_its_session_does_not_block_the_session_import(tmp_path: Path,
                                                                                    hermes_home: Path) -> None:
    # Claude Code keeps a subagent's transcript at <project>/<session>/subagents/agent-<id>.jsonl; its
    # records carry the parent's sessionId with isSidechain true and the agentId
    project = tmp_path / "projects" / "-home-dev-proj"
    main = Transcript(project / "s-main.jsonl", "s-main")
    main.turn("please explore the repository layout", "It has src/ and tests/.")
    sub = Transcript(project / "s-main" / "subagents" / "agent-a7f3.jsonl", "s-main")
    recs = [sub.user("Explore the repository layout and report"), sub.assistant_text("src/ and tests/ found")]
    for r in recs:
        r.update(isSidechain=True, agentId="a7f3")
    sub.write(*recs)
    with _db(hermes_home) as db:
        report = import_path(db, tmp_path / "projects", "claude_code")
        assert report.errors == []
        assert [m["content"] for m in db.get_messages("cc-s-main")] == [
            "please explore the repository layout", "It has src/ and tests/."]
        assert [m["content"] for m in db.get_messages("cc-s-main-agent-a7f3")] == [
            "Explore the repository layout and report", "src/ and tests/ found"]
        again = import_path(db, tmp_path / "projects", "claude_code")
        assert again.errors == [] and again.messages_imported == 0
