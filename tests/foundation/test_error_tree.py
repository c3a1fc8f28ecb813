"""The one exception tree (errors.py): every deliberate error is a HermesMemoryError, old import
paths still give the same classes, and summariser failures are classified by their kind."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import hermes_memory
from hermes_memory import errors
from hermes_memory.context.compressor import classify_summary_error

# Errors that are deliberately not HermesMemoryError, with the reason.
OUTSIDE_THE_TREE = {
    # memory/lock.py: a lock timeout is a TimeoutError and a symlinked lock an OSError, caught as such
    # by the memory store, which turns both into MemoryStoreError for callers.
    "hermes_memory.memory.lock.LockTimeout",
    "hermes_memory.memory.lock.LockSymlinkError",
    # providers/manager.py: private signal of a bounded call, never leaves the module.
    "hermes_memory.providers.calls._Timeout",
    # cli/memory.py: private signal of the unlocked dry run (a write was reached), caught in the module.
    "hermes_memory.cli.memory._WouldWrite",
    # fsutil.py (a foundation module: no internal imports): a refused output path, caught by the CLI's
    # one writer of user-named files (cli/common.py), which prints it and exits 1.
    "hermes_memory.fsutil.OutputRefused",
    # sessions/importers: a record nested too deeply, a ValueError caught per record and reported as skipped.
    "hermes_memory.sessions.importers.NestedTooDeep",
}


def _package_exceptions():
    for info in pkgutil.walk_packages(hermes_memory.__path__, "hermes_memory."):
        if info.name.endswith("__main__"):  # runs the CLI when imported
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional extra (e.g. a provider SDK) is not installed
            continue
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, BaseException) and obj.__module__ == info.name:
                yield f"{obj.__module__}.{obj.__qualname__}", obj


def test_every_exception_the_package_declares_derives_from_hermes_memory_error():
    found = dict(_package_exceptions())
    assert "hermes_memory.errors.InvalidArguments" in found
    strays = sorted(name for name, cls in found.items()
                    if not issubclass(cls, errors.HermesMemoryError) and name not in OUTSIDE_THE_TREE)
    assert strays == []


def test_every_class_in_errors_is_drawn_in_its_docstring():
    doc = errors.__doc__ or ""
    for name, cls in vars(errors).items():
        if inspect.isclass(cls) and issubclass(cls, BaseException):
            assert name in doc, name


@pytest.mark.parametrize(("old_path", "name"), [
    ("hermes_memory.mcp.validation", "InvalidArguments"),
    ("hermes_memory.mcp.validation", "ArgumentProblem"),
    ("hermes_memory.mcp.server", "UnknownTool"),
    ("hermes_memory.mcp.resources", "BadResource"),
    ("hermes_memory.providers.base", "ToolArgumentError"),
    ("hermes_memory.sessions.db", "SessionLookupError"),
    ("hermes_memory.sessions.listing", "SessionLookupError"),
    ("hermes_memory.llm.base", "ModelAuthError"),
    ("hermes_memory.llm", "ModelCallError"),
    ("hermes_memory.context.compressor", "SummaryAuthError"),
    ("hermes_memory.context", "SummarizerError"),
])
def test_old_import_paths_give_the_classes_of_errors_py(old_path, name):
    assert getattr(importlib.import_module(old_path), name) is getattr(errors, name)


def test_tool_errors_stay_value_and_lookup_errors():
    problem = errors.ArgumentProblem("action", "must be one of add, replace, remove")
    exc = errors.InvalidArguments("memory", [problem])
    assert isinstance(exc, ValueError) and exc.fields == ["action"]
    assert str(exc) == "invalid arguments for tool 'memory': field 'action': must be one of add, replace, remove"
    assert isinstance(errors.UnknownTool("x"), LookupError)
    assert isinstance(errors.ToolArgumentError("x"), ValueError)


@pytest.mark.parametrize(("exc", "kind"), [
    (errors.ModelAuthError("401", status_code=401), "auth"),
    (errors.SummaryAuthError("401"), "auth"),
    (errors.ModelNetworkError("refused"), "network"),
    (errors.SummaryNetworkError("timeout"), "network"),
    (errors.ModelRateLimitError("429", status_code=429), "transient"),
    (errors.ModelServerError("503", status_code=503), "transient"),
    (errors.SummaryRateLimitError("429"), "transient"),
    (errors.ModelRequestError("400", status_code=400), "other"),
    (errors.SummarizerError("bad reply"), "other"),
    (errors.ModelNotConfiguredError("configure a model"), "not_configured"),
])
def test_summariser_failures_are_classified_by_kind_whatever_family_raised_them(exc, kind):
    assert classify_summary_error(exc) == kind


def test_summary_errors_are_model_errors_of_the_same_kind():
    assert issubclass(errors.SummaryAuthError, errors.ModelAuthError)
    assert issubclass(errors.SummaryNetworkError, errors.ModelNetworkError)
    assert issubclass(errors.SummaryRateLimitError, errors.ModelRateLimitError)
    assert errors.SummaryAuthError("x").kind == "auth"
    assert errors.SummarizerError("x").status_code is None
