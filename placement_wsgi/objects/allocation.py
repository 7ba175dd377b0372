"""Allocations: the atomic write shared by PUT/POST /allocations and the
reshaper, and the reads by consumer and by provider.

Concurrency rests on two optimistic tokens read at the start of the
transaction and checked with conditional UPDATEs at its end:

* every provider in the write set has its generation bumped from the
  value read *before* its usage was read, so a writer that checked
  capacity against stale usage matches no row, and the whole transaction
  reruns with fresh data (server-side retry, invisible to the client);
* every consumer's generation is bumped (or the record deleted) from the
  value the checks used, so two writers racing on one consumer cannot both
  win; the loser gets 409 ``placement.concurrent_update``.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement_wsgi import errors
from placement_wsgi.capacity import capacity
from placement_wsgi.db import tables
from placement_wsgi.db.arrays import one_of
from placement_wsgi.db.database import Database, RetryTransaction, TransactionRetriesExhausted
from placement_wsgi.db.inserts import insert_rows
from placement_wsgi.objects import consumer as consumer_obj
from placement_wsgi.objects import resource_class as resource_class_obj
from placement_wsgi.objects.provider_lookup import bump_generations, get_provider

#: ``consumer_generation`` value meaning "not checked" (writes below 1.28).
UNCHECKED: Any = object()

_allocations = tables.allocations
_providers = tables.resource_providers
_inventories = tables.inventories
_classes = tables.resource_classes


@dataclasses.dataclass
class ConsumerAllocations:
    """One consumer's part of a write: its complete new set of allocations."""

    consumer_uuid: str
    project_id: str
    user_id: str
    allocations: dict[str, dict[str, int]]
    consumer_generation: int | None = UNCHECKED
    consumer_type: str | None = None


class ProviderGenerationRace(RetryTransaction):
    """A provider of the write set changed under us: rerun the transaction."""


@dataclasses.dataclass
class _Inventory:
    total: int
    reserved: int
    min_unit: int
    max_unit: int
    step_size: int
    allocation_ratio: float

    @property
    def write_capacity(self) -> float:
        return capacity(self.total, self.reserved, self.allocation_ratio)


def _ordered_unique(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))


@dataclasses.dataclass
class PreparedWrite:
    """An allocation write whose consumers and providers have been checked.

    :func:`prepare_allocations` does the checks that come first in every
    route's order (consumer generations, provider existence); the reshaper
    changes inventories between that and :meth:`apply`.
    """

    requests: list[ConsumerAllocations]
    consumers: list[consumer_obj.Consumer]
    provider_rows: dict[str, Any]
    unknown_class_prefix: str

    def apply(self, connection: Connection) -> set[int]:
        """The write's checks (after the body's schema), the write, and the generation bumps.

        Returns the ids of the providers whose generation was bumped; raises
        ProviderGenerationRace when the transaction must be rerun.
        """
        requests = self.requests
        provider_rows = self.provider_rows
        class_names = _ordered_unique([
            name for request in requests for resources in request.allocations.values()
            for name in resources])
        class_ids = resource_class_obj.require_classes(
            connection, class_names, self.unknown_class_prefix)
        consumer_uuids = [request.consumer_uuid for request in requests]
        existing = list(connection.execute(
            sa.select(_allocations.c.consumer_id, _allocations.c.resource_provider_id,
                      _allocations.c.resource_class_id, _allocations.c.used)
            .where(one_of(connection, _allocations.c.consumer_id, consumer_uuids))).all())
        held_by: dict[str, list] = defaultdict(list)
        for row in existing:
            held_by[row.consumer_id].append(row)
        new_provider_ids = {row.id for row in provider_rows.values()}
        write_set = set(new_provider_ids)
        for request in requests:
            if not request.allocations:
                write_set.update(
                    row.resource_provider_id for row in held_by[request.consumer_uuid])
        generations = _lock_generations(connection, write_set)
        if new_provider_ids:
            _check_new_allocations(connection, requests, provider_rows, class_ids,
                                   class_names, existing)
        self._replace_rows(connection, class_ids, replacing=bool(existing))
        if len(generations) != len(write_set) or not bump_generations(connection, generations):
            raise ProviderGenerationRace()
        pairs = list(zip(requests, self.consumers, strict=True))
        consumer_obj.bump_generations(
            connection, [consumer for request, consumer in pairs if request.allocations])
        consumer_obj.delete_consumers(connection, [
            consumer for request, consumer in pairs
            if not request.allocations and held_by[request.consumer_uuid]])
        return write_set

    def _replace_rows(self, connection: Connection, class_ids: dict[str, int],
                      replacing: bool) -> None:
        """Delete the consumers' allocations (when they hold any) and insert the new ones."""
        if replacing:
            connection.execute(_allocations.delete().where(one_of(
                connection, _allocations.c.consumer_id,
                [request.consumer_uuid for request in self.requests])))
        now = tables.utcnow()
        new_rows = [
            {"resource_provider_id": self.provider_rows[provider_uuid].id,
             "consumer_id": request.consumer_uuid,
             "resource_class_id": class_ids[name], "used": amount, "created_at": now}
            for request in self.requests
            for provider_uuid, resources in request.allocations.items()
            for name, amount in resources.items()
        ]
        insert_rows(connection, _allocations, new_rows)


