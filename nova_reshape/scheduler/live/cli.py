"""Command-line glue of the live explain: arguments -> LiveRequest and config."""

from __future__ import annotations

import argparse

from nova_reshape.novadb.readonly import DatabaseReadError
from nova_reshape.scheduler.cmd_common import read_json
from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.errors import ScenarioError
from nova_reshape.scheduler.live.explain import HostStateSource, PlacementHostStates, render, run
from nova_reshape.scheduler.live.nova_hosts import NovaDatabaseHostStates
from nova_reshape.scheduler.live.placement import PlacementError, from_database, from_http
from nova_reshape.scheduler.live.request import LiveRequest, parse_json_object

__all__ = ["DatabaseReadError", "PlacementError", "arguments", "from_database", "from_http",
           "host_source", "render", "run"]


def host_source(args: argparse.Namespace) -> HostStateSource:
    """nova's cell database when ``--nova-database`` is given, else Placement alone."""
    if args.nova_database:
        return NovaDatabaseHostStates(args.nova_database)
    return PlacementHostStates()


def arguments(args: argparse.Namespace) -> tuple[LiveRequest, SchedulerConfig]:
    """The request and the scheduler config of a live explain (ScenarioError if invalid)."""
    if args.flavor is None and args.extra_specs is None:
        raise ScenarioError("live explain needs --flavor NAME or --extra-specs JSON")
    missing = [flag for flag, value in (("--vcpus", args.vcpus), ("--ram", args.ram),
                                        ("--disk", args.disk)) if value is None]
    if missing:
        raise ScenarioError(f"live explain needs {', '.join(missing)}")
    sections = read_json(args.config) if args.config else {}
    if not isinstance(sections, dict):
        raise ScenarioError("--config must hold a JSON object of sections")
    conf = SchedulerConfig(sections)
    live = LiveRequest(
        vcpus=args.vcpus, ram_mb=args.ram, disk_gb=args.disk,
        flavor_name=args.flavor or "flavor",
        extra_specs=parse_json_object(args.extra_specs, "--extra-specs"),
        image_properties=parse_json_object(args.image_properties, "--image-properties"),
        availability_zone=args.az, project_id=args.project)
    return live, conf
