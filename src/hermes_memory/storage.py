"""Where sessions and curated memory are stored: the ``storage:`` section of ``config.yaml``.

Foundation layer (beside :mod:`hermes_memory.config`, which embeds :class:`StorageConfig`).

::

    storage:
      backend: postgres            # sqlite (the default) | postgres (postgresql is accepted too)
      url: postgresql://hermes@db.internal:5432/hermes
      profile: default             # the curated-memory profile this home reads and writes
      pool_size: 4                 # connections per process

Resolution (:func:`resolve_storage`), first match wins:

1. ``HERMES_DATABASE_URL`` (the environment, else ``<home>/.env``) non-empty: PostgreSQL at that
   URL, whatever the file says (the twelve-factor convention: the deployment decides).
2. ``storage.backend: postgres`` (or a ``storage.url`` with no backend): PostgreSQL at
   ``storage.url``; no url is an error.
3. Otherwise SQLite: ``<home>/state.db`` and ``<home>/memories/`` exactly as without the section.

A password belongs in ``.env`` (``HERMES_DATABASE_URL``), in ``PGPASSWORD`` or in ``~/.pgpass``
(libpq reads both), not in ``config.yaml``; whatever the source, output shows the URL through
:func:`redact_url` only. See docs/scaling.md §1.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from hermes_memory.errors import ConfigError

DATABASE_URL_ENV = "HERMES_DATABASE_URL"
"""Environment variable (or ``.env`` key) that selects PostgreSQL with its URL."""

URL_SCHEMES = ("postgresql", "postgres")
"""The URL schemes libpq accepts; anything else is refused."""

INSTALL_HINT = "pip install 'hermes-memory[postgres]'"

PG_FIX_HINT = (
    "Check that the server is running and reachable from this host, and that storage.url in config.yaml "
    "(or HERMES_DATABASE_URL) names the right host, port, database, user and password."
)
"""The last sentence of every "cannot reach PostgreSQL" error, sessions and memory alike."""

_T = TypeVar("_T")

_PROFILE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class StorageConfig(BaseModel):
    """``storage:`` section. ``backend`` ``None`` means "sqlite, unless a url is given".

    ``pool_size`` is connections per process (1..64). ``profile`` names the curated-memory rows
    this home uses on PostgreSQL (hosts sharing a profile share MEMORY.md); letters, digits,
    ``_ . -``, at most 64 characters. Ignored on SQLite.
    """

    model_config = ConfigDict(extra="allow", validate_assignment=True)

    backend: Literal["sqlite", "postgres"] | None = None
    url: str = ""
    profile: str = "default"
    pool_size: int = Field(4, ge=1, le=64)

    @field_validator("backend", mode="before")
    @classmethod
    def _backend(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.strip().lower()
            if value == "":
                return None
            if value == "postgresql":
                return "postgres"
        return value

    @field_validator("url", mode="before")
    @classmethod
    def _url(cls, value: Any) -> Any:
        if value is None:
            return ""
        if isinstance(value, str):
            value = value.strip()
            if value:
                check_url(value, where="storage.url")
        return value

    @field_validator("profile", mode="before")
    @classmethod
    def _profile(cls, value: Any) -> Any:
        if value is None or (isinstance(value, str) and not value.strip()):
            return "default"
        if isinstance(value, str) and not _PROFILE_RE.match(value.strip()):
            raise ValueError("a profile is 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit")
        return value.strip() if isinstance(value, str) else value


@dataclass(frozen=True)
class Storage:
    """The resolved storage of one home.

    ``backend``: ``"sqlite"`` or ``"postgres"``. ``url``: the full PostgreSQL URL (may hold a
    password: never print it; use :attr:`display`), ``""`` for SQLite. ``source``: where the choice
    came from (``"default"``, ``"config.yaml"``, ``"HERMES_DATABASE_URL"``).
    """

    backend: Literal["sqlite", "postgres"]
    url: str = ""
    profile: str = "default"
    pool_size: int = 4
    source: str = "default"

    @property
    def is_postgres(self) -> bool:
        return self.backend == "postgres"

    @property
    def display(self) -> str:
        """The URL with any password replaced by ``***`` (``""`` for SQLite)."""
        return redact_url(self.url) if self.url else ""


def check_url(url: str, *, where: str) -> str:
    """Return ``url`` if it is a ``postgresql://`` (or ``postgres://``) URL; else raise ValueError.

    ``where`` names the setting in the message (``storage.url``, ``HERMES_DATABASE_URL``).
    """
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme not in URL_SCHEMES:
        shown = redact_url(url) if "://" in url else "<not a URL>"
        raise ValueError(f"{where} must be a postgresql:// URL (postgresql://user@host:5432/dbname); got {shown}")
    return url


_KV_SECRET_RE = re.compile(r"(\b(?:sslpassword|password|passfile)\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)
"""A secret of a libpq ``key=value`` connection string (the value quoted or not)."""
_QUERY_SECRET_RE = re.compile(r"([?&](?:sslpassword|password|passfile)=)[^&#]*", re.IGNORECASE)
"""A secret parameter of a URL's query string."""


