"""Inventory objects on every engine: capacity, in use, check order, generations."""

from __future__ import annotations

import threading
import uuid as uuid_module

import pytest
import sqlalchemy as sa

from placement_wsgi import errors
from placement_wsgi.db import tables
from placement_wsgi.objects import inventory as inventory_obj
from placement_wsgi.objects.inventory import Inventory
from placement_wsgi.objects.provider_lookup import get_provider
from tests.fixtures import seed
from tests.functional.placement_wsgi.objects.test_usage import add_consumer, allocate

LATEST = (1, 39)


def _replace(database, provider_uuid, records, **kwargs) -> int:
    def body(connection):
        provider = get_provider(connection, provider_uuid)
        return inventory_obj.replace_inventories(connection, provider, records, **kwargs)

    return database.write(body)


def _classes(database, provider_uuid) -> dict[str, int]:
    return {record.resource_class: record.total
            for record in inventory_obj.list_inventories(database, provider_uuid).inventories}


def _in_use(database, provider_uuid, **amounts) -> None:
    allocate(database, add_consumer(database, "p", "u"), provider_uuid, **amounts)


# -- the record ------------------------------------------------------------------------


def test_record_defaults_and_capacity():
    record = Inventory.from_body("VCPU", {"total": 10, "resource_provider_generation": 3})
    assert record.as_dict() == {
        "total": 10, "reserved": 0, "min_unit": 1, "max_unit": 2147483647,
        "step_size": 1, "allocation_ratio": 1.0}
    assert Inventory("VCPU", total=10, reserved=3, allocation_ratio=1.5).capacity == 10
    assert Inventory("VCPU", total=10, reserved=3, allocation_ratio=0.1).capacity == 0
    assert Inventory("VCPU", total=10, reserved=11).capacity == -1


def test_check_capacity_boundary_at_1_26():
    full = Inventory("DISK_GB", total=5, reserved=5)
    with pytest.raises(inventory_obj.InvalidInventoryCapacity,
                       match="reserved value is greater than or equal to total"):
        inventory_obj.check_capacity([full], "rp", (1, 25))
    inventory_obj.check_capacity([full], "rp", (1, 26))
    over = Inventory("DISK_GB", total=5, reserved=6)
    with pytest.raises(inventory_obj.InvalidInventoryCapacity,
                       match=r"^Invalid inventory for 'DISK_GB' on resource provider 'rp'\. "
                             r"The reserved value is greater than total\.$"):
        inventory_obj.check_capacity([over], "rp", (1, 26))


# -- replace_inventories (the reusable writer) -----------------------------------------


def test_replace_adds_updates_and_removes_and_bumps_once(database):
    provider = seed.add_provider(database)
    seed.add_inventory(database, provider, "VCPU", 8)
    seed.add_inventory(database, provider, "DISK_GB", 100)
    generation = _replace(database, provider, [
        Inventory("DISK_GB", total=50, reserved=1, allocation_ratio=2.0),
        Inventory("MEMORY_MB", total=1024)])
    assert generation == 1 == seed.provider_generation(database, provider)
    records = inventory_obj.list_inventories(database, provider).inventories
    # Ordered by class id: MEMORY_MB (1) before DISK_GB (2).
    assert [(r.resource_class, r.total, r.reserved, r.allocation_ratio) for r in records] == [
        ("MEMORY_MB", 1024, 0, 1.0), ("DISK_GB", 50, 1, 2.0)]


def test_replace_with_the_same_records_still_bumps(database):
    provider = seed.add_provider(database)
    records = [Inventory("VCPU", total=8)]
    assert _replace(database, provider, records) == 1
    assert _replace(database, provider, records) == 2
    assert _replace(database, provider, [], generation=2) == 3
    assert _classes(database, provider) == {}


def test_replace_checks_capacity_only_when_given_a_version(database):
    provider = seed.add_provider(database)
    records = [Inventory("VCPU", total=4, reserved=4), Inventory("DISK_GB", total=1, reserved=9)]
    with pytest.raises(inventory_obj.InvalidInventoryCapacity, match="'VCPU'"):
        _replace(database, provider, records, check_capacity_version=(1, 25))
    with pytest.raises(inventory_obj.InvalidInventoryCapacity, match="'DISK_GB'"):
        _replace(database, provider, records, check_capacity_version=(1, 26))
    assert seed.provider_generation(database, provider) == 0
    # The reshaper does not validate capacity.
    assert _replace(database, provider, records) == 1


def test_replace_reports_the_first_unknown_class(database):
    provider = seed.add_provider(database)
    records = [Inventory("VCPU", total=1), Inventory("CUSTOM_B", total=1),
               Inventory("CUSTOM_A", total=1)]
    with pytest.raises(inventory_obj.ResourceClassNotFound,
                       match=r"^No such resource class CUSTOM_B\.$"):
        _replace(database, provider, records)
    assert _classes(database, provider) == {}