def _lock_generations(connection: Connection, write_set: set[int]) -> dict[int, int]:
    """The generations of the providers in ``write_set``, their rows locked.

    Generations first, then usage. The rows are locked (in id order, so
    writers queue rather than deadlock) where the engine supports it; where
    it does not, or against a writer that does not lock, a commit in between
    makes our conditional generation update fail, never our capacity check.
    """
    if not write_set:
        return {}
    return {row.id: row.generation or 0 for row in connection.execute(
        sa.select(_providers.c.id, _providers.c.generation)
        .where(one_of(connection, _providers.c.id, sorted(write_set)))
        .order_by(_providers.c.id)
        .with_for_update()).all()}


def prepare_allocations(
    connection: Connection,
    requests: list[ConsumerAllocations],
    *,
    unknown_class_prefix: str,
    set_consumer_type: bool,
    incomplete_project: str,
    incomplete_user: str,
) -> PreparedWrite:
    """Consumers (owners, generation checks, records), then provider existence.

    A few set-based queries whatever the number of consumers.
    """
    projects = consumer_obj.ensure_projects(
        connection, [request.project_id or incomplete_project for request in requests])
    users = consumer_obj.ensure_users(
        connection, [request.user_id or incomplete_user for request in requests])
    types = consumer_obj.ensure_consumer_types(
        connection, [request.consumer_type for request in requests if request.consumer_type])
    found = consumer_obj.find_consumers(
        connection, [request.consumer_uuid for request in requests])
    consumers: list[consumer_obj.Consumer] = []
    for request in requests:
        project_id = projects[request.project_id or incomplete_project]
        user_id = users[request.user_id or incomplete_user]
        type_id = types[request.consumer_type] if request.consumer_type else None
        consumer = found.get(request.consumer_uuid)
        if request.consumer_generation is not UNCHECKED:
            consumer_obj.check_generation(consumer, request.consumer_generation)
        if consumer is None:
            consumer = consumer_obj.create_consumer(
                connection, request.consumer_uuid, project_id, user_id, type_id)
        else:
            consumer_obj.update_owner(connection, consumer, project_id, user_id, type_id,
                                      set_type=set_consumer_type)
        consumers.append(consumer)

    new_provider_uuids = _ordered_unique(
        [uuid for request in requests for uuid in request.allocations])
    provider_rows = {}
    if new_provider_uuids:
        provider_rows = {row.uuid: row for row in connection.execute(
            sa.select(_providers.c.id, _providers.c.uuid).where(
                one_of(connection, _providers.c.uuid, new_provider_uuids))).all()}
    for uuid in new_provider_uuids:
        if uuid not in provider_rows:
            raise errors.BadRequest(
                f"Allocation for resource provider '{uuid}' that does not exist.")
    return PreparedWrite(requests, consumers, provider_rows, unknown_class_prefix)


