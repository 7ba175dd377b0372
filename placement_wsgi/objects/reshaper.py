"""POST /reshaper: inventories and allocations replaced in one transaction.

placement-api-allocations.md §8. The three steps exist so that an
allocation may move onto inventory that is only now being created (step 1
adds the new inventory next to the old), and inventory may be removed that
only now stops being used (step 3 trims it after the allocations moved).
Any failure rolls the whole transaction back: nothing is half-written.

The inventory steps are set-based across every provider of the request (a
reshape touches a whole tree at once): a handful of statements per step
whatever the number of providers, with the same checks, errors (first
failing provider in request order) and generation bumps as replacing each
provider's inventory on its own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement_wsgi import errors
from placement_wsgi.db import tables
from placement_wsgi.db.database import Database, TransactionRetriesExhausted
from placement_wsgi.objects import allocation as allocation_obj
from placement_wsgi.objects import inventory as inventory_obj
from placement_wsgi.objects import resource_class as rc_obj
from placement_wsgi.objects.provider_lookup import bump_generations

MALFORMED = "malformed reshaper data: "
UPDATE_CONFLICT = "update conflict: "

_providers = tables.resource_providers
_inventories = tables.inventories
_allocations = tables.allocations


@dataclasses.dataclass
class ProviderInventories:
    """The complete new inventory of one provider, and the generation the client saw."""

    provider_uuid: str
    generation: int
    inventories: list[inventory_obj.Inventory]


def _generations(connection: Connection, uuids: Sequence[str]) -> dict[str, tuple[int, int]]:
    """uuid -> (id, generation) of the providers that exist, in one query."""
    if not uuids:
        return {}
    rows = connection.execute(
        sa.select(_providers.c.uuid, _providers.c.id, _providers.c.generation)
        .where(_providers.c.uuid.in_(sorted(set(uuids)))))
    return {row.uuid: (row.id, row.generation or 0) for row in rows}


def _providers_checked(connection: Connection,
                       targets: list[ProviderInventories]) -> None:
    """Every target exists and is at the generation the client saw (in request order)."""
    found = _generations(connection, [target.provider_uuid for target in targets])
    for target in targets:
        if target.provider_uuid not in found:
            raise errors.BadRequest(
                f"Resource provider {target.provider_uuid} in inventories not found: "
                f"No resource provider with uuid {target.provider_uuid} found",
                code=errors.PROVIDER_NOT_FOUND)
        generation = found[target.provider_uuid][1]
        if generation != target.generation:
            raise errors.ConcurrentUpdate(
                f"resource provider generation conflict for provider {target.provider_uuid}: "
                f"actual: {generation}, given: {target.generation}")


def _replace_all(connection: Connection,
                 wanted: list[tuple[str, list[inventory_obj.Inventory]]],
                 keep_others: bool = False) -> None:
    """Write each provider's records; every provider's generation +1.

    The provider's other classes are removed, unless ``keep_others`` (step
    1: the records are added next to the current inventory). ``wanted`` is
    in request order: the first provider naming an unknown class, or losing
    a class that still has allocations, is the one reported. Rows whose
    values do not change are left alone.
    """
    if not wanted:
        return
    providers = _generations(connection, [uuid for uuid, _ in wanted])
    if not bump_generations(
            connection, {providers[uuid][0]: providers[uuid][1] for uuid, _ in wanted}):
        raise errors.ConcurrentUpdate(
            UPDATE_CONFLICT + "resource provider generation conflict: another process "
            "changed the provider; refresh and try again")
    names = [record.resource_class for _, records in wanted for record in records]
    class_ids = rc_obj.ids_by_name(connection, names)
    for _, records in wanted:
        for record in records:
            if record.resource_class not in class_ids:
                raise errors.BadRequest(
                    MALFORMED + inventory_obj.ResourceClassNotFound(record.resource_class).message)

    provider_ids = sorted(providers[uuid][0] for uuid, _ in wanted)
    current: dict[tuple[int, int], dict] = {
        (row.resource_provider_id, row.resource_class_id): row._asdict()
        for row in connection.execute(
            sa.select(_inventories.c.id, _inventories.c.resource_provider_id,
                      _inventories.c.resource_class_id,
                      *(_inventories.c[field] for field in inventory_obj.OUTPUT_FIELDS))
            .where(_inventories.c.resource_provider_id.in_(provider_ids)))}
    target = {(providers[uuid][0], class_ids[record.resource_class]): record
              for uuid, records in wanted for record in records}

    removed = [] if keep_others else sorted(key for key in current if key not in target)
    if removed:
        _raise_if_removed_in_use(connection, wanted, providers, removed)
        connection.execute(_inventories.delete().where(
            _inventories.c.id.in_(sorted(current[key]["id"] for key in removed))))
    now = tables.utcnow()
    inserts = [{"resource_provider_id": provider_id, "resource_class_id": class_id,
                "created_at": now, **record.as_dict()}
               for (provider_id, class_id), record in target.items()
               if (provider_id, class_id) not in current]
    if inserts:
        connection.execute(_inventories.insert(), inserts)
    updates = [{"_id": current[key]["id"], "_updated_at": now, **record.as_dict()}
               for key, record in target.items()
               if key in current and _changed(current[key], record)]
    if updates:
        connection.execute(
            _inventories.update().where(_inventories.c.id == sa.bindparam("_id"))
            .values({**{field: sa.bindparam(field) for field in inventory_obj.OUTPUT_FIELDS},
                     "updated_at": sa.bindparam("_updated_at")}),
            updates)


def _changed(row: dict, record: inventory_obj.Inventory) -> bool:
    return any(row[field] != value for field, value in record.as_dict().items()
               if field != "allocation_ratio") or (
        float(row["allocation_ratio"]) != float(record.allocation_ratio))


def _raise_if_removed_in_use(connection: Connection,
                             wanted: list[tuple[str, list[inventory_obj.Inventory]]],
                             providers: dict[str, tuple[int, int]],
                             removed: list[tuple[int, int]]) -> None:
    """409 inventory-in-use for the first provider (request order) losing a used class."""
    removed_ids = {provider_id for provider_id, _ in removed}
    busy = {(row.resource_provider_id, row.resource_class_id) for row in connection.execute(
        sa.select(_allocations.c.resource_provider_id, _allocations.c.resource_class_id)
        .distinct()
        .where(_allocations.c.resource_provider_id.in_(sorted(removed_ids)),
               _allocations.c.resource_class_id.in_(
                   sorted({class_id for _, class_id in removed}))))}
    busy &= set(removed)
    if not busy:
        return
    names = rc_obj.names_by_id(connection, {class_id for _, class_id in busy})
    for uuid, _ in wanted:
        provider_id = providers[uuid][0]
        classes = sorted(class_id for owner, class_id in busy if owner == provider_id)
        if classes:
            error = inventory_obj.InventoryInUse([names[class_id] for class_id in classes], uuid)
            raise errors.InventoryInUse(UPDATE_CONFLICT + error.message)


def _reshape(connection: Connection, targets: list[ProviderInventories],
             allocations: list[allocation_obj.ConsumerAllocations],
             allocation_options: dict) -> None:
    _providers_checked(connection, targets)
    prepared = allocation_obj.prepare_allocations(
        connection, allocations, unknown_class_prefix=MALFORMED, **allocation_options)
    # 1. current + new inventory, so moved allocations have somewhere to land.
    _replace_all(connection, [(target.provider_uuid, target.inventories)
                              for target in targets if target.inventories], keep_others=True)
    # 2. the allocations, exactly as POST /allocations writes them.
    prepared.apply(connection)
    # 3. exactly the new inventory; removing a class still in use is a 409.
    _replace_all(connection, [(target.provider_uuid, target.inventories) for target in targets])


def reshape(database: Database, targets: list[ProviderInventories],
            allocations: list[allocation_obj.ConsumerAllocations], *,
            set_consumer_type: bool, incomplete_project: str, incomplete_user: str) -> None:
    """Run the whole reshape in one transaction (reruns on provider races)."""
    options = {"set_consumer_type": set_consumer_type,
               "incomplete_project": incomplete_project,
               "incomplete_user": incomplete_user}
    try:
        database.write(_reshape, targets, allocations, options)
    except TransactionRetriesExhausted as error:
        raise errors.ConcurrentUpdate(
            UPDATE_CONFLICT + "another process kept changing the same resource providers "
            "during the reshape; try again.") from error
