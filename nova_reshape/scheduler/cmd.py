"""``nova-reshape-scheduler``: dry-run the filter scheduler on a scenario file.

    nova-reshape-scheduler explain SCENARIO.json [--format table|json]

``-`` reads the scenario from stdin. Exit status: 0 when a result was
computed (including "no valid host"), 1 when a filter or weigher raised
(the result says which), 2 for an unreadable or invalid scenario.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from nova_reshape.scheduler.errors import ScenarioError
from nova_reshape.scheduler.pipeline import FilterScheduler
from nova_reshape.scheduler.prefilter_report import render_steps, scenario_request_filters
from nova_reshape.scheduler.result import render_table, result_to_dict, scenario_error_dict
from nova_reshape.scheduler.scenario import load_scenario


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nova-reshape-scheduler",
        description="Explain how nova's filter scheduler treats a request.")
    commands = parser.add_subparsers(dest="command", required=True)
    explain = commands.add_parser(
        "explain", help="filter and weigh the hosts of a scenario file and show why")
    explain.add_argument("scenario", help="scenario JSON file (scheduler-scenario/1), - = stdin")
    explain.add_argument("--format", choices=["table", "json"], default="table",
                         help="table (default, with reasons) or the documented JSON result")
    return parser


def _read(path: str) -> object:
    try:
        if path == "-":
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
    except OSError as exc:
        raise ScenarioError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ScenarioError(f"{path} is not valid JSON: {exc}") from exc


def explain(path: str, output_format: str = "table") -> int:
    """Run one scenario and print the result; returns the exit status."""
    try:
        scenario = load_scenario(_read(path))
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


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point (``nova-reshape-scheduler = nova_reshape.scheduler.cmd:main``)."""
    args = _parser().parse_args(argv)
    if args.command == "explain":
        return explain(args.scenario, args.format)
    return 2  # pragma: no cover - argparse enforces a command


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
