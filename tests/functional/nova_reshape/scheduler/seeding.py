"""Set-based seeding of many compute nodes straight into a Placement database.

Hundreds of hosts through the API would cost two or three requests each; a
handful of bulk INSERTs build the same rows (providers with their root and
parent ids, inventories, traits, aggregates, custom classes and traits) in
one transaction, so the scheduler tests spend their time scheduling.
Seed before opening the app that serves the database.
"""

from __future__ import annotations

import uuid as uuid_mod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from placement_wsgi.db import tables
from placement_wsgi.db.database import Database
from placement_wsgi.db.standard import FIRST_CUSTOM_RESOURCE_CLASS_ID


@dataclass
class Provider:
    """A provider to create: inventories ``{RC: total or {total, reserved, ...}}``."""

    name: str
    uuid: str = field(default_factory=lambda: str(uuid_mod.uuid4()))
    inventories: Mapping[str, Any] = field(default_factory=dict)
    traits: Iterable[str] = ()
    aggregates: Iterable[str] = ()
    children: list[Provider] = field(default_factory=list)
    #: A compute node root reports OWNER_NOVA (nova 34); False for other owners.
    owner_nova: bool = True

    def all_traits(self, parent: Provider | None) -> set[str]:
        """Its traits, plus OWNER_NOVA on a compute node root as nova 34 reports it."""
        traits = set(self.traits)
        if parent is None and self.owner_nova and "MISC_SHARES_VIA_AGGREGATE" not in traits:
            traits.add("OWNER_NOVA")
        return traits


def _walk(providers: Iterable[Provider], parent: Provider | None = None
          ) -> Iterable[tuple[Provider, Provider | None]]:
    for provider in providers:
        yield provider, parent
        yield from _walk(provider.children, provider)


def seed(db_url: str, providers: list[Provider]) -> None:
    """Create ``providers`` (and their children) in one transaction."""
    database = Database(db_url)
    try:
        database.write(_seed, list(_walk(providers)))
    finally:
        database.dispose()


def _seed(connection: sa.Connection, pairs: list[tuple[Provider, Provider | None]]) -> None:
    rp, inv = tables.resource_providers, tables.inventories
    class_ids = _ensure_classes(connection, {rc for p, _ in pairs for rc in p.inventories})
    trait_ids = _ensure_traits(connection, {t for p, parent in pairs
                                            for t in p.all_traits(parent)})
    ids: dict[str, int] = {}
    depth = {p.uuid: 0 for p, parent in pairs if parent is None}
    for provider, parent in pairs:
        if parent is not None:
            depth[provider.uuid] = depth[parent.uuid] + 1
    for level in range(max(depth.values(), default=-1) + 1):
        rows = []
        for provider, parent in pairs:
            if depth[provider.uuid] != level:
                continue
            row: dict[str, Any] = {"uuid": provider.uuid, "name": provider.name,
                                   "generation": 0}
            if parent is not None:
                row["parent_provider_id"] = ids[parent.uuid]
                row["root_provider_id"] = _root_id(pairs, provider, ids)
            rows.append(row)
        if not rows:
            continue
        if level == 0:
            for row in rows:
                row.setdefault("parent_provider_id", None)
                row.setdefault("root_provider_id", None)
        connection.execute(rp.insert(), rows)
        uuids = [row["uuid"] for row in rows]
        for start in range(0, len(uuids), 500):
            chunk = uuids[start:start + 500]
            ids.update({row.uuid: row.id for row in connection.execute(
                sa.select(rp.c.uuid, rp.c.id).where(rp.c.uuid.in_(chunk)))})
        if level == 0:
            connection.execute(rp.update().where(rp.c.root_provider_id.is_(None)).values(
                root_provider_id=rp.c.id))
    inventory_rows = []
    for provider, _ in pairs:
        for rc, value in provider.inventories.items():
            record = {"total": value} if isinstance(value, int) else dict(value)
            total = record["total"]
            inventory_rows.append({
                "resource_provider_id": ids[provider.uuid], "resource_class_id": class_ids[rc],
                "total": total, "reserved": record.get("reserved", 0),
                "min_unit": record.get("min_unit", 1),
                "max_unit": record.get("max_unit", total),
                "step_size": record.get("step_size", 1),
                "allocation_ratio": record.get("allocation_ratio", 1.0)})
    if inventory_rows:
        connection.execute(inv.insert(), inventory_rows)
    trait_rows = [{"resource_provider_id": ids[p.uuid], "trait_id": trait_ids[t]}
                  for p, parent in pairs for t in p.all_traits(parent)]
    if trait_rows:
        connection.execute(tables.resource_provider_traits.insert(), trait_rows)
    aggregates = sorted({a for p, _ in pairs for a in p.aggregates})
    if aggregates:
        connection.execute(tables.placement_aggregates.insert(),
                           [{"uuid": a} for a in aggregates])
        agg_ids = {row.uuid: row.id for row in connection.execute(
            sa.select(tables.placement_aggregates.c.uuid, tables.placement_aggregates.c.id)
            .where(tables.placement_aggregates.c.uuid.in_(aggregates)))}
        connection.execute(tables.resource_provider_aggregates.insert(), [
            {"resource_provider_id": ids[p.uuid], "aggregate_id": agg_ids[a]}
            for p, _ in pairs for a in set(p.aggregates)])


def _root_id(pairs: list[tuple[Provider, Provider | None]], provider: Provider,
             ids: Mapping[str, int]) -> int:
    parents = {p.uuid: parent for p, parent in pairs}
    node = provider
    while parents[node.uuid] is not None:
        node = parents[node.uuid]
    return ids[node.uuid]


def _ensure_classes(connection: sa.Connection, names: set[str]) -> dict[str, int]:
    table = tables.resource_classes
    known = {row.name: row.id for row in connection.execute(sa.select(table.c.name, table.c.id))}
    next_id = max([FIRST_CUSTOM_RESOURCE_CLASS_ID - 1, *known.values()]) + 1
    new = []
    for name in sorted(names - set(known)):
        assert name.startswith("CUSTOM_"), name
        new.append({"id": next_id, "name": name})
        known[name] = next_id
        next_id += 1
    if new:
        connection.execute(table.insert(), new)
    return known


def _ensure_traits(connection: sa.Connection, names: set[str]) -> dict[str, int]:
    table = tables.traits
    known = {row.name: row.id for row in connection.execute(sa.select(table.c.name, table.c.id))}
    missing = sorted(names - set(known))
    if missing:
        assert all(name.startswith("CUSTOM_") for name in missing), missing
        connection.execute(table.insert(), [{"name": name} for name in missing])
        known = {row.name: row.id
                 for row in connection.execute(sa.select(table.c.name, table.c.id))}
    return known


def compute_node(name: str, vcpu: int = 16, memory_mb: int = 32768, disk_gb: int = 500,
                 cpu_ratio: float = 1.0, **extra: Any) -> Provider:
    """A compute node root with VCPU/MEMORY_MB/DISK_GB inventory."""
    inventories: dict[str, Any] = {"VCPU": {"total": vcpu, "allocation_ratio": cpu_ratio},
                                   "MEMORY_MB": memory_mb, "DISK_GB": disk_gb}
    inventories.update(extra.pop("inventories", {}))
    return Provider(name=name, inventories=inventories, **extra)