def test_replace_refuses_to_remove_classes_in_use_but_may_shrink_them(database):
    provider = seed.add_provider(database)
    for name in ("VCPU", "MEMORY_MB", "DISK_GB"):
        seed.add_inventory(database, provider, name, 100)
    _in_use(database, provider, DISK_GB=50, VCPU=10)
    with pytest.raises(inventory_obj.InventoryInUse) as caught:
        _replace(database, provider, [Inventory("MEMORY_MB", total=1)])
    assert caught.value.message == (
        f"Inventory for 'VCPU, DISK_GB' on resource provider '{provider}' in use.")
    assert caught.value.code == errors.INVENTORY_INUSE
    assert _replace(database, provider, [
        Inventory("VCPU", total=1), Inventory("DISK_GB", total=1)]) == 1
    assert _classes(database, provider) == {"VCPU": 1, "DISK_GB": 1}


def test_replace_with_a_stale_generation_is_a_concurrent_update(database):
    provider = seed.add_provider(database)
    with pytest.raises(errors.ConcurrentUpdate):
        _replace(database, provider, [], generation=5)


# -- the route operations ----------------------------------------------------------------


def test_create_adds_one_class_and_bumps(database):
    provider = seed.add_provider(database)
    result = inventory_obj.create_inventory(
        database, provider, Inventory("VCPU", total=8, allocation_ratio=16), LATEST)
    assert result.generation == 1
    assert result.inventory.allocation_ratio == 16
    stored = inventory_obj.get_inventory(database, provider, "VCPU")
    assert stored.generation == 1
    assert stored.inventory.allocation_ratio == 16.0
    assert stored.inventory.created_at is not None


def test_create_errors_in_order(database):
    provider = seed.add_provider(database)
    missing = str(uuid_module.uuid4())
    with pytest.raises(errors.NotFound, match=f"No resource provider with uuid {missing}"):
        inventory_obj.create_inventory(database, missing, Inventory("VCPU", total=1), LATEST)
    # Capacity comes before the class lookup.
    with pytest.raises(errors.BadRequest, match=(
            f"^Unable to create inventory for resource provider {provider}: Invalid inventory "
            f"for 'CUSTOM_NOPE' on resource provider '{provider}'")):
        inventory_obj.create_inventory(
            database, provider, Inventory("CUSTOM_NOPE", total=1, reserved=2), LATEST)
    with pytest.raises(errors.BadRequest, match=(
            f"^Unable to create inventory for resource provider {provider}: "
            r"No such resource class CUSTOM_NOPE\.$")):
        inventory_obj.create_inventory(
            database, provider, Inventory("CUSTOM_NOPE", total=1), LATEST)
    inventory_obj.create_inventory(database, provider, Inventory("VCPU", total=1), LATEST)
    with pytest.raises(errors.ConcurrentUpdate, match="^Update conflict: "):
        inventory_obj.create_inventory(database, provider, Inventory("VCPU", total=2), LATEST)
    assert seed.provider_generation(database, provider) == 1


def test_set_inventories_checks_in_order(database):
    provider = seed.add_provider(database)
    seed.add_inventory(database, provider, "VCPU", 8)
    _in_use(database, provider, VCPU=1)
    bad_capacity = Inventory("DISK_GB", total=1, reserved=1)
    unknown = Inventory("CUSTOM_NOPE", total=1)

    def put(generation, records):
        return inventory_obj.set_inventories(database, provider, generation, records, LATEST)

    with pytest.raises(errors.ConcurrentUpdate, match="^resource provider generation conflict$"):
        put(1, [Inventory("DISK_GB", total=1, reserved=2)])
    with pytest.raises(errors.BadRequest, match="^Unable to update inventory for resource"):
        put(0, [unknown, Inventory("DISK_GB", total=1, reserved=2)])
    with pytest.raises(errors.BadRequest, match="^Unknown resource class in inventory for"):
        put(0, [unknown, bad_capacity])
    with pytest.raises(errors.InventoryInUse, match=(
            f"^update conflict: Inventory for 'VCPU' on resource provider '{provider}' in use")):
        put(0, [bad_capacity])
    assert seed.provider_generation(database, provider) == 0
    result = put(0, [Inventory("VCPU", total=1), bad_capacity])
    assert result.generation == 1
    assert [record.resource_class for record in result.inventories] == ["VCPU", "DISK_GB"]


