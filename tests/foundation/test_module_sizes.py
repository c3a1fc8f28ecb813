"""No module under src/ is over 600 lines (issue 18): a module that grows past it does several jobs."""

from __future__ import annotations

from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "hermes_memory"
MAX_LINES = 600


def test_no_module_is_over_600_lines():
    sizes = {str(p.relative_to(SRC)): len(p.read_text(encoding="utf-8").splitlines()) for p in SRC.rglob("*.py")}
    assert len(sizes) > 100  # the walk found the package
    too_long = {path: n for path, n in sizes.items() if n > MAX_LINES}
    assert too_long == {}, f"split these by job (one module, one reason to change): {too_long}"
