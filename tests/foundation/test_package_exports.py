"""Packages export their public names; the heavy ones load on first use, not on import."""

from __future__ import annotations

import subprocess
import sys


def test_providers_package_exports_the_provider_interface_and_the_manager():
    import hermes_memory.providers as providers
    from hermes_memory.providers.base import MemoryProvider
    from hermes_memory.providers.manager import MemoryManager, create_memory_manager

    assert providers.MemoryProvider is MemoryProvider
    assert providers.MemoryManager is MemoryManager
    assert providers.create_memory_manager is create_memory_manager
    assert set(providers.__all__) >= {"MemoryProvider", "MemoryManager", "create_memory_manager"}


def test_mcp_package_exports_memory_server_without_loading_the_sdk_on_import():
    code = ("import sys, hermes_memory.mcp as m; loaded = 'mcp.server.lowlevel' in sys.modules; "
            "from hermes_memory.mcp.server import MemoryServer; "
            "print(loaded, m.MemoryServer is MemoryServer)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["False", "True"]


def test_the_importers_package_exports_what_an_importer_is_built_from():
    import hermes_memory.sessions.importers as importers

    assert set(importers.__all__) >= {"ImportReport", "import_path", "store_session", "jsonl_files", "iso_time"}
    assert all(hasattr(importers, name) for name in importers.__all__)


def test_every_import_format_names_a_module_with_an_import_path(tmp_path):
    import importlib

    import pytest

    from hermes_memory.sessions.importers import _MODULES, FORMATS, import_path

    for fmt in FORMATS:
        module = importlib.import_module(f"hermes_memory.sessions.importers.{_MODULES.get(fmt, fmt)}")
        assert callable(module.import_path), fmt
    with pytest.raises(ValueError, match="unknown import format"):
        import_path(None, tmp_path, "no-such-format")
