"""``sessions export`` gives back what ``sessions import --format hermes`` restores, whole.

New-user trial finding: no import format read the export, so a backup made with ``sessions export``
could not be restored (``--format hermes`` said "file is not a database"; the JSONL export through
``--format openai`` renamed every session, set its start to now and lost tool names, sources and
lineage). Real CLI processes on real SQLite homes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.sessions.db import SessionDB

PY = sys.executable


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("HERMES_HOME", "HERMES_DATABASE_URL")}
    proc = subprocess.run([PY, "-m", "hermes_memory", "--home", str(home), *args], capture_output=True,
                          text=True, env=env, timeout=180, check=False)
    return proc


def _seed(home: Path) -> None:
    home.mkdir(parents=True)
    db = SessionDB(home / "state.db")
    try:
        parent = db.create_session("20250101_090000_ab12", source="telegram", model="hermes-3", user_id="ann",
                                   system_prompt="You are Hermes.", title="Garden plans — 庭の計画 🌱",
                                   started_at=1_735_722_000.0)
        db.append_message(parent, "user", "Plant the tomatoes after the frost? 霜の後 🍅")
        db.append_message(parent, "assistant", "Let me check the forecast.", reasoning="Frost dates first.",
                          tool_calls=[{"id": "c1", "type": "function",
                                       "function": {"name": "weather", "arguments": '{"city": "Kyōto"}'}}])
        db.append_message(parent, "tool", '{"last_frost": "2025-04-02"}', tool_name="weather", tool_call_id="c1")
        db.update_token_counts(parent, input_tokens=1_500, output_tokens=700, cache_read_tokens=900)
        db.end_session(parent, "compression")
        child = db.create_session("20250101_093000_cd34", source="telegram", parent_session_id=parent,
                                  title="Garden plans #2", started_at=1_735_723_800.0)
        db.append_message(child, "assistant", "After 2 April, then.")
        db.create_session("20250102_080000_ef56", source="cli", started_at=1_735_804_800.0)  # no messages
    finally:
        db.close()


def _export(home: Path, fmt: str, out: Path) -> list[dict[str, Any]]:
    proc = _cli(home, "sessions", "export", "--format", fmt, "-o", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = out.read_text(encoding="utf-8")
    rows = json.loads(text) if fmt == "json" else [json.loads(line) for line in text.splitlines() if line]
    for s in rows:  # message ids are the new home's own
        for m in s["messages"]:
            m.pop("id")
    return sorted(rows, key=lambda s: s["id"])


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_an_export_imported_into_a_new_home_is_the_same_history(tmp_path: Path, fmt: str) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    _seed(old)
    backup = tmp_path / f"backup.{fmt}"
    before = _export(old, fmt, backup)
    assert len(before) == 3

    first = _cli(new, "sessions", "import", str(backup), "--format", "hermes", "--json")
    assert first.returncode == 0, first.stdout + first.stderr
    report = json.loads(first.stdout)
    assert (report["sessions_created"], report["messages_imported"], report["errors"]) == (3, 4, []), report
    assert _export(new, fmt, tmp_path / f"again.{fmt}") == before

    twice = json.loads(_cli(new, "sessions", "import", str(backup), "--format", "hermes", "--json").stdout)
    assert (twice["sessions_created"], twice["messages_imported"]) == (0, 0), twice
    assert _export(new, fmt, tmp_path / f"third.{fmt}") == before


def test_a_truncated_export_is_reported_and_what_is_whole_is_imported(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    _seed(old)
    whole = tmp_path / "backup.jsonl"
    _export(old, "jsonl", whole)
    lines = whole.read_text(encoding="utf-8").splitlines()
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2], encoding="utf-8")
    proc = _cli(new, "sessions", "import", str(cut), "--format", "hermes", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["sessions_created"] == len(lines) - 1
    assert len(report["errors"]) == 1 and f"{cut}:{len(lines)}:" in report["errors"][0], report

    cut_json = tmp_path / "cut.json"
    _export(old, "json", tmp_path / "b.json")
    raw = (tmp_path / "b.json").read_text(encoding="utf-8")
    cut_json.write_text(raw[: len(raw) // 2], encoding="utf-8")
    other = tmp_path / "other"
    proc = _cli(other, "sessions", "import", str(cut_json), "--format", "hermes", "--json")
    report = json.loads(proc.stdout)
    assert report["sessions_created"] == 0 and len(report["errors"]) == 1, report
    assert "not JSON" in report["errors"][0] and "truncated" in report["errors"][0], report
