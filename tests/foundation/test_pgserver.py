"""The test PostgreSQL server starts for real and hands each test an empty database of its own."""

from __future__ import annotations


def test_each_test_database_is_fresh_and_has_pg_trgm_available(pg_server, pg_url):
    name = pg_url.rsplit("/", 1)[1]
    assert pg_server.psql("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'", name).strip() == "0"
    pg_server.psql("CREATE EXTENSION pg_trgm", name)
    assert pg_server.psql("SELECT similarity('hermes', 'hermès') > 0", name).strip() == "t"


def test_databases_of_two_tests_are_distinct(pg_server):
    first, second = pg_server.create_database(), pg_server.create_database()
    assert first != second
    pg_server.psql("CREATE TABLE only_here (x int)", first.rsplit("/", 1)[1])
    assert pg_server.psql("SELECT count(*) FROM pg_tables WHERE tablename = 'only_here'",
                          second.rsplit("/", 1)[1]).strip() == "0"
