"""Read the compute hosts of every cell that nova's API database maps.

One place reads "all of nova's compute hosts": ``describe_hosts``,
``migrate_compute_inventory`` and the tools that check scheduling or
audit Placement against nova take a :class:`CellsQuery` and get one
:class:`CellsSnapshot`. Steps:

1. the API database's ``cell_mappings`` and ``host_mappings``, in one
   read-only transaction (:mod:`.api`);
2. every cell but cell0 (nova keeps no compute node there), or those
   ``CellsQuery.cells`` names by name or uuid;
3. each cell's URL, a template filled from nova.conf ``[database]
   connection`` as nova fills it (:meth:`CellMapping.database_url`);
4. each cell's database read with :func:`~.reader.read_cell_on` (or, by
   :func:`read_each_cell`, any reader of a cell), one read-only
   transaction per cell;
5. a host with compute nodes in two cells, or a compute node uuid found
   twice, refused (:class:`CellConflict`): which cell is right is the
   operator's call.

A cell whose database cannot be reached stops the read
(:class:`UnreachableCell`, naming the cell), unless
``skip_unreachable``: then it is listed in ``CellsSnapshot.skipped`` with
the hosts ``host_mappings`` maps to it, which are left out.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import sqlalchemy as sa

from nova_reshape.nova.cell import CellMapping, CellUrlTemplateError
from nova_reshape.novadb import api, reader
from nova_reshape.novadb.readonly import (
    BadDatabaseURL,
    DatabaseReadError,
    DatabaseUnreachable,
    read_only,
)
from nova_reshape.novadb.records import CellSnapshot, ComputeNodeRecord

T = TypeVar("T")

#: How many conflicts a :class:`CellConflict` line spells out.
SHOWN_CONFLICTS = 3


class BadCellSelection(BadDatabaseURL):
    """``--cell`` names no cell, several, or cell0; or a cell URL template cannot be filled."""


class UnreachableCell(DatabaseUnreachable):
    """A cell's database cannot be reached; the message names the cell."""


class CellConflict(DatabaseReadError):
    """Two cells claim the same host or compute node; the message names both cells."""


@dataclass(frozen=True)
class CellsQuery:
    """What to read: nova's API database, nova.conf ``[database] connection`` (to fill
    templated cell URLs), the cells (names or uuids; empty: all but cell0), the
    service hosts (empty: all), and whether an unreachable cell is left out."""

    api_url: str
    default_connection: str | None = None
    cells: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()
    skip_unreachable: bool = False
    #: Also read each instance's root disk (:attr:`CellSnapshot.root_disks`).
    root_disks: bool = False


@dataclass(frozen=True)
class CellRead:
    """One cell, the URL it was read from (templates filled) and what it holds."""

    cell: CellMapping
    url: str
    snapshot: CellSnapshot


@dataclass(frozen=True)
class SkippedCell:
    """A cell left out because its database could not be reached."""

    cell: CellMapping
    reason: str
    #: The hosts ``host_mappings`` maps to the cell: not described.
    hosts: tuple[str, ...]


@dataclass(frozen=True)
class CellsSnapshot:
    """Every cell read (in ``cell_mappings`` order) and every cell left out."""

    cells: tuple[CellRead, ...]
    skipped: tuple[SkippedCell, ...] = ()

    def host_names(self) -> set[str]:
        """The service hosts read."""
        return {host for _, host in self.hosts()}

    def skipped_hosts(self) -> set[str]:
        """The hosts ``host_mappings`` maps to the cells left out."""
        return {host for cell in self.skipped for host in cell.hosts}

    def hosts(self) -> Iterator[tuple[CellRead, str]]:
        """(cell, service host) for every host with compute nodes, cell by cell."""
        for read in self.cells:
            for host in read.snapshot.hosts():
                yield read, host


def read_one_cell(url: str, hosts: Sequence[str] = (), root_disks: bool = False,
                  ) -> CellsSnapshot:
    """The hosts of the one cell database at ``url`` (no API database: no mapping,
    so the cell has neither name nor uuid; ``root_disks`` as :class:`CellsQuery`'s);
    the reader's errors as they are."""
    return CellsSnapshot(cells=(CellRead(CellMapping(uuid="", name=None,
                                                     database_connection=url),
                                         url, reader.read_cell(url, hosts, root_disks)),))


