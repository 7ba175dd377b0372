"""Open another service's database for reading only.

During a fast-forward upgrade nova's and Cyborg's databases are the
operator's ground truth: nothing here may change them. :func:`read_only`
yields a connection inside a transaction the database itself refuses to
write in (``SET TRANSACTION ... READ ONLY`` on PostgreSQL and MariaDB/MySQL,
``PRAGMA query_only`` plus a read-only open on SQLite) and always rolls
back. One repeatable-read snapshot covers all queries of a read, so rows
read by different statements agree.

Problems (bad URL, unreachable server, missing SQLite file, missing table)
become :class:`DatabaseReadError` with one line naming the database.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import sqlalchemy as sa


class DatabaseReadError(Exception):
    """The database cannot be read; the message is one line for an operator."""


class BadDatabaseURL(DatabaseReadError):
    """The URL itself is unusable (syntax, dialect, driver, missing SQLite file)."""


class DatabaseUnreachable(DatabaseReadError):
    """The server did not accept a connection (down, unknown host, wrong credentials)."""


class MissingDatabaseFile(BadDatabaseURL, DatabaseUnreachable):
    """A SQLite URL names a file that does not exist: a bad URL, and nothing to reach."""


def display_url(url: str) -> str:
    """The URL without its password, for messages and file headers."""
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except sa.exc.ArgumentError:
        return "<unparsable URL>"


def _engine(url: str, what: str) -> sa.Engine:
    try:
        parsed = sa.engine.make_url(url)
    except sa.exc.ArgumentError as error:
        raise BadDatabaseURL(f"{what}: {url!r} is not a database URL") from error
    if parsed.get_backend_name() == "sqlite":
        path = parsed.database
        if not path or path == ":memory:":
            raise BadDatabaseURL(f"{what}: a SQLite URL must name a file")
        if not os.path.isfile(path):
            raise MissingDatabaseFile(f"{what}: {path}: no such file")
        # Open the file read-only, so not even a journal can be created.
        parsed = parsed.set(database=f"file:{path}", query={"mode": "ro", "uri": "true"})
    elif parsed.get_backend_name() not in ("postgresql", "mysql"):
        raise BadDatabaseURL(f"{what}: unsupported database {parsed.get_backend_name()!r} "
                                "(sqlite, postgresql or mysql)")
    try:
        return sa.create_engine(parsed, poolclass=sa.pool.NullPool)
    except (ImportError, sa.exc.ArgumentError) as error:
        raise BadDatabaseURL(f"{what}: cannot use {display_url(url)}: {error}") from error


def _begin_read_only(connection: sa.Connection) -> None:
    dialect = connection.dialect.name
    if dialect == "sqlite":
        connection.exec_driver_sql("PRAGMA query_only = ON")
    elif dialect == "postgresql":
        connection.exec_driver_sql(
            "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
    else:
        # MariaDB/MySQL: applies to the transaction the first query starts.
        connection.exec_driver_sql(
            "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")


def short_error(error: BaseException) -> str:
    """The first line of a driver error, without SQLAlchemy's background link."""
    original = getattr(error, "orig", None) or error
    text = str(original).strip().splitlines()
    return text[0] if text else type(original).__name__


@contextlib.contextmanager
def read_only(url: str, what: str) -> Iterator[sa.Connection]:
    """A connection in a read-only transaction on ``url``; rolled back on exit.

    ``what`` names the database in messages ("nova database").
    """
    engine = _engine(url, what)
    try:
        try:
            connection = engine.connect()
        except sa.exc.DBAPIError as error:
            raise DatabaseUnreachable(
                f"{what}: cannot connect to {display_url(url)}: {short_error(error)}") from error
        with connection:
            try:
                with connection.begin() as transaction:
                    _begin_read_only(connection)
                    yield connection
                    transaction.rollback()
            except sa.exc.DBAPIError as error:
                raise DatabaseReadError(
                    f"{what}: {display_url(url)}: {short_error(error)}") from error
    finally:
        engine.dispose()
