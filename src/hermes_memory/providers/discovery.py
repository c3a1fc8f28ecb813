"""Find and load memory-provider plugins.

Sources, in order; the first source that has a name wins (a bundled plugin shadows a user plugin
of the same name, which is then not listed twice) — docs/reference.md §10:

1. ``bundled``  — ``hermes_memory/plugins/<name>/`` (a package with ``__init__.py``).
2. ``user``     — ``$HERMES_HOME/plugins/<name>/__init__.py``, only if the file mentions
   ``register_memory_provider`` or ``MemoryProvider``.
3. ``project``  — ``./.hermes/plugins/<name>/`` under the current directory, only when the
   environment variable ``HERMES_ENABLE_PROJECT_PLUGINS`` is ``1``/``true``/``yes``/``on``.
4. ``entry_point`` — installed packages advertising the entry-point group ``hermes_memory.providers``
   (the value may be a module, a ``MemoryProvider`` subclass, or a ``register(ctx)`` function).

A plugin module either defines ``register(ctx)`` and calls ``ctx.register_memory_provider(p)``
(other ``ctx.register_*`` calls are accepted and ignored), or defines a ``MemoryProvider``
subclass, of which the first concrete one is instantiated. A class whose ``__init__`` accepts
``hermes_home`` receives the data home. ``plugin.yaml`` beside the module gives ``description``.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import logging
import os
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

from hermes_memory.errors import ProviderError
from hermes_memory.home import resolve_home
from hermes_memory.providers.base import MemoryProvider

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "hermes_memory.providers"
PROJECT_PLUGINS_ENV = "HERMES_ENABLE_PROJECT_PLUGINS"
BUNDLED_DIR = Path(__file__).resolve().parent.parent / "plugins"
_TRUE = {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class ProviderInfo:
    """One discovered provider.

    ``available`` is the result of ``is_available()`` (config and dependencies only);
    ``reason`` says why not (``""`` when available); ``source`` is ``bundled``, ``user``,
    ``project`` or ``entry_point``; ``location`` is the folder or the entry-point value.
    """

    name: str
    description: str
    available: bool
    reason: str
    source: str
    location: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class _Candidate:
    name: str
    source: str
    location: str
    path: Path | None = None            # plugin folder (bundled/user/project)
    entry_point: metadata.EntryPoint | None = None


class _Collector:
    """The ``ctx`` handed to a plugin's ``register(ctx)``: captures memory providers only.

    ``ctx.hermes_home`` is the data home being inspected (``str``), so a plugin can build its
    provider for that home (its ``is_available`` then reads that home's ``config.yaml``).
    """

    def __init__(self, hermes_home: str | None = None) -> None:
        self.providers: list[Any] = []
        self.hermes_home = hermes_home

    def register_memory_provider(self, provider: Any) -> None:
        self.providers.append(provider)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("register_"):
            return lambda *a, **k: None  # other plugin kinds: accepted, ignored here
        raise AttributeError(name)


def _description(folder: Path | None) -> str:
    if folder is None:
        return ""
    meta = folder / "plugin.yaml"
    if not meta.is_file():
        return ""
    try:
        data = yaml.safe_load(meta.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        logger.warning("cannot read %s: %s", meta, exc)
        return ""
    return str(data.get("description") or "").strip() if isinstance(data, dict) else ""


def _plugin_dirs(root: Path, require_marker: bool) -> Iterator[Path]:
    if not root.is_dir():
        return
    for child in sorted(root.iterdir()):
        init = child / "__init__.py"
        if child.name.startswith((".", "_")) or not init.is_file():
            continue
        if require_marker:
            try:
                text = init.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if "register_memory_provider" not in text and "MemoryProvider" not in text:
                continue
        yield child


def _project_enabled() -> bool:
    return os.environ.get(PROJECT_PLUGINS_ENV, "").strip().lower() in _TRUE


def _candidates(hermes_home: str | os.PathLike[str] | None) -> list[_Candidate]:
    """All candidates in priority order, first occurrence of each name only."""
    found: dict[str, _Candidate] = {}

    def add(c: _Candidate) -> None:
        if c.name in found:
            logger.debug("plugin %r from %s shadowed by %s", c.name, c.location, found[c.name].location)
        else:
            found[c.name] = c

    for d in _plugin_dirs(BUNDLED_DIR, require_marker=False):
        add(_Candidate(d.name, "bundled", str(d), d))
    home = resolve_home(hermes_home)
    for d in _plugin_dirs(home / "plugins", require_marker=True):
        add(_Candidate(d.name, "user", str(d), d))
    if _project_enabled():
        for d in _plugin_dirs(Path.cwd() / ".hermes" / "plugins", require_marker=True):
            add(_Candidate(d.name, "project", str(d), d))
    eps: Iterable[metadata.EntryPoint]
    try:
        eps = metadata.entry_points(group=ENTRY_POINT_GROUP)
    except Exception as exc:  # noqa: BLE001 - broken metadata must not stop discovery
        logger.warning("cannot read entry points %s: %s", ENTRY_POINT_GROUP, exc)
        eps = ()
    for ep in eps:
        add(_Candidate(ep.name, "entry_point", ep.value, None, ep))
    return list(found.values())


def _import_folder(c: _Candidate) -> ModuleType:
    assert c.path is not None
    if c.source == "bundled":
        return importlib.import_module(f"hermes_memory.plugins.{c.name}")
    tag = hashlib.sha1(str(c.path).encode()).hexdigest()[:10]  # one module per plugin folder
    mod_name = f"hermes_memory_{c.source}_plugins.{c.name}_{tag}"
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    pkg_name = mod_name.rsplit(".", 1)[0]
    if pkg_name not in sys.modules:  # namespace parent so relative imports inside the plugin work
        parent = ModuleType(pkg_name)
        parent.__path__ = []
        sys.modules[pkg_name] = parent
    spec = importlib.util.spec_from_file_location(mod_name, c.path / "__init__.py",
                                                  submodule_search_locations=[str(c.path)])
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import plugin from {c.path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(mod_name, None)
        raise
    return module


def _instantiate(cls: type, hermes_home: str | None) -> Any:
    params: Mapping[str, inspect.Parameter]
    try:
        params = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        params = {}
    if hermes_home is not None and "hermes_home" in params:
        return cls(hermes_home=hermes_home)
    return cls()


def _from_object(obj: Any, where: str, hermes_home: str | None) -> MemoryProvider:
    """Turn a module / class / register function / instance into a provider instance."""
    if isinstance(obj, MemoryProvider):
        return obj
    if isinstance(obj, type) and issubclass(obj, MemoryProvider):
        return _instantiate(obj, hermes_home)
    if isinstance(obj, ModuleType):
        register = getattr(obj, "register", None)
        if callable(register):
            return _from_register(register, where, hermes_home)
        classes = [v for v in vars(obj).values() if isinstance(v, type) and issubclass(v, MemoryProvider)
                   and v is not MemoryProvider and not inspect.isabstract(v)]
        own = [c for c in classes if c.__module__.startswith(obj.__name__)]
        if own or classes:  # prefer a class defined by the plugin itself over an imported one
            return _instantiate((own or classes)[0], hermes_home)
        raise ProviderError(f"plugin {where} defines neither register(ctx) nor a MemoryProvider subclass")
    if callable(obj):
        return _from_register(obj, where, hermes_home)
    raise ProviderError(f"plugin {where} exposes {type(obj).__name__}, not a MemoryProvider")


def _from_register(register: Any, where: str, hermes_home: str | None = None) -> MemoryProvider:
    ctx = _Collector(hermes_home)
    register(ctx)
    if not ctx.providers:
        raise ProviderError(f"plugin {where}: register(ctx) did not call ctx.register_memory_provider(provider)")
    provider = ctx.providers[0]
    if not isinstance(provider, MemoryProvider):
        raise ProviderError(f"plugin {where} registered {type(provider).__name__}, which is not a MemoryProvider")
    return provider


def _load(c: _Candidate, hermes_home: str | None) -> MemoryProvider:
    """Import and instantiate one candidate; raises :class:`ProviderError` with the cause."""
    try:
        obj: Any = c.entry_point.load() if c.entry_point is not None else _import_folder(c)
        return _from_object(obj, f"{c.name!r} ({c.source}: {c.location})", hermes_home)
    except ProviderError:
        raise
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - plugin code can raise anything, even sys.exit()
        raise ProviderError(f"memory provider {c.name!r} ({c.source}: {c.location}) failed to load: "
                            f"{type(exc).__name__}: {exc}") from exc


def _availability(provider: MemoryProvider) -> tuple[bool, str]:
    try:
        ok = bool(provider.is_available())
    except (Exception, SystemExit) as exc:  # noqa: BLE001
        return False, f"is_available() raised {type(exc).__name__}: {exc}"
    if ok:
        return True, ""
    try:
        reason = provider.unavailable_reason() or ""
    except Exception:  # noqa: BLE001
        reason = ""
    return False, reason or "the provider reports it is not available (missing configuration or dependency)"


def discover_memory_providers(hermes_home: str | os.PathLike[str] | None = None) -> list[ProviderInfo]:
    """Every provider the sources offer, sorted by name, each loaded once to ask ``is_available()``.

    A plugin that fails to import is listed with ``available=False`` and the error as ``reason``
    (never hidden). Never raises for a plugin's fault; touches no network.
    """
    home = str(resolve_home(hermes_home))
    out: list[ProviderInfo] = []
    for c in _candidates(home):
        desc = _description(c.path)
        try:
            provider = _load(c, home)
        except ProviderError as exc:
            logger.warning("%s", exc)
            out.append(ProviderInfo(c.name, desc, False, str(exc), c.source, c.location))
            continue
        ok, reason = _availability(provider)
        if not desc:  # the class's own docstring only, never one inherited from MemoryProvider
            desc = inspect.cleandoc(vars(type(provider)).get("__doc__") or "").split("\n", 1)[0]
        out.append(ProviderInfo(c.name, desc, ok, reason, c.source, c.location))
    return sorted(out, key=lambda i: i.name)


def load_memory_provider(name: str, hermes_home: str | os.PathLike[str] | None = None) -> MemoryProvider | None:
    """Load provider ``name`` (first source wins). ``None`` if no source has it or it fails to load.

    Failures are logged at ERROR level; use :func:`load_memory_provider_or_raise` to get the reason.
    Availability is *not* checked here.
    """
    try:
        return load_memory_provider_or_raise(name, hermes_home, require_available=False)
    except ProviderError as exc:
        logger.error("%s", exc)
        return None


def load_memory_provider_or_raise(name: str, hermes_home: str | os.PathLike[str] | None = None, *,
                                  require_available: bool = True) -> MemoryProvider:
    """Load provider ``name`` or raise :class:`ProviderError` saying why and how to fix it.

    Raised when the name is unknown (the message lists known names), when the plugin fails to
    import or instantiate, or — with ``require_available`` — when ``is_available()`` is False
    (the message carries ``unavailable_reason()``).
    """
    home = str(resolve_home(hermes_home))
    cands = {c.name: c for c in _candidates(home)}
    if name not in cands:
        known = ", ".join(sorted(cands)) or "none"
        raise ProviderError(f"memory provider {name!r} not found (known providers: {known}). "
                            f"Install it under {Path(home) / 'plugins' / name} or fix memory.provider in config.yaml.")
    provider = _load(cands[name], home)
    if require_available:
        ok, reason = _availability(provider)
        if not ok:
            hint = "" if "memory setup" in reason else \
                f". Run `hermes-memory memory setup --provider {name}` to configure it."
            raise ProviderError(f"memory provider {name!r} is not available: {reason}{hint}")
    return provider


def load_configured_provider(provider_name: str, hermes_home: str | os.PathLike[str] | None = None) -> MemoryProvider | None:
    """The provider named by ``memory.provider``: ``None`` for ``""`` (built-in only), else the instance.

    A configured provider that is unknown, fails to load or is unavailable raises
    :class:`ProviderError` (and is logged at ERROR level): it is never silently replaced by
    built-in-only memory.
    """
    name = (provider_name or "").strip()
    if not name:
        return None
    try:
        return load_memory_provider_or_raise(name, hermes_home, require_available=True)
    except ProviderError as exc:
        logger.error("configured memory provider failed: %s", exc)
        raise
