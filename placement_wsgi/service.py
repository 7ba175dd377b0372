"""Process start-up shared by the WSGI entry point and the console scripts.

``placement_wsgi.wsgi`` (gunicorn, uwsgi, mod_wsgi), ``placement-api`` and
``placement-manage`` all start the same way: find the configuration (files
plus environment, see :func:`placement_wsgi.conf.load_config`), set up
logging, open the database. Whatever can go wrong at that point is the
operator's to fix (a missing option, a typo in a URL, a database that is not
up), so it is reported as :class:`StartupError` carrying one line of text,
never as a traceback.
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
from placement_wsgi import deploy
from placement_wsgi.db.database import Database

LOG = logging.getLogger(__name__)


class StartupError(Exception):
    """The process cannot start; ``str()`` is a one-line explanation."""


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
        raise StartupError(f"configuration error: {one_line(error)}") from error


def setup_logging(conf: cfg.ConfigOpts, program: str = "placement") -> None:
    """Configure logging from oslo.log options (``[DEFAULT] debug``, ``log_file`` ...).

    Without ``log_file`` records go to standard output, which is where
    gunicorn and uwsgi collect a worker's output; tracebacks of unexpected
    errors (logged by the fault middleware) end up there too.
    """
    try:
        oslo_log.setup(conf, program)
    except (cfg.Error, ValueError, OSError) as error:
        raise StartupError(f"cannot set up logging: {one_line(error)}") from error


def describe_url(url: str | sa.engine.URL) -> str:
    """The database URL with its password masked, for messages."""
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except sa.exc.ArgumentError:
        return "<unparsable URL>"


def open_database(conf: cfg.ConfigOpts) -> Database:
    """The :class:`Database` of ``[placement_database]``, as :class:`StartupError`s."""
    try:
        connection = conf.placement_database.connection
    except (cfg.Error, ValueError) as error:
        raise StartupError(f"configuration error: {one_line(error)}") from error
    if not connection:
        raise StartupError(
            "configuration error: [placement_database] connection is not set; set it in "
            "placement.conf or as OS_PLACEMENT_DATABASE__CONNECTION, e.g. "
            "sqlite:////var/lib/placement/placement.sqlite")
    try:
        return deploy.database_from_conf(conf)
    except deploy.ConfigurationError as error:
        raise StartupError(f"configuration error: {one_line(error)}") from error
    except (cfg.Error, ValueError, ImportError, sa.exc.SQLAlchemyError) as error:
        raise StartupError(
            f"cannot use database {describe_url(connection)}: {one_line(error)}") from error


def wait_for_database(database: Database, attempts: int, interval: float) -> None:
    """Connect once, trying ``attempts`` times ``interval`` seconds apart (-1: forever).

    Lets a service started together with its database server (containers,
    boot) wait for it instead of failing; a database that stays unreachable
    ends in :class:`StartupError`.
    """
    attempt = 0
    while True:
        attempt += 1
        try:
            with database.engine.connect() as connection:
                connection.execute(sa.text("SELECT 1"))
            return
        except sa.exc.DBAPIError as error:
            if attempts >= 0 and attempt >= max(attempts, 1):
                raise StartupError(
                    f"cannot connect to database {describe_url(database.url)}: "
                    f"{one_line(error)}") from error
            LOG.warning("database %s not reachable (attempt %d): %s; retrying in %ss",
                        describe_url(database.url), attempt, one_line(error), interval)
            time.sleep(interval)


def build_application(conf: cfg.ConfigOpts) -> Any:
    """The WSGI app for ``conf``: database reachable, schema synced if asked.

    ``[placement_database] max_retries`` / ``retry_interval`` govern the wait
    for the database at start-up.
    """
    database = open_database(conf)
    group = conf.placement_database
    wait_for_database(database, group.max_retries, group.retry_interval)
    try:
        return deploy.loadapp(conf, database=database)
    except deploy.ConfigurationError as error:
        raise StartupError(f"configuration error: {one_line(error)}") from error
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
