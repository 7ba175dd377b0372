"""One database: its engine, and transactions that retry transient failures.

Every read and write of the service goes through :meth:`Database.read` or
:meth:`Database.write`, which run a function inside one transaction and run
it again, in a fresh transaction, when the database reports a failure that
is not the caller's fault: a deadlock, a serialization failure, a lock wait
timeout, SQLite's "database is locked", or a lost connection. Callers write
their transaction bodies so that running them twice is safe (they re-read
what they depend on).

SQLite is the zero-set-up default and must hold up under several gunicorn
workers writing at once, so file databases run in WAL mode with a busy
timeout, and write transactions start with ``BEGIN IMMEDIATE``: the write
lock is taken at the start, so two writers queue on the busy timeout instead
of deadlocking when both try to upgrade a read lock.
"""

from __future__ import annotations

import logging
import os
import random
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy import event, exc
from sqlalchemy.engine import Connection, Engine

from placement_wsgi.db.idle_ping import ping_when_idle

LOG = logging.getLogger(__name__)

T = TypeVar("T")

#: Engines alive in this process, so a forked worker can drop the pooled
#: connections it inherited from its parent (gunicorn --preload).
_LIVE_ENGINES: weakref.WeakSet[Engine] = weakref.WeakSet()


def _dispose_inherited_pools() -> None:
    for engine in list(_LIVE_ENGINES):
        engine.dispose(close=False)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_dispose_inherited_pools)


def _enable_wal(cursor, busy_timeout_ms: int) -> None:  # noqa: ANN001 - sqlite3 cursor
    """Put an SQLite file in WAL mode (persistent, so usually already done).

    Switching needs the file to itself and SQLite does not wait on its busy
    handler for that, so processes starting together retry for a while.
    """
    if cursor.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal":
        return
    deadline = time.monotonic() + busy_timeout_ms / 1000
    while True:
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(random.uniform(0.01, 0.05))


class RetryTransaction(Exception):
    """Raised inside a transaction body to have it run again from scratch.

    Used by writers that detect a lost optimistic race (a generation that
    moved between their read and their conditional update) and want a fresh
    look at the data rather than an error.
    """


_MYSQL_TRANSIENT_CODES = {1205, 1213, 2006, 2013, 2055, 1317}
_PG_TRANSIENT_STATES = {"40001", "40P01", "55P03", "57014"}


_MYSQL_CONNECTION_CODES = {2003, 2006, 2013, 2055}


def is_connection_error(error: BaseException) -> bool:
    """True when ``error`` says the database could not be reached or the link dropped.

    A lost connection (SQLAlchemy invalidated it), a refused or failed
    connect (psycopg raises OperationalError with no SQLSTATE for those:
    the server never answered), MySQL client errors 2003/2006/2013/2055.
    """
    if not isinstance(error, exc.DBAPIError):
        return False
    if error.connection_invalidated:
        return True
    if not isinstance(error, exc.OperationalError | exc.InterfaceError):
        return False
    orig = error.orig
    args = getattr(orig, "args", ())
    if args and isinstance(args[0], int):
        return args[0] in _MYSQL_CONNECTION_CODES
    if type(orig).__module__.startswith("psycopg"):
        return getattr(orig, "sqlstate", None) is None
    return False


_PG_DISK_FULL_STATE = "53100"
_MYSQL_DISK_FULL_CODES = {1021, 1114}


def sqlite_path(url: sa.engine.URL) -> str | None:
    """The file an SQLite URL names, or None for an in-memory database."""
    path = url.database or ""
    if path.startswith("file:"):  # URI form, sqlite:///file:PATH?uri=true
        path = path[len("file:"):].partition("?")[0]
    return None if path in ("", ":memory:") else path


def sqlite_disk_full(url: sa.engine.URL, message: str) -> bool:
    """Whether an SQLite database failed for lack of space: SQLite says so, or says
    ``disk I/O error`` (creating its ``-wal``/``-shm`` file failed) while the
    filesystem holding the file has no block left."""
    message = message.lower()
    if "database or disk is full" in message:
        return True
    path = sqlite_path(url)
    if "disk i/o error" not in message or path is None:
        return False
    try:
        return os.statvfs(os.path.dirname(os.path.abspath(path))).f_bavail == 0
    except OSError:
        return False


