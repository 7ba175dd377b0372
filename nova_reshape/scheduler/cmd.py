"""``nova-reshape-scheduler``: dry-run the filter scheduler on a scenario or a live cloud.

    nova-reshape-scheduler explain SCENARIO.json [--format table|json]
    nova-reshape-scheduler explain --placement URL | --placement-database URL
        (--flavor NAME | --extra-specs JSON) --vcpus N --ram MB --disk GB
        | --nova-api-database URL --flavor NAME
        [--nova-database URL] [--image-properties JSON] [--az AZ] [--project ID]
        [--config FILE]
    nova-reshape-scheduler capacity --placement URL | --placement-database URL
        [--nova-api-database URL] [--nova-database URL] [--nova-config FILE]...
        [--flavor NAME]... [--all-flavors] [--flavors-file FILE] [--format table|json]

``-`` reads the scenario from stdin. Exit status: 0 when a result was
computed (including "no valid host"), 1 when a filter or weigher raised
(the result says which), 2 for an unreadable or invalid scenario, bad
live-mode arguments or a database URL to fix (it does not parse, names an
unknown driver, a missing SQLite file or database, wrong credentials, a
Placement database not at head), 3 when Placement or a nova database cannot
be read (unreachable, or no such flavor). Every error is one line on
standard error; with ``--format json`` the JSON result carries it as its
``error``. docs/scheduler.md describes both modes. ``capacity`` is
:mod:`nova_reshape.scheduler.capacity.cli` (its exit statuses there).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
from collections.abc import Sequence

from nova_reshape.scheduler.capacity import cli as capacity_cmd
from nova_reshape.scheduler.cmd_common import read_json
from nova_reshape.scheduler.errors import ScenarioError
from nova_reshape.scheduler.live import cli as live_cmd
from nova_reshape.scheduler.pipeline import FilterScheduler
from nova_reshape.scheduler.prefilter_report import render_steps, scenario_request_filters
from nova_reshape.scheduler.result import render_table, result_to_dict, scenario_error_dict
from nova_reshape.scheduler.scenario import load_scenario
from placement_wsgi.cmd import signals


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nova-reshape-scheduler",
        description="Explain how nova's filter scheduler treats a request.")
    commands = parser.add_subparsers(dest="command", required=True)
    explain = commands.add_parser(
        "explain", help="filter and weigh the hosts of a scenario file and show why")
    explain.add_argument("scenario", nargs="?",
                         help="scenario JSON file (scheduler-scenario/1), - = stdin")
    explain.add_argument("--format", choices=["table", "json"], default="table",
                         help="table (default, with reasons) or the documented JSON result")
    live = explain.add_argument_group("live cloud (instead of a scenario)")
    where = live.add_mutually_exclusive_group()
    where.add_argument("--placement", metavar="URL", help="Placement API endpoint")
    where.add_argument("--placement-database", metavar="URL",
                       help="Placement database (SQLAlchemy URL): reasons for every root")
    live.add_argument("--nova-database", metavar="URL",
                      help="nova's cell database (SQLAlchemy URL, read only): HostStates "
                           "as nova's scheduler builds them")
    live.add_argument("--nova-api-database", metavar="URL",
                      help="nova's API database (read only): --flavor's sizes and extra "
                           "specs, and the host aggregates")
    live.add_argument("--flavor", metavar="NAME", help="flavor name")
    live.add_argument("--extra-specs", metavar="JSON", help="flavor extra specs")
    live.add_argument("--vcpus", type=int, help="flavor vCPUs")
    live.add_argument("--ram", type=int, metavar="MB", help="flavor RAM in MB")
    live.add_argument("--disk", type=int, metavar="GB", help="flavor root disk in GB")
    live.add_argument("--image-properties", metavar="JSON", help="image properties")
    live.add_argument("--az", metavar="AZ", help="requested availability zone")
    live.add_argument("--project", metavar="ID", default="project", help="project id")
    live.add_argument("--config", metavar="FILE",
                      help="scheduler options as JSON sections, like a scenario's config")
    live.add_argument("--token", metavar="TOKEN", default=os.environ.get("OS_TOKEN"),
                      help="X-Auth-Token for --placement (default: $OS_TOKEN)")
    capacity_cmd.add_parser(commands)
    return parser


def explain(path: str, output_format: str = "table") -> int:
    """Run one scenario and print the result; returns the exit status."""
    try:
        scenario = load_scenario(read_json(path))
        scheduler = FilterScheduler(scenario.conf, now=scenario.now)
    except ScenarioError as exc:
        print(f"nova-reshape-scheduler: invalid scenario: {exc}", file=sys.stderr)
        if output_format == "json":
            print(json.dumps(scenario_error_dict(str(exc)), indent=2))
        return 2
    result = scheduler.schedule(scenario.hosts, scenario.spec, scenario.instance_uuids,
                                subset_choices=scenario.subset_choices)
    if output_format == "json":
        print(json.dumps(result_to_dict(result), indent=2))
    else:
        sys.stdout.write(render_table(result, scenario.description))
        sys.stdout.write("\n".join(render_steps(scenario_request_filters(scenario))) + "\n")
    return 1 if result.error else 0


def _live_failure(error: Exception, output_format: str) -> int:
    """One line on stderr (and the JSON error result for ``--format json``); the
    exit status: 2 for what the operator must fix, 3 for what could not be read."""
    print(f"nova-reshape-scheduler: {error}", file=sys.stderr)
    if output_format == "json":
        print(json.dumps(scenario_error_dict(str(error), "input", type(error).__name__),
                         indent=2))
    configuration = (isinstance(error, ScenarioError | live_cmd.BadDatabaseURL)
                     or getattr(error, "configuration", False))
    return 2 if configuration else 3


def explain_live(args: argparse.Namespace) -> int:
    """The live mode; returns the exit status."""
    if args.placement_database:
        ask = functools.partial(live_cmd.from_database, args.placement_database)
    else:
        ask = functools.partial(live_cmd.from_http, args.placement, token=args.token)
    try:
        live_cmd.check_placement(args.placement_database)
        live, conf, source = live_cmd.arguments(args)
        result = live_cmd.run(live, ask, conf, source)
    except (live_cmd.PlacementError, live_cmd.DatabaseReadError, ScenarioError) as exc:
        return _live_failure(exc, args.format)
    if args.format == "json":
        print(json.dumps(result.to_dict(), indent=2))
    else:
        sys.stdout.write(live_cmd.render(result))
    return 1 if result.schedule is not None and result.schedule.error else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point (``nova-reshape-scheduler = nova_reshape.scheduler.cmd:main``).

    SIGINT and SIGTERM stop it with one line and the signal's status (130/143):
    it only reads, so nothing is left behind."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        with signals.interruptible():
            return _command(parser, args)
    except KeyboardInterrupt as stop:
        sys.stderr.write(f"nova-reshape-scheduler: interrupted by {signals.signal_name(stop)}"
                         "; nothing was written\n")
        return signals.exit_status(stop)


def _command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if args.command == "explain":
        live = args.placement or args.placement_database
        if bool(live) == bool(args.scenario):
            parser.error("explain needs a scenario file or --placement/--placement-database")
        if live:
            return explain_live(args)
        return explain(args.scenario, args.format)
    if args.command == "capacity":
        return capacity_cmd.capacity(args, sys.stdout, sys.stderr)
    return 2  # pragma: no cover - argparse enforces a command


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
