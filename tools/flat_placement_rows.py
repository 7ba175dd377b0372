"""Set-based inserts of flat compute hosts into the Placement tables.

The table-level half of ``tools/generate_deployment.py --bulk``: a host's
flat Placement data as the API path would send it (:class:`FlatRows`, by
names and uuids), and :func:`insert_flat_rows`, which writes many hosts
with a few multi-row statements, leaving the rows the API writes leave.
Offline tool for benchmarks and tests, not a Placement writer: it takes no
locks and checks no capacity, so it is for new, empty deployments only.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement_wsgi.db import tables
from placement_wsgi.objects import consumer as consumer_obj
from placement_wsgi.objects import resource_class, trait
from placement_wsgi.objects.inventory_record import Inventory


class ExistingProviders(ValueError):
    """Some of the hosts are in the database already: the bulk path writes new ones only."""

    def __init__(self, names: list[str]) -> None:
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        super().__init__(f"resource providers already exist: {shown}; the bulk path only "
                         "writes hosts that are not in the database yet")
        self.names = names


class FlatRows(NamedTuple):
    """One host's Placement data in the flat shape, by name (before ids are known)."""

    uuid: str
    name: str
    #: resource class -> inventory record as PUT .../inventories takes it.
    inventories: dict[str, dict[str, Any]]
    traits: list[str]
    #: consumer uuid -> POST /allocations body entry (flat_allocations).
    allocations: dict[str, Any]

    @property
    def generation(self) -> int:
        """The provider generation the API path leaves: each of its writes that changes
        the provider (inventory PUT, traits PUT, allocation POST) bumps it once."""
        return sum(1 for written in (self.inventories, self.traits, self.allocations)
                   if written)


def insert_flat_rows(connection: Connection, hosts: list[FlatRows]) -> None:
    """Insert ``hosts`` (new providers) with a few set-based statements in one transaction.

    The rows are the ones the API path's writes leave: a root provider
    (its own root, no parent) at :attr:`FlatRows.generation`; inventory
    records with the API's defaults filled in; trait links; projects and
    users created on first use; each consumer created by its allocation
    write at generation 0 and bumped once by it (so generation 1, no
    consumer type); one allocation row per consumer, provider and class.
    Class and trait ids come from the tables (unknown names are an error);
    a host whose uuid or name is taken raises :class:`ExistingProviders`.
    """
    now = tables.utcnow()
    providers = tables.resource_providers
    uuids = [host.uuid for host in hosts]
    taken = connection.execute(sa.select(providers.c.name).where(sa.or_(
        providers.c.uuid.in_(uuids), providers.c.name.in_([host.name for host in hosts])))
        .order_by(providers.c.name)).scalars().all()
    if taken:
        raise ExistingProviders(list(taken))
    connection.execute(providers.insert(), [
        {"uuid": host.uuid, "name": host.name, "generation": host.generation,
         "created_at": now, "updated_at": now if host.generation else None}
        for host in hosts])
    connection.execute(providers.update().where(providers.c.uuid.in_(uuids)).values(
        root_provider_id=providers.c.id, updated_at=providers.c.updated_at))
    ids = dict(connection.execute(
        sa.select(providers.c.uuid, providers.c.id).where(providers.c.uuid.in_(uuids))).all())
    classes = resource_class.require_classes(connection, sorted(
        {name for host in hosts for name in host.inventories}))
    connection.execute(tables.inventories.insert(), [
        {"resource_provider_id": ids[host.uuid], "resource_class_id": classes[name],
         "created_at": now, **Inventory.from_body(name, record).as_dict()}
        for host in hosts for name, record in host.inventories.items()])
    trait_ids = trait.require_traits(connection, {name for host in hosts for name in host.traits})
    links = [{"resource_provider_id": ids[host.uuid], "trait_id": trait_ids[name],
              "created_at": now} for host in hosts for name in host.traits]
    if links:
        connection.execute(tables.resource_provider_traits.insert(), links)
    bodies = {consumer: body for host in hosts for consumer, body in host.allocations.items()}
    if not bodies:
        return
    projects = consumer_obj.ensure_projects(
        connection, [body["project_id"] for body in bodies.values()])
    users = consumer_obj.ensure_users(connection, [body["user_id"] for body in bodies.values()])
    connection.execute(tables.consumers.insert(), [
        {"uuid": consumer, "project_id": projects[body["project_id"]],
         "user_id": users[body["user_id"]], "generation": 1, "consumer_type_id": None,
         "created_at": now, "updated_at": now}
        for consumer, body in bodies.items()])
    used_classes = resource_class.require_classes(connection, sorted(
        {name for body in bodies.values() for held in body["allocations"].values()
         for name in held["resources"]}))
    connection.execute(tables.allocations.insert(), [
        {"resource_provider_id": ids[provider], "consumer_id": consumer,
         "resource_class_id": used_classes[name], "used": used, "created_at": now}
        for consumer, body in bodies.items()
        for provider, held in body["allocations"].items()
        for name, used in held["resources"].items()])