def test_delete_all_is_blocked_by_usage_and_always_bumps(database):
    provider = seed.add_provider(database)
    inventory_obj.delete_inventories(database, provider)
    assert seed.provider_generation(database, provider) == 1
    seed.add_inventory(database, provider, "VCPU", 8)
    seed.add_inventory(database, provider, "DISK_GB", 8)
    _in_use(database, provider, DISK_GB=1)
    with pytest.raises(errors.InventoryInUse, match=(
            f"^Inventory for 'DISK_GB' on resource provider '{provider}' in use.$")):
        inventory_obj.delete_inventories(database, provider)
    assert _classes(database, provider) == {"VCPU": 8, "DISK_GB": 8}
    assert seed.provider_generation(database, provider) == 1


def test_get_inventory_of_a_missing_class(database):
    provider = seed.add_provider(database)
    for name in ("VCPU", "CUSTOM_NOPE", "lower"):
        with pytest.raises(errors.NotFound, match=f"^No inventory of class {name} for {provider}$"):
            inventory_obj.get_inventory(database, provider, name)


def test_update_inventory_checks_in_order(database):
    provider = seed.add_provider(database)
    seed.add_inventory(database, provider, "VCPU", 8)
    _in_use(database, provider, VCPU=6)

    def update(generation, record):
        return inventory_obj.update_inventory(database, provider, generation, record, LATEST)

    with pytest.raises(errors.ConcurrentUpdate, match="^resource provider generation conflict$"):
        update(3, Inventory("CUSTOM_NOPE", total=1, reserved=2))
    with pytest.raises(errors.BadRequest, match="^Unable to update inventory for resource"):
        update(0, Inventory("CUSTOM_NOPE", total=1, reserved=2))
    with pytest.raises(errors.NotFound, match=r"^No such resource class CUSTOM_NOPE\.$"):
        update(0, Inventory("CUSTOM_NOPE", total=1))
    with pytest.raises(errors.BadRequest, match=(
            "^No inventory record with resource class for resource provider "
            rf"{provider}: No inventory of class DISK_GB found\.$")):
        update(0, Inventory("DISK_GB", total=1))
    assert seed.provider_generation(database, provider) == 0
    # Shrinking below the usage (6) is allowed.
    assert update(0, Inventory("VCPU", total=2)).generation == 1
    assert _classes(database, provider) == {"VCPU": 2}


def test_delete_inventory_checks_in_order(database):
    provider = seed.add_provider(database)
    seed.add_inventory(database, provider, "VCPU", 8)
    seed.add_inventory(database, provider, "DISK_GB", 8)
    _in_use(database, provider, VCPU=1)
    with pytest.raises(errors.NotFound, match=(
            r"^No inventory of class FOO found for delete: No such resource class FOO\.$")):
        inventory_obj.delete_inventory(database, provider, "FOO")
    with pytest.raises(errors.NotFound, match="^No inventory of class MEMORY_MB found for del"):
        inventory_obj.delete_inventory(database, provider, "MEMORY_MB")
    with pytest.raises(errors.ConcurrentUpdate, match=(
            f"^Unable to delete inventory of class VCPU: Inventory for 'VCPU' on resource "
            f"provider '{provider}' in use.$")):
        inventory_obj.delete_inventory(database, provider, "VCPU")
    assert seed.provider_generation(database, provider) == 0
    inventory_obj.delete_inventory(database, provider, "DISK_GB")
    assert seed.provider_generation(database, provider) == 1
    assert _classes(database, provider) == {"VCPU": 8}


def test_concurrent_creates_of_distinct_classes_all_succeed(database):
    """No client generation on POST: a lost generation race reruns, not fails."""
    provider = seed.add_provider(database)
    names = ["VCPU", "MEMORY_MB", "DISK_GB", "PCI_DEVICE", "SRIOV_NET_VF", "VGPU"]
    failures: list[BaseException] = []
    barrier = threading.Barrier(len(names))

    def create(name: str) -> None:
        barrier.wait()
        try:
            inventory_obj.create_inventory(database, provider, Inventory(name, total=4), LATEST)
        except BaseException as error:  # noqa: BLE001 - reported below
            failures.append(error)

    threads = [threading.Thread(target=create, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert seed.provider_generation(database, provider) == len(names)
    assert set(_classes(database, provider)) == set(names)


def test_concurrent_puts_with_one_generation_let_exactly_one_win(database):
    provider = seed.add_provider(database)
    outcomes: list[str] = []
    barrier = threading.Barrier(4)

    def put(total: int) -> None:
        barrier.wait()
        try:
            inventory_obj.set_inventories(
                database, provider, 0, [Inventory("VCPU", total=total)], LATEST)
            outcomes.append("ok")
        except errors.ConcurrentUpdate:
            outcomes.append("conflict")

    threads = [threading.Thread(target=put, args=(total,)) for total in range(1, 5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["conflict"] * 3 + ["ok"]
    assert seed.provider_generation(database, provider) == 1
    rows = database.read(lambda connection: connection.execute(
        sa.select(sa.func.count()).select_from(tables.inventories)).scalar_one())
    assert rows == 1
