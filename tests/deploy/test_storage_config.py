"""``storage:`` in config.yaml and ``HERMES_DATABASE_URL``: which backend a home uses, the errors for
a wrong setting, and that no password ever reaches output."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_memory.config import HermesConfig, load_config, update_config
from hermes_memory.errors import ConfigError
from hermes_memory.home import HermesHome
from hermes_memory.memory import MemoryStore, open_memory_store
from hermes_memory.sessions import SessionDB, open_session_db
from hermes_memory.storage import (
    DATABASE_URL_ENV,
    INSTALL_HINT,
    StorageConfig,
    redact_url,
    require_driver,
    resolve_storage,
    scrub_password,
    without_password,
)


@pytest.fixture(autouse=True)
def _no_database_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)


def _load(tmp_path: Path, text: str) -> HermesConfig:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return load_config(path)


def test_nothing_set_is_todays_sqlite_home(tmp_path: Path) -> None:
    cfg = _load(tmp_path, "memory:\n  memory_char_limit: 3000\n")
    st = resolve_storage(cfg, tmp_path)
    assert (st.backend, st.url, st.source, st.display) == ("sqlite", "", "default", "")
    home = HermesHome(tmp_path)
    with open_session_db(home, cfg) as db:
        assert type(db) is SessionDB
        assert Path(db.db_path) == tmp_path / "state.db"
    store = open_memory_store(home, cfg, user_id="alice")
    assert type(store) is MemoryStore
    assert store.memory_dir == tmp_path / "memories" and store.memory_char_limit == 3000
    assert store.path_for("user") == tmp_path / "memories" / "users" / "alice" / "USER.md"


@pytest.mark.parametrize("spelling", ["postgres", "postgresql", "PostgreSQL", " postgres "])
def test_backend_spellings(tmp_path: Path, spelling: str) -> None:
    cfg = _load(tmp_path, f"storage:\n  backend: '{spelling}'\n  url: postgresql://h@db/hermes\n")
    st = resolve_storage(cfg, tmp_path)
    assert (st.backend, st.url, st.source, st.profile, st.pool_size) == (
        "postgres", "postgresql://h@db/hermes", "config.yaml", "default", 4)


def test_url_alone_selects_postgres_and_explicit_sqlite_wins_over_url(tmp_path: Path) -> None:
    assert resolve_storage(_load(tmp_path, "storage:\n  url: postgres://db/x\n"), tmp_path).backend == "postgres"
    st = resolve_storage(_load(tmp_path, "storage:\n  backend: sqlite\n  url: postgres://db/x\n"), tmp_path)
    assert (st.backend, st.source) == ("sqlite", "config.yaml")


def test_postgres_without_url_is_a_clear_error(tmp_path: Path) -> None:
    cfg = _load(tmp_path, "storage:\n  backend: postgres\n")
    with pytest.raises(ConfigError, match=r"storage\.url is empty.*postgresql://.*HERMES_DATABASE_URL"):
        resolve_storage(cfg, tmp_path)
    with pytest.raises(ConfigError, match="storage.url is empty"):
        open_session_db(HermesHome(tmp_path), cfg)
    with pytest.raises(ConfigError, match="storage.url is empty"):
        open_memory_store(HermesHome(tmp_path), cfg)


@pytest.mark.parametrize("url", ["mysql://root:hunter2@db/x", "db.internal:5432", "sqlite:///state.db",
                                 "postgresql+psycopg://u:hunter2@db/x"])
def test_url_that_is_not_postgresql_is_refused_without_showing_the_password(tmp_path: Path, url: str) -> None:
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, f"storage:\n  backend: postgres\n  url: '{url}'\n")
    msg = str(err.value)
    assert "storage.url" in msg and "postgresql://" in msg and str(tmp_path / "config.yaml") in msg
    assert "hunter2" not in msg


def test_unknown_backend_names_the_allowed_values(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"storage\.backend.*'sqlite' or 'postgres'"):
        _load(tmp_path, "storage:\n  backend: mongodb\n")


def test_environment_url_selects_postgres_over_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = _load(tmp_path, "storage:\n  backend: sqlite\n  profile: team-a\n  pool_size: 8\n")
    monkeypatch.setenv(DATABASE_URL_ENV, "postgresql://app:s3cret@db:5432/hermes")
    st = resolve_storage(cfg, tmp_path)
    assert (st.backend, st.source, st.profile, st.pool_size) == ("postgres", DATABASE_URL_ENV, "team-a", 8)
    assert st.display == "postgresql://app:***@db:5432/hermes"
    monkeypatch.setenv(DATABASE_URL_ENV, "mysql://app:s3cret@db/x")
    with pytest.raises(ConfigError, match="HERMES_DATABASE_URL must be a postgresql:// URL") as err:
        resolve_storage(cfg, tmp_path)
    assert "s3cret" not in str(err.value)
    monkeypatch.setenv(DATABASE_URL_ENV, "  ")  # empty means unset
    assert resolve_storage(cfg, tmp_path).backend == "sqlite"


def test_database_url_in_the_homes_env_file(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(f"{DATABASE_URL_ENV}=postgresql://u:pw@db/h\n")
    st = resolve_storage(HermesConfig(), tmp_path)
    assert (st.backend, st.url, st.source) == ("postgres", "postgresql://u:pw@db/h", DATABASE_URL_ENV)


def test_profile_and_pool_size_are_validated(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="storage.profile"):
        _load(tmp_path, "storage:\n  profile: ../etc\n")
    cfg = _load(tmp_path, "storage:\n  pool_size: 0\n  profile:\n")
    assert cfg.storage.pool_size == 1 and cfg.storage.profile == "default"
    assert any("storage.pool_size" in w for w in cfg.warnings)


@pytest.mark.parametrize(("url", "shown"), [
    ("postgresql://app:s3cret@db:5432/hermes", "postgresql://app:***@db:5432/hermes"),
    ("postgresql://app@db/hermes", "postgresql://app@db/hermes"),
    ("postgresql:///hermes?host=/run/pg&password=s3cret", "postgresql:///hermes?host=/run/pg&password=***"),
    ("postgresql://app:p%40ss@db/h", "postgresql://app:***@db/h"),
])
def test_redacted_url(url: str, shown: str) -> None:
    assert redact_url(url) == shown
    assert "s3cret" not in redact_url(url)
    assert "s3cret" not in without_password(url) and "p%40ss" not in without_password(url)
    assert "s3cret" not in scrub_password(f"could not connect to {url}", url)
    assert "p%40ss" not in scrub_password(f"could not connect to {url}", url)


def test_update_config_switches_backend_keeping_comments(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("# my settings\nmemory:\n  memory_char_limit: 3000  # roomy\n", encoding="utf-8")
    cfg = update_config(path, {"storage.backend": "postgres", "storage.url": "postgresql://h@db/x"})
    assert cfg.storage.backend == "postgres"
    text = path.read_text()
    assert "# my settings" in text and "# roomy" in text and "storage:" in text
    assert StorageConfig.model_validate({"backend": "postgresql"}).backend == "postgres"


def test_missing_driver_names_the_install_command(tmp_path: Path) -> None:
    # A real interpreter in which psycopg cannot be imported.
    code = ("import sys; sys.modules['psycopg'] = None\n"
            "from hermes_memory.storage import require_driver\n"
            "try:\n    require_driver()\nexcept Exception as e:\n    print(type(e).__name__, e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "ConfigError" in r.stdout and INSTALL_HINT in r.stdout, r.stdout + r.stderr
    require_driver()  # installed in the dev venv: no error


def test_status_names_the_backend_never_the_password(tmp_path: Path) -> None:
    home = tmp_path / "h"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("HERMES_HOME", DATABASE_URL_ENV)}
    run = [sys.executable, "-m", "hermes_memory", "--home", str(home), "status"]
    r = subprocess.run(run, capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SQLite" in r.stdout and "state.db" in r.stdout and "Sessions: 0" in r.stdout
    assert not (home / "state.db").exists()  # status never creates the database
    # PostgreSQL on a port where nothing listens: the URL is shown redacted, the error scrubbed.
    env[DATABASE_URL_ENV] = "postgresql://app:s3cret@127.0.0.1:9/hermes?connect_timeout=2"
    r = subprocess.run(run, capture_output=True, text=True, env=env, timeout=120)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert "PostgreSQL postgresql://app:***@127.0.0.1:9/hermes" in out and "cannot read the store" in out
    assert "s3cret" not in out


@pytest.mark.parametrize(("url", "shown"), [
    # a libpq key=value string: the password masked (it came back as "://host=db ... password=s3cret")
    ("host=db user=app password='s3cret x' dbname=h", "host=db user=app password=*** dbname=h"),
    ("postgresql://app@db/h?sslpassword=s3cret&sslmode=require", "postgresql://app@db/h?sslpassword=***&sslmode=require"),
    # urlsplit refuses it (an unclosed IPv6 bracket): masked by pattern, never returned whole
    ("postgresql://app:s3cret@[::1/h?password=s3cret", "postgresql://app:***@[::1/h?password=***"),
])
def test_redacted_connection_strings_and_unparseable_urls(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_sessions_and_memory_show_a_url_through_the_one_redactor() -> None:
    """``sessions.pg.redact_url`` and ``memory.pg.describe_url`` are the storage redactor (they
    differed: the memory one dropped the user's ``:***`` and the query, the storage one leaked a
    ``key=value`` string's password)."""
    from hermes_memory.memory.pg import describe_url
    from hermes_memory.sessions.pg import redact_url as sessions_redact

    for url in ("postgresql://app:s3cret@db:5432/hermes?connect_timeout=1", "host=db password=s3cret"):
        assert sessions_redact(url) == describe_url(url) == redact_url(url)
        assert "s3cret" not in redact_url(url)
