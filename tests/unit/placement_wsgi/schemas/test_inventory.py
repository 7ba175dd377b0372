"""Inventory bodies: one record, a new record, and a provider's whole inventory."""

from __future__ import annotations

from placement_wsgi.schemas import inventory
from tests.unit.placement_wsgi.schemas.helpers import accepts


def test_a_record_needs_a_positive_total_and_a_ratio_a_float_can_hold():
    assert accepts(inventory.INVENTORY_RECORD, {"total": 4, "allocation_ratio": 1.5})
    assert not accepts(inventory.INVENTORY_RECORD, {"reserved": 1})
    assert not accepts(inventory.INVENTORY_RECORD, {"total": 4, "allocation_ratio": 1e39})
    assert not accepts(inventory.INVENTORY_RECORD, {"total": 0})
    assert not accepts(inventory.INVENTORY_RECORD, {"total": inventory.MAX_INT + 1})


def test_create_names_the_class_update_carries_the_generation():
    assert accepts(inventory.CREATE_INVENTORY, {"resource_class": "VCPU", "total": 1})
    assert not accepts(inventory.CREATE_INVENTORY, {"resource_class": "vcpu", "total": 1})
    assert accepts(inventory.UPDATE_INVENTORY, {"total": 1, "resource_provider_generation": 2})
    assert not accepts(inventory.UPDATE_INVENTORY, {"total": 1})


def test_a_whole_inventory_checks_records_of_well_named_classes_only():
    body = {"resource_provider_generation": 0, "inventories": {"VCPU": {"total": 8}}}
    assert accepts(inventory.SET_INVENTORIES, body)
    assert not accepts(inventory.SET_INVENTORIES, {**body, "inventories": {"VCPU": {}}})
    assert accepts(inventory.SET_INVENTORIES, {**body, "inventories": {"bad-name": {}}})