def apply_allocations(connection: Connection, requests: list[ConsumerAllocations],
                      **options: Any) -> set[int]:
    """prepare_allocations + apply, inside the caller's transaction."""
    return prepare_allocations(connection, requests, **options).apply(connection)


_UNABLE = "Unable to allocate inventory: "


def _inventories_of(connection: Connection, provider_ids: list[int],
                    class_ids: list[int]) -> dict[tuple[int, int], _Inventory]:
    """The inventories of those classes on those providers, by (provider id, class id)."""
    return {(row.resource_provider_id, row.resource_class_id): _Inventory(
                row.total, row.reserved, row.min_unit, row.max_unit, row.step_size,
                row.allocation_ratio)
            for row in connection.execute(
                sa.select(_inventories.c.resource_provider_id, _inventories.c.resource_class_id,
                          _inventories.c.total, _inventories.c.reserved,
                          _inventories.c.min_unit, _inventories.c.max_unit,
                          _inventories.c.step_size, _inventories.c.allocation_ratio)
                .where(one_of(connection, _inventories.c.resource_provider_id, provider_ids),
                       one_of(connection, _inventories.c.resource_class_id, class_ids))).all()}


def _usage_of(connection: Connection, provider_ids: list[int],
              class_ids: list[int]) -> dict[tuple[int, int], int]:
    """The usage of those classes on those providers, by (provider id, class id)."""
    return {(row.resource_provider_id, row.resource_class_id): int(row.used)
            for row in connection.execute(
                sa.select(_allocations.c.resource_provider_id, _allocations.c.resource_class_id,
                          sa.func.sum(_allocations.c.used).label("used"))
                .where(one_of(connection, _allocations.c.resource_provider_id, provider_ids),
                       one_of(connection, _allocations.c.resource_class_id, class_ids))
                .group_by(_allocations.c.resource_provider_id,
                          _allocations.c.resource_class_id)).all()}


def _check_new_allocations(
    connection: Connection,
    requests: list[ConsumerAllocations],
    provider_rows: dict[str, Any],
    class_ids: dict[str, int],
    class_names: list[str],
    existing: list,
) -> None:
    """The capacity and inventory-constraint checks, against fresh inventories and usage."""
    provider_ids = sorted({row.id for row in provider_rows.values()})
    class_id_list = list(class_ids.values())
    inventory = _inventories_of(connection, provider_ids, class_id_list)
    stocked = {provider_id for provider_id, _ in inventory}
    without_any = [uuid for uuid, row in provider_rows.items() if row.id not in stocked]
    if without_any:
        raise errors.Conflict(
            f"{_UNABLE}Inventory for '{', '.join(class_names)}' on resource provider "
            f"'{', '.join(without_any)}' invalid.")
    usage_before = _usage_of(connection, provider_ids, class_id_list)
    replaced: dict[tuple[int, int], int] = defaultdict(int)
    for row in existing:
        replaced[(row.resource_provider_id, row.resource_class_id)] += row.used

    requested: dict[tuple[int, int], int] = defaultdict(int)
    for request in requests:
        for provider_uuid, resources in request.allocations.items():
            provider_id = provider_rows[provider_uuid].id
            for name, amount in resources.items():
                key = (provider_id, class_ids[name])
                record = inventory.get(key)
                if record is None:
                    raise errors.Conflict(
                        f"{_UNABLE}Inventory for '{name}' on resource provider "
                        f"'{provider_uuid}' invalid.")
                if (amount < record.min_unit or amount > record.max_unit
                        or amount % record.step_size):
                    raise errors.Conflict(
                        f"{_UNABLE}Unable to create allocation for '{name}' on resource "
                        f"provider '{provider_uuid}'. The requested amount would violate "
                        "inventory constraints.")
                requested[key] += amount
                before = usage_before.get(key, 0)
                after = before - replaced.get(key, 0) + requested[key]
                if after > record.write_capacity and after > before:
                    raise errors.Conflict(
                        f"{_UNABLE}Unable to create allocation for '{name}' on resource "
                        f"provider '{provider_uuid}'. The requested amount would exceed "
                        "the capacity.")


