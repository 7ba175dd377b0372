"""Who may hold allocations on a compute node, read set-based from one nova cell.

Checking Placement against nova (``placement audit``) and mirroring host
aggregates (``placement sync_aggregates``) need far less than a
:class:`~nova_reshape.novadb.records.CellSnapshot`: the compute nodes
(uuid, host, node name), and which consumers nova still accounts on each
node. Reading the whole snapshot parses every instance's flavor and
topology; these readers select three columns per table instead, one
statement each, so a cell of 100,000 instances is read in about a second.

Nova's rules, as its ``nova-manage placement audit`` applies them per node:

* an instance belongs to a node when it is live (``deleted = 0``) and its
  ``host`` and ``node`` are the node's;
* a migration belongs to a node when it is live, not over (its status is
  not one of :data:`~.tables.FINISHED_MIGRATION_STATUSES`; ``finished``, a
  resize awaiting confirmation, is still in progress) and its source or
  its destination (host and node) is the node.

Only live compute nodes are read. Nothing is written.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import sqlalchemy as sa

from nova_reshape.novadb import tables

#: (host, hypervisor_hostname): how instances and migrations name their node.
NodeKey = tuple[str, str]


@dataclass(frozen=True)
class NodeRow:
    """A live ``compute_nodes`` row, as the consistency commands need it."""

    uuid: str | None
    host: str
    hypervisor_hostname: str

    @property
    def key(self) -> NodeKey:
        return (self.host, self.hypervisor_hostname)


@dataclass(frozen=True)
class CellHolders:
    """One cell's compute nodes and, per node key, the consumer uuids nova accounts
    there: its instances and its in-progress migrations."""

    nodes: tuple[NodeRow, ...]
    holders: Mapping[NodeKey, frozenset[str]]

    def holders_of(self, node: NodeRow) -> frozenset[str]:
        return self.holders.get(node.key, frozenset())


def read_nodes_on(connection: sa.Connection, hosts: Sequence[str] = ()) -> tuple[NodeRow, ...]:
    """The live compute nodes of the cell (of ``hosts`` only, when given), by id."""
    table = tables.compute_nodes
    query = (sa.select(table.c.uuid, table.c.host, table.c.hypervisor_hostname)
             .where(table.c.deleted == 0).order_by(table.c.id))
    if hosts:
        query = query.where(table.c.host.in_(sorted(set(hosts))))
    return tuple(NodeRow(uuid, host or "", node or "")
                 for uuid, host, node in connection.execute(query))


def read_holders_on(connection: sa.Connection, hosts: Sequence[str] = ()) -> CellHolders:
    """The cell's nodes and who nova accounts on each (see the module), in three
    statements on the caller's read-only connection."""
    found: dict[NodeKey, set[str]] = defaultdict(set)
    instances = tables.instances
    query = sa.select(instances.c.uuid, instances.c.host, instances.c.node).where(
        instances.c.deleted == 0, instances.c.host.is_not(None))
    if hosts:
        query = query.where(instances.c.host.in_(sorted(set(hosts))))
    for uuid, host, node in connection.execute(query):
        found[(host, node)].add(uuid)
    migrations = tables.migrations
    query = sa.select(migrations.c.uuid, migrations.c.source_compute,
                      migrations.c.source_node, migrations.c.dest_compute,
                      migrations.c.dest_node).where(
        migrations.c.deleted == 0, migrations.c.uuid.is_not(None),
        migrations.c.status.not_in(tables.FINISHED_MIGRATION_STATUSES))
    for uuid, source, source_node, dest, dest_node in connection.execute(query):
        found[(source, source_node)].add(uuid)
        found[(dest, dest_node)].add(uuid)
    return CellHolders(nodes=read_nodes_on(connection, hosts),
                       holders={key: frozenset(uuids) for key, uuids in found.items()})
