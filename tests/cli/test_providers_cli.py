"""CLI: providers list/status, memory setup (interactive and flags), memory status."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from hermes_memory.cli.main import app
from hermes_memory.config import read_env_file

runner = CliRunner()


@pytest.fixture(autouse=True)
def _restore_environ():
    """The CLI exports .env values into os.environ; keep them from leaking into other tests."""
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)

SECRET_PLUGIN = """
from hermes_memory.providers.base import ConfigField, MemoryProvider
import os

class Cloudy(MemoryProvider):
    @property
    def name(self):
        return "cloudy"

    def is_available(self):
        return bool(os.environ.get("CLOUDY_API_KEY"))

    def unavailable_reason(self):
        return "CLOUDY_API_KEY is not set; run `hermes-memory memory setup --provider cloudy`"

    def initialize(self, session_id, **kw):
        pass

    def get_tool_schemas(self):
        return []

    def get_config_schema(self):
        return [
            ConfigField("api_key", "API key", secret=True, required=True, env_var="CLOUDY_API_KEY"),
            ConfigField("region", "Region", choices=("eu", "us"), default="eu"),
            ConfigField("top_k", "Results per recall", type="int", default=5),
        ]

    def save_config(self, values, hermes_home):
        with open(os.path.join(hermes_home, "cloudy-saved.json"), "w") as fh:
            import json
            json.dump(values, fh)
