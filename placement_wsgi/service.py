"""Process start-up shared by the WSGI entry point and the console scripts.

``placement_wsgi.wsgi`` (gunicorn, uwsgi, mod_wsgi), ``placement-api`` and
``placement-manage`` all start the same way: find the configuration (files
plus environment, see :func:`placement_wsgi.conf.load_config`), set up
logging, open the database. Whatever can go wrong at that point is the
operator's to fix (a missing option, a typo in a URL, a database that is not
up), so it is reported as :class:`StartupError` carrying one line of text
and an exit status, never as a traceback. The database is checked by
:mod:`placement_wsgi.db.preflight` before anything opens it, so a mistyped
SQLite path is reported rather than created.
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
import time
from typing import Any

import sqlalchemy as sa
from oslo_config import cfg
from oslo_log import log as oslo_log

from placement_wsgi import conf as placement_conf
from placement_wsgi import deploy, heap
from placement_wsgi.db import preflight
from placement_wsgi.db.database import Database

LOG = logging.getLogger(__name__)

#: Exit status of a console script that failed (a database that stayed
#: unreachable, a command that broke); running again may succeed.
EXIT_FAILED = 1
#: Exit status for a configuration the operator must fix (files, options,
#: a database URL or the database it names).
EXIT_CONFIGURATION = 2


class StartupError(Exception):
    """The process cannot start; ``str()`` is a one-line explanation.

    ``exit_code``: what a console script exits with (:data:`EXIT_FAILED` or
    :data:`EXIT_CONFIGURATION`).
    """

    def __init__(self, message: str, exit_code: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def configuration_error(message: str) -> StartupError:
    """A :class:`StartupError` the operator fixes in the configuration."""
    return StartupError(f"configuration error: {message}", EXIT_CONFIGURATION)


def database_error(finding: preflight.Finding) -> StartupError:
    """A database that cannot be used, as a :class:`StartupError` of its exit class."""
    return StartupError(str(finding), EXIT_FAILED if finding.problem.transient
                        else EXIT_CONFIGURATION)


def one_line(error: BaseException) -> str:
    """A one-line description of ``error`` fit for an operator.

    Database driver errors are reduced to the driver's own first line (no SQL,
    no "background on this error" link); whitespace runs become one space.
    """
    if isinstance(error, sa.exc.DBAPIError) and error.orig is not None:
        text = str(error.orig).strip().splitlines()[0] if str(error.orig).strip() else ""
        text = text or type(error.orig).__name__
    elif isinstance(error, ModuleNotFoundError):
        text = f"a required module is not installed ({error}); is the database driver installed?"
    elif isinstance(error, sa.exc.NoSuchModuleError):
        text = f"unknown database dialect or driver in the connection URL ({error})"
    elif isinstance(error, sa.exc.ArgumentError):
        text = f"invalid database connection URL ({error})"
    else:
        text = str(error) or type(error).__name__
    return re.sub(r"\s+", " ", text).strip()


def add_config_file_argument(parser: argparse.ArgumentParser) -> None:
    """``--config-file`` (repeatable) as every console script takes it.

    Its value goes to :func:`load_conf` as ``config_files``; without it the
    default search of :func:`placement_wsgi.conf.find_config_files` applies.
    """
    parser.add_argument(
        "--config-file", action="append", metavar="FILE", dest="config_files",
        help="configuration file to read; repeatable, later files win "
        "(default: $OS_PLACEMENT_CONFIG_FILE, $OS_PLACEMENT_CONFIG_DIR/placement.conf "
        "or /etc/placement/placement.conf)")


def load_conf(
    config_files: list[str] | None = None, args: list[str] | None = None
) -> cfg.ConfigOpts:
    """:func:`placement_wsgi.conf.load_config`, with errors as :class:`StartupError`."""
    try:
        return placement_conf.load_config(args=args, config_files=config_files)
    except (cfg.Error, ValueError) as error:
        raise configuration_error(one_line(error)) from error


def setup_logging(conf: cfg.ConfigOpts, program: str = "placement") -> None:
    """Configure logging from oslo.log options (``[DEFAULT] debug``, ``log_file`` ...).

    Without ``log_file`` records go to standard output, which is where
    gunicorn and uwsgi collect a worker's output; tracebacks of unexpected
    errors (logged by the fault middleware) end up there too.
    """
    try:
        oslo_log.setup(conf, program)
    except (cfg.Error, ValueError, OSError) as error:
        raise StartupError(f"cannot set up logging: {one_line(error)}",
                           EXIT_CONFIGURATION) from error


def describe_url(url: str | sa.engine.URL) -> str:
    """The database URL with its password masked, for messages."""
    return preflight.masked_url(url)


def connection_url(conf: cfg.ConfigOpts) -> str:
    """:func:`deploy.connection_url`, an invalid option value as a :class:`StartupError`."""
    try:
        return deploy.connection_url(conf)
    except (cfg.Error, ValueError) as error:
        raise configuration_error(one_line(error)) from error


def check_database(conf: cfg.ConfigOpts, access: preflight.Access,
                   schema: preflight.Schema) -> None:
    """:func:`placement_wsgi.db.preflight.check` of ``[placement_database]``; a
    finding raised as a :class:`StartupError` (nothing is created)."""
    wait_for_database(conf, attempts=1, interval=0, access=access, schema=schema)


def open_database(conf: cfg.ConfigOpts) -> Database:
    """The :class:`Database` of ``[placement_database]``, as :class:`StartupError`s.

    Only the URL is checked here (:func:`placement_wsgi.db.preflight.check_url`);
    call :func:`check_database` (or :func:`wait_for_database`) first for the
    rest: opening an engine connects to nothing.
    """
    url = connection_url(conf)
    finding = preflight.check_url(url, access=preflight.Access.CREATE)
    if finding is not None:
        raise database_error(finding)
    try:
        return deploy.database_from_conf(conf)
    except deploy.ConfigurationError as error:
        raise configuration_error(one_line(error)) from error
    except (cfg.Error, ValueError, ImportError, sa.exc.SQLAlchemyError) as error:
        raise StartupError(f"cannot use database {describe_url(url)}: {one_line(error)}",
                           EXIT_CONFIGURATION) from error


def wait_for_database(conf: cfg.ConfigOpts, attempts: int, interval: float,
                      access: preflight.Access = preflight.Access.USE,
                      schema: preflight.Schema = preflight.Schema.HEAD) -> None:
    """:func:`check_database`, trying ``attempts`` times ``interval`` seconds apart
    (-1: forever) while the server is unreachable or the disk full.

    Lets a service started together with its database server (containers,
    boot) wait for it instead of failing. Only an unreachable server (or a
    full disk, :attr:`~placement_wsgi.db.preflight.Problem.transient`) is
    waited for: every other finding (a bad URL, a missing SQLite directory,
    wrong credentials, no schema) ends in :class:`StartupError` at once.
    """
    url = connection_url(conf)
    attempt = 0
    while True:
        attempt += 1
        finding = preflight.check(url, access=access, schema=schema)
        if finding is None:
            return
        if not finding.problem.transient or (attempts >= 0 and attempt >= max(attempts, 1)):
            raise database_error(finding)
        LOG.warning("%s (attempt %d); retrying in %ss", finding, attempt, interval)
        time.sleep(interval)


def build_application(conf: cfg.ConfigOpts) -> Any:
    """The WSGI app for ``conf``: database usable, schema synced if asked.

    ``[placement_database] max_retries`` / ``retry_interval`` govern the wait
    for an unreachable database server at start-up. Without ``sync_on_startup``
    the schema must be at head: a database never synced refuses the start
    (one line) rather than answering every request with a 500.
    The process keeps the heap memory it frees (:mod:`placement_wsgi.heap`).
    """
    heap.keep_freed_memory()
    group = conf.placement_database
    sync = group.sync_on_startup
    wait_for_database(conf, group.max_retries, group.retry_interval,
                      access=preflight.Access.CREATE if sync else preflight.Access.USE,
                      schema=preflight.Schema.UPGRADABLE if sync else preflight.Schema.HEAD)
    database = open_database(conf)
    try:
        return deploy.loadapp(conf, database=database)
    except deploy.ConfigurationError as error:
        raise configuration_error(one_line(error)) from error
    except (cfg.Error, ValueError, RuntimeError, sa.exc.SQLAlchemyError) as error:
        raise StartupError(
            f"cannot start on database {describe_url(database.url)}: "
            f"{one_line(error)}") from error


def application_from_environment(program: str = "placement") -> Any:
    """What ``placement_wsgi.wsgi`` exposes as ``application``.

    Configuration: :func:`placement_wsgi.conf.find_config_files` plus
    environment variables. On a start-up error the one-line reason is logged
    (or written to standard error when logging could not be set up yet), and
    the process exits with status 3, which
    gunicorn treats as "worker failed to boot" and stops instead of
    respawning workers in a loop.
    """
    logging_ready = False
    failure: StartupError | None = None
    try:
        conf = load_conf()
        setup_logging(conf, program)
        logging_ready = True
        application = build_application(conf)
    except StartupError as error:
        failure = error
    if failure is not None:
        # Logged outside the except block: oslo.log would append the traceback.
        if logging_ready:
            LOG.error("%s: %s", program, failure)
        else:
            sys.stderr.write(f"{program}: {failure}\n")
            sys.stderr.flush()
        raise SystemExit(3)
    LOG.info("%s: serving database %s", program, describe_url(conf.placement_database.connection))
    return application
