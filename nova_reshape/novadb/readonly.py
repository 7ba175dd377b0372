"""Open another service's database for reading only.

During a fast-forward upgrade nova's and Cyborg's databases are the
operator's ground truth: nothing here may change them. :func:`read_only`
yields a connection inside a transaction the database itself refuses to
write in (``SET TRANSACTION ... READ ONLY`` on PostgreSQL and MariaDB/MySQL,
``PRAGMA query_only`` plus a read-only open on SQLite) and always rolls
back. One repeatable-read snapshot covers all queries of a read, so rows
read by different statements agree.

Problems (bad URL, unreachable server, missing SQLite file, missing table)
become :class:`DatabaseReadError` with one line naming the database; what
is wrong with the URL or the login is found by Placement's one database
check, :mod:`placement_wsgi.db.preflight` (never creating a file), and is
a :class:`BadDatabaseURL` unless only an unreachable server is to blame.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import sqlalchemy as sa

from placement_wsgi.db import preflight


class DatabaseReadError(Exception):
    """The database cannot be read; the message is one line for an operator."""


class BadDatabaseURL(DatabaseReadError):
    """The URL itself is unusable (syntax, dialect, driver, missing SQLite file)."""


class DatabaseUnreachable(DatabaseReadError):
    """Nothing answered: the server is down or its host unknown (waiting may cure it)."""


class MissingDatabaseFile(BadDatabaseURL, DatabaseUnreachable):
    """The URL names a database that does not exist (an SQLite file, or a database on
    a server): a bad URL, and nothing to reach."""


#: Which error class each finding of the one database check becomes.
_ERROR_OF = {preflight.Problem.UNREACHABLE: DatabaseUnreachable,
             preflight.Problem.DISK_FULL: DatabaseUnreachable,
             preflight.Problem.NO_FILE: MissingDatabaseFile,
             preflight.Problem.NO_DATABASE: MissingDatabaseFile}


def display_url(url: str) -> str:
    """The URL without its password, for messages and file headers."""
    return preflight.masked_url(url)


def _unusable(what: str, finding: preflight.Finding) -> DatabaseReadError:
    """A finding as the error readers raise: nothing to reach (a server down, a
    database or file missing) is :class:`DatabaseUnreachable`; any other
    configuration problem a :class:`BadDatabaseURL`."""
    return _ERROR_OF.get(finding.problem, BadDatabaseURL)(finding.line(what))


def _engine(url: str, what: str) -> sa.Engine:
    finding = preflight.check_url(url, setting=f"the {what} URL")
    if finding is not None:
        raise _unusable(what, finding)
    parsed = sa.engine.make_url(url)
    if parsed.get_backend_name() == "sqlite":
        path = parsed.database
        if not path or path == ":memory:":
            raise BadDatabaseURL(f"{what}: a SQLite URL must name a file")
        # Open the file read-only, so not even a journal can be created.
        parsed = parsed.set(database=f"file:{path}", query={"mode": "ro", "uri": "true"})
    return sa.create_engine(parsed, poolclass=sa.pool.NullPool)


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


def _connect(engine: sa.Engine, url: str, what: str) -> sa.Connection:
    """A connection, or the finding of why there is none raised as one line.

    SQLite opens any file and finds it is no database only when it reads the
    catalogue, so that is read here, before the reader's first query.
    """
    connection = None
    try:
        connection = engine.connect()
        if connection.dialect.name == "sqlite":
            connection.exec_driver_sql("SELECT count(*) FROM sqlite_master")
            connection.rollback()
        return connection
    except sa.exc.DBAPIError as error:
        if connection is not None:
            connection.close()
        raise _unusable(what, preflight.connect_finding(
            error, url, f"the {what} URL")) from error


@contextlib.contextmanager
def read_only(url: str, what: str) -> Iterator[sa.Connection]:
    """A connection in a read-only transaction on ``url``; rolled back on exit.

    ``what`` names the database in messages ("nova database").
    """
    engine = _engine(url, what)
    try:
        connection = _connect(engine, url, what)
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
