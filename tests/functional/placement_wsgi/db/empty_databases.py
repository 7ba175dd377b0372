"""Empty databases (no schema at all) on every enabled engine.

The shared fixtures in tests/fixtures/databases.py hand out databases that
are already migrated; migration, ``db sync`` and start-up sync tests need
databases with nothing in them. SQLite: a new file under ``tmp_path``.
PostgreSQL / MariaDB: a database created on the server named by
``NOVA_RESHAPE_TEST_POSTGRESQL`` / ``NOVA_RESHAPE_TEST_MYSQL`` and dropped
afterwards.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.config import Config

from placement_wsgi.db import migration
from placement_wsgi.db.database import Database
from tests.fixtures.databases import ENV_MYSQL, ENV_POSTGRESQL


@contextlib.contextmanager
def empty_database(engine: str, directory: pathlib.Path) -> Iterator[str]:
    """Yield the URL of a new, empty database on ``engine``; drop it afterwards."""
    if engine == "sqlite":
        yield f"sqlite:///{directory / ('empty-' + uuid.uuid4().hex[:8] + '.sqlite')}"
        return
    server_url = os.environ[ENV_POSTGRESQL if engine == "postgresql" else ENV_MYSQL].rstrip("/")
    name = f"nova_reshape_empty_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(
        server_url + ("/postgres" if engine == "postgresql" else "/"),
        isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.exec_driver_sql(f"CREATE DATABASE {name}")
        try:
            yield f"{server_url}/{name}" + ("?charset=utf8mb4" if engine == "mysql" else "")
        finally:
            with admin.connect() as connection:
                if engine == "postgresql":
                    connection.exec_driver_sql(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        f"WHERE datname = '{name}' AND pid <> pg_backend_pid()")
                connection.exec_driver_sql(f"DROP DATABASE IF EXISTS {name}")
    finally:
        admin.dispose()


@pytest.fixture
def empty_db_url(engine: str, tmp_path: pathlib.Path) -> Iterator[str]:
    """URL of an empty database on the engine under test (the ``engine`` fixture)."""
    with empty_database(engine, tmp_path) as url:
        yield url


def upgrade_to(url: str, revision: str) -> None:
    """Build the schema of an older ``revision``, as a reference service left it."""
    config = Config()
    config.set_main_option(
        "script_location", os.path.join(os.path.dirname(migration.__file__), "migrations"))
    database = Database(url)
    try:
        with database.engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, revision)
    finally:
        database.dispose()
