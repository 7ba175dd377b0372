"""``placement-manage``: database administration.

::

    placement-manage [--config-file FILE ...] db sync      # create / upgrade to head
    placement-manage [--config-file FILE ...] db version   # print the schema revision
    placement-manage [--config-file FILE ...] db import --from URL
                                 # copy Placement's tables out of nova_api (before Stein)
    placement-manage [--config-file FILE ...] db stamp REV
                                 # record REV (id, unique prefix, head, base); no migration
    placement-manage [--config-file FILE ...] db online_data_migrations [--max-count N]
                                 # complete rows older releases left (see below)

Configuration comes from ``--config-file`` (repeatable; later files win) or,
without it, the default search of :func:`placement_wsgi.conf.find_config_files`,
plus ``OS_PLACEMENT_<GROUP>__<OPTION>`` environment variables. Exit status:
0 success, 1 the command failed (one line on standard error; e.g. the
database server is unreachable), 2 bad usage or a configuration to fix
(config files, option values, the database URL or the database it names),
3 ``db import`` refused (the target is not empty, the source lacks a table,
or the copy's checks failed: one line on standard error, nothing written;
see :mod:`placement_wsgi.db.importer` and docs/db-import.md), 130/143
stopped by SIGINT/SIGTERM (:mod:`placement_wsgi.cmd.signals`; running again
is safe). ``db online_data_migrations`` keeps the reference command's own
statuses (:mod:`placement_wsgi.objects.online_migrations`; docs/placement-manage.md):
0 nothing (more) to do, 1 ``--max-count`` given and rows were completed (run
again until 0), 2 a migration failed and nothing else was completed in its
last batch, 127 a ``--max-count`` that is not a positive integer; its
database problems are the 1 and 2 above.
Unlike the service, the database is not waited for: a command that cannot
reach it fails at once. The database is checked
(:mod:`placement_wsgi.db.preflight`) before it is opened: ``db sync`` is
the only command that creates an SQLite file, and only in a directory that
exists; ``db version`` never creates one.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TypeVar

import prettytable
import sqlalchemy as sa
from alembic.util import CommandError
from oslo_config import cfg

from placement_wsgi import service
from placement_wsgi.cmd import signals
from placement_wsgi.db import importer, migration, preflight
from placement_wsgi.db.database import Database
from placement_wsgi.objects import online_migrations

T = TypeVar("T")

PROGRAM = "placement-manage"
#: ``db import`` refused: nothing was written.
EXIT_REFUSED = 3
#: ``db online_data_migrations``: ``--max-count`` given and rows were completed.
EXIT_MORE = 1
#: ``db online_data_migrations``: a migration failed and nothing else moved.
EXIT_MIGRATION_FAILED = 2
#: ``db online_data_migrations``: ``--max-count`` is not a positive integer.
EXIT_BAD_MAX_COUNT = 127


def build_parser() -> argparse.ArgumentParser:
    """The command line of this script (also used by its tests)."""
    parser = argparse.ArgumentParser(
        prog=PROGRAM, description="Administer the Placement database.")
    service.add_config_file_argument(parser)
    categories = parser.add_subparsers(dest="category", metavar="CATEGORY", required=True)
    db = categories.add_parser("db", help="database schema commands")
    actions = db.add_subparsers(dest="action", metavar="ACTION", required=True)
    actions.add_parser(
        "sync", help="create the schema or upgrade it to the newest revision, then "
        "load the standard traits and resource classes (idempotent)")
    actions.add_parser(
        "version", help="print the schema revision of the database ('None' when empty)")
    copy = actions.add_parser(
        "import", help="copy Placement's tables from a nova_api database of a release "
        "before Stein (or another Placement database) into the empty database of "
        "[placement_database] connection; then run 'db sync'")
    copy.add_argument("--from", dest="source", required=True, metavar="URL",
                      help="SQLAlchemy URL of the database to copy from (only read)")
    stamp = actions.add_parser(
        "stamp", help="record REV as the schema revision without migrating anything")
    stamp.add_argument("version", metavar="REV",
                       help="a revision id (or a unique prefix of one), head, or base "
                       "(clears the record)")
    online = actions.add_parser(
        "online_data_migrations", help="complete rows older releases left incomplete "
        "(providers without a root, allocations without a consumer record), in batches")
    online.add_argument("--max-count", metavar="N",
                        help="complete at most N rows in all, then stop (exit 1 while "
                        "rows were completed: run again until it exits 0)")
    return parser


def _with_database(conf: cfg.ConfigOpts, body: Callable[[Database], T],
                   access: preflight.Access, schema: preflight.Schema) -> T:
    """Check the database, then run ``body(database)``; database failures become
    one-line StartupErrors."""
    service.check_database(conf, access, schema)
    database = service.open_database(conf)
    try:
        return body(database)
    except (sa.exc.SQLAlchemyError, RuntimeError) as error:
        # RuntimeError: a migration's data check refused to go on.
        raise service.StartupError(
            f"database {service.describe_url(database.url)}: {service.one_line(error)}"
        ) from error
    finally:
        database.dispose()


def db_sync(conf: cfg.ConfigOpts) -> int:
    """Upgrade to head (a no-op at head) and load the standard names."""

    def sync(database: Database) -> tuple[str | None, str]:
        return migration.current_revision(database), migration.upgrade(database)

    before, head = _with_database(conf, sync, preflight.Access.CREATE,
                                  preflight.Schema.UPGRADABLE)
    if before == head:
        print(f"Database already at revision {head} (head).")
    else:
        print(f"Database upgraded from {before or 'empty'} to revision {head} (head).")
    return 0


def db_version(conf: cfg.ConfigOpts) -> int:
    """Print the recorded revision; ``None`` for a database with no schema."""
    print(_with_database(conf, migration.current_revision, preflight.Access.USE,
                         preflight.Schema.ANY))
    return 0


def db_import(conf: cfg.ConfigOpts, source_url: str) -> int:
    """Copy Placement's tables from ``source_url`` into the configured empty database."""
    finding = preflight.check(source_url, setting="the --from URL")
    if finding is not None:
        raise service.database_error(finding)
    source = sa.create_engine(source_url)
    name = service.describe_url(source_url)
    try:
        result = _with_database(conf, lambda database: importer.import_tables(
            source, database, name), preflight.Access.CREATE, preflight.Schema.ANY)
    finally:
        source.dispose()
    print(f"Imported {sum(result.rows.values())} rows of {len(result.rows)} tables from "
          f"{name}; schema recorded at revision {result.revision}. Next: db sync.")
    if result.ignored_columns:
        print(f"Columns left behind: {', '.join(result.ignored_columns)}.")
    return 0