def redact_url(url: str) -> str:
    """``url`` with every secret replaced by ``***``; the one redactor of connection URLs (status
    output, ``location``, every error message).

    Masked: the password of ``user:password@`` (the user stays: ``postgresql://app:***@db/h``), the
    ``password``, ``sslpassword`` and ``passfile`` query parameters (the rest of the query is kept
    as written), and the same keys of a libpq ``key=value`` connection string (``host=db
    password=***``). Never raises: text ``urlsplit`` cannot parse is masked by pattern all the same
    (``//user:***@`` and the query parameters), never returned whole.
    """
    text = str(url)
    if "://" not in text:
        return _KV_SECRET_RE.sub(r"\1***", text)
    try:
        parts = urlsplit(text)
    except ValueError:
        return _QUERY_SECRET_RE.sub(r"\1***", re.sub(r"//([^:/@]*):[^@]*@", r"//\1:***@", text))
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, hostport = netloc.rsplit("@", 1)
        if ":" in userinfo:
            userinfo = userinfo.split(":", 1)[0] + ":***"
        netloc = f"{userinfo}@{hostport}"
    query = _QUERY_SECRET_RE.sub(r"\1***", "?" + parts.query)[1:] if parts.query else ""
    return _join(parts.scheme, netloc, parts.path, query, parts.fragment)


def redact_secrets(text: str) -> str:
    """A message (a libpq error may echo the conninfo) with the value after every ``password=``,
    ``sslpassword=`` or ``passfile=`` masked; the rest unchanged."""
    return _KV_SECRET_RE.sub(r"\1***", str(text))


def _join(scheme: str, netloc: str, path: str, query: str, fragment: str) -> str:
    # urlunsplit drops an empty authority ("postgresql:///db" -> "postgresql:/db"); libpq needs it.
    return f"{scheme}://{netloc}{path}" + (f"?{query}" if query else "") + (f"#{fragment}" if fragment else "")


def database_url_from_env(home: str | os.PathLike[str] | None) -> str:
    """``HERMES_DATABASE_URL`` from the environment, else from ``<home>/.env``; ``""`` when unset."""
    value = os.environ.get(DATABASE_URL_ENV, "").strip()
    if value or home is None:
        return value
    from hermes_memory.config import read_env_file

    try:
        return read_env_file(Path(home) / ".env").get(DATABASE_URL_ENV, "").strip()
    except Exception:  # an unreadable .env is reported by the commands that read it for secrets
        return ""


