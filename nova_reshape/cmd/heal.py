"""``nova-reshape-manage placement heal_allocations``: nova 34's command, offline.

::

    nova-reshape-manage placement heal_allocations [--dry-run] [--verbose]
        [--instance UUID | --cell UUID] [--max-count N] [--force]
        [--skip-port-allocations] [--heal-nested] [--progress]
        [--nova-api-database URL] [--nova-config PATH]...
        [--config-file FILE | --placement-url URL [--token T] [--header N:V]...]

Reads every cell nova's API database maps (``--nova-api-database``, else
nova.conf's ``[api_database] connection``; cell URL templates filled from
its ``[database] connection``) and Placement (in-process on its database,
or ``--placement-url``), then heals as nova 34 does
(:mod:`nova_reshape.consistency.heal`). Port (Neutron) resource requests
are not healed: Neutron is not read offline, and the command says so once.

Exit status, nova 34's: 0 healed; 1 ``--max-count`` reached; 2 an
instance's compute node is not in its cell; 3 Placement refused a write
(or could not be read); 4 nothing to heal (always with ``--dry-run``; a
deleted, busy or cell0 ``--instance``); 8 a vGPU or Cyborg flavor (the run
stops there; ``--heal-nested`` heals vGPU); 127 bad input. See
docs/consistency.md.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from typing import Any, TextIO

import requests
import sqlalchemy as sa

from nova_reshape.cmd import consistency_journal, nova_cells
from nova_reshape.cmd.placement_access import placement_opener
from nova_reshape.cmd.refusal import PROGRAM, ExitClass, Refusal, database_refusal
from nova_reshape.cmd.request import NOVA_CONFIG_HELP, PlacementAccess, add_placement_arguments
from nova_reshape.consistency import heal as healing
from nova_reshape.consistency.placement_reads import PlacementReadError
from nova_reshape.journal import RunStatus
from nova_reshape.nova.cell import CellMapping
from nova_reshape.nova.conf.per_host import NovaConfigPaths
from nova_reshape.novadb import api, cells
from nova_reshape.novadb.readonly import DatabaseReadError, read_only
from nova_reshape.progress import progress_callback
from placement_wsgi.gc_pause import paused_collection

Outcome = healing.Outcome

#: The command's name in the journal.
COMMAND = "heal_allocations"
#: The journaled run's status by outcome (others: ``ok``).
RUN_STATUS = {Outcome.REFUSED: RunStatus.FAILED, Outcome.NO_NODE: RunStatus.REFUSED,
              Outcome.UNSUPPORTED: RunStatus.REFUSED}

PORTS_NOTE = (f"{PROGRAM}: note: port (Neutron) resource requests are not healed offline "
              "(Neutron is not read); run nova-manage placement heal_allocations once "
              "Neutron is up if ports have minimum-bandwidth or packet-rate rules, or pass "
              "--skip-port-allocations to silence this\n")


@dataclasses.dataclass(frozen=True)
class HealRequest:
    """One heal_allocations invocation, as the operator asked it (``max_count`` as
    typed: nova checks it after the other options)."""

    placement: PlacementAccess
    nova_api_url: str | None = None
    nova_configs: tuple[str, ...] = ()
    instance: str | None = None
    cell: str | None = None
    max_count: str | None = None
    dry_run: bool = False
    force: bool = False
    verbose: bool = False
    heal_nested: bool = False
    skip_port_allocations: bool = False
    progress: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> HealRequest:
        return cls(
            placement=PlacementAccess.from_args(args), nova_api_url=args.nova_api_database,
            nova_configs=tuple(args.nova_configs),
            instance=args.instance, cell=args.cell, max_count=args.max_count,
            dry_run=args.dry_run, force=args.force, verbose=args.verbose,
            heal_nested=args.heal_nested, skip_port_allocations=args.skip_port_allocations,
            progress=args.progress)


def add_parser(actions: Any) -> None:
    """Register ``placement heal_allocations`` under the placement category's actions."""
    parser = actions.add_parser(
        "heal_allocations", help="create the allocations nova would heal, offline")
    parser.add_argument("--dry-run", action="store_true",
                        help="show what would be written; write nothing (exit 4)")
    parser.add_argument("--verbose", "-v", action="store_true",
                        help="say what is decided for every instance")
    parser.add_argument("--instance", metavar="UUID",
                        help="only this instance (not with --cell)")
    parser.add_argument("--cell", metavar="UUID", help="only this cell (not with --instance)")
    parser.add_argument("--max-count", metavar="N",
                        help="heal at most N instances (in nova's pages), then exit 1")
    parser.add_argument("--force", action="store_true",
                        help="with --instance: replace its allocations by its flavor's on "
                        "its current compute node")
    parser.add_argument("--skip-port-allocations", action="store_true",
                        help="as nova's; ports are never healed offline")
    parser.add_argument("--heal-nested", action="store_true",
                        help="(not nova's) place each class on the provider of the node's "
                        "tree that has it: VGPU on a GPU child, PCI devices on their "
                        "providers, after a reshape; vGPU flavors are healed, not refused")
    parser.add_argument("--progress", action="store_true",
                        help="show a progress bar even when stderr is not a terminal")
    parser.add_argument("--nova-api-database", metavar="URL",
                        help="nova's API database (read only; default: [api_database] "
                        "connection of --nova-config)")
    parser.add_argument("--nova-config", action="append", metavar="PATH",
                        dest="nova_configs", default=[], help=NOVA_CONFIG_HELP +
                        ": the database connections")
    add_placement_arguments(parser)
    parser.set_defaults(run=lambda args, out, err: heal_allocations(
        HealRequest.from_args(args), out, err, getattr(args, "argv", ())))