"""


def _install_cloudy(home: Path) -> None:
    d = home / "plugins" / "cloudy"
    d.mkdir(parents=True)
    (d / "__init__.py").write_text(textwrap.dedent(SECRET_PLUGIN))
    (d / "plugin.yaml").write_text("name: cloudy\ndescription: A cloud memory service\n")


def _invoke(home: Path, *args: str, input: str | None = None):
    return runner.invoke(app, ["--home", str(home), *args], input=input)


def test_providers_list_json_and_table(hermes_home, monkeypatch):
    monkeypatch.delenv("CLOUDY_API_KEY", raising=False)
    _install_cloudy(hermes_home)
    res = _invoke(hermes_home, "providers", "list", "--json")
    assert res.exit_code == 0, res.output
    rows = {r["name"]: r for r in json.loads(res.stdout)}
    assert rows["holographic"]["available"] is True and rows["holographic"]["description"]
    assert rows["cloudy"]["available"] is False and "CLOUDY_API_KEY" in rows["cloudy"]["reason"]
    assert rows["cloudy"]["description"] == "A cloud memory service"
    table = _invoke(hermes_home, "providers", "list")
    assert table.exit_code == 0 and "holographic" in table.stdout and "cloudy" in table.stdout


def test_setup_non_interactive_writes_config_and_secret(hermes_home, monkeypatch):
    monkeypatch.delenv("CLOUDY_API_KEY", raising=False)
    _install_cloudy(hermes_home)
    res = _invoke(hermes_home, "memory", "setup", "--provider", "cloudy", "--set", "api_key=ck-123",
                  "--set", "region=us", "--yes", "--json")
    assert res.exit_code == 0, res.output
    cfg = yaml.safe_load((hermes_home / "config.yaml").read_text())
    assert cfg["memory"]["provider"] == "cloudy"
    assert cfg["cloudy"] == {"region": "us", "top_k": 5}
    assert "ck-123" not in (hermes_home / "config.yaml").read_text()
    env_path = hermes_home / ".env"
    assert read_env_file(env_path) == {"CLOUDY_API_KEY": "ck-123"}
    assert stat.S_IMODE(env_path.stat().st_mode) == 0o600
    assert json.loads((hermes_home / "cloudy-saved.json").read_text()) == {"region": "us", "top_k": 5}
    status = _invoke(hermes_home, "memory", "status", "--json")
    assert status.exit_code == 0, status.output
    data = json.loads(status.stdout)
    assert data["provider"]["ok"] is True and data["provider_secrets_set"] == {"CLOUDY_API_KEY": True}
    assert data["provider_settings"]["region"] == "us"


def test_setup_rejects_bad_values_and_leaves_files_untouched(hermes_home):
    _install_cloudy(hermes_home)
    for args in (["--set", "region=mars"], ["--set", "top_k=lots"], ["--set", "nope=1"], ["--set", "broken"]):
        res = _invoke(hermes_home, "memory", "setup", "--provider", "cloudy", "--set", "api_key=k", *args, "--yes")
        assert res.exit_code == 2, res.output
    assert not (hermes_home / "config.yaml").exists() and not (hermes_home / ".env").exists()
    res = _invoke(hermes_home, "memory", "setup", "--provider", "nosuch", "--yes")
    assert res.exit_code == 2 and "unknown provider" in res.output


def test_setup_required_secret_missing_is_usage_error(hermes_home, monkeypatch):
    monkeypatch.delenv("CLOUDY_API_KEY", raising=False)
    _install_cloudy(hermes_home)
    res = _invoke(hermes_home, "memory", "setup", "--provider", "cloudy", "--yes")
    assert res.exit_code == 2 and "CLOUDY_API_KEY" in res.output
    assert not (hermes_home / "config.yaml").exists()


@pytest.mark.filterwarnings("ignore::getpass.GetPassWarning")
def test_setup_interactive_wizard(hermes_home, monkeypatch):
    monkeypatch.delenv("CLOUDY_API_KEY", raising=False)
    _install_cloudy(hermes_home)
    listed = [r["name"] for r in json.loads(_invoke(hermes_home, "providers", "list", "--json").stdout)]
    choice = str(listed.index("cloudy") + 1)
    # provider number, api key (hidden), region, top_k
    res = _invoke(hermes_home, "memory", "setup", input=f"{choice}\nsecret-key\nus\n7\n")
    assert res.exit_code == 0, res.output
    assert "Start a new session" in res.output
    cfg = yaml.safe_load((hermes_home / "config.yaml").read_text())
    assert cfg["memory"]["provider"] == "cloudy" and cfg["cloudy"] == {"region": "us", "top_k": 7}
    assert read_env_file(hermes_home / ".env") == {"CLOUDY_API_KEY": "secret-key"}


@pytest.mark.filterwarnings("ignore::getpass.GetPassWarning")
def test_setup_interactive_cancel_saves_nothing(hermes_home):
    _install_cloudy(hermes_home)
    listed = [r["name"] for r in json.loads(_invoke(hermes_home, "providers", "list", "--json").stdout)]
    res = _invoke(hermes_home, "memory", "setup", input=f"{listed.index('cloudy') + 1}\nkey\n")  # input ends mid-wizard
    assert res.exit_code == 1 and "nothing was saved" in res.output
    assert not (hermes_home / "config.yaml").exists() and not (hermes_home / ".env").exists()


def test_setup_builtin_only_default_choice(hermes_home):
    res = _invoke(hermes_home, "memory", "setup", input="\n")
    assert res.exit_code == 0, res.output
    assert yaml.safe_load((hermes_home / "config.yaml").read_text())["memory"]["provider"] == ""
    status = json.loads(_invoke(hermes_home, "memory", "status", "--json").stdout)
    assert status["provider"]["configured"] is False and status["memory_enabled"] is True


def test_setup_holographic_with_flags(hermes_home):
    res = _invoke(hermes_home, "memory", "setup", "--provider", "holographic", "--set", "hrr_dim=2048",
                  "--set", "auto_extract=true", "--yes")
    assert res.exit_code == 0, res.output
    cfg = yaml.safe_load((hermes_home / "config.yaml").read_text())
    assert cfg["holographic"]["hrr_dim"] == 2048 and cfg["holographic"]["auto_extract"] is True
    res = _invoke(hermes_home, "providers", "status", "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["provider"] == "holographic"


def test_configured_provider_unavailable_is_reported_loudly(hermes_home, monkeypatch):
    monkeypatch.delenv("CLOUDY_API_KEY", raising=False)
    _install_cloudy(hermes_home)
    (hermes_home / "config.yaml").write_text("memory:\n  provider: cloudy\n")
    res = _invoke(hermes_home, "providers", "status")
    assert res.exit_code == 1 and "cloudy" in res.output and "CLOUDY_API_KEY" in res.output
    res = _invoke(hermes_home, "memory", "status", "--json")
    assert res.exit_code == 1
    assert json.loads(res.stdout)["provider"]["ok"] is False
    (hermes_home / "config.yaml").write_text("memory:\n  provider: ghost\n")
    res = _invoke(hermes_home, "providers", "status")
    assert res.exit_code == 1 and "not found" in res.output
    res = _invoke(hermes_home, "providers", "list")
    assert res.exit_code == 1 and "ghost" in res.output


def test_providers_list_in_a_subprocess(hermes_home):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    proc = subprocess.run([sys.executable, "-m", "hermes_memory", "--home", str(hermes_home), "providers", "list",
                           "--json"], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "holographic" in {r["name"] for r in json.loads(proc.stdout)}
