"""Which nova databases a command reads, from its command line or the operator's nova.conf.

``describe_hosts`` and ``migrate_compute_inventory`` read nova's compute
hosts the same way: :func:`read_nova_hosts` takes the typed
:class:`~nova_reshape.cmd.request.NovaDatabase` and the ``--nova-config``
paths, settles the databases (``--nova-database`` alone: that one cell;
else ``--nova-api-database`` or nova.conf ``[api_database] connection``,
every cell it maps, templates filled from ``[database] connection``) and
reads them with :func:`nova_reshape.novadb.cells.read_cells`. Whatever
stops it is a :class:`~nova_reshape.cmd.refusal.Refusal`;
:func:`write_skipped` says which hosts a left-out cell held.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from nova_reshape.cmd.refusal import PROGRAM, ExitClass, Refusal, database_refusal
from nova_reshape.cmd.request import NovaDatabase
from nova_reshape.nova.conf.databases import DatabaseConnections, load_connections
from nova_reshape.nova.conf.per_host import NovaConfigPaths
from nova_reshape.nova.errors import NovaConfError
from nova_reshape.novadb import cells
from nova_reshape.novadb.readonly import DatabaseReadError, display_url

NO_DATABASE = ("no nova database to read: give --nova-database (one cell), "
               "--nova-api-database, or a --nova-config whose [api_database] connection "
               "names nova's API database")


def nova_connections(paths: NovaConfigPaths) -> DatabaseConnections:
    """The database connections of the nova.conf files read for every host."""
    try:
        return load_connections(paths.common())
    except NovaConfError as error:
        raise Refusal(ExitClass.BAD_INPUT, str(error)) from error


def cells_query(source: NovaDatabase, connections: DatabaseConnections,
                hosts: Sequence[str] = ()) -> cells.CellsQuery | None:
    """What to read for ``source``: None for its one cell database (``source.url``),
    else the API database's cells; a refusal when neither is known."""
    if source.url:
        if source.cells or source.skip_unreachable_cells:
            raise Refusal(ExitClass.BAD_INPUT, "--cell and --skip-unreachable-cells need "
                          "nova's API database, not --nova-database")
        return None
    api_url = source.api_url or connections.api_database
    if not api_url:
        raise Refusal(ExitClass.BAD_INPUT, NO_DATABASE)
    return cells.CellsQuery(api_url=api_url, default_connection=connections.database,
                            cells=source.cells, hosts=tuple(hosts),
                            skip_unreachable=source.skip_unreachable_cells)


def read_nova_hosts(source: NovaDatabase, paths: NovaConfigPaths,
                    hosts: Sequence[str] = ()) -> cells.CellsSnapshot:
    """The compute hosts (``hosts``; empty: all) of the cells ``source`` names."""
    query = cells_query(source, nova_connections(paths), hosts)
    try:
        if query is None:
            return cells.read_one_cell(source.url or "", hosts)
        return cells.read_cells(query)
    except DatabaseReadError as error:
        raise database_refusal(error) from error


def source_name(read: cells.CellRead) -> str:
    """How a file header or a message names where a host was read."""
    where = f"nova database {display_url(read.url)}"
    return f"cell {read.cell.label}, {where}" if read.cell.uuid else where


def write_skipped(snapshot: cells.CellsSnapshot, err: TextIO) -> None:
    """One warning per cell left out (``--skip-unreachable-cells``), naming its hosts."""
    for skipped in snapshot.skipped:
        hosts = (f"hosts left out: {', '.join(skipped.hosts)}" if skipped.hosts
                 else "no host is mapped to it")
        err.write(f"{PROGRAM}: warning: {skipped.reason}; cell left out, {hosts}\n")
