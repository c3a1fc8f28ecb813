"""``memory export`` / ``memory import`` follow the home's ``storage:`` setting: on a home configured
for PostgreSQL they move entries between Markdown files and the database without ``--database``."""

from __future__ import annotations

from pathlib import Path

import yaml

from hermes_memory.memory import MemoryStore
from hermes_memory.memory.pg import PgMemoryStore
from tests.deploy.helpers import hermes_json


def test_import_and_export_use_the_configured_database_and_profile(tmp_path: Path, pg_url: str) -> None:
    src = tmp_path / "md"
    MemoryStore(src).add("memory", "The build runs on Jenkins")
    MemoryStore(src).add("user", "Likes tea")
    MemoryStore(src, user_id="alice").add("user", "alice leads the data team")
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(yaml.safe_dump({"storage": {"backend": "postgres", "url": pg_url,
                                                                  "profile": "team-a"}}))
    out = hermes_json(home, "memory", "import", "--from", str(src))
    assert out["success"] is True
    assert PgMemoryStore(pg_url, profile="team-a").entries("memory") == ["The build runs on Jenkins"]
    assert PgMemoryStore(pg_url, profile="team-a", user_id="alice").entries("user") == ["alice leads the data team"]
    assert PgMemoryStore(pg_url).entries("memory") == []  # the default profile is another deployment's
    assert not (home / "memories").exists()
    back = tmp_path / "back"
    assert hermes_json(home, "memory", "export", "--to", str(back))["success"] is True
    for rel in ("MEMORY.md", "USER.md", "users/alice/USER.md"):
        assert (back / rel).read_text(encoding="utf-8") == (src / rel).read_text(encoding="utf-8"), rel
    # --profile still picks another deployment's rows on the same database.
    assert hermes_json(home, "memory", "import", "--from", str(src), "--profile", "team-b")["success"] is True
    assert PgMemoryStore(pg_url, profile="team-b").entries("user") == ["Likes tea"]
