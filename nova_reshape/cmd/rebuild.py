"""``nova-reshape-manage placement rebuild``: Placement rebuilt from nova's databases, offline.

::

    nova-reshape-manage placement rebuild [--nova-config PATH]...
        [--nova-api-database URL] [--cell NAME|UUID]... [--collected DIR]
        [--cyborg-database URL] [--target-release RELEASE] [--progress]
        [--config-file FILE]...

Into an EMPTY Placement database (placement.conf's ``[placement_database]
connection`` of ``--config-file``, else nova.conf's): every compute node's
tree in the target release's shape, then every instance's allocations on
it, then nova's host aggregates on the roots
(:mod:`nova_reshape.consistency.rebuild`). nova's databases are read as
``migrate_compute_inventory`` and ``heal_allocations`` read them (every
cell ``--nova-api-database``, else nova.conf's ``[api_database]
connection``, maps; ``--cell`` limits them), with ``--collected`` and
``--cyborg-database`` as for ``describe_hosts``. What nova's databases do
not hold is said once, on stderr. The result is decided in memory and
written set-based as a journaled run (:mod:`.rebuild_bulk`; ``placement
revert RUN_ID`` empties the database again); where a step would stop or be
refused, the command runs the steps through Placement's requests instead,
which report it as before. See docs/consistency.md.

Exit status: 0 rebuilt (hosts sync_aggregates could not place are listed,
as it lists them); 1 a database could not be read, Placement refused a
write, or the heal or the aggregates' sync stopped (the database is then
partly filled: empty it again, see the docs); 2 bad input (options,
nova.conf, a URL, a database that does not exist or was never synced);
3 refused, nothing written (the Placement database is not empty, the
sources disagree, or a node fails the migration's pre-flight); 130/143
SIGINT/SIGTERM.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any, TextIO

import sqlalchemy as sa

from nova_reshape import exception, journal
from nova_reshape.cmd import from_nova, nova_cells, rebuild_bulk, sync_aggregates
from nova_reshape.cmd.placement_access import database_conf, placement_opener
from nova_reshape.cmd.refusal import (
    EXIT_OK,
    PROGRAM,
    STATUS_EXITS,
    ExitClass,
    Interruption,
    Refusal,
    database_refusal,
)
from nova_reshape.cmd.request import (
    NOVA_CONFIG_HELP,
    MigrateRequest,
    NovaDatabase,
    PlacementAccess,
    add_nova_arguments,
    release_argument,
)
from nova_reshape.compute import first_start, migrate
from nova_reshape.consistency import aggregates
from nova_reshape.consistency import rebuild as rebuilding
from nova_reshape.consistency.placement_reads import PlacementReadError
from nova_reshape.nova.conf.per_host import NovaConfigPaths
from nova_reshape.novadb import api, cells
from nova_reshape.novadb.holders import NodeRow
from nova_reshape.novadb.readonly import DatabaseReadError, read_only
from nova_reshape.progress import progress_callback
from nova_reshape.transport.direct import on_database
from nova_reshape.virt import releases
from nova_reshape.virt.host import Host
from placement_wsgi import errors as placement_errors
from placement_wsgi import service
from placement_wsgi.db import importer
from placement_wsgi.gc_pause import paused_collection


@dataclasses.dataclass(frozen=True)
class RebuildRequest:
    """One ``placement rebuild`` invocation, as the operator asked it."""

    config_files: tuple[str, ...] = ()
    source: NovaDatabase = NovaDatabase()
    nova_configs: tuple[str, ...] = ()
    target: releases.Release = releases.DEFAULT_TARGET
    progress: bool = False
    #: The command line as given, for the journal.
    argv: tuple[str, ...] = ()

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> RebuildRequest:
        return cls(config_files=(*args.config_files, *args.sub_config_files),
                   source=NovaDatabase.from_args(args),
                   nova_configs=tuple(args.nova_configs), target=args.target_release,
                   progress=args.progress, argv=tuple(getattr(args, "argv", ())))

    def migrate_request(self) -> MigrateRequest:
        """The migration's request for the same inputs (how its readers take them)."""
        return MigrateRequest(placement=PlacementAccess(config_files=self.config_files),
                              hosts=self.source, nova_configs=self.nova_configs,
                              target=self.target)


