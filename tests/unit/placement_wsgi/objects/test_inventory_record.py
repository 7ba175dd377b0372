"""One inventory record: capacity, API form, and the capacity check per microversion."""

from __future__ import annotations

import datetime

import pytest

from placement_wsgi.objects.inventory_record import (
    MAX_INT,
    InvalidInventoryCapacity,
    Inventory,
    InventoryInUse,
    ProviderInventories,
    check_capacity,
)

RP = "c0000000-0000-4000-8000-000000000001"
EARLY, LATE = datetime.datetime(2026, 1, 1), datetime.datetime(2026, 2, 1)


def test_defaults_capacity_and_api_form():
    record = Inventory.from_body("VCPU", {"total": 8, "reserved": 2, "allocation_ratio": 2,
                                         "resource_provider_generation": 4})
    assert record.capacity == 12 and record.max_unit == MAX_INT
    assert record.as_dict() == {"total": 8, "reserved": 2, "min_unit": 1, "max_unit": MAX_INT,
                                "step_size": 1, "allocation_ratio": 2}
    assert isinstance(record.as_dict()["allocation_ratio"], int)  # echoed as given


def test_modification_times():
    assert Inventory("VCPU", 1, created_at=EARLY).modified_at == EARLY
    assert Inventory("VCPU", 1, created_at=EARLY, updated_at=LATE).modified_at == LATE
    provider = ProviderInventories(3, [Inventory("VCPU", 1, created_at=LATE),
                                       Inventory("DISK_GB", 1), Inventory("MEMORY_MB", 1,
                                                                          created_at=EARLY)])
    assert provider.modified_at == LATE
    assert ProviderInventories(0, []).modified_at is None


def test_zero_capacity_is_allowed_from_1_26_negative_never():
    full = [Inventory("VCPU", total=4, reserved=4)]
    with pytest.raises(InvalidInventoryCapacity,
                       match="reserved value is greater than or equal to total"):
        check_capacity(full, RP, (1, 25))
    check_capacity(full, RP, (1, 26))
    with pytest.raises(InvalidInventoryCapacity,
                       match=f"Invalid inventory for 'VCPU' on resource provider '{RP}'. "
                             "The reserved value is greater than total."):
        check_capacity([Inventory("VCPU", total=4, reserved=5)], RP, (1, 26))


def test_inventory_in_use_names_the_classes_and_provider():
    error = InventoryInUse(["VCPU", "VGPU"], RP)
    assert str(error) == f"Inventory for 'VCPU, VGPU' on resource provider '{RP}' in use."
    assert error.class_names == ["VCPU", "VGPU"] and error.provider_uuid == RP
