"""Inventories: what each provider offers, per resource class.

Two layers live here:

* connection-level building blocks that any writer of inventory reuses
  inside its own transaction (the reshaper and allocation code call these):
  :func:`get_inventories`, :func:`check_capacity`, :func:`classes_in_use`,
  :func:`replace_inventories`;
* one function per inventory route, each a complete transaction that
  raises the route's errors in the order of placement-api-providers.md §7.

Every write bumps the provider generation *before* touching inventory rows:
the conditional UPDATE of the provider row is the lock that serialises
concurrent writers of one provider (the loser matches no row), so the
checks that follow (in use, already present) see a stable provider.
Routes without a client-supplied generation rerun their transaction on such
a race; the PUT routes rerun too and then fail the client's generation check.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement_wsgi import errors
from placement_wsgi.db import tables
from placement_wsgi.db.database import Database, RetryTransaction
from placement_wsgi.objects import resource_class as rc_obj
from placement_wsgi.objects.provider_lookup import (
    ResourceProvider,
    bump_generation,
    check_generation,
    get_provider,
)

MAX_INT = 2147483647

_inventories = tables.inventories
_allocations = tables.allocations
_classes = tables.resource_classes

#: Keys of an inventory record as the API shows it, in display order.
OUTPUT_FIELDS = ("total", "reserved", "min_unit", "max_unit", "step_size", "allocation_ratio")


@dataclasses.dataclass(frozen=True)
class Inventory:
    """One (provider, resource class) inventory record.

    ``allocation_ratio`` keeps the type it was given (a write response echoes
    the submitted ``2`` as ``2``); read back from storage it is a float.
    """

    resource_class: str
    total: int
    reserved: int = 0
    min_unit: int = 1
    max_unit: int = MAX_INT
    step_size: int = 1
    allocation_ratio: float = 1.0
    created_at: datetime.datetime | None = None
    updated_at: datetime.datetime | None = None

    @property
    def capacity(self) -> int:
        """Reported capacity: ``int((total - reserved) * allocation_ratio)``."""
        return int((self.total - self.reserved) * self.allocation_ratio)

    @property
    def modified_at(self) -> datetime.datetime | None:
        return self.updated_at or self.created_at

    def as_dict(self) -> dict[str, Any]:
        """The record's API representation (without generation)."""
        return {field: getattr(self, field) for field in OUTPUT_FIELDS}

    @classmethod
    def from_body(cls, resource_class: str, data: Mapping[str, Any]) -> Inventory:
        """A record from a (schema-valid) request body; defaults fill the gaps.

        Keys other than the record fields (``resource_provider_generation``,
        ``resource_class``) are ignored.
        """
        return cls(resource_class, **{key: data[key] for key in OUTPUT_FIELDS if key in data})


@dataclasses.dataclass(frozen=True)
class ProviderInventories:
    """A provider's generation and its inventory records (by class id order)."""

    generation: int
    inventories: list[Inventory]

    @property
    def modified_at(self) -> datetime.datetime | None:
        """Newest record change, or None when there are no records."""
        times = [record.modified_at for record in self.inventories]
        present = [when for when in times if when is not None]
        return max(present) if present else None


@dataclasses.dataclass(frozen=True)
class ProviderInventory:
    """One record plus the provider's generation (single-class routes)."""

    generation: int
    inventory: Inventory


# -- errors whose text other routes wrap in their own prefix ----------------------------


class ResourceClassNotFound(errors.BadRequest):
    """``No such resource class <name>.``; callers add their route's prefix."""

    def __init__(self, name: str) -> None:
        super().__init__(rc_obj.no_such_class(name))
        self.name = name


class InvalidInventoryCapacity(errors.BadRequest):
    """A record's capacity is below what the microversion allows."""


class InventoryInUse(errors.InventoryInUse):
    """Classes that would be removed still have allocations."""

    def __init__(self, class_names: Sequence[str], provider_uuid: str) -> None:
        super().__init__(
            f"Inventory for '{', '.join(class_names)}' on resource provider "
            f"'{provider_uuid}' in use.")
        self.class_names = list(class_names)
        self.provider_uuid = provider_uuid


# -- connection-level building blocks -------------------------------------------------


def _record_from_row(row: sa.Row) -> Inventory:
    return Inventory(
        resource_class=row.resource_class, total=row.total, reserved=row.reserved,
        min_unit=row.min_unit, max_unit=row.max_unit, step_size=row.step_size,
        allocation_ratio=float(row.allocation_ratio),
        created_at=row.created_at, updated_at=row.updated_at)