def write_allocations(
    database: Database,
    requests: list[ConsumerAllocations],
    *,
    unknown_class_prefix: str,
    set_consumer_type: bool,
    incomplete_project: str,
    incomplete_user: str,
    retries: int = 10,
) -> None:
    """One transaction for every consumer of ``requests`` (PUT and POST).

    ``retries`` is ``[placement] allocation_conflict_retry_count``: how often
    a write that lost a race on a provider generation is rerun.
    """
    try:
        database.write_with_retries(
            retries, apply_allocations, requests, unknown_class_prefix=unknown_class_prefix,
            set_consumer_type=set_consumer_type, incomplete_project=incomplete_project,
            incomplete_user=incomplete_user)
    except TransactionRetriesExhausted as error:
        raise errors.ConcurrentUpdate(
            "Inventory and/or allocations changed while attempting to allocate: another "
            "process kept changing the same resource providers; try again.") from error


# -- reads ---------------------------------------------------------------------------


@dataclasses.dataclass
class ConsumerView:
    """GET /allocations/{consumer}."""

    allocations: dict[str, dict[str, Any]]
    project_id: str | None
    user_id: str | None
    generation: int | None
    consumer_type: str | None
    last_modified: datetime.datetime | None


def _consumer_allocations(*extra: sa.ColumnElement) -> sa.Select:
    return (sa.select(_allocations.c.consumer_id, _providers.c.uuid, _providers.c.generation,
                      _classes.c.name, _allocations.c.used, *extra)
            .join(_providers, _providers.c.id == _allocations.c.resource_provider_id)
            .join(_classes, _classes.c.id == _allocations.c.resource_class_id))


#: The reads of :func:`consumer_views` without their consumers, built once (about
#: 0.1 CPU-ms each; a Select is immutable, ``.where()`` returns a new one):
#: GET /allocations/{consumer} is the migration's most frequent request. The
#: allocations' times only where a Last-Modified is made of them: a datetime per
#: row is the dearest field to read (PyMySQL parses it in Python), and the trees'
#: reads go through hundreds of rows per node.
_CONSUMER_ALLOCATIONS = _consumer_allocations()
_CONSUMER_ALLOCATIONS_TIMED = _consumer_allocations(_allocations.c.created_at)
_CONSUMER_OWNERS = (
    sa.select(tables.consumers.c.uuid,
              tables.projects.c.external_id.label("project"),
              tables.users.c.external_id.label("user"),
              tables.consumers.c.generation,
              tables.consumer_types.c.name.label("consumer_type"))
    .select_from(tables.consumers
                 .join(tables.projects, tables.projects.c.id == tables.consumers.c.project_id)
                 .join(tables.users, tables.users.c.id == tables.consumers.c.user_id)
                 .outerjoin(tables.consumer_types,
                            tables.consumer_types.c.id == tables.consumers.c.consumer_type_id)))


def consumer_views(connection: Connection, consumers: sa.Select | Sequence[str],
                   last_modified: bool = False) -> dict[str, ConsumerView]:
    """consumer uuid -> its GET /allocations view, for the consumers ``consumers``
    names (uuids, or a SELECT of uuids); consumers without allocations are absent.
    Each view's ``last_modified`` is read only when ``last_modified`` asks (else None)."""
    read = _CONSUMER_ALLOCATIONS_TIMED if last_modified else _CONSUMER_ALLOCATIONS
    rows = connection.execute(read.where(
        one_of(connection, _allocations.c.consumer_id, consumers))).all()
    allocations: dict[str, dict[str, dict[str, Any]]] = {}
    # Plain tuples, one dict lookup per level: the tree reads go through
    # thousands of rows per batch.
    for consumer, provider, generation, name, used in (
            (row[:5] for row in rows) if last_modified else rows):
        held = allocations.get(consumer)
        if held is None:
            held = allocations[consumer] = {}
        entry = held.get(provider)
        if entry is None:
            entry = held[provider] = {"generation": generation or 0, "resources": {}}
        entry["resources"][name] = used
    latest: dict[str, datetime.datetime] = {}
    if last_modified:
        for row in rows:
            consumer, created_at = row[0], row[5]
            if created_at is not None and (consumer not in latest
                                           or created_at > latest[consumer]):
                latest[consumer] = created_at
    if not allocations:
        return {}
    owners = {row.uuid: row for row in connection.execute(_CONSUMER_OWNERS.where(
        one_of(connection, tables.consumers.c.uuid, consumers))).all()}
    views = {}
    for consumer, held in allocations.items():
        owner = owners.get(consumer)
        views[consumer] = ConsumerView(
            held,
            owner.project if owner else None,
            owner.user if owner else None,
            owner.generation if owner else None,
            (owner.consumer_type or consumer_obj.UNKNOWN_TYPE) if owner else None,
            latest.get(consumer),
        )
    return views


