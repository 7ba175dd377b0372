"""The engine's connection settings that decide how statements are planned."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from placement_wsgi.db import tables


def test_postgresql_statements_are_not_prepared_on_the_server(database, engine):
    """A server-side prepared statement keeps one generic plan: made while a
    table is small it stays a sequential scan as the table grows. Each
    statement is planned on its own instead, however often it runs."""
    if engine != "postgresql":
        pytest.skip("server-side prepared statements are psycopg's (PostgreSQL)")

    def run_often(connection: sa.Connection) -> int:
        query = sa.select(tables.allocations.c.id).where(
            tables.allocations.c.consumer_id.in_(["a", "b", "c"]))
        for _ in range(12):
            connection.execute(query).all()
        return connection.exec_driver_sql(
            "SELECT count(*) FROM pg_prepared_statements").scalar_one()

    assert database.read(run_often) == 0
