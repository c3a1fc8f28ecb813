"""``hooks install/uninstall``: our entries merged into settings.json, every other byte kept."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hermes_memory.hooks.clients import CLAUDE_CODE, GEMINI_CLI
from hermes_memory.hooks.settings import MARKER, HooksError, install, installed, planned_groups, uninstall
from tests.hooks.helpers import cli

PRETTY = """{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "model": "opus",
  "env": {"DEBUG": "1", "NAME": "Zoë \\u00e9"},
  "permissions": {
    "allow": ["Bash(git status)", "Read(~/notes/**)"],
    "deny": []
  },
  "hooks": {
    "SessionStart": [
      {
        "matcher": "compact",
        "hooks": [{"type": "command", "command": "other-tool --restore", "timeout": 5}]
      }
    ],
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "guard.sh"
          }
        ]
      }
    ],
    "Stop": []
  },
  "statusLine": {"type": "command", "command": "~/.claude/statusline.sh"},
  "numbers": [1.50, -0, 1e3]
}
"""

C01 = ('{"model":"opus","hooks":{"SessionStart":[{"matcher":"compact","hooks":[{"type":"command","command":'
       '"other-tool"}]}],"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"guard.sh"}]}]}}')


@pytest.fixture()
def claude_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "user-home"
    (home / ".claude").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return home


def _env(home: Path) -> dict[str, str]:
    env = {"HOME": str(home)}
    return env


def _ours(path: Path) -> dict[str, list[dict]]:
    return installed(path)


def test_install_then_uninstall_leaves_a_file_with_other_hooks_byte_identical(claude_home: Path) -> None:
    settings = claude_home / ".claude" / "settings.json"
    settings.write_bytes(PRETTY.encode())
    r = cli("hooks", "install", "claude-code", env=_env(claude_home))
    assert r.returncode == 0, r.stderr
    after = json.loads(settings.read_text())
    before = json.loads(PRETTY)
    for key in before:  # every other setting unchanged
        if key != "hooks":
            assert after[key] == before[key]
    assert after["hooks"]["SessionStart"][0] == before["hooks"]["SessionStart"][0]
    assert after["hooks"]["PreToolUse"] == before["hooks"]["PreToolUse"]
    assert set(_ours(settings)) == {"SessionStart", "UserPromptSubmit", "PreCompact", "Stop", "SessionEnd"}
    # the foreign text is still there, character for character
    assert '"matcher": "compact",\n        "hooks": [{"type": "command", "command": "other-tool --restore", "timeout": 5}]' \
        in settings.read_text()
    r = cli("hooks", "uninstall", "claude-code", env=_env(claude_home))
    assert r.returncode == 0, r.stderr
    assert settings.read_bytes() == PRETTY.encode()


def test_c01_installer_appends_to_session_start_and_keeps_foreign_groups(claude_home: Path) -> None:
    settings = claude_home / ".claude" / "settings.json"
    settings.write_text(C01)
    before = json.loads(C01)
    assert cli("hooks", "install", "claude-code", env=_env(claude_home)).returncode == 0
    text = settings.read_text()
    after = json.loads(text)
    assert after["model"] == "opus"
    for event, groups in before["hooks"].items():
        assert after["hooks"][event][: len(groups)] == groups
    for event, groups in after["hooks"].items():
        added = groups[len(before["hooks"].get(event, [])):]
        assert all(MARKER in h["command"] for g in added for h in g["hooks"])
        assert len(added) == (1 if CLAUDE_CODE.action(event) else 0)
    assert "\n" not in text  # a one-line file stays one line
    assert cli("hooks", "uninstall", "claude-code", env=_env(claude_home)).returncode == 0
    assert settings.read_text() == C01


def test_c02_reinstall_replaces_our_entries_instead_of_adding_copies(claude_home: Path, hermes_home: Path) -> None:
    settings = claude_home / ".claude" / "settings.json"
    settings.write_text(PRETTY)
    for _ in range(3):
        change, _, _ = install(settings, planned_groups(CLAUDE_CODE), hermes_home)
        ours = _ours(settings)
        assert {e: len(v) for e, v in ours.items()} == dict.fromkeys(ours, 1)
    first = settings.read_text()
    # a 4th install with another command (a new venv) replaces the old one
    install(settings, planned_groups(CLAUDE_CODE, executable="/new/venv/bin/python"), hermes_home)
    ours = _ours(settings)
    assert all(len(v) == 1 and v[0]["command"].startswith("/new/venv/bin/python ") for v in ours.values())
    assert settings.read_text() != first
    uninstall(settings, hermes_home)
    assert _ours(settings) == {}
    assert settings.read_text() == PRETTY


def test_install_creates_a_missing_file_and_uninstall_deletes_it(claude_home: Path, hermes_home: Path) -> None:
    settings = claude_home / ".claude" / "settings.json"
    change, before, after = install(settings, planned_groups(CLAUDE_CODE), hermes_home)
    assert change.created and before is None
    assert json.loads(after)["hooks"]["Stop"][0]["hooks"][0]["timeout"] == 30
    assert oct(settings.stat().st_mode & 0o777) == "0o600"
    change, _, _ = uninstall(settings, hermes_home)
    assert change.deleted and not settings.exists()


def test_a_user_edit_after_install_survives_uninstall(claude_home: Path, hermes_home: Path) -> None:
    settings = claude_home / ".claude" / "settings.json"
    settings.write_text(PRETTY)
    install(settings, planned_groups(CLAUDE_CODE), hermes_home)
    edited = settings.read_text().replace('"model": "opus"', '"model": "sonnet"')
    settings.write_text(edited)
    uninstall(settings, hermes_home)
    assert settings.read_text() == PRETTY.replace('"model": "opus"', '"model": "sonnet"')


def test_our_entry_inside_a_shared_group_is_removed_alone(claude_home: Path, hermes_home: Path) -> None:
    settings = claude_home / ".claude" / "settings.json"
    ours = {"type": "command", "command": f"x {MARKER}"}
    doc = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify.sh"}, ours]}]}}
    settings.write_text(json.dumps(doc, indent=2))
    uninstall(settings, hermes_home)
    assert json.loads(settings.read_text()) == {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify.sh"}]}]}}


@pytest.mark.parametrize("content", ["{not json", '["a list"]', '{"hooks": []}', '{"hooks": {"Stop": {}}}',
                                     '{"a": 1,}'])
def test_a_file_we_cannot_edit_safely_is_refused_and_left_byte_identical(claude_home: Path, content: str) -> None:
    settings = claude_home / ".claude" / "settings.json"
    settings.write_text(content)
    r = cli("hooks", "install", "claude-code", env=_env(claude_home))
    assert r.returncode == 1
    assert "nothing was changed" in r.stderr
    assert settings.read_text() == content


def test_claude_config_dir_and_project_scopes_choose_the_settings_file(tmp_path: Path, claude_home: Path) -> None:
    cfg = tmp_path / "cfg"
    r = cli("hooks", "install", "claude-code", "--json", env={**_env(claude_home), "CLAUDE_CONFIG_DIR": str(cfg)})
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["path"] == str(cfg / "settings.json")
    assert _ours(cfg / "settings.json") and not (claude_home / ".claude" / "settings.json").exists()
    proj = tmp_path / "proj"
    proj.mkdir()
    r = cli("hooks", "install", "claude-code", "--scope", "project", "--json", env=_env(claude_home), cwd=str(proj))
    assert json.loads(r.stdout)["path"] == str(proj / ".claude" / "settings.json")
    r = cli("hooks", "install", "claude-code", "--scope", "local", "--project-dir", str(proj), "--json",
            env=_env(claude_home))
    assert json.loads(r.stdout)["path"] == str(proj / ".claude" / "settings.local.json")
    status = json.loads(cli("hooks", "status", "--project-dir", str(proj), "--json", env=_env(claude_home)).stdout)
    by = {(r["client"], r["scope"]): r for r in status["settings"]}
    assert by[("claude-code", "project")]["installed"] and by[("claude-code", "local")]["installed"]
    assert not by[("claude-code", "user")]["installed"]  # CLAUDE_CONFIG_DIR was not set for this call


def test_a_symlinked_settings_file_is_written_through_to_its_target(claude_home: Path, tmp_path: Path,
                                                                    hermes_home: Path) -> None:
    real = tmp_path / "dotfiles" / "claude-settings.json"
    real.parent.mkdir()
    real.write_text(PRETTY)
    link = claude_home / ".claude" / "settings.json"
    os.symlink(real, link)
    install(link, planned_groups(CLAUDE_CODE), hermes_home)
    assert link.is_symlink() and _ours(real)
    uninstall(link, hermes_home)
    assert link.is_symlink() and real.read_text() == PRETTY


def test_dry_run_writes_nothing(claude_home: Path) -> None:
    settings = claude_home / ".claude" / "settings.json"
    settings.write_text(PRETTY)
    r = cli("hooks", "install", "claude-code", "--dry-run", env=_env(claude_home))
    assert r.returncode == 0 and MARKER in r.stdout
    assert settings.read_text() == PRETTY


def test_dry_run_prints_the_file_unwrapped_so_it_parses_as_json(claude_home: Path) -> None:
    """The dry run's text is the file: a narrow terminal must not wrap the long hook command
    inside a JSON string (it did at 80 columns, and the printed file did not parse)."""
    settings = claude_home / ".claude" / "settings.json"
    settings.write_text(PRETTY)
    r = cli("hooks", "install", "claude-code", "--dry-run", env={**_env(claude_home), "COLUMNS": "40"})
    assert r.returncode == 0, r.stderr
    printed = r.stdout[r.stdout.index("\n{") + 1:]
    assert MARKER in json.dumps(json.loads(printed))
    assert settings.read_text() == PRETTY


def test_reindex_help_names_the_embeddings_extra() -> None:
    """`sessions reindex --help` says which extra to install: the help is rich markup, where an
    unescaped "[embeddings]" was taken for a tag and vanished."""
    r = cli("sessions", "reindex", "--help", env={"COLUMNS": "200"})
    assert r.returncode == 0 and "hermes-memory[embeddings]" in r.stdout


def test_gemini_cli_gets_its_events_and_millisecond_timeouts(claude_home: Path, hermes_home: Path) -> None:
    settings = GEMINI_CLI.settings_path("user")
    assert settings == claude_home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n  "theme": "GitHub",\n  "hooksConfig": {"enabled": true}\n}\n')
    install(settings, planned_groups(GEMINI_CLI, budget=2.0), hermes_home)
    data = json.loads(settings.read_text())
    assert list(data["hooks"]) == ["SessionStart", "BeforeAgent", "AfterAgent", "SessionEnd"]
    before_agent = data["hooks"]["BeforeAgent"][0]["hooks"][0]
    assert before_agent["timeout"] == 10_000 and "--client gemini-cli --budget 2" in before_agent["command"]
    uninstall(settings, hermes_home)
    assert settings.read_text() == '{\n  "theme": "GitHub",\n  "hooksConfig": {"enabled": true}\n}\n'


def test_install_refuses_a_hooks_value_of_the_wrong_type_without_writing(claude_home: Path, hermes_home: Path) -> None:
    settings = claude_home / ".claude" / "settings.json"
    settings.write_text('{"hooks": "nope"}')
    with pytest.raises(HooksError):
        install(settings, planned_groups(CLAUDE_CODE), hermes_home)
    assert settings.read_text() == '{"hooks": "nope"}'


def test_install_with_home_pins_that_data_home_in_every_command(claude_home: Path, tmp_path: Path) -> None:
    other = tmp_path / "other home"
    r = cli("--home", str(other), "hooks", "install", "claude-code", env=_env(claude_home))
    assert r.returncode == 0, r.stderr
    ours = _ours(claude_home / ".claude" / "settings.json")
    assert all(f"--home '{other.resolve()}'" in e[0]["command"] for e in ours.values())
    assert (other / "hooks" / "installs.json").exists()
    r = cli("--home", str(other), "hooks", "uninstall", "claude-code", env=_env(claude_home))
    assert r.returncode == 0 and not (claude_home / ".claude" / "settings.json").exists()


def test_a_settings_file_nested_too_deep_is_refused_and_status_still_answers(claude_home: Path) -> None:
    settings = claude_home / ".claude" / "settings.json"
    content = '{"a": ' + "[" * 5000 + "]" * 5000 + "}"
    settings.write_text(content)
    r = cli("hooks", "install", "claude-code", env=_env(claude_home))
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "nothing was changed" in r.stderr
    r = cli("hooks", "status", "--json", env=_env(claude_home))
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert settings.read_text() == content


def test_uninstall_through_a_dangling_symlink_keeps_the_link(claude_home: Path, tmp_path: Path,
                                                             hermes_home: Path) -> None:
    target = tmp_path / "dotfiles" / "claude-settings.json"
    target.parent.mkdir()
    link = claude_home / ".claude" / "settings.json"
    os.symlink(target, link)  # a dotfiles link whose target is not there yet
    install(link, planned_groups(CLAUDE_CODE), hermes_home)
    assert link.is_symlink() and _ours(target)
    change, _, _ = uninstall(link, hermes_home)
    assert change.deleted
    assert link.is_symlink() and not target.exists()  # back as it was: the link, dangling


def test_a_read_only_settings_file_is_refused_and_left_byte_identical(claude_home: Path) -> None:
    settings = claude_home / ".claude" / "settings.json"
    settings.write_text(PRETTY)
    settings.chmod(0o444)  # the user's way of saying "do not touch" (root could write it anyway)
    r = cli("hooks", "install", "claude-code", env=_env(claude_home))
    assert r.returncode == 1, r.stdout
    assert "read-only" in r.stderr and "nothing was changed" in r.stderr
    assert settings.read_text() == PRETTY and oct(settings.stat().st_mode & 0o777) == "0o444"


@pytest.mark.parametrize("blank", ["", "\n", "  \r\n"])
def test_an_empty_settings_file_is_filled_and_uninstall_gives_it_back_empty(claude_home: Path, hermes_home: Path,
                                                                            blank: str) -> None:
    settings = claude_home / ".claude" / "settings.json"
    settings.write_bytes(blank.encode())  # `touch ~/.claude/settings.json`
    install(settings, planned_groups(CLAUDE_CODE), hermes_home)
    assert set(_ours(settings)) == {e for e, _ in CLAUDE_CODE.events}
    change, _, _ = uninstall(settings, hermes_home)
    assert change.changed and not change.deleted
    assert settings.read_bytes() == blank.encode()


def test_status_at_80_columns_shows_each_settings_path_whole(claude_home: Path, hermes_home: Path) -> None:
    r = cli("--home", str(hermes_home), "hooks", "install", "claude-code", env=_env(claude_home))
    assert r.returncode == 0, r.stderr
    r = cli("--home", str(hermes_home), "hooks", "status", env={**_env(claude_home), "COLUMNS": "80"})
    assert r.returncode == 0, r.stderr
    assert "…" not in r.stdout, r.stdout  # a path cut to an ellipsis tells the user nothing
    column = "".join(ln.split("│")[3].strip() for ln in r.stdout.splitlines() if ln.count("│") == 6)
    assert str(claude_home / ".claude" / "settings.json") in column, r.stdout
