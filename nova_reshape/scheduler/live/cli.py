"""Command-line glue of the live explain: arguments -> LiveRequest, config, HostState source.

With ``--nova-api-database`` the flavor (``--flavor NAME``, with its extra
specs) and nova's host aggregates are read from nova's API database; the
flavor's sizes then come from there, so ``--vcpus``/``--ram``/``--disk``/
``--extra-specs`` are refused next to it. ``--nova-database`` makes the
candidates' HostStates from nova's cell database.
"""

from __future__ import annotations

import argparse

from nova_reshape.nova.aggregate import Aggregate
from nova_reshape.novadb import api as nova_api
from nova_reshape.novadb.readonly import BadDatabaseURL, DatabaseReadError
from nova_reshape.scheduler.cmd_common import read_json
from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.errors import ScenarioError
from nova_reshape.scheduler.live.explain import HostStateSource, PlacementHostStates, render, run
from nova_reshape.scheduler.live.nova_hosts import NovaDatabaseHostStates
from nova_reshape.scheduler.live.placement import (
    PlacementError,
    check_placement,
    from_database,
    from_http,
)
from nova_reshape.scheduler.live.request import LiveRequest, parse_json_object

__all__ = ["BadDatabaseURL", "DatabaseReadError", "PlacementError", "arguments",
           "check_placement", "from_database", "from_http", "render", "run"]

_SIZES = (("--vcpus", "vcpus"), ("--ram", "ram"), ("--disk", "disk"),
          ("--extra-specs", "extra_specs"))


def _common(args: argparse.Namespace) -> dict[str, object]:
    return {"image_properties": parse_json_object(args.image_properties, "--image-properties"),
            "availability_zone": args.az, "project_id": args.project}


def _from_command_line(args: argparse.Namespace) -> LiveRequest:
    if args.flavor is None and args.extra_specs is None:
        raise ScenarioError("live explain needs --flavor NAME or --extra-specs JSON")
    missing = [flag for flag, value in (("--vcpus", args.vcpus), ("--ram", args.ram),
                                        ("--disk", args.disk)) if value is None]
    if missing:
        raise ScenarioError(f"live explain needs {', '.join(missing)}")
    return LiveRequest(
        vcpus=args.vcpus, ram_mb=args.ram, disk_gb=args.disk,
        flavor_name=args.flavor or "flavor",
        extra_specs=parse_json_object(args.extra_specs, "--extra-specs"), **_common(args))


def _from_api_database(args: argparse.Namespace) -> LiveRequest:
    if args.flavor is None:
        raise ScenarioError("--nova-api-database needs --flavor NAME")
    given = [flag for flag, name in _SIZES if getattr(args, name) is not None]
    if given:
        raise ScenarioError(f"{', '.join(given)}: the flavor's own values are read from "
                            "--nova-api-database")
    flavor = nova_api.read_flavor(args.nova_api_database, args.flavor)
    return LiveRequest(
        vcpus=flavor.vcpus, ram_mb=flavor.memory_mb, disk_gb=flavor.root_gb,
        ephemeral_gb=flavor.ephemeral_gb, swap_mb=flavor.swap,
        flavor_name=flavor.name or flavor.flavorid, extra_specs=dict(flavor.extra_specs),
        **_common(args))


def arguments(args: argparse.Namespace
              ) -> tuple[LiveRequest, SchedulerConfig, HostStateSource]:
    """The request, scheduler config and HostState source of a live explain.

    ScenarioError for bad arguments; DatabaseReadError when nova's API
    database cannot be read or has no such flavor.
    """
    sections = read_json(args.config) if args.config else {}
    if not isinstance(sections, dict):
        raise ScenarioError("--config must hold a JSON object of sections")
    conf = SchedulerConfig(sections)
    aggregates: list[Aggregate] = []
    if args.nova_api_database:
        live = _from_api_database(args)
        aggregates = nova_api.read_aggregates(args.nova_api_database)
    else:
        live = _from_command_line(args)
    source: HostStateSource
    if args.nova_database:
        source = NovaDatabaseHostStates(args.nova_database, aggregates)
    else:
        source = PlacementHostStates(aggregates)
    return live, conf, source
