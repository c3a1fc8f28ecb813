"""Gemini CLI settings files with comments: install adds our entries beside the user's, every
comment, key and byte of theirs kept; uninstall gives the file back byte for byte; what Gemini CLI
itself cannot read (a trailing comma, a byte-order mark) is refused with a message saying where
and how to fix it, and so is a comment in Claude Code's settings (it rejects comments)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_memory.hooks.clients import CLAUDE_CODE, GEMINI_CLI
from hermes_memory.hooks.jsonedit import comment_spans, loads, parse
from hermes_memory.hooks.settings import MARKER, add_groups, installed, planned_groups, remove_ours
from tests.hooks.helpers import cli

# What users keep in ~/.gemini/settings.json: notes on why a setting is set, disabled settings
# commented out, a URL (a "//" inside a string is no comment), their own hooks with notes.
COMMENTED = """// Gemini CLI user settings -- managed by hand, see dotfiles/README
{
  /* UI */
  "ui": {
    "theme": "GitHub", // the dark one hurts in daylight
    "hideBanner": true
  },
  // "model": {"name": "gemini-2.5-pro"},
  "general": {"vimMode": false, "preferredEditor": "vim"}, /* keep vim */
  "mcpServers": {
    "docs": {"httpUrl": "https://example.test/mcp"} // not a comment: "//" inside the URL
  },
  "hooksConfig": {"enabled": true},
  "hooks": {
    // my own guard runs first
    "BeforeTool": [
      {"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "~/bin/guard.sh"}]}
    ],
    "SessionStart": [ /* nothing yet */ ]
  }
  // end of settings
}
"""

ONE_LINE_NOTES = '{"ui": {"theme": "GitHub"}, "hooks": {} /* ours go here */}'
EMPTY_HOOKS_NOTE = '{\n  "hooks": {\n    // TODO: add hooks\n  }\n}\n'
LAST_LINE_COMMENT = '{\n  "security": {"auth": {"selectedType": "gemini-api-key"}} // API key auth\n}\n'

LAYOUTS = {
    "commented": COMMENTED,
    "commented, CRLF": COMMENTED.replace("\n", "\r\n"),
    "commented, tabs": COMMENTED.replace("  ", "\t"),
    "one line with a block comment": ONE_LINE_NOTES,
    "empty hooks holding a note": EMPTY_HOOKS_NOTE,
    "line comment after the last member": LAST_LINE_COMMENT,
    "comment only before the object": "// settings\n{}\n",
}


def _comments(text: str) -> list[str]:
    return [text[s:e] for s, e in comment_spans(text)]


@pytest.fixture()
def gemini_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "user-home"
    (home / ".gemini").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    return home / ".gemini" / "settings.json"


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_install_into_a_commented_gemini_file_keeps_every_comment_and_uninstall_restores_it(
        name: str, gemini_settings: Path) -> None:
    text = LAYOUTS[name]
    gemini_settings.write_bytes(text.encode())
    env = {"HOME": str(gemini_settings.parent.parent)}
    r = cli("hooks", "install", "gemini-cli", env=env)
    assert r.returncode == 0, r.stderr
    edited = gemini_settings.read_bytes().decode()
    assert _comments(edited) == _comments(text)  # the same comments, in the same order
    parse(edited, comments=True)
    before, after = loads(text), loads(edited)
    for key, value in before.items():
        if key != "hooks":
            assert after[key] == value
    for event, prior in (before.get("hooks") or {}).items():
        assert after["hooks"][event][: len(prior)] == prior
    assert set(installed(gemini_settings)) == {e for e, _ in GEMINI_CLI.events}
    status = json.loads(cli("hooks", "status", "--json", env=env).stdout)
    row = next(r for r in status["settings"] if r["client"] == "gemini-cli" and r["scope"] == "user")
    assert set(row["installed"]) == {e for e, _ in GEMINI_CLI.events}
    r = cli("hooks", "uninstall", "gemini-cli", env=env)
    assert r.returncode == 0, r.stderr
    assert gemini_settings.read_bytes() == text.encode()


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_add_then_remove_without_install_state_keeps_every_comment(name: str) -> None:
    """Install state lost (another machine, a deleted home): removal still keeps every comment."""
    text = LAYOUTS[name]
    edited, _empty = add_groups(text, planned_groups(GEMINI_CLI, executable="/venv/bin/python"),
                                Path("settings.json"))
    restored, events = remove_ours(edited)
    assert _comments(restored) == _comments(text)
    assert MARKER not in restored and sorted(events) == sorted(e for e, _ in GEMINI_CLI.events)
    stripped_before = loads(text).get("hooks") or {}
    assert {k: v for k, v in (loads(restored).get("hooks") or {}).items()} == stripped_before


def test_uninstall_after_the_user_edited_around_our_entries_removes_only_ours(gemini_settings: Path,
                                                                               hermes_home: Path) -> None:
    gemini_settings.write_text(COMMENTED)
    env = {"HOME": str(gemini_settings.parent.parent)}
    assert cli("hooks", "install", "gemini-cli", env=env).returncode == 0
    text = gemini_settings.read_text()
    # the user adds a note beside our BeforeAgent group and a hook of their own after it
    text = text.replace('"BeforeAgent": [', '"BeforeAgent": [ // hermes-memory recall, keep it fast', 1)
    i = text.index('"AfterAgent"')
    text = text[:i] + '"Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],\n    ' \
        + text[i:]
    gemini_settings.write_text(text)
    r = cli("hooks", "uninstall", "gemini-cli", env=env)
    assert r.returncode == 0, r.stderr
    after = gemini_settings.read_text()
    assert MARKER not in after
    assert "// hermes-memory recall, keep it fast" in after and "notify-send hi" in after
    assert _comments(after) == _comments(text)
    doc = loads(after)
    assert doc["hooks"]["Notification"][0]["hooks"][0]["command"] == "notify-send hi"
    assert doc["hooks"]["BeforeTool"] == loads(COMMENTED)["hooks"]["BeforeTool"]


@pytest.mark.parametrize(("content", "where", "says"), [
    ('{\n  "ui": {"theme": "GitHub",},\n  "hooksConfig": {"enabled": true}\n}\n', "line 2, column 27",
     "trailing comma"),
    ('{\n  // hooks on\n  "hooksConfig": {"enabled": true},\n}\n', "line 3, column 35", "trailing comma"),
    ('{\n  "ui": {"theme": "GitHub"}\n  /* unclosed\n}\n', "line 3, column 3", "never closed"),
])
def test_a_gemini_file_that_gemini_cli_cannot_read_is_refused_naming_the_place(
        gemini_settings: Path, content: str, where: str, says: str) -> None:
    gemini_settings.write_bytes(content.encode())
    r = cli("hooks", "install", "gemini-cli", env={"HOME": str(gemini_settings.parent.parent)})
    assert r.returncode == 1
    assert "nothing was changed" in r.stderr and where in r.stderr and says in r.stderr, r.stderr
    assert gemini_settings.read_bytes() == content.encode()


def test_a_gemini_file_with_a_byte_order_mark_is_refused_with_how_to_fix_it(gemini_settings: Path) -> None:
    content = "\ufeff{\n  // mine\n  \"ui\": {\"theme\": \"GitHub\"}\n}\n"
    gemini_settings.write_bytes(content.encode())
    r = cli("hooks", "install", "gemini-cli", env={"HOME": str(gemini_settings.parent.parent)})
    assert r.returncode == 1
    assert "byte-order mark" in r.stderr and "without a BOM" in r.stderr, r.stderr
    assert gemini_settings.read_bytes() == content.encode()


def test_a_claude_code_file_with_comments_is_refused_because_claude_code_rejects_them(tmp_path: Path) -> None:
    home = tmp_path / "user-home"
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    content = '{\n  // why: opus for hard tasks\n  "model": "opus"\n}\n'
    settings.write_text(content)
    r = cli("hooks", "install", "claude-code", env={"HOME": str(home)})
    assert r.returncode == 1
    assert "line 2, column 3" in r.stderr and "rejects a file with comments" in r.stderr, r.stderr
    assert r.stderr.count("plain JSON") == 2, r.stderr  # "is not valid plain JSON", "reads it as plain JSON": said once each
    assert "(this file must be plain JSON)" not in r.stderr, r.stderr
    assert settings.read_text() == content


def test_install_and_uninstall_back_up_the_file_as_it_was(gemini_settings: Path, hermes_home: Path) -> None:
    gemini_settings.write_text(COMMENTED)
    env = {"HOME": str(gemini_settings.parent.parent)}
    r = cli("hooks", "install", "gemini-cli", "--json", env=env)
    assert r.returncode == 0, r.stderr
    backup = Path(json.loads(r.stdout)["backup"])
    assert backup.parent == hermes_home / "hooks" / "backups"
    assert backup.read_text() == COMMENTED and oct(backup.stat().st_mode & 0o777) == "0o600"
    installed_text = gemini_settings.read_text()
    r = cli("hooks", "uninstall", "gemini-cli", env=env)
    assert r.returncode == 0 and "the file as it was:" in r.stdout, r.stdout
    backups = sorted((hermes_home / "hooks" / "backups").iterdir())
    assert [b.read_text() for b in backups] == [COMMENTED, installed_text]
    for _ in range(6):  # only the newest few are kept
        assert cli("hooks", "install", "gemini-cli", "--recall-budget", str(2 + _), env=env).returncode == 0
    assert len(list((hermes_home / "hooks" / "backups").iterdir())) == 5


def test_a_file_created_by_install_has_no_backup(gemini_settings: Path) -> None:
    r = cli("hooks", "install", "gemini-cli", "--json", env={"HOME": str(gemini_settings.parent.parent)})
    assert r.returncode == 0 and json.loads(r.stdout)["backup"] is None and json.loads(r.stdout)["created"]


def test_claude_code_files_stay_plain_json_after_install(tmp_path: Path) -> None:
    text = json.dumps({"model": "opus", "hooks": {}}, indent=2)
    edited, _ = add_groups(text, planned_groups(CLAUDE_CODE), Path("settings.json"))
    json.loads(edited)
    assert comment_spans(edited) == []
