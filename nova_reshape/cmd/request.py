"""``placement migrate_compute_inventory``: its arguments and the typed request made of them.

:func:`add_parser` declares the command line; :meth:`MigrateRequest.from_args`
turns the parsed arguments into one frozen :class:`MigrateRequest`, once.
Everything below the command's entry takes that request, never the
argparse namespace. Building it reads nothing: files, databases and
Placement are read by the readers that take it.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
from typing import Any

from nova_reshape.compute import parallel
from nova_reshape.scheduler.capacity.cli import add_flavor_arguments
from nova_reshape.virt import releases


class OutputFormat(enum.StrEnum):
    """``--format``."""

    TEXT = "text"
    JSON = "json"


@dataclasses.dataclass(frozen=True)
class PlacementAccess:
    """How to reach Placement: ``--config-file`` (in-process on its database) or
    ``--placement-url`` with ``--token`` and ``--header`` (as given, unchecked)."""

    config_files: tuple[str, ...] = ()
    url: str | None = None
    token: str | None = None
    headers: tuple[str, ...] = ()

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> PlacementAccess:
        """The access of the global ``--config-file`` and the arguments declared by
        :func:`add_placement_arguments`."""
        return cls(config_files=(*args.config_files, *args.sub_config_files),
                   url=args.placement_url, token=args.token, headers=tuple(args.headers))


@dataclasses.dataclass(frozen=True)
class HostFiles:
    """``--host-file`` paths: host description files or directories of them."""

    paths: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class NovaDatabase:
    """Describe the hosts from nova's databases, with ``--collected`` and
    ``--cyborg-database``: one cell database (``--nova-database``, ``url``), or
    every cell (``--cell``: those named) that nova's API database maps
    (``--nova-api-database``, ``api_url``; when neither URL is given, the
    ``[api_database] connection`` of ``--nova-config``)."""

    url: str | None = None
    collected: str | None = None
    cyborg_database: str | None = None
    api_url: str | None = None
    cells: tuple[str, ...] = ()
    skip_unreachable_cells: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> NovaDatabase:
        """The source of arguments declared by :func:`add_nova_arguments`."""
        return cls(url=args.nova_database, collected=args.collected,
                   cyborg_database=args.cyborg_database, api_url=args.nova_api_database,
                   cells=tuple(args.cells),
                   skip_unreachable_cells=args.skip_unreachable_cells)


#: Where the hosts are described.
HostSource = HostFiles | NovaDatabase


@dataclasses.dataclass(frozen=True)
class SchedulingOptions:
    """The scheduling check (default on): ``--no-scheduling-check``, ``--all-flavors``,
    ``--flavors-file`` and ``--accept-scheduling-loss FLAVOR`` (repeatable)."""

    enabled: bool = True
    all_flavors: bool = False
    flavors_file: str | None = None
    accepted: tuple[str, ...] = ()

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> SchedulingOptions:
        return cls(enabled=not args.no_scheduling_check, all_flavors=args.all_flavors,
                   flavors_file=args.flavors_file,
                   accepted=tuple(args.accept_scheduling_loss))


@dataclasses.dataclass(frozen=True)
class MigrateRequest:
    """One ``migrate_compute_inventory`` invocation, as the operator asked it."""

    placement: PlacementAccess
    hosts: HostSource
    #: ``--nova-config`` files and directories (later ones win), read by the command.
    nova_configs: tuple[str, ...] = ()
    target: releases.Release = releases.DEFAULT_TARGET
    numa_in_placement: bool = False
    allow_vgpu_mismatch: bool = False
    dry_run: bool = False
    verbose: bool = False
    output_format: OutputFormat = OutputFormat.TEXT
    #: ``--progress``: bars even when stderr is no terminal or the output is JSON.
    progress: bool = False
    #: ``--workers``; None: chosen from the number of nodes.
    workers: int | None = None
    print_nova_config: bool = False
    #: ``--report FILE``: the run's report, HTML (or JSON for ``*.json``); None: none.
    report: str | None = None
    #: ``--journal FILE``: the journal file of a run over ``--placement-url`` (None: the
    #: default, :func:`nova_reshape.journal.journal_file.default_path`).
    journal: str | None = None
    scheduling: SchedulingOptions = SchedulingOptions()
    #: The consistency check (audit, heal_allocations) of the nodes' allocations
    #: before anything is written; ``--no-consistency-check`` turns it off.
    consistency_check: bool = True

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> MigrateRequest:
        """The request of arguments parsed by a parser :func:`add_parser` built."""
        return cls(
            placement=PlacementAccess.from_args(args),
            hosts=(HostFiles(tuple(args.host_files)) if args.host_files
                   else NovaDatabase.from_args(args)),
            nova_configs=tuple(args.nova_configs), target=args.target_release,
            numa_in_placement=args.numa_in_placement,
            allow_vgpu_mismatch=args.allow_vgpu_mismatch, dry_run=args.dry_run,
            verbose=args.verbose, output_format=OutputFormat(args.format),
            progress=args.progress, workers=args.workers,
            print_nova_config=args.print_nova_config, report=args.report,
            journal=args.journal,
            scheduling=SchedulingOptions.from_args(args),
            consistency_check=not args.no_consistency_check)

    @property
    def detailed(self) -> bool:
        """Whether the text report draws each node's trees, moves and plan."""
        return self.dry_run or self.verbose