def _bad(message: str) -> Refusal:
    return Refusal(ExitClass.BAD_INPUT, message, status=Outcome.BAD_INPUT)


def options_of(request: HealRequest) -> healing.Options:
    """The run's options, checked in nova's order; a refusal (127) for bad ones."""
    if request.instance and request.cell:
        raise _bad("--cell and --instance cannot be given together")
    if request.force and not request.instance:
        raise _bad("--force needs --instance")
    max_count = None
    if request.max_count is not None and not request.instance:
        try:
            max_count = int(request.max_count)
        except ValueError:
            max_count = 0
        if max_count < 1:
            raise _bad(f"--max-count {request.max_count}: give a positive integer")
    return healing.Options(dry_run=request.dry_run, instance=request.instance,
                           max_count=max_count, force=request.force,
                           heal_nested=request.heal_nested)


def _selected(request: HealRequest, api_url: str) -> list[CellMapping]:
    """The cells to read (nova's order, cell0 left out as nova skips it)."""
    with read_only(api_url, api.WHAT) as connection:
        mappings = api.cell_mappings_on(connection)
        wanted = request.cell
        if request.instance:
            wanted = api.instance_cell_on(connection, request.instance)
            if not wanted:
                raise _bad(f"instance {request.instance} is mapped to no cell in nova's "
                           "API database (nova-manage cell_v2 verify_instance tells why)")
    if wanted:
        chosen = [cell for cell in mappings if cell.matches(wanted)]
        if len(chosen) != 1:
            raise _bad(f"--cell {wanted}: no such cell in nova's API database")
        mappings = chosen
    return [cell for cell in mappings if not cell.is_cell0]


def read_cells(request: HealRequest) -> list[cells.CellRead]:
    """Every selected cell's instances, compute nodes and root disks."""
    connections = nova_cells.nova_connections(NovaConfigPaths(request.nova_configs))
    api_url = request.nova_api_url or connections.api_database
    if not api_url:
        raise _bad("no nova API database: give --nova-api-database or a --nova-config "
                   "whose [api_database] connection names it")
    try:
        selected = _selected(request, api_url)
        if not selected:
            return []
        return list(cells.read_cells(cells.CellsQuery(
            api_url=api_url, default_connection=connections.database,
            cells=tuple(cell.uuid for cell in selected), root_disks=True)).cells)
    except DatabaseReadError as error:
        refusal = database_refusal(error)
        if refusal.exit_class is not ExitClass.FAILED:
            refusal.status = Outcome.BAD_INPUT
        raise refusal from error


def heal_allocations(request: HealRequest, out: TextIO, err: TextIO,
                     argv: Sequence[str] = ()) -> int:
    """The command; its exit status (refusals and early stops raised)."""
    options = options_of(request)
    try:
        opener = placement_opener(request.placement, NovaConfigPaths(request.nova_configs))
    except Refusal as refusal:
        refusal.status = (Outcome.BAD_INPUT if refusal.exit_class is ExitClass.BAD_INPUT
                          else Outcome.REFUSED)
        raise
    if not request.skip_port_allocations:
        err.write(PORTS_NOTE)
    bar = progress_callback(err, force=request.progress, unit="instances")
    # Hundreds of thousands of records, none cyclic: the collector's full passes
    # over them would cost more than the work (placement_wsgi/gc_pause.py).
    try:
        with paused_collection(), opener() as placement, \
                consistency_journal.journaled_writes(
                    placement, COMMAND, argv, dataclasses.asdict(options)) as writes:
            read = read_cells(request)
            result = healing.heal(read, placement, options, done=None if bar is None else (
                lambda count, total: bar("healed", count, total)),
                writes=None if options.dry_run else writes)
            consistency_journal.finish(writes, RUN_STATUS.get(result.outcome, RunStatus.OK),
                                       {"healed": result.written}, err)
    except (PlacementReadError, requests.RequestException, sa.exc.SQLAlchemyError) as error:
        raise Refusal(ExitClass.FAILED, f"Placement: {' '.join(str(error).split())[:300]}",
                      status=Outcome.REFUSED) from error
    finally:
        if bar is not None:
            bar.close()
    _report(request, result, out)
    consistency_journal.revertable(writes, out)
    if result.message and result.outcome not in (Outcome.HEALED, Outcome.NOTHING):
        raise Refusal(ExitClass.REFUSED, result.message, status=result.outcome)
    return int(result.outcome)


def _report(request: HealRequest, result: healing.Result, out: TextIO) -> None:
    """Every decision (``--verbose``) or, on a dry run, every heal; one summary line."""
    if request.verbose:
        out.writelines(f"{line}\n" for line in result.plan.notes)
    elif request.dry_run:
        out.writelines(f"{heal.line(True)}\n" for heal in result.plan.heals)
    if request.dry_run:
        out.write(f"dry run: {len(result.plan.heals)} instance(s) would be healed, "
                  "nothing written\n")
    else:
        more = ("; --max-count reached: run again until it exits 0 or 4"
                if result.outcome is Outcome.MAX_COUNT else "")
        out.write(f"{result.written} instance(s) healed{more}\n")
