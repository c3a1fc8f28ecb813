"""Check tool arguments against a tool's JSON Schema before anything runs.

The MCP server calls :func:`check_arguments` for every ``tools/call``; a failure becomes a
JSON-RPC ``-32602 Invalid params`` error whose message names the offending field, and the tool
is never dispatched, so nothing is written. Validation uses the ``jsonschema`` library (the
dialect is read from the schema's ``$schema``; tool schemas without one are checked as
Draft 2020-12, the dialect MCP specifies for ``inputSchema``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import SchemaError, ValidationError

from hermes_memory.errors import ArgumentProblem, InvalidArguments  # noqa: F401 - re-exported


def _path(parts: Iterable[Any]) -> str:
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _problems(error: ValidationError) -> list[ArgumentProblem]:
    base = _path(error.absolute_path)
    if error.validator == "required":
        # The message is "'x' is a required property"; name the missing field itself.
        present = error.instance if isinstance(error.instance, Mapping) else {}
        required = error.validator_value if isinstance(error.validator_value, list) else []
        missing = [name for name in required if name not in present]
        return [ArgumentProblem(_path([*error.absolute_path, m]), "is required") for m in missing] or [
            ArgumentProblem(base or "(arguments)", error.message)
        ]
    if error.validator == "additionalProperties" and isinstance(error.instance, Mapping):
        schema = error.schema if isinstance(error.schema, Mapping) else {}
        allowed = set(schema.get("properties", {}))
        patterns = schema.get("patternProperties", {})
        extra = [k for k in error.instance if k not in allowed and not patterns]
        if extra:
            return [ArgumentProblem(_path([*error.absolute_path, k]), "is not a known field") for k in extra]
    return [ArgumentProblem(base or "(arguments)", error.message)]


def check_arguments(
    tool: str,
    schema: Mapping[str, Any],
    arguments: Mapping[str, Any] | None,
    *,
    allowed_extra: Iterable[str] = (),
    strict: bool = False,
) -> dict[str, Any]:
    """Validate ``arguments`` for ``tool`` against ``schema``; return them as a plain dict.

    ``arguments=None`` is treated as ``{}``. With ``strict=True`` a top-level field that the schema
    does not declare (and that is not in ``allowed_extra``, e.g. a documented alias) is refused
    too, so a misspelt field is reported instead of silently ignored.

    Raises :class:`InvalidArguments` listing every problem, each naming its field. A schema that
    is itself invalid is reported as a problem on the field ``(schema)`` rather than crashing.
    """
    args = dict(arguments or {})
    problems: list[ArgumentProblem] = []
    try:
        cls = validators.validator_for(schema, default=Draft202012Validator)
        cls.check_schema(dict(schema))
        validator = cls(schema)
        errors = sorted(validator.iter_errors(args), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    except SchemaError as exc:
        raise InvalidArguments(tool, [ArgumentProblem("(schema)", f"the tool's schema is invalid: {exc.message}")]) from None
    for error in errors:
        problems.extend(_problems(error))
    if strict:
        declared = set(schema.get("properties", {})) | set(allowed_extra)
        for name in args:
            if name not in declared and not any(p.field == name for p in problems):
                problems.append(ArgumentProblem(name, "is not a known field"))
    if problems:
        unique: dict[str, ArgumentProblem] = {}
        for problem in problems:  # one message per field (a wrong type also fails its enum)
            unique.setdefault(problem.field, problem)
        raise InvalidArguments(tool, list(unique.values()))
    return args
