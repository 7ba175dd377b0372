"""Inventories: what each provider offers, per resource class.

Two layers live here:

* connection-level building blocks that any writer of inventory reuses
  inside its own transaction (the reshaper and allocation code call these):
  :func:`get_inventories`, :func:`classes_in_use`, :func:`replace_many`,
  :func:`replace_inventories` (the records, their errors and the capacity
  check live in :mod:`.inventory_record`);
* one function per inventory route, each a complete transaction that
  raises the route's errors in the order the reference Placement raises them.

Every write bumps the provider generation *before* touching inventory rows:
the conditional UPDATE of the provider row is the lock that serialises
concurrent writers of one provider (the loser matches no row), so the
checks that follow (in use, already present) see a stable provider.
Routes without a client-supplied generation rerun their transaction on such
a race; the PUT routes rerun too and then fail the client's generation check.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement_wsgi import errors
from placement_wsgi.db import tables
from placement_wsgi.db.arrays import one_of
from placement_wsgi.db.database import Database, RetryTransaction
from placement_wsgi.db.inserts import insert_rows
from placement_wsgi.objects import resource_class as rc_obj
from placement_wsgi.objects.inventory_record import (
    OUTPUT_FIELDS,
    InvalidInventoryCapacity,
    Inventory,
    InventoryInUse,
    ProviderInventories,
    ProviderInventory,
    ResourceClassNotFound,
    check_capacity,
)
from placement_wsgi.objects.provider_lookup import (
    ResourceProvider,
    bump_generation,
    bump_or_conflict,
    check_generation,
    get_provider,
)

_inventories = tables.inventories
_allocations = tables.allocations
_classes = tables.resource_classes

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
        .order_by(_inventories.c.resource_class_id)).all()
    return [_record_from_row(row) for row in rows]


def inventories_by_provider(connection: Connection,
                            providers: sa.Select | Sequence[int]) -> dict[int, list[Inventory]]:
    """provider id -> its inventory records (by class id), for the providers
    ``providers`` names (ids, or a SELECT of ids); providers without any are absent."""
    rows = connection.execute(
        _inventory_select()
        .where(one_of(connection, _inventories.c.resource_provider_id, providers))
        .order_by(_inventories.c.resource_provider_id, _inventories.c.resource_class_id)).all()
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


def classes_in_use(connection: Connection, provider_id: int,
                   class_ids: Iterable[int]) -> list[int]:
    """Which of ``class_ids`` have at least one allocation on the provider (sorted)."""
    wanted = sorted(set(class_ids))
    if not wanted:
        return []
    rows = connection.execute(
        sa.select(_allocations.c.resource_class_id).distinct()
        .where(_allocations.c.resource_provider_id == provider_id,
               one_of(connection, _allocations.c.resource_class_id, wanted))).all()
    return sorted(row.resource_class_id for row in rows)


def _raise_if_in_use(connection: Connection, provider: ResourceProvider,
                     class_ids: Iterable[int]) -> None:
    busy = classes_in_use(connection, provider.id, class_ids)
    if busy:
        names = rc_obj.names_by_id(connection, busy)
        raise InventoryInUse([names[class_id] for class_id in busy], provider.uuid)


_UPDATE_FIELDS = {**{field: sa.bindparam(field) for field in OUTPUT_FIELDS},
                  "updated_at": sa.bindparam("_updated_at")}


def _insert_rows(connection: Connection, rows: Mapping[tuple[int, int], Inventory]) -> None:
    """Insert ``(provider id, class id) -> record`` (one statement per 500 rows)."""
    now = tables.utcnow()
    insert_rows(connection, _inventories, [
        {"resource_provider_id": provider_id, "resource_class_id": class_id,
         "created_at": now, **record.as_dict()}
        for (provider_id, class_id), record in rows.items()])


def _update_rows(connection: Connection, rows: Mapping[tuple[int, int], Inventory]) -> None:
    """Overwrite the existing rows ``(provider id, class id) -> record``, one executemany."""
    if not rows:
        return
    statement = (
        _inventories.update()
        .where(_inventories.c.resource_provider_id == sa.bindparam("_provider_id"),
               _inventories.c.resource_class_id == sa.bindparam("_class_id"))
        .values(_UPDATE_FIELDS))
    now = tables.utcnow()
    connection.execute(statement, [
        {"_provider_id": provider_id, "_class_id": class_id, "_updated_at": now,
         **record.as_dict()}
        for (provider_id, class_id), record in rows.items()])


def _changed(row: Mapping[str, Any], record: Inventory) -> bool:
    return any(row[field] != value for field, value in record.as_dict().items()
               if field != "allocation_ratio") or (
        float(row["allocation_ratio"]) != float(record.allocation_ratio))


def _raise_first_in_use(connection: Connection, wanted: Sequence[ProviderInventories],
                        ids: Mapping[str, int], removed: Sequence[tuple[int, int]]) -> None:
    """:class:`InventoryInUse` for the first provider (in ``wanted`` order) losing a used class."""
    busy = {(row.resource_provider_id, row.resource_class_id) for row in connection.execute(
        sa.select(_allocations.c.resource_provider_id, _allocations.c.resource_class_id)
        .distinct()
        .where(one_of(connection, _allocations.c.resource_provider_id,
                      sorted({provider_id for provider_id, _ in removed})),
               one_of(connection, _allocations.c.resource_class_id,
                      sorted({class_id for _, class_id in removed})))).all()}
    busy &= set(removed)
    if not busy:
        return
    names = rc_obj.names_by_id(connection, {class_id for _, class_id in busy})
    for target in wanted:
        provider_id = ids[target.provider_uuid]
        classes = sorted(class_id for owner, class_id in busy if owner == provider_id)
        if classes:
            raise InventoryInUse([names[class_id] for class_id in classes],
                                 target.provider_uuid)


def replace_many(connection: Connection, wanted: Sequence[ProviderInventories],
                 ids: Mapping[str, int], *, keep_others: bool = False,
                 rewrite_unchanged: bool = False) -> None:
    """Write each provider's records in a few set-based statements.

    The one inventory writer behind PUT and DELETE of a provider's
    inventories and the reshaper's steps. ``wanted[i].generation`` is the
    generation each provider must still be at; every provider's generation
    goes up by one (a lost race raises ``errors.ConcurrentUpdate``) whatever
    changes, even none. ``ids`` maps each uuid to its provider id.

    The provider's other classes are removed, unless ``keep_others`` (the
    reshaper's first step adds records next to the current inventory).
    Checks, in ``wanted`` order: unknown class (the first one named,
    :class:`ResourceClassNotFound`), then a removed class that still has
    allocations (:class:`InventoryInUse`). Kept classes may shrink below
    their usage. Rows whose values do not change are left alone unless
    ``rewrite_unchanged`` (the PUT route's rows all get a new ``updated_at``).
    """
    if not wanted:
        return
    bump_or_conflict(connection, {ids[target.provider_uuid]: target.generation
                                  for target in wanted})
    class_ids = rc_obj.require_classes(
        connection, [record.resource_class for target in wanted
                     for record in target.inventories], error=ResourceClassNotFound)
    current: dict[tuple[int, int], dict] = {
        (row.resource_provider_id, row.resource_class_id): row._asdict()
        for row in connection.execute(
            sa.select(_inventories.c.id, _inventories.c.resource_provider_id,
                      _inventories.c.resource_class_id,
                      *(_inventories.c[field] for field in OUTPUT_FIELDS))
            .where(one_of(connection, _inventories.c.resource_provider_id,
                         sorted(ids[target.provider_uuid] for target in wanted)))).all()}
    target_rows = {(ids[target.provider_uuid], class_ids[record.resource_class]): record
                   for target in wanted for record in target.inventories}

    removed = [] if keep_others else sorted(key for key in current if key not in target_rows)
    if removed:
        _raise_first_in_use(connection, wanted, ids, removed)
        connection.execute(_inventories.delete().where(
            one_of(connection, _inventories.c.id,
                   sorted(current[key]["id"] for key in removed))))
    _insert_rows(connection, {key: record for key, record in target_rows.items()
                              if key not in current})
    _update_rows(connection, {key: record for key, record in target_rows.items()
                              if key in current
                              and (rewrite_unchanged or _changed(current[key], record))})


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
    given), then those of :func:`replace_many`. A lost generation race
    raises ``errors.ConcurrentUpdate``.
    """
    expected = provider.generation if generation is None else generation
    if check_capacity_version is not None:
        check_capacity(records, provider.uuid, check_capacity_version)
    replace_many(connection, [ProviderInventories(expected, list(records), provider.uuid)],
                 {provider.uuid: provider.id}, rewrite_unchanged=True)
    return expected + 1


def _bump_or_rerun(connection: Connection, provider: ResourceProvider) -> int:
    """Bump the generation; on a lost race rerun the whole transaction."""
    try:
        return bump_generation(connection, provider.id, provider.generation)
    except errors.ConcurrentUpdate as error:
        raise RetryTransaction() from error


# -- the routes ----------------------------------------------------------------------


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
            class_id = rc_obj.require_classes(
                connection, [record.resource_class], error=ResourceClassNotFound)[
                record.resource_class]
        except (InvalidInventoryCapacity, ResourceClassNotFound) as error:
            raise errors.BadRequest(prefix + error.message) from error
        generation = _bump_or_rerun(connection, provider)
        if find_inventory(connection, provider.id, record.resource_class) is not None:
            raise errors.ConcurrentUpdate(
                f"Update conflict: Inventory for '{record.resource_class}' on resource "
                f"provider '{provider.uuid}' already exists.")
        try:
            _insert_rows(connection, {(provider.id, class_id): record})
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
        _update_rows(connection, {(provider.id, class_id): record})
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
