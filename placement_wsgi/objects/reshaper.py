"""POST /reshaper: inventories and allocations replaced in one transaction.

The three steps exist so that an
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
from placement_wsgi.db.arrays import one_of
from placement_wsgi.db.database import Database, TransactionRetriesExhausted
from placement_wsgi.objects import allocation as allocation_obj
from placement_wsgi.objects import inventory as inventory_obj
from placement_wsgi.objects.inventory import ProviderInventories

MALFORMED = "malformed reshaper data: "
UPDATE_CONFLICT = "update conflict: "

_providers = tables.resource_providers


def provider_generations(connection: Connection,
                         uuids: Sequence[str]) -> dict[str, tuple[int, int]]:
    """uuid -> (id, generation) of the providers that exist, in one query."""
    if not uuids:
        return {}
    rows = connection.execute(
        sa.select(_providers.c.uuid, _providers.c.id, _providers.c.generation)
        .where(one_of(connection, _providers.c.uuid, sorted(set(uuids))))).all()
    return {row.uuid: (row.id, row.generation or 0) for row in rows}


#: uuid -> (id, generation) of providers, as the reshape's own transaction has them.
Known = dict[str, tuple[int, int]]


def _providers_checked(connection: Connection,
                       targets: list[ProviderInventories]) -> Known:
    """Every target exists and is at the generation the client saw (in request order);
    uuid -> (id, generation) of each."""
    found = provider_generations(connection, [target.provider_uuid for target in targets])
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
    return found


def _bumped(known: Known, uuids: Sequence[str]) -> None:
    """Count one generation bump of each of ``uuids`` in ``known``."""
    for uuid in uuids:
        provider_id, generation = known[uuid]
        known[uuid] = (provider_id, generation + 1)


def _replace_all(connection: Connection, targets: list[ProviderInventories], known: Known,
                 keep_others: bool = False) -> None:
    """:func:`inventory_obj.replace_many` at the generations ``known`` (this
    transaction's own: each step's conditional bump fails on any other), its errors
    worded as the reshaper reports them; ``known`` counts the bumps."""
    if not targets:
        return
    current = [dataclasses.replace(target, generation=known[target.provider_uuid][1])
               for target in targets]
    try:
        inventory_obj.replace_many(
            connection, current, {target.provider_uuid: known[target.provider_uuid][0]
                                  for target in targets},
            keep_others=keep_others)
    except inventory_obj.ResourceClassNotFound as error:
        raise errors.BadRequest(MALFORMED + error.message) from error
    except inventory_obj.InventoryInUse as error:
        raise errors.InventoryInUse(UPDATE_CONFLICT + error.message) from error
    except errors.ConcurrentUpdate as error:
        raise errors.ConcurrentUpdate(UPDATE_CONFLICT + error.message) from error
    _bumped(known, [target.provider_uuid for target in targets])


def replace_inventories_and_allocations(
        connection: Connection, targets: list[ProviderInventories],
        allocations: list[allocation_obj.ConsumerAllocations],
        allocation_options: dict, known: Known | None = None) -> None:
    """The reshape in the caller's transaction: generation checks, then the
    three steps (see the module docstring). ``allocation_options`` are
    :func:`~placement_wsgi.objects.allocation.prepare_allocations`' keywords.

    ``known``: uuid -> (id, generation) of every target, when the caller has
    already checked them in this transaction (each target's ``generation`` is
    then its known one): they are not looked up again. Either way every step
    bumps from the generation the previous one left, conditionally, so a
    writer committing in between is a conflict.
    """
    known = dict(known) if known is not None else _providers_checked(connection, targets)
    prepared = allocation_obj.prepare_allocations(
        connection, allocations, unknown_class_prefix=MALFORMED, **allocation_options)
    # 1. current + new inventory, so moved allocations have somewhere to land.
    _replace_all(connection, [target for target in targets if target.inventories], known,
                 keep_others=True)
    # 2. the allocations, exactly as POST /allocations writes them.
    bumped = prepared.apply(connection)
    _bumped(known, [uuid for uuid, (provider_id, _) in known.items() if provider_id in bumped])
    # 3. exactly the new inventory; removing a class still in use is a 409.
    _replace_all(connection, targets, known)


def reshape(database: Database, targets: list[ProviderInventories],
            allocations: list[allocation_obj.ConsumerAllocations], *,
            set_consumer_type: bool, incomplete_project: str, incomplete_user: str) -> None:
    """Run the whole reshape in one transaction (reruns on provider races)."""
    options = {"set_consumer_type": set_consumer_type,
               "incomplete_project": incomplete_project,
               "incomplete_user": incomplete_user}
    try:
        database.write(replace_inventories_and_allocations, targets, allocations, options)
    except TransactionRetriesExhausted as error:
        raise errors.ConcurrentUpdate(
            UPDATE_CONFLICT + "another process kept changing the same resource providers "
            "during the reshape; try again.") from error
