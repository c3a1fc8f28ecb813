"""Layer 4: one external memory provider beside the built-in memory.

Public names: :class:`MemoryProvider` (the interface a provider implements, with
:class:`ConfigField` for its setup wizard), :class:`MemoryManager` (the built-in provider plus at
most one external provider, every call isolated and bounded) and :func:`create_memory_manager`
(a manager from ``config.yaml``). The manager and its helpers load on first use, so importing a
provider plugin (which needs only :mod:`hermes_memory.providers.base`) stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_memory.providers.base import ConfigField, MemoryProvider

if TYPE_CHECKING:
    from hermes_memory.providers.manager import MemoryManager, create_memory_manager

__all__ = ["ConfigField", "MemoryManager", "MemoryProvider", "create_memory_manager"]


def __getattr__(name: str) -> Any:
    if name in ("MemoryManager", "create_memory_manager"):
        from hermes_memory.providers import manager

        return getattr(manager, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
