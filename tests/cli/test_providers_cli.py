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


@pytest.mark.parametrize("setting", ["default_trust=5", "min_trust_threshold=-2", "hrr_weight=9", "hrr_dim=-3",
                                     "hrr_dim=100000000", "temporal_decay_half_life=-1", "default_trust=nan"])
def test_setup_refuses_out_of_range_holographic_settings(hermes_home, setting):
    # these were written as given; the provider then clamped them silently (or, for a
    # 100M-dimension HRR, would allocate gigabytes on the first fact)
    res = _invoke(hermes_home, "memory", "setup", "--provider", "holographic", "--set", setting, "--yes")
    assert res.exit_code == 2, res.output
    assert setting.split("=")[0] in res.output
    assert not (hermes_home / "config.yaml").exists()


@pytest.mark.parametrize("bad", ["hrr_dim: lots", "default_trust: 7", "auto_extract: maybe"])
def test_status_reports_invalid_provider_settings(hermes_home, bad):
    # hand-edited config: the provider would fail to initialise (or clamp silently), so status
    # must not say "available"
    (hermes_home / "config.yaml").write_text(f"memory:\n  provider: holographic\nholographic:\n  {bad}\n")
    key = bad.split(":")[0]
    res = _invoke(hermes_home, "providers", "status")
    assert res.exit_code == 1 and key in res.output and "memory setup --provider holographic" in res.output
    res = _invoke(hermes_home, "memory", "status", "--json")
    assert res.exit_code == 1 and json.loads(res.stdout)["provider"]["ok"] is False
    # re-running setup non-interactively must not keep the bad value and report success
    before = (hermes_home / "config.yaml").read_bytes()
    res = _invoke(hermes_home, "memory", "setup", "--provider", "holographic", "--yes")
    assert res.exit_code == 2 and f"--set {key}=" in res.output
    assert (hermes_home / "config.yaml").read_bytes() == before


@pytest.mark.filterwarnings("ignore::getpass.GetPassWarning")
def test_setup_interactive_asks_again_after_an_invalid_answer(hermes_home, monkeypatch):
    monkeypatch.delenv("CLOUDY_API_KEY", raising=False)
    _install_cloudy(hermes_home)
    listed = [r["name"] for r in json.loads(_invoke(hermes_home, "providers", "list", "--json").stdout)]
    choice = str(listed.index("cloudy") + 1)
    # top_k "lots" is not an int: the wizard says so and asks again instead of dropping every answer
    res = _invoke(hermes_home, "memory", "setup", input=f"{choice}\nsecret-key\nus\nlots\n7\n")
    assert res.exit_code == 0, res.output
    assert "not a valid int" in res.output
    assert yaml.safe_load((hermes_home / "config.yaml").read_text())["cloudy"] == {"region": "us", "top_k": 7}


def test_providers_list_is_loud_when_the_configured_provider_is_broken(hermes_home):
    # an unknown configured provider already exited 1; one that fails to import exited 0
    d = hermes_home / "plugins" / "broken"
    d.mkdir(parents=True)
    (d / "__init__.py").write_text("from hermes_memory.providers.base import MemoryProvider\nraise ImportError('no sdk')\n")
    (hermes_home / "config.yaml").write_text("memory:\n  provider: broken\n")
    res = _invoke(hermes_home, "providers", "list", "--json")
    assert res.exit_code == 1
    rows = {r["name"]: r for r in json.loads(res.stdout)}
    assert rows["broken"]["active"] is True and "no sdk" in rows["broken"]["reason"]
    res = _invoke(hermes_home, "providers", "list")
    assert res.exit_code == 1 and "no sdk" in res.output


def test_provider_text_with_markup_brackets_is_printed_not_parsed(hermes_home):
    # plugin errors often hold brackets ("[Errno 2]"); '[/bold]' in one crashed the CLI with a
    # rich MarkupError traceback instead of showing the reason
    d = hermes_home / "plugins" / "br"
    d.mkdir(parents=True)
    (d / "__init__.py").write_text("from hermes_memory.providers.base import MemoryProvider\n"
                                   "raise ImportError('bad [/bold] tag [Errno 2]')\n")
    (d / "plugin.yaml").write_text("description: 'Shiny [/red] provider'\n")
    res = _invoke(hermes_home, "providers", "list")
    assert res.exit_code == 0 and res.exception is None, res.output
    assert "[/bold]" in res.output and "[/red]" in res.output
    res = _invoke(hermes_home, "memory", "setup", input="0\n")
    assert res.exit_code == 0 and "[/red]" in res.output, res.output
    (hermes_home / "config.yaml").write_text("memory:\n  provider: br\n")
    for args in (["providers", "status"], ["memory", "status"], ["providers", "list"]):
        res = _invoke(hermes_home, *args)
        assert res.exit_code == 1 and "[/bold]" in res.output, (args, res.output)
    res = _invoke(hermes_home, "memory", "setup", "--provider", "[/x]", "--yes")
    assert res.exit_code == 2 and "[/x]" in res.output
    res = _invoke(hermes_home, "memory", "setup", "--provider", "holographic", "--set", "db_path=[/x]", "--yes")
    assert res.exit_code == 0, res.output
    res = _invoke(hermes_home, "memory", "status")
    assert res.exit_code == 0 and "[/x]" in res.output, res.output


RAISING_SCHEMA_PLUGIN = """
from hermes_memory.providers.base import ConfigField, MemoryProvider

class P(MemoryProvider):
    name = "sch"
    def is_available(self): return True
    def initialize(self, session_id, **kw): pass
    def get_tool_schemas(self): return []
    def get_config_schema(self):
        {schema}
    def save_config(self, values, hermes_home):
        {save}
"""


@pytest.mark.parametrize("schema,save,where", [
    ("raise RuntimeError('schema boom')", "pass", "get_config_schema"),
    ("return [ConfigField('k', 'key', default='v')]", "raise OSError('disk full')", "save_config"),
])
def test_setup_reports_a_plugin_failing_in_schema_or_save_config(hermes_home, schema, save, where):
    # both used to end the wizard with a raw traceback
    d = hermes_home / "plugins" / "sch"
    d.mkdir(parents=True)
    (d / "__init__.py").write_text(textwrap.dedent(RAISING_SCHEMA_PLUGIN.format(schema=schema, save=save)))
    res = _invoke(hermes_home, "memory", "setup", "--provider", "sch", "--yes")
    assert res.exit_code == 1 and where in res.output and isinstance(res.exception, SystemExit), res.output
    if where == "get_config_schema":
        assert not (hermes_home / "config.yaml").exists()
        (hermes_home / "config.yaml").write_text("memory:\n  provider: sch\n")
        res = _invoke(hermes_home, "memory", "status")
        assert res.exit_code == 1 and where in res.output and isinstance(res.exception, SystemExit), res.output


def test_error_text_with_brackets_prints_literally_once(hermes_home):
    # fail() escapes rich markup itself; callers that escaped too printed stray backslashes.
    result = subprocess.run(
        [sys.executable, "-m", "hermes_memory", "--home", str(hermes_home), "memory", "setup",
         "--provider", "[bad]", "--yes"],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode != 0
    assert "'[bad]'" in result.stderr and "\\[" not in result.stderr