def _inventory_select() -> sa.Select:
    return (
        sa.select(_inventories, _classes.c.name.label("resource_class"))
        .join(_classes, _classes.c.id == _inventories.c.resource_class_id))


def get_inventories(connection: Connection, provider_id: int) -> list[Inventory]:
    """Every inventory record of the provider, ordered by resource class id."""
    rows = connection.execute(
        _inventory_select()
        .where(_inventories.c.resource_provider_id == provider_id)
        .order_by(_inventories.c.resource_class_id))
    return [_record_from_row(row) for row in rows]


def inventories_by_provider(connection: Connection,
                            providers: sa.Select | Sequence[int]) -> dict[int, list[Inventory]]:
    """provider id -> its inventory records (by class id), for the providers
    ``providers`` names (ids, or a SELECT of ids); providers without any are absent."""
    rows = connection.execute(
        _inventory_select()
        .where(_inventories.c.resource_provider_id.in_(providers))
        .order_by(_inventories.c.resource_provider_id, _inventories.c.resource_class_id))
    found: dict[int, list[Inventory]] = {}
    for row in rows:
        found.setdefault(row.resource_provider_id, []).append(_record_from_row(row))
    return found


def find_inventory(connection: Connection, provider_id: int,
                   resource_class: str) -> Inventory | None:
    """The provider's record of ``resource_class`` (by name), if any."""
    row = connection.execute(
        _inventory_select()
        .where(_inventories.c.resource_provider_id == provider_id,
               _classes.c.name == resource_class)).first()
    return _record_from_row(row) if row is not None else None


def check_capacity(records: Iterable[Inventory], provider_uuid: str,
                   version: tuple[int, int]) -> None:
    """400 for the first record whose capacity the microversion does not allow.

    Before 1.26 capacity must be positive; from 1.26 on zero is allowed
    (``reserved == total``).
    """
    zero_allowed = tuple(version) >= (1, 26)
    for record in records:
        capacity = record.capacity
        if capacity < 0 or (capacity == 0 and not zero_allowed):
            relation = "greater than" if zero_allowed else "greater than or equal to"
            raise InvalidInventoryCapacity(
                f"Invalid inventory for '{record.resource_class}' on resource provider "
                f"'{provider_uuid}'. The reserved value is {relation} total.")


def resource_class_ids(connection: Connection, names: Sequence[str]) -> dict[str, int]:
    """Ids of ``names`` in one query; the first unknown one (in order) is a 400."""
    found = rc_obj.ids_by_name(connection, names)
    for name in names:
        if name not in found:
            raise ResourceClassNotFound(name)
    return found


def classes_in_use(connection: Connection, provider_id: int,
                   class_ids: Iterable[int]) -> list[int]:
    """Which of ``class_ids`` have at least one allocation on the provider (sorted)."""
    wanted = sorted(set(class_ids))
    if not wanted:
        return []
    rows = connection.execute(
        sa.select(_allocations.c.resource_class_id).distinct()
        .where(_allocations.c.resource_provider_id == provider_id,
               _allocations.c.resource_class_id.in_(wanted)))
    return sorted(row.resource_class_id for row in rows)


def _raise_if_in_use(connection: Connection, provider: ResourceProvider,
                     class_ids: Iterable[int]) -> None:
    busy = classes_in_use(connection, provider.id, class_ids)
    if busy:
        names = rc_obj.names_by_id(connection, busy)
        raise InventoryInUse([names[class_id] for class_id in busy], provider.uuid)


def _update_rows(connection: Connection, provider_id: int,
                 records: Mapping[int, Inventory]) -> None:
    """Overwrite the existing rows of ``records`` (class id -> record), one executemany."""
    if not records:
        return
    statement = (
        _inventories.update()
        .where(_inventories.c.resource_provider_id == sa.bindparam("_provider_id"),
               _inventories.c.resource_class_id == sa.bindparam("_class_id"))
        .values({**{field: sa.bindparam(field) for field in OUTPUT_FIELDS},
                 "updated_at": sa.bindparam("_updated_at")}))
    now = tables.utcnow()
    connection.execute(statement, [
        {"_provider_id": provider_id, "_class_id": class_id, "_updated_at": now,
         **record.as_dict()}
        for class_id, record in records.items()])


def _insert_rows(connection: Connection, provider_id: int,
                 records: Mapping[int, Inventory]) -> None:
    if not records:
        return
    now = tables.utcnow()
    connection.execute(_inventories.insert(), [
        {"resource_provider_id": provider_id, "resource_class_id": class_id,
         "created_at": now, **record.as_dict()}
        for class_id, record in records.items()])


