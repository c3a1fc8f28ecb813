"""What ``hermes-memory sessions`` prints: stored text as text (message content, ids and import
locations may contain ``[...]`` that rich would otherwise read as markup: crash or lost text), and a
clean refusal, no traceback, for an unanswered confirmation or a non-finite ``--older-than``."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from hermes_memory.cli.main import app
from hermes_memory.sessions.db import SessionDB

runner = CliRunner()
TEXT = "close the tag [/bold] and keep [x] and [red]this[/red]"


def _home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    db = SessionDB(h / "state.db")
    db.create_session("mk-1", source="cli", title="see [x] here")
    db.append_message("mk-1", "user", TEXT)
    db.append_message("mk-1", "tool", "tool output", tool_name="Read[1]")
    db.close()
    return h


def run(home: Path, *args: str):
    return runner.invoke(app, ["--home", str(home), "sessions", *args], terminal_width=400)


def test_show_prints_bracketed_content_verbatim(tmp_path: Path) -> None:
    r = run(_home(tmp_path), "show", "mk-1")
    assert r.exit_code == 0, r.output
    assert TEXT in r.stdout and "see [x] here" in r.stdout and "[Read[1]]" in r.stdout


def test_list_and_search_tables_keep_brackets(tmp_path: Path) -> None:
    home = _home(tmp_path)
    r = run(home, "list")
    assert r.exit_code == 0, r.output
    assert "see [x] here" in r.stdout
    r = run(home, "search", "close tag")
    assert r.exit_code == 0, r.output
    assert "[/bold]" in r.stdout and "[x]" in r.stdout


def test_unknown_id_with_brackets_is_a_clean_refusal(tmp_path: Path) -> None:
    r = run(_home(tmp_path), "show", "[/nope]")
    assert r.exit_code == 1
    assert "[/nope]" in r.output


def test_import_error_locations_keep_brackets(tmp_path: Path) -> None:
    src = tmp_path / "ref.db"
    db = SessionDB(src)
    db.conn.execute("PRAGMA foreign_keys=OFF")
    db.conn.execute("INSERT INTO sessions (id, source, started_at, parent_session_id) "
                    "VALUES ('orphan-1', 'cli', 1.0, 'gone')")
    db.append_message("orphan-1", "user", "hello")
    db.close()
    r = run(_home(tmp_path), "import", str(src), "--format", "hermes")
    assert r.exit_code == 0, r.output
    assert "sessions[orphan-1]: parent gone not found" in " ".join(r.output.split())


def test_unanswered_confirmation_is_a_clean_refusal(tmp_path: Path) -> None:
    """prune/delete without --yes and with no answer on stdin (EOF) must not print a traceback."""
    import os
    import subprocess
    import sys

    home = _home(tmp_path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for args in (["prune", "--older-than", "30"], ["delete", "mk-1"]):
        p = subprocess.run([sys.executable, "-m", "hermes_memory", "--home", str(home), "sessions", *args],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, timeout=120)
        assert p.returncode == 1, p.stderr
        assert "Traceback" not in p.stderr
    assert SessionDB(home / "state.db").get_session("mk-1") is not None


def test_prune_refuses_non_finite_days(tmp_path: Path) -> None:
    r = run(_home(tmp_path), "prune", "--older-than", "inf", "--yes", "--json")
    assert r.exit_code == 2
    assert "Infinity" not in r.stdout


def test_import_skipped_lines_come_whole_before_the_summary_and_once(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    home = tmp_path / "home"
    src = tmp_path / "s1.jsonl"
    src.write_text(
        '{"type":"user","sessionId":"s1","uuid":"u1","timestamp":"2026-01-01T10:00:00Z",'
        '"message":{"role":"user","content":"hello about nginx"}}\n'
        '{"type":"assistant", "sessionId": "s1", this is broken\n'
        '{"type":"assistant","sessionId":"s1","uuid":"u2","timestamp":"2026-01-01T10:00:05Z",'
        '"message":{"role":"assistant","content":[{"type":"text","text":"hi"}]}}\n', encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}

    def cli(*args: str) -> str:
        r = subprocess.run([sys.executable, "-m", "hermes_memory", "--home", str(home), "sessions", "import",
                            str(src), *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=120)
        assert r.returncode == 0, r.stdout
        return r.stdout

    first = cli("--format", "claude-code").splitlines()  # the hooks' spelling of the client is accepted too
    skipped = [i for i, ln in enumerate(first) if ln.startswith("skipped:")]
    summary = [i for i, ln in enumerate(first) if "imported" in ln]
    assert len(skipped) == 1 and summary and skipped[0] < summary[0], first
    # the whole reason, with its place: not cut mid-word
    assert first[skipped[0]].endswith(f"{src}:2: not JSON (Expecting property name enclosed in double quotes "
                                      "at column 41)"), first
    again = cli("--format", "claude_code")
    assert "skipped:" not in again and "not JSON" not in again, again  # not repeated on an unchanged file
    assert "unchanged, nothing imported" in again and "1 line" in again, again