def add_parser(actions: Any) -> None:
    """Register ``placement rebuild`` under the placement category's actions."""
    parser = actions.add_parser(
        "rebuild", help="rebuild an empty Placement database from nova's databases, offline")
    parser.add_argument("--config-file", action="append", metavar="FILE",
                        dest="sub_config_files", default=[],
                        help="placement.conf naming the EMPTY Placement database (as the "
                        "global --config-file; default: nova.conf's [placement_database])")
    parser.add_argument("--nova-config", action="append", metavar="PATH", dest="nova_configs",
                        default=[], help=NOVA_CONFIG_HELP + ": the database connections, "
                        "CPU sets, PCI device_spec, ratios and reservations")
    add_nova_arguments(parser, parser.add_mutually_exclusive_group())
    release_argument(parser)
    parser.add_argument("--progress", action="store_true",
                        help="show progress bars even when stderr is not a terminal")
    parser.set_defaults(run=lambda args, out, err: rebuild(RebuildRequest.from_args(args),
                                                           out, err), verbose=False)


def check_empty(request: RebuildRequest, paths: NovaConfigPaths) -> None:
    """A refusal (exit 3) unless the Placement database holds no provider and no
    consumer. Its URL and schema were checked before (:func:`placement_opener`)."""
    nova_connection = nova_cells.nova_connections(paths).placement_database
    conf = database_conf(request.config_files, nova_connection)
    database = service.open_database(conf)
    try:
        held = importer.data_held(database.engine)
    finally:
        database.engine.dispose()
    if held:
        rows = ", ".join(f"{count} {table.replace('_', ' ')}" for table, count in held.items())
        raise Refusal(ExitClass.REFUSED, f"the Placement database {service.connection_url(conf)} "
                      f"is not empty (it holds {rows}): rebuild needs an empty one, synced "
                      "with placement-manage db sync; nothing written")


def read_cells(request: RebuildRequest, paths: NovaConfigPaths) -> cells.CellsSnapshot:
    """Every selected cell (cell0 aside), with the root disks heal needs."""
    query = nova_cells.cells_query(request.source, nova_cells.nova_connections(paths))
    assert query is not None  # no --nova-database here: the API database is required
    try:
        return cells.read_cells(dataclasses.replace(query, root_disks=True))
    except DatabaseReadError as error:
        raise database_refusal(error) from error


def sync_plan(request: RebuildRequest, paths: NovaConfigPaths,
              snapshot: cells.CellsSnapshot) -> aggregates.SyncPlan:
    """sync_aggregates' plan: nova's host aggregates and host mappings (API database)
    over the compute nodes of the cells read."""
    url = request.source.api_url or nova_cells.nova_connections(paths).api_database or ""
    try:
        with read_only(url, api.WHAT) as connection:
            found = api.aggregates_on(connection)
            mapped = api.host_mappings_on(connection)
    except DatabaseReadError as error:
        raise database_refusal(error) from error
    host_cells = {host: cell for cell, hosts in mapped.items() for host in hosts}
    return aggregates.plan_sync(found, host_cells, {read.cell.uuid: [
        NodeRow(node.uuid, node.host, node.hypervisor_hostname)
        for node in read.snapshot.compute_nodes] for read in snapshot.cells})


def new_nodes(snapshot: cells.CellsSnapshot,
              options: releases.DriverOptions) -> list[first_start.NewNode]:
    """Every compute node of the hosts read, with its service's flag and nova.conf."""
    found = []
    for read, host in snapshot.hosts():
        for record in read.snapshot.nodes_of(host):
            service_row = read.snapshot.service_of(record)
            found.append(first_start.NewNode(
                record, bool(service_row and service_row.disabled),
                options.conf_for(record.hypervisor_hostname)))
    return found


class TreeBuilder:
    """The trees step: roots as nova-compute's first start, then the migration."""

    def __init__(self, nodes: list[first_start.NewNode], hosts: list[Host],
                 options: releases.DriverOptions, bars: Any) -> None:
        self.nodes, self.hosts, self.options, self.bars = nodes, hosts, options, bars

    def __call__(self, placement: Any) -> tuple[int, int]:
        total = len(self.nodes)
        bars = self.bars
        roots = first_start.create_roots(placement, self.nodes, done=None if bars is None
                                         else (lambda done: bars("roots", done, total)))
        results = migrate.Migration(placement, rebuilding.without_consumers(self.hosts),
                                    migrate.Settings(options=self.options),
                                    progress=bars).run()
        for status, _ in STATUS_EXITS:
            stopped = [result for result in results if result.status == status]
            if stopped:
                raise refusal_of(stopped[0], len(stopped), roots)
        return roots, sum(result.status in (migrate.MIGRATED, migrate.UPDATED)
                          for result in results)