def db_stamp(conf: cfg.ConfigOpts, text: str) -> int:
    """Record ``text``'s revision without running a migration (never creates a database)."""
    try:
        revision = migration.resolve_stamp_target(text)
    except ValueError as error:
        raise service.StartupError(f"db stamp: {error}", service.EXIT_CONFIGURATION) from error

    def stamp(database: Database) -> str | None:
        try:
            migration.stamp(database, revision)
        except CommandError as error:  # the recorded revision is unknown to this code
            raise RuntimeError(service.one_line(error)) from error
        return migration.current_revision(database)

    print(f"Database stamped at revision "
          f"{_with_database(conf, stamp, preflight.Access.USE, preflight.Schema.ANY)}.")
    return 0


def _max_count(text: str | None) -> int | None:
    """``--max-count`` as an int (None: unlimited); ValueError unless positive."""
    if text is None:
        return None
    if not text.strip().isdigit() or int(text) < 1:
        raise ValueError(f"--max-count must be a positive integer, not {text!r}")
    return int(text)


def _print_batch(name: str, outcome: online_migrations.Outcome,
                 error: Exception | None) -> None:
    if error is not None:
        sys.stderr.write(f"{PROGRAM}: error: {name} failed: {service.one_line(error)}\n")
    elif outcome.found:
        print(f"{outcome.found} rows matched query {name}, {outcome.done} migrated", flush=True)


def db_online_data_migrations(conf: cfg.ConfigOpts, max_count_text: str | None) -> int:
    """Run the online migrations; print a table of found/completed rows per migration."""
    try:
        max_count = _max_count(max_count_text)
    except ValueError as error:
        sys.stderr.write(f"{PROGRAM}: error: {error}\n")
        return EXIT_BAD_MAX_COUNT
    if max_count is None:
        print(f"Running batches of {online_migrations.DEFAULT_BATCH} until complete", flush=True)
    owner = online_migrations.IncompleteOwner(
        conf.placement.incomplete_consumer_project_id, conf.placement.incomplete_consumer_user_id)
    result = _with_database(conf, lambda database: online_migrations.run(
        database, owner, max_count, _print_batch), preflight.Access.USE, preflight.Schema.KNOWN)
    table = prettytable.PrettyTable(["Migration", "Total Found", "Completed"])
    for name, total in result.totals.items():
        table.add_row([name, total.found, total.done])
    print(table)
    limited_progress = max_count is not None and result.last_batch_done
    if result.failed and not limited_progress:
        print("Some migrations failed; the lines above say which and why.")
        return EXIT_MIGRATION_FAILED
    return EXIT_MORE if limited_progress else 0


_COMMANDS: dict[tuple[str, str], Callable[[cfg.ConfigOpts, argparse.Namespace], int]] = {
    ("db", "sync"): lambda conf, _: db_sync(conf),
    ("db", "version"): lambda conf, _: db_version(conf),
    ("db", "import"): lambda conf, args: db_import(conf, args.source),
    ("db", "stamp"): lambda conf, args: db_stamp(conf, args.version),
    ("db", "online_data_migrations"):
        lambda conf, args: db_online_data_migrations(conf, args.max_count),
}


def main(argv: Sequence[str] | None = None) -> int:
    """Console-script entry point; returns the exit status."""
    args = build_parser().parse_args(argv)
    command = _COMMANDS[(args.category, args.action)]
    try:
        with signals.interruptible():
            conf = service.load_conf(config_files=args.config_files)
            return command(conf, args)
    except importer.ImportRefused as error:
        sys.stderr.write(f"{PROGRAM}: refused: {error}\n")
        return EXIT_REFUSED
    except service.StartupError as error:
        sys.stderr.write(f"{PROGRAM}: error: {error}\n")
        return error.exit_code
    except (cfg.Error, ValueError, ImportError, RuntimeError, OSError,
            sa.exc.SQLAlchemyError) as error:
        message = service.one_line(error)
    except KeyboardInterrupt as stop:
        # db import copies in one transaction, db sync records each step's revision.
        sys.stderr.write(f"{PROGRAM}: interrupted by {signals.signal_name(stop)}; what was "
                         "written is complete or rolled back, running again is safe\n")
        return signals.exit_status(stop)
    sys.stderr.write(f"{PROGRAM}: error: {message}\n")
    return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
