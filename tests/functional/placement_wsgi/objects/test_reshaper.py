"""The reshaper's set-based inventory steps on every engine: errors and generations."""

from __future__ import annotations

import pytest

from placement_wsgi import errors
from placement_wsgi.objects import inventory as inventory_obj
from placement_wsgi.objects import reshaper as reshaper_obj
from placement_wsgi.objects.allocation import ConsumerAllocations
from placement_wsgi.objects.inventory import Inventory
from tests.fixtures import seed
from tests.functional.placement_wsgi.objects.test_usage import add_consumer, allocate

OPTIONS = {"set_consumer_type": True, "incomplete_project": "p", "incomplete_user": "u"}


def _target(database, uuid: str, *records: Inventory) -> inventory_obj.ProviderInventories:
    return inventory_obj.ProviderInventories(
        seed.provider_generation(database, uuid), list(records), uuid)


def _totals(database, uuid: str) -> dict[str, int]:
    return {record.resource_class: record.total
            for record in inventory_obj.list_inventories(database, uuid).inventories}


def test_moves_inventory_and_allocations_across_providers(database):
    root, child = seed.add_provider(database), seed.add_provider(database)
    seed.add_inventory(database, root, "VCPU", 8)
    seed.add_inventory(database, root, "VGPU", 4)
    consumer = add_consumer(database, "p", "u")
    allocate(database, consumer, root, VCPU=2, VGPU=1)
    generations = (seed.provider_generation(database, root),
                   seed.provider_generation(database, child))

    reshaper_obj.reshape(
        database,
        [_target(database, root, Inventory("VCPU", 16)),
         _target(database, child, Inventory("VGPU", 4))],
        [ConsumerAllocations(consumer_uuid=consumer, project_id="p", user_id="u",
                             allocations={root: {"VCPU": 2}, child: {"VGPU": 1}})],
        **OPTIONS)

    assert _totals(database, root) == {"VCPU": 16}
    assert _totals(database, child) == {"VGPU": 4}
    assert seed.usage(database, child, "VGPU") == 1
    assert seed.usage(database, root, "VGPU") == 0
    # Root: step 1, the allocation write, step 3. Child: the same three.
    assert seed.provider_generation(database, root) == generations[0] + 3
    assert seed.provider_generation(database, child) == generations[1] + 3


def test_first_provider_in_request_order_losing_used_inventory_is_reported(database):
    first, second = seed.add_provider(database), seed.add_provider(database)
    for provider in (first, second):
        seed.add_inventory(database, provider, "VCPU", 8)
        seed.add_inventory(database, provider, "DISK_GB", 8)
        allocate(database, add_consumer(database, "p", "u"), provider, VCPU=1, DISK_GB=1)
    before = {uuid: _totals(database, uuid) for uuid in (first, second)}

    with pytest.raises(errors.InventoryInUse) as raised:
        reshaper_obj.reshape(
            database,
            [_target(database, second), _target(database, first)], [], **OPTIONS)

    assert raised.value.message == (
        f"update conflict: Inventory for 'VCPU, DISK_GB' on resource provider "
        f"'{second}' in use.")
    assert {uuid: _totals(database, uuid) for uuid in (first, second)} == before


def test_unknown_class_of_a_later_provider_rolls_back_the_earlier_ones(database):
    first, second = seed.add_provider(database), seed.add_provider(database)
    seed.add_inventory(database, first, "VCPU", 8)
    generation = seed.provider_generation(database, first)

    with pytest.raises(errors.BadRequest,
                       match="^malformed reshaper data: No such resource class CUSTOM_NOPE"):
        reshaper_obj.reshape(
            database,
            [_target(database, first, Inventory("VCPU", 4)),
             _target(database, second, Inventory("CUSTOM_NOPE", 1))], [], **OPTIONS)

    assert _totals(database, first) == {"VCPU": 8}
    assert seed.provider_generation(database, first) == generation


def test_stale_generation_names_the_provider(database):
    provider = seed.add_provider(database)
    stale = inventory_obj.ProviderInventories(
        seed.provider_generation(database, provider) + 1, [], provider)
    with pytest.raises(errors.ConcurrentUpdate, match=f"provider {provider}: actual"):
        reshaper_obj.reshape(database, [stale], [], **OPTIONS)
