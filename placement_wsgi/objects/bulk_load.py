"""Whole provider trees and their consumers loaded into an EMPTY Placement database.

A Placement database rebuilt from nothing (``nova-reshape-manage placement
rebuild``) receives, through the API, tens of requests per compute node:
each its own transaction, each re-reading what the previous one wrote. When
the caller already knows every tree's final state and the database holds no
provider and no consumer, the same rows can be written set-based:
:func:`load_trees` takes the trees a batch at a time and writes each batch
in ONE transaction with a handful of multi-row INSERTs (providers,
inventories, traits, aggregates, projects, users, consumers, allocations),
whatever the number of nodes in it (``COPY`` on PostgreSQL).

What the rows hold, against the API path:

* providers, inventories (records completed as ``PUT .../inventories``
  completes them), traits, aggregate memberships, consumers, their
  projects and users and allocations: the same values;
* the custom traits and resource classes the trees use are created first,
  as ``PUT /traits/{name}`` and ``PUT /resource_classes/{name}`` do (same
  functions, same validation); standard ones must exist (a synced database);
* provider ids are given explicitly, in the order the trees list their
  providers (root first, then the caller's creation order), so "by id"
  orders are the API path's; PostgreSQL's sequence is then moved past them;
* generations: every provider's is :data:`PROVIDER_GENERATION` and every
  consumer's :data:`CONSUMER_GENERATION` (a consumer created by one
  allocation write, as heal writes it). A provider's generation through the
  API would count its writes (a few per provider); nothing reads a
  generation but to send it back with its next write, so no client can
  tell the difference;
* the consumer type is left unset (as an allocation write before 1.38);
* every row's ``created_at`` is the batch's time and ``updated_at`` is left
  empty (through the API the rows a later request touched have one).

The caller checks beforehand what Placement's write would check (capacity
of the allocations, tree shape): this module only writes. ``record``, when
given, is called once per batch with the batch's connection and the ids of
its roots, after the batch's rows: what it writes commits with them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement_wsgi.db import tables
from placement_wsgi.db.database import Database
from placement_wsgi.objects import aggregate as aggregate_obj
from placement_wsgi.objects import consumer as consumer_obj
from placement_wsgi.objects import resource_class as rc_obj
from placement_wsgi.objects import trait as trait_obj
from placement_wsgi.objects.inventory_record import Inventory
from placement_wsgi.objects.tree_change import ensure_custom_names

#: The generation every loaded provider gets (see the module docstring).
PROVIDER_GENERATION = 1
#: A consumer created by one allocation write: created at 0, bumped once.
CONSUMER_GENERATION = 1
#: Trees per transaction by default.
DEFAULT_BATCH = 1000
#: Rows per INSERT statement.
ROWS_PER_STATEMENT = 5000


@dataclasses.dataclass(frozen=True)
class LoadedProvider:
    """One provider of a tree: ``parent`` None for the root."""

    uuid: str
    name: str
    parent: str | None
    inventory: Mapping[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)
    traits: Sequence[str] = ()
    aggregates: Sequence[str] = ()


@dataclasses.dataclass(frozen=True)
class LoadedConsumer:
    """A consumer and its complete allocations (provider uuid -> class -> amount)."""

    uuid: str
    project_id: str
    user_id: str
    allocations: Mapping[str, Mapping[str, int]]


@dataclasses.dataclass(frozen=True)
class LoadedTree:
    """One root's tree (root first, parents before children, in creation order) and
    the consumers whose allocations are in it (and nowhere else)."""

    providers: Sequence[LoadedProvider]
    consumers: Sequence[LoadedConsumer] = ()

    @property
    def root(self) -> str:
        return self.providers[0].uuid


#: Called inside each batch's transaction: (connection, the batch's root ids).
Record = Callable[[Connection, list[int]], None]


def _insert(connection: Connection, table: sa.Table, rows: list[dict[str, Any]]) -> None:
    """Insert ``rows`` (dicts with the same keys) in the connection's transaction: on
    PostgreSQL with one ``COPY ... FROM STDIN`` (an INSERT per row costs the server a
    statement each, even pipelined), elsewhere as the driver's executemany (PyMySQL
    sends multi-row INSERTs; SQLite is in-process)."""
    if not rows:
        return
    if connection.dialect.name == "postgresql":
        columns = list(rows[0])
        statement = f"COPY {table.name} ({', '.join(columns)}) FROM STDIN"
        with connection.connection.driver_connection.cursor() as cursor, \
                cursor.copy(statement) as copy:
            for row in rows:
                copy.write_row([row[column] for column in columns])
        return
    for start in range(0, len(rows), ROWS_PER_STATEMENT):
        connection.execute(table.insert(), rows[start:start + ROWS_PER_STATEMENT])


def _next_provider_id(connection: Connection) -> int:
    return int(connection.execute(sa.select(sa.func.coalesce(
        sa.func.max(tables.resource_providers.c.id), 0))).scalar_one()) + 1


def _advance_provider_sequence(connection: Connection) -> None:
    """PostgreSQL: the providers' id sequence continues after the explicit ids (MySQL
    and SQLite move theirs on explicit ids)."""
    if connection.dialect.name != "postgresql":
        return
    sequence = connection.execute(sa.text(
        "SELECT pg_get_serial_sequence('resource_providers', 'id')")).scalar()
    if sequence:
        connection.execute(sa.text(
            "SELECT setval(:s, (SELECT COALESCE(MAX(id), 0) + 1 FROM resource_providers), "
            "false)"), {"s": sequence})


def _names(trees: Iterable[LoadedTree]) -> tuple[set[str], set[str], set[str]]:
    """Traits, resource classes and aggregates the trees use."""
    traits, classes, aggregates = set(), set(), set()
    for tree in trees:
        for provider in tree.providers:
            traits.update(provider.traits)
            classes.update(provider.inventory)
            aggregates.update(provider.aggregates)
        for consumer in tree.consumers:
            for resources in consumer.allocations.values():
                classes.update(resources)
    return traits, classes, aggregates


def _write_batch(connection: Connection, trees: Sequence[LoadedTree], ids: dict[str, int],
                 record: Record | None) -> None:
    now = tables.utcnow()
    traits, classes, aggregates = _names(trees)
    trait_ids = trait_obj.require_traits(connection, traits)
    class_ids = rc_obj.require_classes(connection, sorted(classes), "")
    aggregate_ids = aggregate_obj.aggregate_ids(connection, aggregates, create=True)
    first = _next_provider_id(connection)
    providers = [provider for tree in trees for provider in tree.providers]
    for offset, provider in enumerate(providers):
        ids[provider.uuid] = first + offset
    rows, inventories, with_traits, memberships = [], [], [], []
    for tree in trees:
        root = ids[tree.root]
        for provider in tree.providers:
            rid = ids[provider.uuid]
            rows.append({"id": rid, "uuid": provider.uuid, "name": provider.name,
                         "generation": PROVIDER_GENERATION, "root_provider_id": root,
                         "parent_provider_id": None if provider.parent is None
                         else ids[provider.parent], "created_at": now})
            for rc, body in provider.inventory.items():
                record_of = Inventory.from_body(rc, body)
                inventories.append({"resource_provider_id": rid,
                                    "resource_class_id": class_ids[rc], "created_at": now,
                                    **{key: getattr(record_of, key) for key in (
                                        "total", "reserved", "min_unit", "max_unit",
                                        "step_size", "allocation_ratio")}})
            with_traits += [{"resource_provider_id": rid, "trait_id": trait_ids[name],
                             "created_at": now} for name in sorted(set(provider.traits))]
            memberships += [{"resource_provider_id": rid, "aggregate_id": aggregate_ids[uuid],
                             "created_at": now} for uuid in sorted(set(provider.aggregates))]
    _insert(connection, tables.resource_providers, rows)
    _advance_provider_sequence(connection)
    _insert(connection, tables.inventories, inventories)
    _insert(connection, tables.resource_provider_traits, with_traits)
    _insert(connection, tables.resource_provider_aggregates, memberships)
    _write_consumers(connection, [consumer for tree in trees for consumer in tree.consumers],
                     ids, class_ids, now)
    if record is not None:
        record(connection, [ids[tree.root] for tree in trees])


def _write_consumers(connection: Connection, consumers: Sequence[LoadedConsumer],
                     ids: Mapping[str, int], class_ids: Mapping[str, int], now: Any) -> None:
    if not consumers:
        return
    projects = consumer_obj.ensure_projects(connection, [c.project_id for c in consumers])
    users = consumer_obj.ensure_users(connection, [c.user_id for c in consumers])
    _insert(connection, tables.consumers, [
        {"uuid": consumer.uuid, "project_id": projects[consumer.project_id],
         "user_id": users[consumer.user_id], "generation": CONSUMER_GENERATION,
         "consumer_type_id": None, "created_at": now} for consumer in consumers])
    _insert(connection, tables.allocations, [
        {"resource_provider_id": ids[provider], "consumer_id": consumer.uuid,
         "resource_class_id": class_ids[rc], "used": amount, "created_at": now}
        for consumer in consumers for provider, resources in consumer.allocations.items()
        for rc, amount in resources.items()])


def load_trees(database: Database, trees: Iterable[LoadedTree], *,
               batch_size: int = DEFAULT_BATCH, record: Record | None = None,
               done: Callable[[int], None] | None = None) -> int:
    """Write ``trees`` (see the module docstring), ``batch_size`` trees per transaction;
    the number written. ``done(count)`` after each batch. Raises the API's errors
    (``errors.BadRequest`` for an invalid custom name or an unknown standard class
    or trait) and the database's; the batches before a failure stay written."""
    pending = list(trees)
    custom_traits, custom_classes, _ = _names(pending)
    database.write(ensure_custom_names,
                   sorted(name for name in custom_traits
                          if name.startswith(trait_obj.CUSTOM_PREFIX)),
                   sorted(name for name in custom_classes
                          if name.startswith(trait_obj.CUSTOM_PREFIX)))
    ids: dict[str, int] = {}
    count = 0
    for start in range(0, len(pending), batch_size):
        batch = pending[start:start + batch_size]
        database.write(_write_batch, batch, ids, record)
        count += len(batch)
        if done is not None:
            done(count)
    return count
