"""PostgreSQL connection URLs: checking one and showing one without its password.

:func:`redact_url` (:func:`hermes_memory.storage.redact_url`, the one redactor) is what
``location`` and every error message print; :func:`check_url` turns a
URL psycopg cannot parse into :class:`~hermes_memory.errors.StorageURLError` naming the fix.
"""

from __future__ import annotations

from hermes_memory.errors import StorageURLError
from hermes_memory.storage import redact_secrets
from hermes_memory.storage import redact_url as redact_url  # the one redactor; importable here as before

URL_FORMAT = "postgresql://USER:PASSWORD@HOST:5432/DATABASE"
"""The URL form given in error messages."""


def check_url(url: str) -> str:
    """Return ``url`` stripped, or raise :class:`StorageURLError` when it is empty, is a URL of
    another scheme, cannot be parsed by libpq's rules (psycopg's ``conninfo_to_dict``) or has a
    port that is not a number."""
    import psycopg.conninfo

    text = str(url or "").strip()
    if not text:
        raise StorageURLError(
            f"no PostgreSQL URL given; set storage.url in config.yaml or HERMES_DATABASE_URL to {URL_FORMAT}."
        )
    if "://" in text and not text.lower().startswith(("postgresql://", "postgres://")):
        raise StorageURLError(
            f"{redact_url(text)!s} is not a PostgreSQL URL (it must start with postgresql://); "
            f"write it as {URL_FORMAT}."
        )
    try:
        params = psycopg.conninfo.conninfo_to_dict(text)
    except psycopg.Error as exc:
        raise StorageURLError(
            f"cannot parse the PostgreSQL URL {redact_url(text)}: {_first_line(exc)}; write it as {URL_FORMAT} "
            "(percent-encode special characters in the password)."
        ) from None
    port = str(params.get("port") or "")
    if port and not all(p.strip().isdigit() for p in port.split(",")):
        raise StorageURLError(
            f"the PostgreSQL URL {redact_url(text)} has port {port!r}, which is not a number; write it as {URL_FORMAT}."
        )
    return text


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return redact_line(text[0]) if text else type(exc).__name__


def redact_line(text: str) -> str:
    """A libpq message with anything after ``password=`` masked (libpq sometimes echoes the conninfo):
    :func:`hermes_memory.storage.redact_secrets`."""
    return redact_secrets(text)
