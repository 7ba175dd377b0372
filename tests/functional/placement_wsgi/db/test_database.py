"""The engine's connection settings that decide how statements are planned."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from placement_wsgi.db import tables
from placement_wsgi.db.database import is_out_of_space, is_transient, sqlite_disk_full


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


@pytest.mark.parametrize("message, free_blocks, full", [
    ("database or disk is full", 100, True),
    ("disk I/O error", 0, True),       # the -wal/-shm file could not be created
    ("disk I/O error", 100, False),    # a real I/O error, not the disk's size
    ("database is locked", 0, False),
])
def test_sqlite_disk_full_needs_sqlite_to_say_so_or_a_full_filesystem(
        monkeypatch, message, free_blocks, full) -> None:
    class _Stat:
        f_bavail = free_blocks

    monkeypatch.setattr("os.statvfs", lambda path: _Stat())
    url = sa.engine.make_url("sqlite:////var/lib/placement/placement.sqlite")
    assert sqlite_disk_full(url, message) is full
    error = sa.exc.OperationalError("INSERT", {}, Exception(message))
    assert is_out_of_space(error, url) is full
