"""An API key with non-ASCII characters (curly quotes pasted with it) is refused by the setup
wizard and named by the providers' ``unavailable_reason()``, instead of failing every call with
"'ascii' codec can't encode"."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hermes_memory.cli.main import app
from hermes_memory.plugins.honcho import HonchoProvider
from hermes_memory.plugins.mem0 import Mem0Provider
from hermes_memory.plugins.retaindb import RetainDBProvider
from hermes_memory.plugins.supermemory import SupermemoryProvider
from hermes_memory.providers.base import non_ascii_problem

runner = CliRunner()
PASTED = "\u201csk-live-SECRET42\u201d"  # “sk-live-SECRET42”
VARS = ("MEM0_API_KEY", "MEM0_MODE", "MEM0_HOST", "HONCHO_API_KEY", "HONCHO_BASE_URL", "HONCHO_URL",
        "SUPERMEMORY_API_KEY", "RETAINDB_API_KEY")


@pytest.fixture(autouse=True)
def _clean_environ(monkeypatch: pytest.MonkeyPatch):
    for var in VARS:
        monkeypatch.delenv(var, raising=False)
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


def test_non_ascii_problem_names_the_characters_not_the_value() -> None:
    assert non_ascii_problem("X_KEY", "sk-plain-123") == ""
    msg = non_ascii_problem("X_KEY", PASTED)
    assert "X_KEY" in msg and "non-ASCII" in msg and "\u201c" in msg and "\u201d" in msg
    assert "SECRET42" not in msg


@pytest.mark.parametrize(("provider", "key"), [
    ("mem0", "api_key"), ("honcho", "apiKey"), ("supermemory", "api_key"), ("retaindb", "api_key"),
])
def test_setup_refuses_a_non_ascii_secret(hermes_home: Path, provider: str, key: str) -> None:
    r = runner.invoke(app, ["--home", str(hermes_home), "memory", "setup", "--provider", provider,
                            "--set", f"{key}={PASTED}", "--yes"])
    assert r.exit_code == 2, r.output
    assert key in r.stderr and "non-ASCII" in r.stderr and "\u201c" in r.stderr
    assert "SECRET42" not in r.output
    assert not (hermes_home / ".env").exists() and not (hermes_home / "config.yaml").exists()


@pytest.mark.parametrize(("cls", "var"), [
    (Mem0Provider, "MEM0_API_KEY"), (HonchoProvider, "HONCHO_API_KEY"),
    (SupermemoryProvider, "SUPERMEMORY_API_KEY"), (RetainDBProvider, "RETAINDB_API_KEY"),
])
@pytest.mark.parametrize("where", ["environ", "env_file"])
def test_unavailable_reason_names_a_non_ascii_key(hermes_home: Path, monkeypatch: pytest.MonkeyPatch,
                                                  cls: type, var: str, where: str) -> None:
    if where == "environ":
        monkeypatch.setenv(var, PASTED)
    else:
        (hermes_home / ".env").write_text(f"{var}={PASTED}\n", encoding="utf-8")
    p = cls(hermes_home=hermes_home)
    reason = p.unavailable_reason()
    assert var in reason and "non-ASCII" in reason and "\u201c" in reason and "SECRET42" not in reason
    assert p.is_available() is False
    monkeypatch.setenv(var, "sk-live-SECRET42")
    (hermes_home / ".env").unlink(missing_ok=True)
    assert "non-ASCII" not in cls(hermes_home=hermes_home).unavailable_reason()
