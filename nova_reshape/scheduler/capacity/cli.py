"""``nova-reshape-scheduler capacity``: the per-flavor capacity table of any cloud.

::

    nova-reshape-scheduler capacity --placement-database URL | --placement URL
        [--nova-api-database URL] [--nova-database URL] [--cyborg-database URL]
        [--nova-config FILE]... [--flavor NAME]... [--all-flavors] [--flavors-file FILE]
        [--assume-up] [--format table|json] [--token TOKEN]

Exit status: 0 when the table was computed; 2 for what the operator must
fix (a database URL or the database it names, a nova.conf, a flavors file,
a flavor name matching nothing), 3 when Placement or a nova database cannot
be read. Every error is one line on standard error; nothing is written
anywhere.
"""

from __future__ import annotations

import argparse
import functools
import os
from typing import Any, TextIO

from nova_reshape.nova.errors import NovaConfError
from nova_reshape.novadb.readonly import BadDatabaseURL, DatabaseReadError
from nova_reshape.scheduler.capacity.core import CapacityCheck
from nova_reshape.scheduler.capacity.flavors import FlavorError
from nova_reshape.scheduler.capacity.inputs import choose_flavors, read_nova
from nova_reshape.scheduler.capacity.records import CapacityReport
from nova_reshape.scheduler.capacity.render import render_json, render_report
from nova_reshape.scheduler.errors import ConfigError, ScenarioError
from nova_reshape.scheduler.live.placement import (
    PlacementError,
    check_placement,
    from_http,
    read_database,
    read_view,
)

#: What the operator must fix: exit 2 (any other failure to read: exit 3).
CONFIGURATION_ERRORS = (BadDatabaseURL, FlavorError, NovaConfError, ConfigError,
                        ScenarioError)

#: The note of a check that counts every nova-compute as up.
ASSUMED_UP = ("every nova-compute service counts as up (--assume-up): the table holds "
              "for when the computes run again; disabled and forced-down ones stay out")


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """Register ``capacity`` under ``commands`` (the subparsers of the program)."""
    parser = commands.add_parser(
        "capacity", help="per flavor: the valid hosts and how many more instances fit")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--placement", metavar="URL", help="Placement API endpoint")
    where.add_argument("--placement-database", metavar="URL",
                       help="Placement database (SQLAlchemy URL, read only): reasons for "
                            "every host")
    parser.add_argument("--nova-api-database", metavar="URL",
                        help="nova's API database (read only): flavors, aggregates and "
                             "every cell it maps (default: [api_database] connection of "
                             "--nova-config)")
    parser.add_argument("--nova-database", metavar="URL",
                        help="one nova cell database (read only) instead of every cell")
    parser.add_argument("--cyborg-database", metavar="URL",
                        help="Cyborg's database (read only): the device profiles of "
                             "accel:device_profile flavors")
    parser.add_argument("--nova-config", action="append", metavar="FILE", default=[],
                        dest="nova_configs",
                        help="nova.conf: the scheduler's options, ratios, database "
                             "connections (repeatable, later files win)")
    parser.add_argument("--flavor", action="append", metavar="NAME", default=[],
                        dest="flavors", help="only this flavor (name or id); repeatable")
    add_flavor_arguments(parser)
    parser.add_argument("--assume-up", action="store_true",
                        help="count every nova-compute as up (computes stopped on purpose)")
    parser.add_argument("--format", choices=["table", "json"], default="table")
    parser.add_argument("--token", metavar="TOKEN", default=os.environ.get("OS_TOKEN"),
                        help="X-Auth-Token for --placement (default: $OS_TOKEN)")
    return parser


def add_flavor_arguments(parser: Any) -> None:
    """``--all-flavors`` and ``--flavors-file`` (this command's and the migration's
    scheduling check's), on ``parser`` or an argument group."""
    parser.add_argument("--all-flavors", action="store_true",
                        help="every public flavor too, not only those in use")
    parser.add_argument("--flavors-file", metavar="FILE",
                        help="flavors described in a YAML or JSON file (docs/scheduler.md)")


def measure(args: argparse.Namespace) -> CapacityReport:
    """The table the arguments ask for; the readers' errors as they are."""
    check_placement(args.placement_database)
    inputs = read_nova(args.nova_configs, args.nova_api_database, args.nova_database,
                       cyborg_url=args.cyborg_database)
    flavors = choose_flavors(inputs, args.flavors, args.all_flavors, args.flavors_file)
    check = CapacityCheck(inputs.conf, inputs.source(args.assume_up), inputs.owner_nova_now(),
                          inputs.profiles)
    if args.placement_database:
        report = read_database(args.placement_database, _on_connection, check, flavors)
    else:
        report = check.run(flavors, functools.partial(from_http, args.placement,
                                                      token=args.token))
    if args.assume_up:
        report.notes.append(ASSUMED_UP)
    return report


def _on_connection(connection: Any, check: CapacityCheck, flavors: list[Any]) -> CapacityReport:
    return check.run(flavors, functools.partial(read_view, connection))


def capacity(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """The command; its exit status (see the module)."""
    try:
        report = measure(args)
    except (*CONFIGURATION_ERRORS, PlacementError, DatabaseReadError) as error:
        err.write(f"nova-reshape-scheduler: {error}\n")
        configuration = (isinstance(error, CONFIGURATION_ERRORS)
                         or getattr(error, "configuration", False))
        return 2 if configuration else 3
    text = render_json(report) if args.format == "json" else render_report(report)
    try:
        out.write(text)
        out.flush()
    except BrokenPipeError:
        # the reader went away (``| head``): no traceback, nothing more to write
        os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())
    return 0
