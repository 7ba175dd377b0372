"""Read flavors, host aggregates and cell mappings from nova's API database, read-only.

nova keeps both in the API database (``nova_api``): the scheduler takes the
flavor of a boot request from there and the host aggregates (with their
hosts and metadata) that the aggregate request filters and the aggregate
filters use; and the cell mappings (where each cell's database is) with the
host mappings (which compute host is in which cell). Like the cell reader
this opens the database through
:func:`nova_reshape.novadb.readonly.read_only` (a read-only transaction,
always rolled back) and reads each table with one set-based query.
"""

from __future__ import annotations

from collections import defaultdict

import sqlalchemy as sa

from nova_reshape.nova.aggregate import Aggregate
from nova_reshape.nova.cell import CellMapping
from nova_reshape.nova.flavor import Flavor
from nova_reshape.novadb import api_tables as t
from nova_reshape.novadb.readonly import DatabaseReadError, read_only
from nova_reshape.novadb.tables import read_columns

WHAT = "nova API database"


class FlavorNotFound(DatabaseReadError):
    """No flavor has the name (or flavor id) asked for."""


def read_flavor(url: str, name: str) -> Flavor:
    """The flavor named ``name`` (else whose flavorid is ``name``) with its extra specs."""
    with read_only(url, WHAT) as connection:
        return flavor_on(connection, name)


def flavor_on(connection: sa.Connection, name: str) -> Flavor:
    """As :func:`read_flavor`, on a read-only connection the caller opened."""
    rows = connection.execute(
        sa.select(*read_columns(t.flavors)).where(sa.or_(t.flavors.c.name == name,
                                          t.flavors.c.flavorid == name))).mappings().all()
    # nova looks a name up before an id; both are unique on their own
    row = next((r for r in rows if r["name"] == name), rows[0] if rows else None)
    if row is None:
        raise FlavorNotFound(f"{WHAT}: no flavor named {name!r}")
    specs = connection.execute(
        sa.select(t.flavor_extra_specs.c.key, t.flavor_extra_specs.c.value)
        .where(t.flavor_extra_specs.c.flavor_id == row["id"])).all()
    return _flavor(row, {key: value or "" for key, value in specs})


def flavors_on(connection: sa.Connection, public_only: bool = False) -> list[Flavor]:
    """Every flavor (``public_only``: those with ``is_public`` set) with its extra
    specs, ordered by id, in two set-based queries."""
    table, specs = t.flavors, t.flavor_extra_specs
    query = sa.select(*read_columns(table)).order_by(table.c.id)
    if public_only:
        query = query.where(table.c.is_public == sa.true())
    rows = connection.execute(query).mappings().all()
    wanted = {row["id"] for row in rows}
    extra: dict[int, dict[str, str]] = defaultdict(dict)
    for flavor_id, key, value in connection.execute(
            sa.select(specs.c.flavor_id, specs.c.key, specs.c.value)):
        if flavor_id in wanted:
            extra[flavor_id][key] = value or ""
    return [_flavor(row, extra[row["id"]]) for row in rows]


def _flavor(row: sa.RowMapping, extra_specs: dict[str, str]) -> Flavor:
    return Flavor(flavorid=str(row["flavorid"]), name=row["name"], vcpus=row["vcpus"],
                  memory_mb=row["memory_mb"], root_gb=row["root_gb"] or 0,
                  ephemeral_gb=row["ephemeral_gb"] or 0, swap=row["swap"] or 0,
                  extra_specs=extra_specs)


def read_aggregates(url: str) -> list[Aggregate]:
    """Every host aggregate with its hosts and metadata, ordered by id."""
    with read_only(url, WHAT) as connection:
        return aggregates_on(connection)


def aggregates_on(connection: sa.Connection) -> list[Aggregate]:
    """As :func:`read_aggregates`, on a read-only connection the caller opened."""
    hosts: dict[int, set[str]] = defaultdict(set)
    for aggregate_id, host in connection.execute(
            sa.select(t.aggregate_hosts.c.aggregate_id, t.aggregate_hosts.c.host)):
        hosts[aggregate_id].add(host)
    metadata: dict[int, dict[str, str]] = defaultdict(dict)
    for aggregate_id, key, value in connection.execute(
            sa.select(t.aggregate_metadata.c.aggregate_id, t.aggregate_metadata.c.key,
                      t.aggregate_metadata.c.value)):
        metadata[aggregate_id][key] = value or ""
    rows = connection.execute(sa.select(*read_columns(t.aggregates))
                              .order_by(t.aggregates.c.id)).mappings()
    return [Aggregate(name=row["name"] or "", hosts=frozenset(hosts[row["id"]]),
                      metadata=metadata[row["id"]], uuid=row["uuid"]) for row in rows]


def cell_mappings_on(connection: sa.Connection) -> list[CellMapping]:
    """Every cell mapping (cell0 included) in nova's order (by id), URLs as stored."""
    table = t.cell_mappings
    return [CellMapping(uuid=row["uuid"], name=row["name"],
                        database_connection=row["database_connection"] or "",
                        transport_url=row["transport_url"])
            for row in connection.execute(
                sa.select(*read_columns(table)).order_by(table.c.id)).mappings()]


def host_mappings_on(connection: sa.Connection) -> dict[str, tuple[str, ...]]:
    """Cell uuid -> the compute service hosts mapped to it (sorted)."""
    cells, hosts = t.cell_mappings, t.host_mappings
    mapped: dict[str, list[str]] = defaultdict(list)
    for uuid, host in connection.execute(
            sa.select(cells.c.uuid, hosts.c.host)
            .select_from(hosts.join(cells, hosts.c.cell_id == cells.c.id))):
        mapped[uuid].append(host)
    return {uuid: tuple(sorted(names)) for uuid, names in mapped.items()}


#: :func:`instance_cell_on`'s answer for an instance mapped to no cell yet.
UNSCHEDULED = ""


def instance_cell_on(connection: sa.Connection, instance_uuid: str) -> str | None:
    """The uuid of the cell ``instance_mappings`` maps the instance to; None when it
    has no mapping, :data:`UNSCHEDULED` when its mapping names no cell."""
    mappings, cells = t.instance_mappings, t.cell_mappings
    row = connection.execute(
        sa.select(cells.c.uuid).select_from(mappings.outerjoin(
            cells, mappings.c.cell_id == cells.c.id))
        .where(mappings.c.instance_uuid == instance_uuid)).first()
    if row is None:
        return None
    return row[0] or UNSCHEDULED
