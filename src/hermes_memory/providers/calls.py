"""How the manager calls a provider: with the keyword arguments its signature accepts, and bounded in time (a call that overruns keeps running in a daemon thread; its result is dropped)."""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


def _accepts(fn: Callable[..., Any], name: str) -> bool:
    """True when ``fn`` takes a parameter called ``name`` or ``**kwargs``."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return True
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def _filter_kwargs(fn: Callable[..., Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Keep only the keyword arguments ``fn``'s signature accepts (old providers get fewer)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return kwargs
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return kwargs
    return {k: v for k, v in kwargs.items() if k in params}


def _normalise_schemas(raw: Any) -> list[dict[str, Any]]:
    """Unwrap ``{"type": "function", "function": {...}}`` and drop nameless or non-dict schemas."""
    out: list[dict[str, Any]] = []
    for item in raw or []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function" and isinstance(item.get("function"), dict):
            item = item["function"]
        name = item.get("name")
        if isinstance(name, str) and name.strip():
            out.append(dict(item))
    return out


class _Timeout(Exception):
    pass


def _call_bounded(fn: Callable[[], Any], timeout: float | None, label: str) -> Any:
    """Run ``fn`` in a daemon thread and wait at most ``timeout`` seconds (``None`` = inline).

    Returns ``fn``'s result, re-raises its exception, or raises :class:`_Timeout`. A
    ``SystemExit`` or ``KeyboardInterrupt`` raised in the thread (a provider or its SDK calling
    ``sys.exit``) is re-raised as ``RuntimeError``: it ended only that thread, never the agent.
    """
    if timeout is None:
        return fn()
    box: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name=f"hermes-memory:{label}", daemon=True).start()
    if not done.wait(max(timeout, 0.0)):
        raise _Timeout(f"{label} did not return within {timeout:g} s")
    if "error" in box:
        err = box["error"]
        if not isinstance(err, Exception):
            raise RuntimeError(f"{label} raised {type(err).__name__}: {err}") from err
        raise err
    return box.get("value")


@dataclass
class _Inflight:
    """A prefetch still running after its caller gave up waiting."""

    session_id: str
    query: str
    started: float
    done: threading.Event = field(default_factory=threading.Event)