def is_out_of_space(error: BaseException, url: sa.engine.URL | None = None) -> bool:
    """True when ``error`` says the database's disk (or table space) is full.

    SQLite's ``database or disk is full`` (or its ``disk I/O error`` on a
    full filesystem, when ``url`` is given), PostgreSQL's ``disk_full``
    (53100), MySQL/MariaDB's 1021 (disk full) and 1114 (table is full).
    Not retried: only freeing space cures it.
    """
    if not isinstance(error, exc.DBAPIError):
        return False
    orig = error.orig
    if (getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)) == _PG_DISK_FULL_STATE:
        return True
    args = getattr(orig, "args", ())
    if args and isinstance(args[0], int) and args[0] in _MYSQL_DISK_FULL_CODES:
        return True
    message = str(orig)
    if url is not None and url.get_backend_name() == "sqlite":
        return sqlite_disk_full(url, message)
    return "database or disk is full" in message or "no space left on device" in message.lower()


def is_transient(error: BaseException) -> bool:
    """True when ``error`` is a database failure worth retrying as is."""
    if isinstance(error, exc.DBAPIError):
        if error.connection_invalidated:
            return True
        orig = error.orig
        state = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
        if state in _PG_TRANSIENT_STATES:
            return True
        args = getattr(orig, "args", ())
        if args and isinstance(args[0], int) and args[0] in _MYSQL_TRANSIENT_CODES:
            return True
        message = str(orig).lower()
        if "database is locked" in message or "database table is locked" in message:
            return True
        if "deadlock" in message or "could not serialize" in message:
            return True
    return False


