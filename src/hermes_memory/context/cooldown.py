"""Summariser failures: how each is classified and how long compaction then waits (seconds)."""

from __future__ import annotations

from hermes_memory.errors import (
    ModelCallError,
    ModelNotConfiguredError,
)

#: Cooldowns after a summariser failure, in seconds (reference NEWEST).
COOLDOWN_NOT_CONFIGURED_S = 600.0
COOLDOWN_TRANSIENT_S = (60.0, 300.0, 900.0)
COOLDOWN_OTHER_S = 60.0
_AUTH_STATUS = {401, 402, 403}
_TRANSIENT_STATUS = {408, 429, 500, 502, 503, 504, 529}
_KIND_CLASSES = {"auth": "auth", "network": "network", "rate_limit": "transient", "server": "transient"}


def classify_summary_error(exc: BaseException) -> str:
    """Classify a summariser exception as ``auth``, ``network``, ``transient``, ``not_configured``
    or ``other``.

    Our own errors decide by their kind (:attr:`~hermes_memory.errors.ModelCallError.kind`): ``auth``
    (:class:`SummaryAuthError`, :class:`~hermes_memory.errors.ModelAuthError`), ``network``
    (``SummaryNetworkError``, ``ModelNetworkError``), ``rate_limit``/``server`` -> transient
    (``SummaryRateLimitError``, ``ModelRateLimitError``, ``ModelServerError``). Otherwise an HTTP status in ``status_code`` / ``status`` (401/402/403 -> auth,
    408/429/5xx -> transient), builtin ``TimeoutError`` / ``ConnectionError`` or an exception
    class named like ``*Timeout*`` / ``*Connection*`` (openai/httpx/anthropic) -> network,
    :class:`~hermes_memory.errors.ModelNotConfiguredError` -> not_configured.
    """
    if isinstance(exc, ModelCallError) and exc.kind in _KIND_CLASSES:
        return _KIND_CLASSES[exc.kind]
    if isinstance(exc, ModelNotConfiguredError):
        return "not_configured"
    status = getattr(exc, "status_code", None) or getattr(exc, "status", None)
    if isinstance(status, int):
        if status in _AUTH_STATUS:
            return "auth"
        if status in _TRANSIENT_STATUS:
            return "transient"
    if isinstance(exc, (TimeoutError, ConnectionError)):
        return "network"
    names = " ".join(cls.__name__ for cls in type(exc).__mro__)
    if "Timeout" in names or "Connection" in names or "Connect" in names:
        return "network"
    if "Authentication" in names or "PermissionDenied" in names:
        return "auth"
    return "other"
