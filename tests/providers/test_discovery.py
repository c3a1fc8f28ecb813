"""Plugin discovery: bundled, $HERMES_HOME/plugins, project plugins, entry points (docs/reference.md §10, §12)."""

from __future__ import annotations

import logging
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest

from hermes_memory.errors import ProviderError
from hermes_memory.providers import discovery
from hermes_memory.providers.discovery import (
    discover_memory_providers,
    load_configured_provider,
    load_memory_provider,
    load_memory_provider_or_raise,
)

SUBCLASS_PLUGIN = """
from hermes_memory.providers.base import MemoryProvider

class {cls}(MemoryProvider):
    def __init__(self, hermes_home=None):
        self.home = hermes_home

    @property
    def name(self):
        return "{name}"

    def is_available(self):
        return {available}

    def unavailable_reason(self):
        return "set FAKE_KEY in .env"

    def initialize(self, session_id, **kw):
        pass

    def get_tool_schemas(self):
        return []
"""

REGISTER_PLUGIN = """
from hermes_memory.providers.base import MemoryProvider

class _P(MemoryProvider):
    name = "{name}"
    def is_available(self): return True
    def initialize(self, session_id, **kw): pass
    def get_tool_schemas(self): return []

def register(ctx):
    ctx.register_tool("ignored")          # other plugin kinds pass through
    ctx.register_memory_provider(_P())
"""


def _plugin(root: Path, name: str, code: str, description: str | None = None) -> Path:
    d = root / name
    d.mkdir(parents=True)
    (d / "__init__.py").write_text(textwrap.dedent(code))
    if description is not None:
        (d / "plugin.yaml").write_text(f"name: {name}\ndescription: {description}\n")
    return d


def test_bundled_holographic_is_discovered():
    infos = {i.name: i for i in discover_memory_providers()}
    assert "holographic" in infos
    assert infos["holographic"].source == "bundled"
    assert infos["holographic"].available is True
    assert infos["holographic"].description


def test_unknown_name_gives_none_and_loud_error(caplog):
    with caplog.at_level(logging.ERROR):
        assert load_memory_provider("no-such-provider") is None
    assert "no-such-provider" in caplog.text
    with pytest.raises(ProviderError, match="not found.*known providers"):
        load_memory_provider_or_raise("no-such-provider")


def test_user_plugin_with_plugin_yaml_loads(hermes_home):
    _plugin(hermes_home / "plugins", "userprov",
            SUBCLASS_PLUGIN.format(cls="UserProv", name="userprov", available=True), "A user plugin")
    infos = {i.name: i for i in discover_memory_providers(hermes_home)}
    assert infos["userprov"].source == "user"
    assert infos["userprov"].description == "A user plugin"
    p = load_memory_provider("userprov", hermes_home=hermes_home)
    assert p is not None and p.name == "userprov"
    assert p.home == str(hermes_home)  # hermes_home passed to a constructor that accepts it


def test_register_style_plugin(hermes_home):
    _plugin(hermes_home / "plugins", "regprov", REGISTER_PLUGIN.format(name="regprov"), "registered")
    p = load_memory_provider("regprov", hermes_home=hermes_home)
    assert p is not None and p.name == "regprov"


HOME_AWARE_PLUGIN = """
from pathlib import Path
from hermes_memory.providers.base import MemoryProvider

class _P(MemoryProvider):
    name = "homeaware"
    def __init__(self, home):
        self.home = home
    def is_available(self):  # available only where this home holds its settings file
        return self.home is not None and (Path(self.home) / "homeaware.txt").exists()
    def initialize(self, session_id, **kw): pass
    def get_tool_schemas(self): return []

def register(ctx):
    ctx.register_memory_provider(_P(getattr(ctx, "hermes_home", None)))
"""


def test_register_ctx_carries_the_inspected_home(hermes_home, tmp_path):
    # `--home` may differ from $HERMES_HOME: register(ctx) must see the home being inspected.
    other = tmp_path / "other-home"
    _plugin(other / "plugins", "homeaware", HOME_AWARE_PLUGIN, "home aware")
    (other / "homeaware.txt").write_text("configured")
    infos = {i.name: i for i in discover_memory_providers(other)}
    assert infos["homeaware"].available is True
    provider = load_memory_provider("homeaware", hermes_home=other)
    assert provider is not None and Path(provider.home) == other.resolve()


def test_user_plugin_without_marker_is_ignored(hermes_home):
    _plugin(hermes_home / "plugins", "notaprovider", "X = 1\n")
    assert "notaprovider" not in {i.name for i in discover_memory_providers(hermes_home)}


