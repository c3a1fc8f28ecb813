"""``hooks install`` with only ``$HERMES_HOME`` set: the installed commands carry that home, so the
hooks keep using it when the client runs them without the variable; status shows it and uninstall
(from a shell without the variable) still removes exactly our entries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hermes_memory.hooks.settings import installed

OTHERS = """{
  "model": "opus",
  "hooks": {
    "SessionStart": [
      {"matcher": "compact", "hooks": [{"type": "command", "command": "other-tool --restore", "timeout": 5}]}
    ]
  }
}
"""


def _env(user_home: Path, hermes_home: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("HERMES_HOME", "CLAUDE_CONFIG_DIR")}
    env["HOME"] = str(user_home)
    if hermes_home is not None:
        env["HERMES_HOME"] = str(hermes_home)
    return env


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The CLI with exactly ``env`` (no $HERMES_HOME from the test process leaks in)."""
    return subprocess.run([sys.executable, "-m", "hermes_memory", *args], capture_output=True, text=True,
                          env=env, timeout=120)


def test_install_with_only_hermes_home_set_writes_that_home_into_every_command(tmp_path: Path) -> None:
    user, data = tmp_path / "user", tmp_path / "data home"
    (user / ".claude").mkdir(parents=True)
    settings = user / ".claude" / "settings.json"
    r = _cli("hooks", "install", "claude-code", env=_env(user, data))
    assert r.returncode == 0, r.stderr
    ours = installed(settings)
    assert ours and all(len(v) == 1 for v in ours.values())
    for entries in ours.values():
        assert f"--home '{data.resolve()}'" in entries[0]["command"], entries[0]["command"]

    # The client runs the hook without $HERMES_HOME: it must still write to the home installed for.
    command = ours["UserPromptSubmit"][0]["command"]
    hook_input = json.dumps({"session_id": "s1", "hook_event_name": "UserPromptSubmit", "prompt": "hello",
                             "cwd": str(tmp_path), "transcript_path": str(tmp_path / "none.jsonl")})
    run = subprocess.run(["sh", "-c", command], input=hook_input, capture_output=True, text=True,
                         env=_env(user, None), timeout=120)
    assert run.returncode == 0, run.stderr
    assert (data / "logs" / "hooks.log").exists() or (data / "state.db").exists()
    assert not (user / ".hermes").exists(), "the hook ran against ~/.hermes instead of the installed home"


def test_status_names_the_home_and_uninstall_without_the_variable_restores_the_file(tmp_path: Path) -> None:
    user, data = tmp_path / "user", tmp_path / "data"
    (user / ".claude").mkdir(parents=True)
    settings = user / ".claude" / "settings.json"
    settings.write_text(OTHERS)
    assert _cli("hooks", "install", "claude-code", env=_env(user, data)).returncode == 0

    st = _cli("hooks", "status", "--json", env=_env(user, None))
    assert st.returncode == 0, st.stderr
    row = next(r for r in json.loads(st.stdout)["settings"] if r["client"] == "claude-code" and r["scope"] == "user")
    assert row["homes"] == [str(data.resolve())]
    assert json.loads(st.stdout)["log"] == str(data.resolve() / "logs" / "hooks.log")

    r = _cli("hooks", "uninstall", "claude-code", env=_env(user, None))
    assert r.returncode == 0, r.stderr
    assert settings.read_text() == OTHERS  # other programs' entries untouched, byte for byte
    assert not (user / ".hermes").exists()


def test_uninstall_without_the_variable_deletes_a_settings_file_the_install_created(tmp_path: Path) -> None:
    user, data = tmp_path / "user", tmp_path / "data"
    (user / ".claude").mkdir(parents=True)
    settings = user / ".claude" / "settings.json"
    assert _cli("hooks", "install", "claude-code", env=_env(user, data)).returncode == 0
    assert settings.exists()
    r = _cli("hooks", "uninstall", "claude-code", env=_env(user, None))
    assert r.returncode == 0, r.stderr
    assert not settings.exists(), "the install record of the installed-for home was not found"
    assert json.loads((data / "hooks" / "installs.json").read_text()) == {}