def replace_inventories(
    connection: Connection,
    provider: ResourceProvider,
    records: Sequence[Inventory],
    *,
    generation: int | None = None,
    check_capacity_version: tuple[int, int] | None = None,
) -> int:
    """Make the provider's inventory exactly ``records``; return the new generation.

    ``generation`` is the provider generation expected now (default: the
    one in ``provider``); it is bumped by one whatever changes, even none.
    Checks, in order: capacity (only when ``check_capacity_version`` is
    given; the reshaper skips it), resource class existence
    (:class:`ResourceClassNotFound`), then that no removed class has
    allocations (:class:`InventoryInUse`). Kept classes may shrink below
    their usage. A lost generation race raises ``errors.ConcurrentUpdate``.
    """
    expected = provider.generation if generation is None else generation
    new_generation = bump_generation(connection, provider.id, expected)
    if check_capacity_version is not None:
        check_capacity(records, provider.uuid, check_capacity_version)
    ids = resource_class_ids(connection, [record.resource_class for record in records])
    wanted = {ids[record.resource_class]: record for record in records}
    current = set(connection.execute(
        sa.select(_inventories.c.resource_class_id)
        .where(_inventories.c.resource_provider_id == provider.id)).scalars())
    removed = current - set(wanted)
    if removed:
        _raise_if_in_use(connection, provider, removed)
        connection.execute(_inventories.delete().where(
            _inventories.c.resource_provider_id == provider.id,
            _inventories.c.resource_class_id.in_(sorted(removed))))
    _insert_rows(connection, provider.id,
                 {class_id: record for class_id, record in wanted.items()
                  if class_id not in current})
    _update_rows(connection, provider.id,
                 {class_id: record for class_id, record in wanted.items()
                  if class_id in current})
    return new_generation


def _bump_or_rerun(connection: Connection, provider: ResourceProvider) -> int:
    """Bump the generation; on a lost race rerun the whole transaction."""
    try:
        return bump_generation(connection, provider.id, provider.generation)
    except errors.ConcurrentUpdate as error:
        raise RetryTransaction() from error


# -- the routes ----------------------------------------------------------------------


def require_provider(database: Database, uuid: str, message: str | None = None) -> None:
    """404 unless the provider exists (routes check this before reading the body)."""
    database.read(get_provider, uuid, message)


def list_inventories(database: Database, provider_uuid: str,
                     not_found: str | None = None) -> ProviderInventories:
    """GET .../inventories."""

    def body(connection: Connection) -> ProviderInventories:
        provider = get_provider(connection, provider_uuid, not_found)
        return ProviderInventories(provider.generation, get_inventories(connection, provider.id))

    return database.read(body)


def create_inventory(database: Database, provider_uuid: str, record: Inventory,
                     version: tuple[int, int]) -> ProviderInventory:
    """POST .../inventories: add one class (no generation check).

    Order: 404, capacity, unknown class (400), class already present (409
    concurrent_update), insert; generation +1.
    """
    prefix = f"Unable to create inventory for resource provider {provider_uuid}: "

    def body(connection: Connection) -> ProviderInventory:
        provider = get_provider(connection, provider_uuid)
        try:
            check_capacity([record], provider.uuid, version)
            class_id = resource_class_ids(connection, [record.resource_class])[
                record.resource_class]
        except (InvalidInventoryCapacity, ResourceClassNotFound) as error:
            raise errors.BadRequest(prefix + error.message) from error
        generation = _bump_or_rerun(connection, provider)
        if find_inventory(connection, provider.id, record.resource_class) is not None:
            raise errors.ConcurrentUpdate(
                f"Update conflict: Inventory for '{record.resource_class}' on resource "
                f"provider '{provider.uuid}' already exists.")
        try:
            _insert_rows(connection, provider.id, {class_id: record})
        except sa.exc.IntegrityError as error:  # inserted by a racing writer
            raise RetryTransaction() from error
        return ProviderInventory(generation, record)

    return database.write(body)


