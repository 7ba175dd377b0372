"""``migrate_compute_inventory``'s consistency check on the command line.

Before anything is written, the nodes the run migrates are checked the way
``placement audit`` and ``placement heal_allocations --dry-run`` would
check them (:mod:`nova_reshape.consistency.preflight`): an orphaned
allocation the reshape would move, or an instance without allocations the
reshape would leave out, refuses the run (pre-flight classes
``orphaned_allocation`` and ``missing_allocation``, exit 3, nothing
written, a dry run too), one line per finding with the command that fixes
it. Nodes the run does not migrate are not looked at.

It needs nova's databases: those the hosts were described from
(``--nova-database``, ``--nova-api-database``, nova.conf ``[api_database]
connection``), or with host files the API database of nova.conf (only the
hosts of the files read). With host files and no nova database it cannot
run: :func:`run` says so in one warning line. ``--no-consistency-check``
turns it off, silently, as ``--no-scheduling-check`` does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TextIO

import requests

from nova_reshape.cmd import nova_cells
from nova_reshape.cmd.refusal import PROGRAM, ExitClass, Refusal, database_refusal
from nova_reshape.cmd.request import HostFiles, MigrateRequest, NovaDatabase
from nova_reshape.compute import parallel
from nova_reshape.compute.preflight import Finding
from nova_reshape.consistency import preflight as consistency
from nova_reshape.consistency.nova_side import NovaHolders
from nova_reshape.consistency.placement_reads import PlacementReadError
from nova_reshape.nova.cell import CellMapping
from nova_reshape.nova.conf.per_host import NovaConfigPaths
from nova_reshape.novadb import cells, reader
from nova_reshape.novadb.holders import CellHolders, read_holders_on
from nova_reshape.novadb.readonly import DatabaseReadError, read_only
from nova_reshape.progress import progress_callback
from nova_reshape.virt.host import Host

NOT_RUN = (f"{PROGRAM}: warning: consistency check not run: no nova database to compare "
           "Placement with (host files only; a --nova-config whose [api_database] "
           "connection names nova's API database gives one). Orphaned allocations and "
           "instances without allocations on these nodes are not looked for: run "
           "'placement audit' and 'placement heal_allocations --dry-run' first\n")


@dataclasses.dataclass(frozen=True)
class NovaRead:
    """nova's side of the check: who holds what on each node, and the instances."""

    holders: NovaHolders
    cells: tuple[cells.CellRead, ...]


def covered_nodes(hosts: Sequence[Host]) -> list[consistency.CoveredNode]:
    """The nodes the run migrates (ironic nodes are skipped by it)."""
    return [consistency.CoveredNode(node.nodename, node.uuid, host.host)
            for host in hosts for node in host.nodes if not node.is_ironic]


def _one_cell(url: str) -> NovaRead:
    """``--nova-database``: that cell alone (it holds every node the run migrates)."""
    with read_only(url, reader.WHAT) as connection:
        holders = read_holders_on(connection)
    mapping = CellMapping(uuid="", name=None, database_connection=url)
    each = cells.EachCell[CellHolders](read=((mapping, url, holders),), skipped=(),
                                       host_cells={})
    snapshot = cells.read_one_cell(url, root_disks=True)
    return NovaRead(NovaHolders.from_cells(each), snapshot.cells)


def _api_cells(query: cells.CellsQuery) -> NovaRead:
    """The cells of nova's API database that ``query`` selects (its hosts only)."""
    each = cells.read_each_cell(query, read_holders_on)
    snapshot = cells.read_cells(dataclasses.replace(query, root_disks=True))
    return NovaRead(NovaHolders.from_cells(each, selected=bool(query.cells)), snapshot.cells)


def read_nova(request: MigrateRequest,
              nodes: Sequence[consistency.CoveredNode]) -> NovaRead | None:
    """nova's side for the run's nodes; None when no nova database is known."""
    paths = NovaConfigPaths(request.nova_configs)
    connections = nova_cells.nova_connections(paths)
    try:
        match request.hosts:
            case NovaDatabase(url=str(url)):
                return _one_cell(url)
            case NovaDatabase() as source:
                query = nova_cells.cells_query(source, connections)
                assert query is not None  # no --nova-database: the API database
                return _api_cells(query)
            case HostFiles():
                if not connections.api_database:
                    return None
                return _api_cells(cells.CellsQuery(
                    api_url=connections.api_database,
                    default_connection=connections.database,
                    hosts=tuple(sorted({node.host for node in nodes if node.host}))))
    except DatabaseReadError as error:
        raise database_refusal(error) from error
    return None


def findings(found: Sequence[consistency.Inconsistency]) -> list[Finding]:
    """The check's findings as the migration's pre-flight findings."""
    return [Finding(str(item.kind), item.node, item.what, consumer=item.consumer,
                    provider=item.provider, command=item.command)
            for item in found]


def run(request: MigrateRequest, opener: parallel.Opener,
        nodes: Sequence[consistency.CoveredNode], err: TextIO) -> None:
    """The check of ``nodes`` (:func:`covered_nodes`; see the module): a refusal
    (exit 3) for its findings; a warning when no nova database is known."""
    if not request.consistency_check:
        return
    nova = read_nova(request, nodes)
    if nova is None:
        err.write(NOT_RUN)
        return
    bars = progress_callback(err, request.output_format, force=request.progress,
                             unit="providers")
    try:
        with opener() as placement:
            found = consistency.check(
                placement, nova.holders, nova.cells, nodes,
                progress=(lambda done, total: bars("consistency", done, total))
                if bars else None)
    except (PlacementReadError, requests.RequestException) as error:
        raise Refusal(ExitClass.FAILED, f"Placement: {' '.join(str(error).split())}") \
            from error
    finally:
        if bars:
            bars.close()
    if found:
        raise Refusal(ExitClass.REFUSED, f"{len(found)} allocation problem(s) on "
                      "the nodes to migrate (placement audit, heal_allocations): nothing "
                      "was written; fix them and run again, or --no-consistency-check",
                      findings(found))
