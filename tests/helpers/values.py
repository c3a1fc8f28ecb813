"""Narrowing helpers for tests: state in one call that a lookup found what the test just wrote."""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")


def present(value: T | None, what: str = "value") -> T:
    """Return ``value``, failing the test with a message naming ``what`` when it is ``None``.

    Lookups such as ``SessionDB.get_session`` return ``None`` for a missing row; a test that indexes
    the result would fail with ``TypeError: 'NoneType' object is not subscriptable``, which hides
    what was missing. Raises ``AssertionError`` (so pytest reports it as a failed assertion).
    """
    assert value is not None, f"expected {what}, found None"
    return value