def set_inventories(database: Database, provider_uuid: str, generation: int,
                    records: Sequence[Inventory],
                    version: tuple[int, int]) -> ProviderInventories:
    """PUT .../inventories: replace them all; generation +1 even if unchanged.

    Order: 404, generation (409 concurrent_update), capacity (400), unknown
    class (400), a removed class in use (409 inventory.inuse).
    """

    def body(connection: Connection) -> ProviderInventories:
        provider = get_provider(connection, provider_uuid)
        check_generation(provider, generation)
        try:
            new_generation = replace_inventories(
                connection, provider, records, check_capacity_version=version)
        except InvalidInventoryCapacity as error:
            raise errors.BadRequest(
                f"Unable to update inventory for resource provider {provider.uuid}: "
                f"{error.message}") from error
        except ResourceClassNotFound as error:
            raise errors.BadRequest(
                "Unknown resource class in inventory for resource provider "
                f"{provider.uuid}: {error.message}") from error
        except InventoryInUse as error:
            raise errors.InventoryInUse(f"update conflict: {error.message}") from error
        except errors.ConcurrentUpdate as error:
            # Lost the race for the generation: the rerun reports the client's
            # generation as stale.
            raise RetryTransaction() from error
        return ProviderInventories(new_generation, list(records))

    return database.write(body)


def delete_inventories(database: Database, provider_uuid: str) -> None:
    """DELETE .../inventories (1.5+): remove all; generation +1 even if there were none.

    Order: 404, any class in use (409 inventory.inuse).
    """

    def body(connection: Connection) -> None:
        provider = get_provider(connection, provider_uuid)
        try:
            replace_inventories(connection, provider, [])
        except errors.ConcurrentUpdate as error:  # lost the generation race
            raise RetryTransaction() from error

    database.write(body)


def get_inventory(database: Database, provider_uuid: str, resource_class: str,
                  not_found: str | None = None) -> ProviderInventory:
    """GET .../inventories/{rc}: 404 for a missing provider or record."""

    def body(connection: Connection) -> ProviderInventory:
        provider = get_provider(connection, provider_uuid, not_found)
        record = find_inventory(connection, provider.id, resource_class)
        if record is None:
            raise errors.NotFound(f"No inventory of class {resource_class} for {provider.uuid}")
        return ProviderInventory(provider.generation, record)

    return database.read(body)


def update_inventory(database: Database, provider_uuid: str, generation: int,
                     record: Inventory, version: tuple[int, int]) -> ProviderInventory:
    """PUT .../inventories/{rc}: change one existing record; generation +1.

    Order: 404, generation (409), capacity (400), unknown class (404), no
    record of that class (400). Shrinking below usage is allowed.
    """

    def body(connection: Connection) -> ProviderInventory:
        provider = get_provider(connection, provider_uuid)
        check_generation(provider, generation)
        try:
            check_capacity([record], provider.uuid, version)
        except InvalidInventoryCapacity as error:
            raise errors.BadRequest(
                f"Unable to update inventory for resource provider {provider.uuid}: "
                f"{error.message}") from error
        class_id = rc_obj.ids_by_name(connection, [record.resource_class]).get(
            record.resource_class)
        if class_id is None:
            raise errors.NotFound(rc_obj.no_such_class(record.resource_class))
        new_generation = _bump_or_rerun(connection, provider)
        if find_inventory(connection, provider.id, record.resource_class) is None:
            raise errors.BadRequest(
                "No inventory record with resource class for resource provider "
                f"{provider.uuid}: No inventory of class {record.resource_class} found.")
        _update_rows(connection, provider.id, {class_id: record})
        return ProviderInventory(new_generation, record)

    return database.write(body)


def delete_inventory(database: Database, provider_uuid: str, resource_class: str) -> None:
    """DELETE .../inventories/{rc}: generation +1.

    Order: 404 provider, unknown class (404), no record (404), class in use
    (409 with code concurrent_update, an upstream quirk).
    """
    prefix = f"No inventory of class {resource_class} found for delete"

    def body(connection: Connection) -> None:
        provider = get_provider(connection, provider_uuid)
        class_id = rc_obj.ids_by_name(connection, [resource_class]).get(resource_class)
        if class_id is None:
            raise errors.NotFound(f"{prefix}: {rc_obj.no_such_class(resource_class)}")
        _bump_or_rerun(connection, provider)
        deleted = connection.execute(_inventories.delete().where(
            _inventories.c.resource_provider_id == provider.id,
            _inventories.c.resource_class_id == class_id)).rowcount
        if not deleted:
            raise errors.NotFound(f"{prefix}: {prefix}")
        try:
            _raise_if_in_use(connection, provider, [class_id])
        except InventoryInUse as error:
            raise errors.ConcurrentUpdate(
                f"Unable to delete inventory of class {resource_class}: "
                f"{error.message}") from error

    database.write(body)