def select_cells(mappings: Sequence[CellMapping], wanted: Sequence[str]) -> list[CellMapping]:
    """The cells ``wanted`` names (each a name or uuid; none: every cell but cell0),
    in ``mappings`` order; BadCellSelection for a name matching none or several,
    or naming cell0."""
    if not wanted:
        return [cell for cell in mappings if not cell.is_cell0]
    chosen: set[str] = set()
    for name in wanted:
        found = [cell for cell in mappings if cell.matches(name)]
        if not found:
            known = ", ".join(cell.label for cell in mappings if not cell.is_cell0)
            raise BadCellSelection(f"--cell {name}: no such cell in nova's API database "
                                   f"(cells: {known or 'none'})")
        if len(found) > 1:
            raise BadCellSelection(f"--cell {name}: names {len(found)} cells ("
                                   f"{', '.join(cell.uuid for cell in found)}); give its uuid")
        if found[0].is_cell0:
            raise BadCellSelection(f"--cell {name}: cell0 holds no compute hosts")
        chosen.add(found[0].uuid)
    return [cell for cell in mappings if cell.uuid in chosen]


def _urls(cells: Sequence[CellMapping], default_connection: str | None) -> list[str]:
    try:
        return [cell.database_url(default_connection) for cell in cells]
    except CellUrlTemplateError as error:
        raise BadCellSelection(str(error)) from None


#: What reads one cell: a read-only connection and the hosts asked for (empty: all).
CellReader = Callable[[sa.Connection, Sequence[str]], T]


@dataclass(frozen=True)
class EachCell(Generic[T]):
    """What :func:`read_each_cell` read: per cell read, its mapping, URL and result (in
    ``cell_mappings`` order); the cells left out; and every host mapping (host ->
    cell uuid), which callers comparing the API database with the cells need."""

    read: tuple[tuple[CellMapping, str, T], ...]
    skipped: tuple[SkippedCell, ...]
    host_cells: Mapping[str, str]


def _read_one(cell: CellMapping, url: str, hosts: Sequence[str],
              read_on: CellReader[T]) -> T:
    what = f"cell {cell.label}"
    try:
        with read_only(url, what) as connection:
            return read_on(connection, hosts)
    except DatabaseUnreachable as error:
        raise UnreachableCell(str(error)) from error
    except reader.CellDataError as error:
        raise reader.CellDataError(f"{what}: {error}") from error


def read_each_cell(query: CellsQuery, read_on: CellReader[T]) -> EachCell[T]:
    """``read_on`` run on every selected cell (steps 1-4 of the module, one read-only
    transaction per cell); raises the errors above, or ``read_on``'s
    :class:`DatabaseReadError` for a cell that was reached but cannot be read."""
    with read_only(query.api_url, api.WHAT) as connection:
        mappings = api.cell_mappings_on(connection)
        mapped_hosts = api.host_mappings_on(connection)
    cells = select_cells(mappings, query.cells)
    read, skipped = [], []
    for cell, url in zip(cells, _urls(cells, query.default_connection), strict=True):
        try:
            read.append((cell, url, _read_one(cell, url, query.hosts, read_on)))
        except UnreachableCell as error:
            if not query.skip_unreachable:
                raise UnreachableCell(f"{error}; nothing written (--skip-unreachable-cells "
                                      "goes on without this cell)") from error
            skipped.append(SkippedCell(cell, str(error), mapped_hosts.get(cell.uuid, ())))
    host_cells = {host: uuid for uuid, hosts in mapped_hosts.items() for host in hosts}
    return EachCell(read=tuple(read), skipped=tuple(skipped), host_cells=host_cells)


def read_cells(query: CellsQuery) -> CellsSnapshot:
    """Every selected cell's hosts (see the module); raises the errors above, or the
    reader's :class:`DatabaseReadError` for a cell that was reached but cannot be read."""
    each = read_each_cell(
        query, lambda connection, hosts: reader.read_cell_on(connection, hosts, query.root_disks))
    read = [CellRead(cell, url, snapshot) for cell, url, snapshot in each.read]
    check_unique(read)
    return CellsSnapshot(cells=tuple(read), skipped=each.skipped)


def check_unique(cells: Sequence[CellRead]) -> None:
    """CellConflict when a service host, or a compute node uuid, is in two cells."""
    host_cells: dict[str, list[CellMapping]] = defaultdict(list)
    uuid_cells: dict[str, list[CellMapping]] = defaultdict(list)
    for read in cells:
        nodes: Sequence[ComputeNodeRecord] = read.snapshot.compute_nodes
        for host in sorted({node.host for node in nodes}):
            host_cells[host].append(read.cell)
        for node in nodes:
            if node.uuid:
                uuid_cells[node.uuid].append(read.cell)
    conflicts = [f"{what} {key} is in cell {found[0].label} and in cell {found[1].label}"
                 for what, index in (("host", host_cells), ("compute node", uuid_cells))
                 for key, found in sorted(index.items()) if len(found) > 1]
    if conflicts:
        more = len(conflicts) - SHOWN_CONFLICTS
        raise CellConflict("; ".join(conflicts[:SHOWN_CONFLICTS])
                           + (f"; and {more} more" if more > 0 else "")
                           + ": delete the stale compute node and service, or read one "
                           "cell with --cell")
