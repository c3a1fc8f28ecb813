"""PostgreSQL connection URLs: checking one and showing one without its password.

:func:`redact_url` is what ``location`` and every error message print; :func:`check_url` turns a
URL psycopg cannot parse into :class:`~hermes_memory.errors.StorageURLError` naming the fix.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

from hermes_memory.errors import StorageURLError

URL_FORMAT = "postgresql://USER:PASSWORD@HOST:5432/DATABASE"
"""The URL form given in error messages."""

_KV_PASSWORD_RE = re.compile(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)
_QUERY_PASSWORD_RE = re.compile(r"([?&]password=)[^&#]*", re.IGNORECASE)


def redact_url(url: str) -> str:
    """``url`` with any password replaced by ``***``: in the ``user:password@`` part of a URL, in a
    ``password=`` query parameter, or in a ``key=value`` connection string. Text that is not a URL
    is returned with ``password=...`` masked all the same."""
    text = str(url)
    if "://" in text:
        try:
            parts = urlsplit(text)
        except ValueError:
            return _QUERY_PASSWORD_RE.sub(r"\1***", re.sub(r"//([^:/@]*):[^@]*@", r"//\1:***@", text))
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, host = netloc.rsplit("@", 1)
            if ":" in userinfo:
                userinfo = userinfo.split(":", 1)[0] + ":***"
            netloc = f"{userinfo}@{host}"
        query = _QUERY_PASSWORD_RE.sub(r"\1***", "?" + parts.query)[1:] if parts.query else ""
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    return _KV_PASSWORD_RE.sub(r"\1***", text)


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
    """A libpq message with anything after ``password=`` masked (libpq sometimes echoes the conninfo)."""
    return _KV_PASSWORD_RE.sub(r"\1***", text)
