"""POST /reshaper: inventories and allocations replaced in one transaction.

placement-api-allocations.md §8. The three steps exist so that an
allocation may move onto inventory that is only now being created (step 1
adds the new inventory next to the old), and inventory may be removed that
only now stops being used (step 3 trims it after the allocations moved).
Any failure rolls the whole transaction back: nothing is half-written.
"""

from __future__ import annotations

import dataclasses

from sqlalchemy.engine import Connection

from placement_wsgi import errors
from placement_wsgi.db.database import Database, TransactionRetriesExhausted
from placement_wsgi.objects import allocation as allocation_obj
from placement_wsgi.objects import inventory as inventory_obj
from placement_wsgi.objects.provider_lookup import ResourceProvider, find_provider

MALFORMED = "malformed reshaper data: "


@dataclasses.dataclass
class ProviderInventories:
    """The complete new inventory of one provider, and the generation the client saw."""

    provider_uuid: str
    generation: int
    inventories: list[inventory_obj.Inventory]


def _providers_checked(connection: Connection,
                       targets: list[ProviderInventories]) -> list[ResourceProvider]:
    providers = []
    for target in targets:
        provider = find_provider(connection, target.provider_uuid)
        if provider is None:
            raise errors.BadRequest(
                f"Resource provider {target.provider_uuid} in inventories not found: "
                f"No resource provider with uuid {target.provider_uuid} found",
                code=errors.PROVIDER_NOT_FOUND)
        if provider.generation != target.generation:
            raise errors.ConcurrentUpdate(
                f"resource provider generation conflict for provider {provider.uuid}: "
                f"actual: {provider.generation}, given: {target.generation}")
        providers.append(provider)
    return providers


def _replace(connection: Connection, provider_uuid: str,
             records: list[inventory_obj.Inventory]) -> None:
    """Set a provider's inventory to ``records`` (generation +1), reshaper wording."""
    provider = find_provider(connection, provider_uuid)
    try:
        inventory_obj.replace_inventories(connection, provider, records)
    except inventory_obj.ResourceClassNotFound as error:
        raise errors.BadRequest(MALFORMED + error.message) from error
    except inventory_obj.InventoryInUse as error:
        raise errors.InventoryInUse(f"update conflict: {error.message}") from error
    except errors.ConcurrentUpdate as error:
        raise errors.ConcurrentUpdate(f"update conflict: {error.message}") from error


def _reshape(connection: Connection, targets: list[ProviderInventories],
             allocations: list[allocation_obj.ConsumerAllocations],
             allocation_options: dict) -> None:
    _providers_checked(connection, targets)
    prepared = allocation_obj.prepare_allocations(
        connection, allocations, unknown_class_prefix=MALFORMED, **allocation_options)
    # 1. current + new inventory, so moved allocations have somewhere to land.
    for target in targets:
        if not target.inventories:
            continue
        current = {record.resource_class: record for record in
                   inventory_obj.get_inventories(
                       connection, find_provider(connection, target.provider_uuid).id)}
        for record in target.inventories:
            current[record.resource_class] = record
        _replace(connection, target.provider_uuid, list(current.values()))
    # 2. the allocations, exactly as POST /allocations writes them.
    prepared.apply(connection)
    # 3. exactly the new inventory; removing a class still in use is a 409.
    for target in targets:
        _replace(connection, target.provider_uuid, target.inventories)


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
            "update conflict: another process kept changing the same resource providers "
            "during the reshape; try again.") from error