#: ``--nova-config``: files, or directories of per-host files (nova/conf/per_host.py).
NOVA_CONFIG_HELP = ("nova.conf, or a directory holding nova.conf and <host>.conf files for "
                    "single hosts (repeatable, later ones win)")


def add_parser(actions: Any) -> argparse.ArgumentParser:
    """Register ``placement migrate_compute_inventory`` under the placement category."""
    parser = actions.add_parser(
        "migrate_compute_inventory",
        help="move every described node's inventory and allocations to the nested shape")
    add_placement_arguments(parser)
    _add_host_arguments(parser)
    parser.add_argument("--dry-run", action="store_true",
                        help="check and show each node's trees and allocation moves; "
                        "change nothing")
    parser.add_argument("--verbose", "-v", action="store_true",
                        help="show trees and moves of every node, and log progress")
    parser.add_argument("--format", choices=[str(f) for f in OutputFormat], default="text",
                        help="output format (default text)")
    parser.add_argument(
        "--workers", type=_workers, metavar="N",
        help="worker processes migrating nodes side by side (default: one per CPU and "
        f"per {parallel.NODES_PER_WORKER} nodes, at most {parallel.MAX_AUTO_WORKERS})")
    parser.add_argument("--report", metavar="FILE",
                        help="also write the run's report to FILE: one self-contained HTML "
                        "page (trees before and after, capacity per class, refusals), or "
                        "JSON when FILE ends in .json; written while nodes finish")
    parser.add_argument("--journal", metavar="FILE",
                        help="with --placement-url: the journal file (SQLite) each node "
                        "written is recorded in, for `placement revert` (default: "
                        "nova-reshape-journal.sqlite beside --report, else in the current "
                        "directory)")
    parser.add_argument("--progress", action="store_true",
                        help="show progress bars even when stderr is not a "
                        "terminal or with --format json")
    _add_target_arguments(parser)
    _add_scheduling_arguments(parser)
    parser.add_argument_group(
        "consistency check", "before writing, nova's placement audit and heal_allocations "
        "on the nodes migrated, read-only (docs/migrate-compute-inventory.md)",
    ).add_argument("--no-consistency-check", action="store_true",
                   help="do not refuse the run for orphaned allocations or instances "
                   "without allocations on the nodes migrated")
    return parser


def _add_scheduling_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "scheduling check", "before writing, nova 34's scheduler on every flavor in use, "
        "before and after the plan (docs/migrate-compute-inventory.md)")
    group.add_argument("--no-scheduling-check", action="store_true",
                       help="do not run the scheduling check")
    add_flavor_arguments(group)
    group.add_argument("--accept-scheduling-loss", action="append", metavar="FLAVOR",
                       default=[], help="go on although FLAVOR has no valid host after "
                       "the migration; repeatable")