class Database:
    """An engine bound to one URL, with retrying read and write transactions."""

    def __init__(
        self,
        url: str,
        *,
        sqlite_busy_timeout_ms: int = 30000,
        sqlite_synchronous: bool = True,
        mysql_sql_mode: str | None = "TRADITIONAL",
        pool_size: int = 5,
        max_overflow: int = 50,
        pool_timeout: int = 30,
        pool_recycle: int = 3600,
        echo: bool = False,
        retry_count: int = 10,
    ) -> None:
        self.url = sa.engine.make_url(url)
        self.dialect = self.url.get_backend_name()
        self.retry_count = retry_count
        kwargs: dict[str, Any] = {"echo": echo, "future": True}
        if self.dialect == "sqlite":
            kwargs["connect_args"] = {"check_same_thread": False, "timeout": 0}
        else:
            kwargs.update(
                pool_size=pool_size,
                max_overflow=max_overflow,
                pool_timeout=pool_timeout,
                pool_recycle=pool_recycle,
                isolation_level="READ COMMITTED",
            )
            if self.dialect == "postgresql":
                # psycopg 3 prepares a statement on the server after five runs,
                # and PostgreSQL then reuses one generic plan for it. A plan
                # made while a table was small (a new deployment, or tables
                # never analysed) stays a sequential scan as the table grows:
                # measured, writing 250 hosts' allocations went from 9 s to
                # 20 s as the tables filled, against a flat 9 s unprepared.
                kwargs["connect_args"] = {"prepare_threshold": None}
        self.engine = sa.create_engine(self.url, **kwargs)
        _LIVE_ENGINES.add(self.engine)
        if self.dialect != "sqlite":
            # pool_pre_ping's check of every checkout, for idle connections only.
            ping_when_idle(self.engine)
        if self.dialect == "sqlite":
            self._configure_sqlite(sqlite_busy_timeout_ms, sqlite_synchronous)
        elif self.dialect in ("mysql", "mariadb") and mysql_sql_mode:
            self._configure_mysql(mysql_sql_mode)
        # Serialises writers inside one process on SQLite so threads queue on
        # a cheap lock rather than on SQLite's busy-wait polling.
        self._sqlite_write_lock = threading.Lock() if self.dialect == "sqlite" else None

    # -- engine set-up -----------------------------------------------------

    def _configure_sqlite(self, busy_timeout_ms: int, synchronous: bool) -> None:
        in_memory = self.url.database in (None, "", ":memory:")

        @event.listens_for(self.engine, "connect")
        def _on_connect(dbapi_connection, _record):  # noqa: ANN001
            # Let SQLAlchemy's begin event, not pysqlite, decide when a
            # transaction starts (and of which kind).
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            cursor.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            if not in_memory:
                _enable_wal(cursor, busy_timeout_ms)
                cursor.execute(
                    "PRAGMA synchronous = " + ("NORMAL" if synchronous else "OFF"))
            cursor.close()

        @event.listens_for(self.engine, "begin")
        def _on_begin(connection: Connection) -> None:
            if connection.get_execution_options().get("placement_write"):
                connection.exec_driver_sql("BEGIN IMMEDIATE")
            else:
                connection.exec_driver_sql("BEGIN")

    def _configure_mysql(self, sql_mode: str) -> None:
        @event.listens_for(self.engine, "connect")
        def _on_connect(dbapi_connection, _record):  # noqa: ANN001
            cursor = dbapi_connection.cursor()
            cursor.execute("SET SESSION sql_mode = %s", (sql_mode,))
            cursor.close()

    # -- transactions -------------------------------------------------------

    def read(self, body: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run ``body(connection, *args, **kwargs)`` in a read transaction."""
        return self._run(body, args, kwargs, write=False)

    def write(self, body: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run ``body(connection, *args, **kwargs)`` in a write transaction.

        The transaction commits when ``body`` returns and rolls back when it
        raises; transient failures and :class:`RetryTransaction` run it again.
        """
        return self._run(body, args, kwargs, write=True)

    def write_with_retries(self, retries: int, body: Callable[..., T], *args: Any,
                           **kwargs: Any) -> T:
        """Like :meth:`write` with its own retry budget (e.g. allocation writes)."""
        return self._run(body, args, kwargs, write=True, retries=retries)

    def _run(self, body: Callable[..., T], args: tuple, kwargs: dict, write: bool,
             retries: int | None = None) -> T:
        retry_count = self.retry_count if retries is None else retries
        attempt = 0
        while True:
            connection_lost = False
            try:
                return self._run_once(body, args, kwargs, write)
            except RetryTransaction:
                pass
            except exc.DBAPIError as error:
                if is_out_of_space(error, self.url):
                    raise DatabaseOutOfSpace() from error
                connection_lost = is_connection_error(error)
                if not connection_lost and not is_transient(error):
                    raise
                LOG.debug("transient database error, retrying: %s", error)
            attempt += 1
            if attempt > retry_count:
                if connection_lost:
                    raise DatabaseUnavailable()
                raise TransactionRetriesExhausted()
            # Jittered back-off so racing writers do not collide again.
            time.sleep(random.uniform(0, 0.005 * (2 ** min(attempt, 6))))

    def _run_once(self, body: Callable[..., T], args: tuple, kwargs: dict, write: bool) -> T:
        lock = self._sqlite_write_lock if write else None
        if lock is not None:
            lock.acquire()
        try:
            with self.engine.connect() as connection:
                if write:
                    connection.execution_options(placement_write=True)
                with connection.begin():
                    return body(connection, *args, **kwargs)
        finally:
            if lock is not None:
                lock.release()

    def dispose(self) -> None:
        """Close every pooled connection of this database."""
        self.engine.dispose()


class TransactionRetriesExhausted(Exception):
    """A transaction kept failing transiently; reported as a 409 conflict."""


class DatabaseOutOfSpace(Exception):
    """The database's disk is full; reported as a 507 (Insufficient Storage).

    The transaction was rolled back (SQLite, PostgreSQL and MariaDB undo a
    write that could not be stored), so nothing was changed; it is not
    retried, since only freeing space cures it.
    """

    def __init__(self) -> None:
        super().__init__("The database is out of space; nothing was changed. Free space on "
                         "the database's disk, then try again.")


class DatabaseUnavailable(Exception):
    """The database stayed unreachable through every retry; reported as a 503.

    Nothing was committed: a transaction whose connection dropped is rolled
    back by the server, and the retries found no connection to run it on.
    """
