"""The engine's connection settings that decide how statements are planned."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from placement_wsgi.db import tables
from placement_wsgi.db.database import is_out_of_space, is_transient


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


class _DriverError(Exception):
    """A driver exception carrying what each engine's driver gives (args, sqlstate)."""

    def __init__(self, *args: object, sqlstate: str | None = None) -> None:
        super().__init__(*args)
        self.sqlstate = sqlstate


@pytest.mark.parametrize("orig, full", [
    (_DriverError("database or disk is full"), True),                   # SQLite
    (_DriverError("could not extend file", sqlstate="53100"), True),    # PostgreSQL
    (_DriverError(1021, "Disk full (/tmp/#sql_1.MAI)"), True),          # MariaDB/MySQL
    (_DriverError(1114, "The table 'allocations' is full"), True),
    (_DriverError("could not write: No space left on device"), True),
    (_DriverError("database is locked"), False),
    (_DriverError(1213, "Deadlock found"), False),
    (_DriverError("deadlock detected", sqlstate="40P01"), False),
])
def test_out_of_space_is_told_apart_from_other_errors(orig, full) -> None:
    error = sa.exc.OperationalError("INSERT INTO allocations", {}, orig)
    assert is_out_of_space(error) is full
    if full:
        assert not is_transient(error)  # not retried: only freeing space cures it
