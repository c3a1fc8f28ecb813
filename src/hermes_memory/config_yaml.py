"""How ``config.yaml`` problems are told, and the YAML 1.1 boolean trap in word-valued options.

YAML 1.1 (PyYAML) reads the bare words ``on``/``off``/``yes``/``no``/``true``/``false`` as
booleans, so ``sessions: {synchronous: off}`` reaches validation as ``False``. No word-valued
option here has a value that such a boolean can stand for, except ``memory.provider``: ``off``,
``no`` or ``false`` there means "no external provider" (built-in memory only), which is how the
Hermes Agent reads it too (``if name and name.strip()``), so it is read as ``""`` with a warning.
For every other word-valued option a boolean is refused, and the message says to quote the
word and lists the values to write (``synchronous: "normal"``). (``sessions.synchronous: off``
is not offered at all: SQLite's ``OFF`` can leave ``state.db`` corrupt after a power cut.)

Foundation module beside :mod:`hermes_memory.config` (no internal imports but the storage URL
redaction), which calls :func:`yaml_bools` while preparing a section and
:func:`describe_error` when validation fails.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from hermes_memory.storage import redact_url

BOOL_MEANS_EMPTY = {"memory.provider": "built-in memory only"}
"""Word-valued keys where a YAML ``false`` (``off``/``no``) means the empty value, and what that is."""

_WORD_ERRORS = ("literal_error", "string_type", "enum")


def yaml_bools(name: str, cls: type[BaseModel], raw: dict[str, Any], path: Path, warnings: list[str]) -> None:
    """In section ``name`` (model ``cls``, raw mapping ``raw``, changed in place): a ``false`` in a
    key of :data:`BOOL_MEANS_EMPTY` becomes ``""`` (with a warning); other booleans in word-valued
    keys are left for validation, whose message :func:`describe_error` completes."""
    for key in cls.model_fields:
        dotted = f"{name}.{key}"
        if raw.get(key) is False and dotted in BOOL_MEANS_EMPTY:
            warnings.append(f"{path}: {dotted}: YAML read a bare off/no/false as the boolean false; using \"\" "
                            f"({BOOL_MEANS_EMPTY[dotted]}, as the Hermes Agent reads it; write {key}: \"\")")
            raw[key] = ""


def _quote_hint(key: str, item: Mapping[str, Any]) -> str:
    leaf = key.rsplit(".", 1)[-1]
    expected = (item.get("ctx") or {}).get("expected", "")
    words = re.findall(r"'([^']*)'", expected) if isinstance(expected, str) else []
    example = " or ".join(f'{leaf}: "{w}"' for w in words) or f'{leaf}: "off"'
    return (f" (YAML reads a bare on/off/yes/no/true/false as a boolean, not a word: write the value in quotes, "
            f"e.g. {example})")


def describe_error(path: Path, err: ValidationError) -> str:
    """The :class:`~hermes_memory.errors.ConfigError` text for ``err``: one line per problem with the
    dotted key, what is allowed and the value found (a ``storage.url`` password redacted), plus the
    quoting hint for a boolean where a word belongs."""
    lines = [f"invalid configuration in {path}:"]
    for item in err.errors():
        key = ".".join(str(p) for p in item["loc"])
        ctx = item.get("ctx") or {}
        allowed = ""
        if "expected" in ctx:
            allowed = f" (allowed: {ctx['expected']})"
        elif item["type"].startswith(("greater", "less")):
            allowed = f" (allowed: {item['msg'].lower().replace('input should be ', '')})"
        got = item.get("input")
        if key == "storage.url" and isinstance(got, str):
            got = redact_url(got)  # the message may be printed: never the password
        hint = _quote_hint(key, item) if isinstance(got, bool) and item["type"] in _WORD_ERRORS else ""
        lines.append(f"  {key}: {item['msg']}{allowed}; got {got!r}{hint}")
    lines.append("Fix the value in that file or delete the key to use the default.")
    return "\n".join(lines)