def resolve_storage(config: Any, home: str | os.PathLike[str] | None = None) -> Storage:
    """The :class:`Storage` of a home from its config (a ``HermesConfig``) and the environment.

    See the module docstring for the order. Raises :class:`ConfigError` for ``backend: postgres``
    without a url or a ``HERMES_DATABASE_URL`` that is not a postgresql:// URL. Does not connect
    and does not need psycopg (see :func:`require_driver`).
    """
    section: StorageConfig = getattr(config, "storage", None) or StorageConfig()
    env_url = database_url_from_env(home)
    if env_url:
        try:
            check_url(env_url, where=DATABASE_URL_ENV)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        return Storage("postgres", env_url, section.profile, section.pool_size, DATABASE_URL_ENV)
    if section.backend == "postgres" or (section.backend is None and section.url):
        if not section.url:
            raise ConfigError(
                "config.yaml: storage.backend is postgres but storage.url is empty; set storage.url: "
                f"postgresql://user@host:5432/dbname (or {DATABASE_URL_ENV} in the environment or .env), "
                "or set storage.backend: sqlite")
        return Storage("postgres", section.url, section.profile, section.pool_size, "config.yaml")
    return Storage("sqlite", "", section.profile, section.pool_size,
                   "config.yaml" if section.backend == "sqlite" else "default")


def require_driver() -> None:
    """Raise :class:`ConfigError` naming the install command when psycopg 3 or psycopg_pool is missing."""
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError as exc:
        raise ConfigError(f"storage is PostgreSQL but its driver is not installed ({exc.name} is missing): "
                          f"{INSTALL_HINT}") from None


def open_pg_pool(url: str, *, connect_timeout_s: float, autocommit: bool, prepare: Callable[[Any], _T],
                 **pool_options: Any) -> tuple[_T, Any]:
    """Connect to ``url`` once directly, run ``prepare(conn)`` on it (migrations), close it, then open a
    :class:`psycopg_pool.ConnectionPool` without waiting; returns ``(prepare's result, the pool)``.

    Why not ``pool.open(wait=True)``: a pool retries a refused connection in its worker for the whole
    wait, logging a warning each time, and only then reports a timeout (30 s and six warnings for a
    closed port); one direct ``psycopg.connect`` fails at once with libpq's own reason. Both the
    direct connection and the pool's use libpq ``connect_timeout`` = ``connect_timeout_s`` rounded up
    to whole seconds, at least 2 (libpq treats 1 as 2). ``pool_options`` go to the pool (``min_size``,
    ``max_size``, ``timeout``, ``name``, ...). Raises psycopg's errors as they are
    (:class:`psycopg.OperationalError` when the server cannot be reached or refuses the login; the
    caller words them, ending with :data:`PG_FIX_HINT`) and whatever ``prepare`` raises."""
    import psycopg
    from psycopg_pool import ConnectionPool

    connect_timeout = max(2, math.ceil(connect_timeout_s))
    with psycopg.connect(url, autocommit=autocommit, connect_timeout=connect_timeout) as conn:
        result = prepare(conn)
    pool: ConnectionPool[Any] = ConnectionPool(
        url, kwargs={"autocommit": autocommit, "connect_timeout": connect_timeout}, open=False, **pool_options
    )
    pool.open(wait=False)
    return result, pool


def url_password(url: str) -> str:
    """The password in ``url`` (userinfo or ``password=`` parameter), ``""`` when there is none."""
    try:
        parts = urlsplit(url)
        if parts.password:
            return parts.password
        for key, value in parse_qsl(parts.query, keep_blank_values=True):
            if key.lower() == "password":
                return value
    except ValueError:
        pass
    return ""


def without_password(url: str) -> str:
    """``url`` with the password removed altogether (``user:pw@`` -> ``user@``, ``password=`` dropped),
    for a config file: libpq then takes it from ``PGPASSWORD`` or ``~/.pgpass``."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, hostport = netloc.rsplit("@", 1)
        netloc = f"{userinfo.split(':', 1)[0]}@{hostport}"
    pairs = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k.lower() != "password"]
    return _join(parts.scheme, netloc, parts.path, urlencode(pairs, safe="/:"), parts.fragment)


def scrub_password(text: str, url: str) -> str:
    """``text`` (an error message, a log line) with every occurrence of ``url``'s password replaced
    by ``***``; unchanged when the URL has none."""
    secret = url_password(url)
    if not secret:
        return text
    from urllib.parse import quote

    for form in {secret, quote(secret, safe="")}:
        text = text.replace(form, "***")
    return text
