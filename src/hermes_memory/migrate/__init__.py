"""Moving a home's data between storage backends (``hermes-memory storage migrate``).

:mod:`~hermes_memory.migrate.source` reads a SQLite home without writing to it;
:mod:`~hermes_memory.migrate.engine` copies it into PostgreSQL, idempotently and resumably, and
verifies the counts. Above ``sessions`` and ``memory`` (it uses both), below the CLI.
"""

from hermes_memory.migrate.engine import MigrationReport, migrate_home
from hermes_memory.migrate.source import SqliteHomeSource

__all__ = ["MigrationReport", "SqliteHomeSource", "migrate_home"]
