"""Throwaway, migrated Placement databases for tests, on SQLite, PostgreSQL or MariaDB.

A *database server* is named by a string: ``"sqlite"`` (the default), or
the SQLAlchemy URL of a PostgreSQL or MySQL/MariaDB server with no
database part, e.g. ``postgresql+psycopg://postgres@127.0.0.1:5432`` or
``mysql+pymysql://root@127.0.0.1:3306``. The user in the URL must be
allowed to create and drop databases. A query string is kept for every
database made on the server (:func:`database_url`), e.g.
``mysql+pymysql://root@127.0.0.1:3306/?ssl_disabled=true`` for a MariaDB
without TLS, which saves PyMySQL a TLS context (about 50 ms) per connection.

:data:`ENV_DATABASE_SERVER` names the server tests use when the caller
does not choose one (:func:`server_from_environment`).

``THROWAWAY.fresh_url(server)`` returns the URL of a database holding only
the schema and the standard traits and resource classes:

* SQLite: a copy of one migrated template file, a new file every call,
  in a temporary directory.
* A server: one database named ``nova_reshape_test_<random>`` is created
  and migrated on first use in a process and emptied on every later call
  (much faster than migrating again), through one engine kept for the
  purpose (its pooled connection saves a new connection and dialect set-up
  per call); it is dropped by ``close()``, which runs at interpreter exit.

Callers must be done with one fresh database (its engines disposed)
before asking for the next one of the same server. :func:`created_database`
makes a new, empty one (no schema) for a test or a benchmark of its own.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator

import sqlalchemy as sa

from placement_wsgi.db import migration, preflight, tables
from placement_wsgi.db.database import Database
from placement_wsgi.db.standard import FIRST_CUSTOM_RESOURCE_CLASS_ID

#: Environment variable naming the database server tests run on (unset: SQLite).
ENV_DATABASE_SERVER = "PLACEMENT_WSGI_TEST_DB_SERVER"

#: The server name meaning "a temporary SQLite file".
SQLITE = "sqlite"

#: Prefix of the databases created on a server.
DATABASE_PREFIX = "nova_reshape_test_"


def server_from_environment() -> str:
    """The server :data:`ENV_DATABASE_SERVER` names, ``"sqlite"`` when unset or empty."""
    return os.environ.get(ENV_DATABASE_SERVER, "").strip() or SQLITE


def engine_of(server: str) -> str:
    """``sqlite``, ``postgresql`` or ``mysql`` (MariaDB included) for a server name."""
    if server == SQLITE:
        return SQLITE
    backend = sa.engine.make_url(server).get_backend_name()
    if backend in ("mysql", "mariadb"):
        return "mysql"
    if backend == "postgresql":
        return backend
    raise ValueError(f"unsupported test database server {server!r}: "
                     "use sqlite, a postgresql:// or a mysql:// URL")


def database_url(server_url: str, name: str | None) -> str:
    """URL of database ``name`` (None: no database) on ``server_url``'s server.

    The server URL's query string is kept, so driver options given there reach
    every database made on it (e.g. ``?ssl_disabled=true``: PyMySQL otherwise
    builds a TLS context for each new connection, about 50 ms, even to a
    server without TLS). MySQL/MariaDB databases get ``charset=utf8mb4``
    unless the server URL names a charset.
    """
    url = sa.engine.make_url(server_url).set(database=name)
    if engine_of(server_url) == "mysql" and "charset" not in url.query:
        url = url.update_query_dict({"charset": "utf8mb4"})
    return url.render_as_string(hide_password=False)


def admin_url(server_url: str) -> str:
    """Where databases are created and dropped on ``server_url``'s server."""
    return database_url(server_url, "postgres" if engine_of(server_url) == "postgresql" else None)


def server_problem(server: str) -> str | None:
    """Why test databases cannot be made on ``server`` (one line), or None.

    Only connects: nothing is created.
    """
    if server == SQLITE:
        return None
    try:
        engine = sa.create_engine(admin_url(server), poolclass=sa.pool.NullPool)
    except (ValueError, ImportError, sa.exc.ArgumentError) as error:
        return f"database server {preflight.masked_url(server)}: {error}"
    try:
        with engine.connect():
            return None
    except sa.exc.DBAPIError as error:
        return str(preflight.connect_finding(error, server, "the database server URL"))
    finally:
        engine.dispose()