def test_bundled_wins_a_name_clash_and_is_listed_once(hermes_home):
    _plugin(hermes_home / "plugins", "holographic",
            SUBCLASS_PLUGIN.format(cls="Impostor", name="holographic", available=False), "impostor")
    infos = [i for i in discover_memory_providers(hermes_home) if i.name == "holographic"]
    assert len(infos) == 1 and infos[0].source == "bundled"
    p = load_memory_provider("holographic", hermes_home=hermes_home)
    assert type(p).__name__ != "Impostor"


def test_broken_plugin_is_listed_unavailable_with_reason(hermes_home):
    _plugin(hermes_home / "plugins", "broken", "from hermes_memory.providers.base import MemoryProvider\n"
            "raise ImportError('needs the foo SDK: pip install foo')\n")
    infos = {i.name: i for i in discover_memory_providers(hermes_home)}
    assert infos["broken"].available is False
    assert "pip install foo" in infos["broken"].reason
    with pytest.raises(ProviderError, match="failed to load"):
        load_memory_provider_or_raise("broken", hermes_home)


def test_unavailable_provider_reason_and_configured_provider_is_loud(hermes_home, caplog):
    _plugin(hermes_home / "plugins", "needskey",
            SUBCLASS_PLUGIN.format(cls="NeedsKey", name="needskey", available=False), "needs a key")
    infos = {i.name: i for i in discover_memory_providers(hermes_home)}
    assert infos["needskey"].available is False and infos["needskey"].reason == "set FAKE_KEY in .env"
    assert load_configured_provider("", hermes_home) is None
    with caplog.at_level(logging.ERROR), pytest.raises(ProviderError, match="not available: set FAKE_KEY"):
        load_configured_provider("needskey", hermes_home)
    assert "needskey" in caplog.text


def test_project_plugins_need_the_env_flag(hermes_home, tmp_path, monkeypatch):
    project = tmp_path / "proj"
    _plugin(project / ".hermes" / "plugins", "projprov",
            SUBCLASS_PLUGIN.format(cls="ProjProv", name="projprov", available=True), "project plugin")
    monkeypatch.chdir(project)
    monkeypatch.delenv("HERMES_ENABLE_PROJECT_PLUGINS", raising=False)
    assert "projprov" not in {i.name for i in discover_memory_providers(hermes_home)}
    monkeypatch.setenv("HERMES_ENABLE_PROJECT_PLUGINS", "1")
    infos = {i.name: i for i in discover_memory_providers(hermes_home)}
    assert infos["projprov"].source == "project"


def test_entry_point_plugins(hermes_home, tmp_path, monkeypatch):
    pkg = tmp_path / "site" / "ep_provider_pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(textwrap.dedent(SUBCLASS_PLUGIN.format(cls="EpProv", name="epprov", available=True)))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    ep = metadata.EntryPoint(name="epprov", value="ep_provider_pkg:EpProv", group=discovery.ENTRY_POINT_GROUP)
    real = metadata.entry_points

    def fake_entry_points(**kw):
        if kw.get("group") == discovery.ENTRY_POINT_GROUP:
            return metadata.EntryPoints([ep])
        return real(**kw)

    monkeypatch.setattr(discovery.metadata, "entry_points", fake_entry_points)
    infos = {i.name: i for i in discover_memory_providers(hermes_home)}
    assert infos["epprov"].source == "entry_point" and infos["epprov"].available
    p = load_memory_provider("epprov", hermes_home)
    assert p is not None and p.name == "epprov"
    sys.modules.pop("ep_provider_pkg", None)


def test_plugin_calling_sys_exit_on_import_is_listed_broken_not_fatal(hermes_home):
    # a user plugin that exits on import (some SDKs sys.exit on bad config) must not end discovery
    _plugin(hermes_home / "plugins", "exiter", "# MemoryProvider\nimport sys\nsys.exit(3)\n")
    infos = {i.name: i for i in discover_memory_providers(hermes_home)}
    assert infos["exiter"].available is False and "SystemExit" in infos["exiter"].reason
    assert infos["holographic"].available is True
    with pytest.raises(ProviderError, match="SystemExit"):
        load_memory_provider_or_raise("exiter", hermes_home)


def test_description_is_not_the_base_class_docstring(hermes_home):
    _plugin(hermes_home / "plugins", "plain", SUBCLASS_PLUGIN.format(cls="Plain", name="plain", available=True))
    info = {i.name: i for i in discover_memory_providers(hermes_home)}["plain"]
    assert info.description == ""
