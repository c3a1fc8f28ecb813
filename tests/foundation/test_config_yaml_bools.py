"""YAML 1.1 reads bare on/off/yes/no as booleans: a word-valued option given one is either read the
way the Hermes Agent reads it (``memory.provider: off`` = built-in memory only) or refused with a
message that says to quote the word and lists the words to write -- for every word-valued option."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_memory.config import load_config
from hermes_memory.errors import ConfigError


def _load(tmp_path: Path, text: str):  # noqa: ANN202 - a HermesConfig
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return load_config(path)


@pytest.mark.parametrize("word", ["off", "no", "false", "Off", "NO"])
def test_memory_provider_off_means_built_in_memory_only_as_the_reference_reads_it(tmp_path: Path, word: str) -> None:
    cfg = _load(tmp_path, f"memory:\n  provider: {word}\n")
    assert cfg.memory.provider == ""
    assert len(cfg.warnings) == 1 and "memory.provider" in cfg.warnings[0] and "built-in" in cfg.warnings[0]


@pytest.mark.parametrize(("yaml", "key", "quoted"), [
    ("sessions:\n  synchronous: off\n", "sessions.synchronous", 'synchronous: "normal"'),
    ("sessions:\n  synchronous: on\n", "sessions.synchronous", 'synchronous: "full"'),
    ("sessions:\n  synchronous: yes\n", "sessions.synchronous", 'synchronous: "full"'),
    ("storage:\n  backend: no\n", "storage.backend", 'backend: "sqlite"'),
    ("memory:\n  provider: on\n", "memory.provider", 'provider: "off"'),
    ("compression:\n  summary_model: no\n", "compression.summary_model", 'summary_model: "off"'),
    ("storage:\n  profile: yes\n", "storage.profile", 'profile: "off"'),
])
def test_a_yaml_boolean_in_a_word_valued_option_says_to_quote_the_word(
        tmp_path: Path, yaml: str, key: str, quoted: str) -> None:
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, yaml)
    text = str(err.value)
    line = next(ln for ln in text.splitlines() if ln.strip().startswith(key + ":"))
    assert "write the value in quotes" in line and quoted in line, line


def test_quoted_words_load_and_options_that_are_booleans_take_on_and_off(tmp_path: Path) -> None:
    cfg = _load(tmp_path, 'sessions:\n  synchronous: "normal"\nsearch:\n  embeddings: off\n'
                          'memory:\n  memory_enabled: on\n')
    assert cfg.sessions.synchronous == "normal" and cfg.search.embeddings is False
    assert cfg.memory.memory_enabled is True and cfg.warnings == []
