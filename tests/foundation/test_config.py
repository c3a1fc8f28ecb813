"""config.yaml loading, validation errors, dotted updates and the .env secrets file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from hermes_memory.config import HermesConfig, load_config, read_env_file, update_config, write_env_values
from hermes_memory.errors import ConfigError, HomeError
from hermes_memory.home import HermesHome, resolve_home


def test_defaults_match_reference() -> None:
    cfg = HermesConfig()
    assert cfg.memory.memory_char_limit == 2200
    assert cfg.memory.user_char_limit == 1375
    assert cfg.memory.nudge_interval == 10
    assert cfg.memory.flush_min_turns == 6
    assert cfg.memory.provider == ""
    assert cfg.compression.threshold == 0.50
    assert cfg.compression.target_ratio == 0.20
    assert cfg.compression.protect_last_n == 20
    assert cfg.prompt_caching.cache_ttl == "5m"


def test_missing_file_gives_defaults(tmp_path: Path) -> None:
    assert load_config(tmp_path / "nope.yaml") == HermesConfig()


def test_reference_config_with_unknown_sections_loads(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(
        "model:\n  default: some-model\n  provider: openai\n  name: gpt\n"
        "terminal:\n  backend: local\n"
        "memory:\n  memory_char_limit: '3000'\n  provider: holographic\n  some_future_key: 1\n"
        "compression:\n",
        encoding="utf-8",
    )
    cfg = load_config(path)
    assert cfg.memory.memory_char_limit == 3000  # string limits are int-cast
    assert cfg.memory.provider == "holographic"
    assert cfg.model_extra is not None and cfg.model_extra["terminal"] == {"backend": "local"}


def test_value_neither_program_accepts_names_file_key_and_allowed(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("compression:\n  target_ratio: lots\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    text = str(err.value)
    assert str(path) in text and "compression.target_ratio" in text and "valid number" in text and "'lots'" in text


def test_out_of_range_number_is_clamped_with_a_warning_naming_file_and_key(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("memory:\n  memory_char_limit: -5\n  nudge_interval: -1\n", encoding="utf-8")
    cfg = load_config(path)
    assert cfg.memory.memory_char_limit == 100 and cfg.memory.nudge_interval == 0
    assert len(cfg.warnings) == 2
    assert all(str(path) in w for w in cfg.warnings)
    assert "memory.memory_char_limit: -5 is below the minimum; using 100" in cfg.warnings[0]


def test_malformed_yaml_is_config_error(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("memory: [unclosed\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(path)


def test_update_config_keeps_other_keys_and_refuses_bad_values(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("terminal:\n  backend: local\nmemory:\n  nudge_interval: 4\n", encoding="utf-8")
    cfg = update_config(path, {"memory.provider": "holographic", "holographic.db_path": "x.db"})
    assert cfg.memory.provider == "holographic" and cfg.memory.nudge_interval == 4
    reloaded = load_config(path)
    assert reloaded.model_extra is not None and reloaded.model_extra["terminal"] == {"backend": "local"}
    assert reloaded.model_extra["holographic"] == {"db_path": "x.db"}
    before = path.read_bytes()
    with pytest.raises(ConfigError):
        update_config(path, {"memory.user_char_limit": "lots"})
    assert path.read_bytes() == before


def test_env_file_written_0600_and_preserves_lines(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_text("# keep me\nOTHER=1\nMEM0_API_KEY=old\n", encoding="utf-8")
    write_env_values(path, {"MEM0_API_KEY": "new value", "HONCHO_API_KEY": "abc"})
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert "# keep me" in path.read_text()
    assert read_env_file(path) == {"OTHER": "1", "MEM0_API_KEY": "new value", "HONCHO_API_KEY": "abc"}
    with pytest.raises(ConfigError, match="newline"):
        write_env_values(path, {"X": "a\nb"})


def test_home_resolution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hermes_home: Path) -> None:
    assert resolve_home() == hermes_home.resolve()
    assert resolve_home(tmp_path / "explicit") == (tmp_path / "explicit").resolve()
    monkeypatch.delenv("HERMES_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert resolve_home() == (tmp_path / ".hermes").resolve()
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(HomeError, match="not a directory"):
        resolve_home(afile)
    home = HermesHome.resolve(tmp_path / "h").ensure()
    assert home.memories_dir.is_dir() and home.config_path.name == "config.yaml"


def test_update_config_keeps_comments_quotes_and_mode_and_new_files_are_0600(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    text = "# head comment\nterminal:\n    backend: 'local'   # why\n    list:\n    - a\nmemory:\n    provider: ''\n"
    path.write_text(text, encoding="utf-8")
    os.chmod(path, 0o640)
    update_config(path, {"memory.provider": "holographic"})
    assert path.read_text(encoding="utf-8") == text.replace("provider: ''", "provider: 'holographic'")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    fresh = tmp_path / "new" / "config.yaml"
    update_config(fresh, {"memory.provider": ""})
    assert stat.S_IMODE(os.stat(fresh).st_mode) == 0o600 and load_config(fresh).memory.provider == ""


def test_update_config_refuses_an_edit_that_would_change_other_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import hermes_memory.config as config_mod

    path = tmp_path / "config.yaml"
    path.write_text("terminal: {backend: local}\nmemory: {provider: ''}\n", encoding="utf-8")
    before = path.read_bytes()
    real = config_mod._round_trip_yaml

    def lossy(text: str):  # a round trip that loses a section, as a YAML library bug would
        rt, doc = real(text)
        del doc["terminal"]
        return rt, doc

    monkeypatch.setattr(config_mod, "_round_trip_yaml", lossy)
    with pytest.raises(ConfigError, match="without changing other keys"):
        update_config(path, {"memory.provider": "holographic"})
    assert path.read_bytes() == before


def test_empty_values_mean_the_default_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("model:\n  default: m\n  base_url:\n  context_length:\n  temperature:\n"
                    "compression:\n  threshold:\n  threshold_tokens:\n", encoding="utf-8")
    cfg = load_config(path)
    assert cfg.model.base_url == "" and cfg.model.context_length == 128_000 and cfg.model.temperature is None
    assert cfg.compression.threshold == 0.50 and cfg.compression.threshold_tokens is None
    assert sorted(w.split(": ")[1].split(" ")[0] for w in cfg.warnings) == ["compression.threshold",
                                                                            "model.context_length"]
