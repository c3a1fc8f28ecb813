"""Unknown keys in config.yaml warn (file, line, dotted key, did-you-mean) and never refuse the
file; the reference Hermes Agent's own keys, provider sections and top-level variables do not warn."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_memory.config import load_config
from tests import backends

TYPOS = """\
memory:
  memroy_char_limit: 3000
  user_char_limit: 2000
compresion:
  enabled: false
search:
  embedings: on
sessions:
  retension_days: 30
"""


def _write(home: Path, text: str) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_each_unknown_key_warns_with_its_line_and_the_key_meant(tmp_path: Path) -> None:
    path = _write(tmp_path / "h", TYPOS)
    cfg = load_config(path)
    assert cfg.memory.memory_char_limit == 2200 and cfg.memory.user_char_limit == 2000  # loaded, typo ignored
    assert cfg.warnings == [
        f"{path}:2: memory.memroy_char_limit is not a known key (ignored); did you mean memory.memory_char_limit?",
        f"{path}:4: compresion is not a known key (ignored); did you mean compression?",
        f"{path}:7: search.embedings is not a known key (ignored); did you mean search.embeddings?",
        f"{path}:9: sessions.retension_days is not a known key (ignored); did you mean sessions.retention_days?",
    ]


def test_an_unknown_key_with_no_near_miss_in_our_section_still_warns(tmp_path: Path) -> None:
    cfg = load_config(_write(tmp_path / "h", "storage:\n  colour: blue\n"))
    assert cfg.warnings == [f"{tmp_path / 'h' / 'config.yaml'}:2: storage.colour is not a known key (ignored)"]


def test_provider_sections_top_level_variables_and_private_keys_do_not_warn(tmp_path: Path) -> None:
    home = tmp_path / "h"
    (home / "plugins" / "myprov").mkdir(parents=True)
    cfg = load_config(_write(home, """\
memory:
  provider: mem0
  mem0:
    user_id: me
  myprov:
    x: 1
  nudge_interval: 4
  write_approval: false
holographic:
  hrr_dim: 1024
myprov:
  y: 2
MY_SKILL_TOKEN_NAME: hello
_test:
  marker: 1
sessions:
  auto_prune: true
  whatever_the_reference_adds: 1
compression:
  in_place: true
  hygiene_hard_message_limit: 400
"""))
    assert cfg.warnings == []


@pytest.mark.parametrize("reference", ["hermes-agent", "hermes-agent-legacy"])
def test_the_reference_agents_whole_default_config_gives_no_unknown_key_warning(tmp_path: Path, reference: str) -> None:
    python = backends.ensure(reference)
    home = tmp_path / "h"
    home.mkdir()
    code = ("import yaml, sys; from hermes_cli.config import DEFAULT_CONFIG; "
            "open(sys.argv[1], 'w').write(yaml.safe_dump(DEFAULT_CONFIG, sort_keys=False))")
    subprocess.run([str(python), "-c", code, str(home / "config.yaml")], check=True, timeout=300,
                   env={**os.environ, "HERMES_HOME": str(home)})
    cfg = load_config(home / "config.yaml")
    assert [w for w in cfg.warnings if "not a known key" in w] == []


def test_status_and_other_commands_print_the_warning_once_and_still_run(tmp_path: Path) -> None:
    home = tmp_path / "h"
    _write(home, "memory:\n  memroy_char_limit: 3000\n")
    env = {k: v for k, v in os.environ.items() if k != "HERMES_DATABASE_URL"}
    for args in (["status"], ["status", "--json"], ["memory", "show"]):
        r = subprocess.run([sys.executable, "-m", "hermes_memory", "--home", str(home), *args], capture_output=True,
                           text=True, env=env, timeout=180)
        assert r.returncode == 0, r.stderr
        assert r.stderr.count("memory.memroy_char_limit is not a known key") == 1, r.stderr
        assert "did you mean memory.memory_char_limit?" in " ".join(r.stderr.split())
        if "--json" in args:
            assert any("memroy_char_limit" in w for w in json.loads(r.stdout)["config_warnings"])
