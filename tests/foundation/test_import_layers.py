"""The import-layer contract of pyproject.toml ([tool.importlinter]) holds: imports point down the
layers of docs/architecture.md, and cli/providers.py no longer imports cli/setup.py (the cycle)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _lint_imports() -> str:
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert exe, "lint-imports is missing: install the dev extra (make .venv/.installed)"
    return exe


def test_imports_point_down_the_layers():
    proc = subprocess.run([_lint_imports(), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Contracts: 2 kept, 0 broken." in proc.stdout


def test_the_contract_fails_on_an_upward_import(tmp_path):
    # a copy of the package with memory/ importing the agent: the contract must break
    pkg = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "hermes_memory", pkg / "hermes_memory",
                    ignore=shutil.ignore_patterns("__pycache__"))
    bad = pkg / "hermes_memory" / "memory" / "upward.py"
    bad.write_text("from hermes_memory.agent import loop  # noqa: F401\n", encoding="utf-8")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    env = {"PYTHONPATH": str(pkg), "PATH": str(Path(sys.executable).parent)}
    proc = subprocess.run([_lint_imports(), "--no-cache"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600, env=env)
    assert proc.returncode != 0
    assert "hermes_memory.memory.upward -> hermes_memory.agent" in proc.stdout


def test_the_contract_has_no_exceptions_and_the_fence_parser_is_one_module():
    """The session importers strip fences with the foundation's parser (no ``ignore_imports`` left);
    the old ``providers.fencing`` path hands out the very same objects."""
    import tomllib

    import hermes_memory.fencing as fencing
    import hermes_memory.providers.fencing as old_path

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]
    assert all(not c.get("ignore_imports") for c in contracts)
    for name in old_path.__all__:
        assert getattr(old_path, name) is getattr(fencing, name)
