"""CLI commands ``memory setup`` / ``memory status`` (filled in by the Layer 4 issue)."""

from __future__ import annotations

import typer


def register(memory_app: typer.Typer, providers_app: typer.Typer) -> None:
    """Add the setup wizard and status commands."""
