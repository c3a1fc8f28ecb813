"""``memory setup --yes`` refuses a missing required setting the same way for every bundled
provider: exit 2 before anything is written, naming the setting and how to pass it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from hermes_memory.cli.main import app
from hermes_memory.config import read_env_file

runner = CliRunner()

PROVIDER_VARS = ("MEM0_API_KEY", "MEM0_MODE", "MEM0_HOST", "HONCHO_API_KEY", "HONCHO_BASE_URL", "HONCHO_URL",
                 "SUPERMEMORY_API_KEY", "RETAINDB_API_KEY")


@pytest.fixture(autouse=True)
def _clean_environ(monkeypatch: pytest.MonkeyPatch):
    """No provider secret from the developer's shell; .env values the CLI exports do not leak."""
    for var in PROVIDER_VARS:
        monkeypatch.delenv(var, raising=False)
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


def _seed(home: Path) -> dict[str, bytes]:
    (home / "config.yaml").write_text(yaml.safe_dump({"memory": {"provider": "", "memory_char_limit": 3000}}))
    (home / ".env").write_text("OTHER_KEY=keep-me\n")
    os.chmod(home / ".env", 0o600)
    return {p.name: p.read_bytes() for p in home.iterdir() if p.is_file()}


def _files(home: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in home.iterdir() if p.is_file()}


@pytest.mark.parametrize(("provider", "key", "var", "extra"), [
    ("mem0", "api_key", "MEM0_API_KEY", []),
    ("mem0", "api_key", "MEM0_API_KEY", ["--set", "mode=platform"]),
    ("honcho", "apiKey", "HONCHO_API_KEY", []),
    ("supermemory", "api_key", "SUPERMEMORY_API_KEY", []),
    ("retaindb", "api_key", "RETAINDB_API_KEY", []),
])
def test_setup_missing_required_secret_refuses_before_writing(hermes_home: Path, provider: str, key: str,
                                                             var: str, extra: list[str]) -> None:
    before = _seed(hermes_home)
    r = runner.invoke(app, ["--home", str(hermes_home), "memory", "setup", "--provider", provider, *extra, "--yes"])
    assert r.exit_code == 2, r.output
    assert f"--set {key}=" in r.stderr and var in r.stderr and key in r.stderr
    assert _files(hermes_home) == before  # byte-identical, nothing new


def test_setup_honcho_self_hosted_needs_no_key(hermes_home: Path) -> None:
    r = runner.invoke(app, ["--home", str(hermes_home), "memory", "setup", "--provider", "honcho",
                            "--set", "baseUrl=http://127.0.0.1:8000", "--yes", "--json"])
    assert r.exit_code == 0, r.output
    assert yaml.safe_load((hermes_home / "config.yaml").read_text())["honcho"]["baseUrl"] == "http://127.0.0.1:8000"


def test_setup_mem0_selfhosted_needs_host_not_key(hermes_home: Path) -> None:
    before = _seed(hermes_home)
    r = runner.invoke(app, ["--home", str(hermes_home), "memory", "setup", "--provider", "mem0",
                            "--set", "mode=selfhosted", "--yes"])
    assert r.exit_code == 2, r.output
    assert "--set host=" in r.stderr and "MEM0_API_KEY" not in r.stderr
    assert _files(hermes_home) == before
    r = runner.invoke(app, ["--home", str(hermes_home), "memory", "setup", "--provider", "mem0",
                            "--set", "mode=selfhosted", "--set", "host=http://127.0.0.1:8888", "--yes", "--json"])
    assert r.exit_code == 0, r.output


def test_setup_mem0_key_from_env_file_is_enough(hermes_home: Path) -> None:
    (hermes_home / ".env").write_text("MEM0_API_KEY=m0-abc\n")
    r = runner.invoke(app, ["--home", str(hermes_home), "memory", "setup", "--provider", "mem0", "--yes", "--json"])
    assert r.exit_code == 0, r.output
    assert read_env_file(hermes_home / ".env") == {"MEM0_API_KEY": "m0-abc"}
