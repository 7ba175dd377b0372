"""The inputs of the commands that compare nova's databases with Placement.

``placement audit`` and ``placement sync_aggregates`` read every cell that
nova's API database maps (``--nova-api-database``, else nova.conf's
``[api_database] connection`` from ``--nova-config``, templates filled from
its ``[database] connection``; ``--cell`` for some of them) and reach
Placement as the migration does (``--config-file``, nova.conf's
``[placement_database]``, or ``--placement-url``). :func:`add_arguments`
declares them, :meth:`CloudInputs.from_args` makes them one frozen record,
and :func:`read_cells` / :func:`opener` read and open them, every problem a
:class:`~nova_reshape.cmd.refusal.Refusal`.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
from collections.abc import Iterator
from typing import Any, Generic, TypeVar

from nova_reshape.cmd import nova_cells, placement_access, placement_rights
from nova_reshape.cmd.refusal import ExitClass, Refusal, database_refusal
from nova_reshape.cmd.request import (
    NOVA_CONFIG_HELP,
    NovaDatabase,
    PlacementAccess,
    add_placement_arguments,
)
from nova_reshape.compute import parallel
from nova_reshape.nova.aggregate import Aggregate
from nova_reshape.nova.conf.per_host import NovaConfigPaths
from nova_reshape.novadb import api, cells
from nova_reshape.novadb.readonly import DatabaseReadError

T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class CloudInputs:
    """Where nova's databases and Placement are, as the operator named them."""

    placement: PlacementAccess
    api_url: str | None = None
    cells: tuple[str, ...] = ()
    nova_configs: tuple[str, ...] = ()

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> CloudInputs:
        return cls(placement=PlacementAccess(
            config_files=(*args.config_files, *args.sub_config_files),
            url=args.placement_url, token=args.token, headers=tuple(args.headers)),
            api_url=args.nova_api_database, cells=tuple(args.cells),
            nova_configs=tuple(args.nova_configs))

    @property
    def paths(self) -> NovaConfigPaths:
        return NovaConfigPaths(self.nova_configs)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the inputs :class:`CloudInputs` holds."""
    add_placement_arguments(parser)
    parser.add_argument("--nova-config", action="append", metavar="PATH",
                        dest="nova_configs", default=[],
                        help=NOVA_CONFIG_HELP + ": its [api_database], [database] and "
                        "[placement_database] connections")
    parser.add_argument("--nova-api-database", metavar="URL",
                        help="nova's API database (read only; default: [api_database] "
                        "connection of --nova-config)")
    parser.add_argument("--cell", action="append", metavar="NAME|UUID", dest="cells",
                        default=[], help="only this cell of the API database; repeatable")


def opener(inputs: CloudInputs) -> parallel.Opener:
    """What opens Placement (checked now, before nova is read)."""
    return placement_access.placement_opener(inputs.placement, inputs.paths)


@dataclasses.dataclass(frozen=True)
class Prepared(Generic[T]):
    """A command's inputs, checked: Placement's opener and what the cells hold."""

    inputs: CloudInputs
    opener: parallel.Opener
    cells: cells.EachCell[T]

    @contextlib.contextmanager
    def placement(self) -> Iterator[Any]:
        """Placement opened; over ``--placement-url`` the token's read right probed
        first (a refusal naming the rule it lacks)."""
        with self.opener() as placement:
            if self.inputs.placement.url:
                placement_rights.check_rights(placement, self.inputs.placement.url,
                                              dry_run=True)
            yield placement


def prepare(args: argparse.Namespace, read_on: cells.CellReader[T]) -> Prepared[T]:
    """The inputs of ``args``: Placement checked first, then ``read_on`` run on every
    selected cell."""
    inputs = CloudInputs.from_args(args)
    open_placement = opener(inputs)
    return Prepared(inputs, open_placement, read_cells(inputs, read_on))


def read_cells(inputs: CloudInputs, read_on: cells.CellReader[T]) -> cells.EachCell[T]:
    """``read_on`` run on every selected cell; a refusal when it cannot be."""
    source = NovaDatabase(api_url=inputs.api_url, cells=inputs.cells)
    query = nova_cells.cells_query(source, nova_cells.nova_connections(inputs.paths))
    assert query is not None  # no --nova-database here: always the API database
    try:
        return cells.read_each_cell(query, read_on)
    except DatabaseReadError as error:
        raise database_refusal(error) from error


def read_aggregates(inputs: CloudInputs) -> list[Aggregate]:
    """nova's host aggregates (API database), by id; a refusal when unreadable."""
    url = inputs.api_url or nova_cells.nova_connections(inputs.paths).api_database
    if not url:
        raise Refusal(ExitClass.BAD_INPUT, nova_cells.NO_DATABASE)
    try:
        return api.read_aggregates(url)
    except DatabaseReadError as error:
        raise database_refusal(error) from error
