"""Curated memory on PostgreSQL (issue 16): :class:`PgMemoryStore` over :class:`PgBackend`.

Needs the ``postgres`` extra (psycopg 3 and psycopg-pool). See :mod:`.backend` for the locking and
:mod:`.schema` for the tables and migrations.
"""

from hermes_memory.memory.pg.backend import PgBackend, PgMemoryStore, validate_profile
from hermes_memory.memory.pg.schema import SCHEMA_VERSION, close_pools, describe_url

__all__ = ["SCHEMA_VERSION", "PgBackend", "PgMemoryStore", "close_pools", "describe_url", "validate_profile"]