def get_consumer_allocations(database: Database, consumer_uuid: str) -> ConsumerView:
    def body(connection: Connection) -> ConsumerView:
        view = consumer_views(connection, [consumer_uuid], last_modified=True).get(
            consumer_uuid)
        return view or ConsumerView({}, None, None, None, None, None)

    return database.read(body)


@dataclasses.dataclass
class ProviderAllocationsView:
    """GET /resource_providers/{uuid}/allocations."""

    generation: int
    allocations: dict[str, dict[str, Any]]
    last_modified: datetime.datetime | None


def get_provider_allocations(database: Database, provider_uuid: str) -> ProviderAllocationsView:
    def body(connection: Connection) -> ProviderAllocationsView:
        provider = get_provider(connection, provider_uuid)
        rows = connection.execute(
            sa.select(_allocations.c.consumer_id, _classes.c.name, _allocations.c.used,
                      _allocations.c.created_at, tables.consumers.c.generation)
            .join(_classes, _classes.c.id == _allocations.c.resource_class_id)
            .outerjoin(tables.consumers,
                       tables.consumers.c.uuid == _allocations.c.consumer_id)
            .where(_allocations.c.resource_provider_id == provider.id)).all()
        allocations: dict[str, dict[str, Any]] = {}
        times = []
        for row in rows:
            entry = allocations.setdefault(
                row.consumer_id, {"resources": {}, "consumer_generation": row.generation})
            entry["resources"][row.name] = row.used
            if row.created_at is not None:
                times.append(row.created_at)
        return ProviderAllocationsView(provider.generation, allocations,
                                       max(times) if times else None)

    return database.read(body)


def delete_allocations_of(connection: Connection, consumer_uuid: str) -> None:
    """DELETE /allocations/{c} in the caller's transaction: allocations and consumer go;
    providers keep generations; 404 when the consumer holds nothing."""
    removed = connection.execute(_allocations.delete().where(
        _allocations.c.consumer_id == consumer_uuid)).rowcount
    if not removed:
        raise errors.NotFound(f"No allocations for consumer '{consumer_uuid}'")
    connection.execute(tables.consumers.delete().where(
        tables.consumers.c.uuid == consumer_uuid))


def delete_allocations_of_many(connection: Connection, consumer_uuids: Sequence[str]) -> None:
    """:func:`delete_allocations_of` for each consumer (one holding nothing is left as
    it is), in two statements."""
    if not consumer_uuids:
        return
    wanted = sorted(set(consumer_uuids))
    held = sorted(set(connection.execute(sa.select(_allocations.c.consumer_id).where(
        one_of(connection, _allocations.c.consumer_id, wanted))).scalars()))
    if held:
        connection.execute(_allocations.delete().where(
            one_of(connection, _allocations.c.consumer_id, held)))
        connection.execute(tables.consumers.delete().where(
            one_of(connection, tables.consumers.c.uuid, held)))


def delete_consumer_allocations(database: Database, consumer_uuid: str) -> None:
    """DELETE /allocations/{c} (:func:`delete_allocations_of`, its own transaction)."""
    database.write(delete_allocations_of, consumer_uuid)