def add_placement_arguments(parser: argparse.ArgumentParser) -> None:
    """``--config-file``, ``--placement-url``, ``--token``, ``--header``:
    :meth:`PlacementAccess.from_args` reads them."""
    parser.add_argument(
        "--config-file", action="append", metavar="FILE", dest="sub_config_files", default=[],
        help="as the global --config-file")
    parser.add_argument("--placement-url", metavar="URL",
                        help="use a running Placement service instead of the database")
    parser.add_argument("--token", metavar="TOKEN",
                        help="x-auth-token for --placement-url")
    parser.add_argument(
        "--header", action="append", metavar="NAME:VALUE", dest="headers", default=[],
        help="extra header for --placement-url, e.g. 'X-Roles: admin,service' for a "
        "noauth2 service (the reshaper needs the service role); repeatable")


def _add_host_arguments(parser: argparse.ArgumentParser) -> None:
    sources = parser.add_mutually_exclusive_group()
    sources.add_argument(
        "--host-file", action="append", metavar="PATH", dest="host_files",
        help="host description file, or a directory of *.yaml files; repeatable")
    add_nova_arguments(parser, sources)


def add_nova_arguments(parser: argparse.ArgumentParser, sources: Any) -> None:
    """The options naming nova's databases (``sources``: their exclusive group)
    and what completes them; :meth:`NovaDatabase.from_args` reads them."""
    sources.add_argument("--nova-database", metavar="URL",
                         help="describe the hosts of this one nova cell database (read only)")
    sources.add_argument("--nova-api-database", metavar="URL",
                         help="describe the hosts of every cell nova's API database maps "
                         "(read only; default: [api_database] connection of --nova-config)")
    parser.add_argument("--cell", action="append", metavar="NAME|UUID", dest="cells",
                        default=[], help="only this cell of the API database; repeatable")
    parser.add_argument("--skip-unreachable-cells", action="store_true",
                        help="leave out a cell whose database cannot be reached (its hosts "
                        "are listed) instead of stopping")
    parser.add_argument("--collected", metavar="DIR",
                        help="directory of files written by 'host collect' to merge")
    parser.add_argument("--cyborg-database", metavar="URL",
                        help="Cyborg's database (read only), for accelerators")


def release_argument(parser: argparse.ArgumentParser) -> None:
    """``--target-release``: the nova release whose shape the trees get."""
    parser.add_argument(
        "--target-release", type=_release, default=releases.DEFAULT_TARGET, metavar="RELEASE",
        help="the nova release about to start (number, series or name; default "
        f"{releases.DEFAULT_TARGET.number}, {releases.DEFAULT_TARGET.series}): only the "
        "reshapes its compute performs are done")


def _add_target_arguments(parser: argparse.ArgumentParser) -> None:
    release_argument(parser)
    parser.add_argument(
        "--numa-in-placement", action="store_true",
        help="make one child provider per NUMA cell holding its CPUs and memory (no nova "
        "release does this; only for a driver that models NUMA in Placement)")
    parser.add_argument(
        "--nova-config", action="append", metavar="PATH", dest="nova_configs", default=[],
        help=NOVA_CONFIG_HELP + ": fills what the host files leave out; where they "
        "disagree the node is refused")
    parser.add_argument(
        "--print-nova-config", action="store_true",
        help="print, per node, the nova.conf options the target release needs for the "
        "migrated tree, and exit (no Placement access)")
    parser.add_argument(
        "--allow-vgpu-mismatch", action="store_true",
        help="where a consumer's mediated devices do not add up to its VGPU allocation, "
        "move what is counted (as nova does, with a warning) instead of refusing")


def _release(value: str) -> releases.Release:
    try:
        return releases.find_release(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from error


def _workers(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a positive number of workers")
    return number
