"""Checking a provider's settings against its config schema: converting a raw value to a field's type,
and listing what is invalid. Shared by the setup wizard (cli/setup.py) and the provider status
(cli/providers.py), which no longer import each other."""

from __future__ import annotations

import math
from typing import Any

from hermes_memory.providers.base import ConfigField, non_ascii_problem


def convert(f: ConfigField, raw: Any) -> Any:
    """Convert ``raw`` (usually a string) to the field's ``type`` and check ``choices``.

    Raises :class:`ValueError` with a message saying what is allowed; a secret with non-ASCII
    characters (curly quotes pasted with a key) is refused this way too, naming the key.
    """
    if raw is None:
        return None
    try:
        if f.type == "int":
            value: Any = int(raw)
        elif f.type == "float":
            value = float(raw)
        elif f.type == "bool":
            if isinstance(raw, bool):
                value = raw
            else:
                text = str(raw).strip().lower()
                if text not in {"true", "false", "yes", "no", "1", "0", "on", "off"}:
                    raise ValueError
                value = text in {"true", "yes", "1", "on"}
        else:
            value = str(raw)
    except ValueError:
        raise ValueError(f"{f.key}: {raw!r} is not a valid {f.type}") from None
    if f.secret and (problem := non_ascii_problem(f.key, str(value))):
        raise ValueError(problem)
    if f.choices and value not in f.choices and str(value) not in {str(c) for c in f.choices}:
        raise ValueError(f"{f.key}: {raw!r} is not one of {', '.join(map(str, f.choices))}")
    if f.type in ("int", "float"):
        if not math.isfinite(value):
            raise ValueError(f"{f.key}: {raw!r} is not a finite number")
        if (f.min is not None and value < f.min) or (f.max is not None and value > f.max):
            low = "" if f.min is None else f"{f.min:g} "
            high = "" if f.max is None else f" {f.max:g}"
            raise ValueError(f"{f.key}: {raw!r} is out of range (allowed: {low}..{high})")
    return value


def invalid_settings(provider: str, schema: list[ConfigField], section: Any) -> list[str]:
    """Problems with the non-secret values of ``section`` (the provider's ``config.yaml`` section), one per key."""
    if not isinstance(section, dict):
        return [] if section is None else [f"the {provider}: section must be a mapping of settings"]
    problems = []
    for f in schema:
        if f.secret or section.get(f.key) is None:
            continue
        try:
            convert(f, section[f.key])
        except ValueError as exc:
            problems.append(str(exc))
    return problems
