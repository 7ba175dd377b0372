"""``placement-status``: is this Placement database ready for the upgrade?

::

    placement-status [--config-file FILE ...] upgrade check [--json]

Runs :class:`placement_wsgi.upgrade_checks.Checks` and prints
oslo.upgradecheck's table (``--json``: its JSON document). Exit status, as
the reference command's: 0 every check succeeded, 1 the worst result is a
warning, 2 at least one failure, 255 the checks could not run (a config file
or option to fix, a database URL that is unusable, unreachable or has no
Placement schema: one line on standard error; the reference command prints
a traceback instead). 130/143: stopped by SIGINT/SIGTERM (nothing is
written, running again is safe). The database is checked first
(:mod:`placement_wsgi.db.preflight`) and only read; nothing is created.
Configuration comes as for ``placement-manage``.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import types
from collections.abc import Iterator, Sequence

import sqlalchemy as sa
from oslo_config import cfg
from oslo_upgradecheck import upgradecheck

from placement_wsgi import service, upgrade_checks
from placement_wsgi.cmd import signals
from placement_wsgi.db import preflight

PROGRAM = "placement-status"
#: The checks could not run (oslo.upgradecheck's code for an error).
EXIT_ERROR = 255


def build_parser() -> argparse.ArgumentParser:
    """The command line of this script (also used by its tests)."""
    parser = argparse.ArgumentParser(
        prog=PROGRAM, description="Check a Placement database before an upgrade.")
    service.add_config_file_argument(parser)
    categories = parser.add_subparsers(dest="category", metavar="CATEGORY", required=True)
    upgrade = categories.add_parser("upgrade", help="upgrade readiness")
    actions = upgrade.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = actions.add_parser(
        "check", help="run every check and print a table of results; the exit status is "
        "the worst result (0 success, 1 warning, 2 failure)")
    check.add_argument("--json", action="store_true",
                       help="print the results as a JSON document instead of a table")
    return parser


@contextlib.contextmanager
def _json_output(enabled: bool) -> Iterator[None]:
    """oslo.upgradecheck reads ``--json`` from its module-level ``CONF`` (set by its
    own ``main``, which this command does not use); set it for one call only."""
    saved = upgradecheck.CONF
    if enabled:
        upgradecheck.CONF = types.SimpleNamespace(command=types.SimpleNamespace(json=True))
    try:
        yield
    finally:
        upgradecheck.CONF = saved


def upgrade_check(conf: cfg.ConfigOpts, as_json: bool) -> int:
    """Check the database, run the checks, print the table; return the worst code."""
    service.check_database(conf, preflight.Access.USE, preflight.Schema.KNOWN)
    database = service.open_database(conf)
    try:
        with _json_output(as_json):
            return int(upgrade_checks.Checks(conf, database).check())
    except sa.exc.SQLAlchemyError as error:
        raise service.StartupError(
            f"database {service.describe_url(database.url)}: {service.one_line(error)}"
        ) from error
    finally:
        database.dispose()


def main(argv: Sequence[str] | None = None) -> int:
    """Console-script entry point; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        with signals.interruptible():
            conf = service.load_conf(config_files=args.config_files)
            return upgrade_check(conf, args.json)
    except service.StartupError as error:
        message = str(error)
    except (cfg.Error, ValueError, OSError, RuntimeError) as error:
        message = service.one_line(error)
    except KeyboardInterrupt as stop:
        sys.stderr.write(f"{PROGRAM}: interrupted by {signals.signal_name(stop)}; nothing was "
                         "written, running again is safe\n")
        return signals.exit_status(stop)
    sys.stderr.write(f"{PROGRAM}: error: {message}\n")
    return EXIT_ERROR


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