def empty(database: Database) -> None:
    """Delete everything but the standard traits and resource classes, in one transaction;
    drop the tables that are not Placement's (tools keep their own beside them, e.g.
    nova-reshape's journal), so the next test finds the database as migrated."""
    with database.engine.begin() as connection:
        foreign = sa.MetaData()
        foreign.reflect(connection, only=lambda name, _: name not in tables.metadata.tables
                        and name != "alembic_version")
        foreign.drop_all(connection)
        # Providers reference each other; cut the links so any order deletes.
        connection.execute(tables.resource_providers.update().values(
            parent_provider_id=None, root_provider_id=None))
        for table in tables.ALL_TABLES_CHILD_FIRST:
            if table is tables.traits:
                connection.execute(table.delete().where(table.c.name.startswith("CUSTOM_")))
            elif table is tables.resource_classes:
                connection.execute(table.delete().where(
                    table.c.id >= FIRST_CUSTOM_RESOURCE_CLASS_ID))
            else:
                connection.execute(table.delete())


class SQLiteServer:
    """Fresh SQLite files copied from one migrated template."""

    engine = SQLITE

    def __init__(self) -> None:
        self.directory = tempfile.mkdtemp(prefix="nova-reshape-tests-")
        self.template = os.path.join(self.directory, "template.sqlite")
        database = Database(f"sqlite:///{self.template}")
        migration.upgrade(database)
        with database.engine.connect() as connection:
            connection.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        database.dispose()
        self.count = 0

    def fresh(self) -> str:
        self.count += 1
        path = os.path.join(self.directory, f"db{self.count}.sqlite")
        shutil.copyfile(self.template, path)
        return f"sqlite:///{path}"

    def close(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


class CreatedDatabase:
    """A new, empty database (no schema) on a PostgreSQL or MySQL server, named
    ``<prefix><random>``: created by the constructor, dropped by :meth:`drop`."""

    def __init__(self, server_url: str, prefix: str = DATABASE_PREFIX) -> None:
        self.engine = engine_of(server_url)
        self.name = f"{prefix}{uuid.uuid4().hex[:12]}"
        self.admin = sa.create_engine(admin_url(server_url), isolation_level="AUTOCOMMIT")
        with self.admin.connect() as connection:
            connection.exec_driver_sql(f"CREATE DATABASE {self.name}")
        self.url = database_url(server_url, self.name)

    def drop(self) -> None:
        """Drop the database, ending any session still on it (safe to call twice)."""
        with self.admin.connect() as connection:
            if self.engine == "postgresql":
                connection.exec_driver_sql(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    f"WHERE datname = '{self.name}' AND pid <> pg_backend_pid()")
            connection.exec_driver_sql(f"DROP DATABASE IF EXISTS {self.name}")
        self.admin.dispose()


@contextlib.contextmanager
def created_database(server_url: str, prefix: str = DATABASE_PREFIX) -> Iterator[str]:
    """URL of a new, empty database on ``server_url``'s server, dropped on leaving."""
    created = CreatedDatabase(server_url, prefix)
    try:
        yield created.url
    finally:
        created.drop()


class ServerDatabase:
    """One throwaway database on a PostgreSQL or MySQL server, emptied for each use."""

    def __init__(self, server_url: str) -> None:
        self.created = CreatedDatabase(server_url)
        self.engine = self.created.engine
        self.url = self.created.url
        # Kept for emptying: a new engine's first connect and dialect set-up
        # cost more than emptying does. Its pool holds one idle connection
        # between calls; a forked child drops what it inherits (Database).
        self.database = Database(self.url, pool_size=1)
        migration.upgrade(self.database)

    def fresh(self) -> str:
        empty(self.database)
        return self.url

    def close(self) -> None:
        self.database.dispose()
        self.created.drop()


class ThrowawayDatabases:
    """Lazily created test databases, one per server, for a whole process."""

    def __init__(self) -> None:
        self._servers: dict[str, SQLiteServer | ServerDatabase] = {}
        self._owner = os.getpid()

    def get(self, server: str) -> SQLiteServer | ServerDatabase:
        """The throwaway database (SQLite: the template) for ``server``, made on first use."""
        if server not in self._servers:
            self._servers[server] = (
                SQLiteServer() if engine_of(server) == SQLITE else ServerDatabase(server))
        return self._servers[server]

    def fresh_url(self, server: str | None = None) -> str:
        """URL of a fresh database on ``server`` (default: :func:`server_from_environment`)."""
        return self.get(server or server_from_environment()).fresh()

    def close(self) -> None:
        """Drop every database made so far (safe to call more than once)."""
        for database in self._servers.values():
            database.close()
        self._servers.clear()

    def close_at_exit(self) -> None:
        """``close()``, but only in the process that made them (not in a forked child)."""
        if os.getpid() == self._owner:
            self.close()


#: The process's throwaway databases; dropped at exit (or earlier by ``close()``).
THROWAWAY = ThrowawayDatabases()
atexit.register(THROWAWAY.close_at_exit)