def refusal_of(result: migrate.NodeResult, count: int, roots: int) -> Refusal:
    """The migration step stopped at ``result`` (one of ``count`` such nodes)."""
    why = "; ".join(str(finding) for finding in result.findings) or result.error or ""
    if result.status == migrate.REFUSED:
        return Refusal(ExitClass.REFUSED, f"{count} node(s) refused by the migration's "
                       f"pre-flight, first {result.nodename}: {why}; {roots} root(s) were "
                       "created: empty the database before running again")
    return Refusal(ExitClass.FAILED, f"node {result.nodename}: {result.status}: {why}; the "
                   "database is partly rebuilt: empty it before running again")


def journaled_write(request: RebuildRequest, placement: Any, decided: rebuild_bulk.Decided,
                    bars: Any) -> rebuilding.Rebuilt:
    """Write the decided rebuild set-based, as a journaled run (docs/journal.md)."""
    direct = on_database(placement)
    assert direct is not None and direct.direct is not None  # opened on the database
    total = len(decided.trees)
    done = None if bars is None else (lambda count: bars("rebuild", count, total))
    with journal.recording(direct.direct.database.engine, rebuild_bulk.COMMAND,
                           journal.command_line(request.argv),
                           rebuild_bulk.inputs_of(request)) as run:
        return rebuild_bulk.write(direct.direct, decided, run, done)


def rebuild(request: RebuildRequest, out: TextIO, err: TextIO) -> int:
    """The command; its exit status (refusals raised)."""
    paths = NovaConfigPaths(request.nova_configs)
    if request.source.url or request.source.skip_unreachable_cells:
        raise Refusal(ExitClass.BAD_INPUT, "rebuild reads every cell through nova's API "
                      "database and leaves none out: --nova-database and "
                      "--skip-unreachable-cells do not apply")
    if not request.source.api_url and not nova_cells.nova_connections(paths).api_database:
        raise Refusal(ExitClass.BAD_INPUT, "no nova API database: give --nova-api-database "
                      "or a --nova-config whose [api_database] connection names it")
    opener = placement_opener(PlacementAccess(config_files=request.config_files), paths)
    check_empty(request, paths)
    snapshot = read_cells(request, paths)
    confs = from_nova.host_confs(paths, snapshot.host_names())
    migrate_request = request.migrate_request()
    hosts = from_nova.hosts_from_nova(migrate_request, request.source, snapshot, confs, out)
    options = from_nova.driver_options(migrate_request, confs, hosts)
    err.write(f"{PROGRAM}: note: {rebuilding.NOT_REBUILT}\n")
    bars = progress_callback(err, force=request.progress)
    build = TreeBuilder(new_nodes(snapshot, options), hosts, options, bars)
    healed = None if bars is None else (lambda done, total: bars("heal", done, total))
    plan = sync_plan(request, paths, snapshot)
    decided = rebuild_bulk.decide(snapshot.cells, build.nodes, hosts, options, plan)
    again = ("empty it before running again" if decided is None else
             "empty it before running again (placement revert of the run placement runs lists)")
    try:
        with paused_collection(), opener() as placement:
            if decided is None:  # it stops somewhere: the requests say where, as always
                result = rebuilding.rebuild(snapshot.cells, placement, build, healed, plan)
            else:
                result = journaled_write(request, placement, decided, bars)
    except KeyboardInterrupt as stop:
        raise Interruption(stop, f"the Placement database is partly rebuilt: {again}",
                           ) from None
    except (sa.exc.SQLAlchemyError, PlacementReadError, exception.NovaException,
            placement_errors.PlacementError) as error:
        raise Refusal(ExitClass.FAILED, f"Placement: {service.one_line(error)}; the database "
                      f"is partly rebuilt: {again}") from error
    finally:
        if bars is not None:
            bars.close()
    out.write(f"{result.roots} compute node tree(s) built for nova {request.target.series} "
              f"({result.nodes} reshaped by the migration), {result.healed} instance(s) "
              "given allocations\n")
    if not result.healed_all:
        raise Refusal(ExitClass.FAILED, f"heal_allocations stopped (nova's status "
                      f"{int(result.heal.outcome)}): {result.heal.message}; the database is "
                      f"partly rebuilt: {again}")
    if result.aggregates is not None:
        sync_aggregates.write_outcome(result.aggregates, out, err)
    if not result.complete:
        raise Refusal(ExitClass.FAILED, "sync_aggregates stopped (above); the database is "
                      f"partly rebuilt: {again}")
    return EXIT_OK
