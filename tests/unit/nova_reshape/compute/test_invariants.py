"""The reshape invariants: conservation, capacity, no orphan allocations."""

from __future__ import annotations

from nova_reshape.compute import invariants
from nova_reshape.virt.shim import Move
from tests.unit.nova_reshape.virt.helpers import I1, I2, ROOT, SHARED, body, record

CHILD = "cccccccc-0000-4000-8000-00000000000c"


def test_moves_within_the_node_conserve():
    before = {I1: body({ROOT: {"VGPU": 2, "VCPU": 1}, SHARED: {"DISK_GB": 1}})}
    after = {I1: body({ROOT: {"VCPU": 1}, CHILD: {"VGPU": 2}, SHARED: {"DISK_GB": 1}})}
    assert invariants.check_conservation(before, after, [ROOT], [ROOT, CHILD]) == []


def test_lost_or_doubled_allocation_is_not_conserved():
    before = {I1: body({ROOT: {"VGPU": 2}}), I2: body({ROOT: {"VCPU": 1}})}
    after = {I1: body({CHILD: {"VGPU": 3}})}
    violations = invariants.check_conservation(before, after, [ROOT], [ROOT, CHILD])
    assert [(v.consumer, v.resource_class) for v in violations] == [(I1, "VGPU"),
                                                                   (I2, "VCPU")]
    assert "held 2 VGPU" in violations[0].message and "and 3 after" in violations[0].message


def test_created_allocations_are_expected():
    before = {I1: body({ROOT: {"VCPU": 1}})}
    after = {I1: body({ROOT: {"VCPU": 1}, CHILD: {"CUSTOM_PCI": 1}})}
    created = [Move(I1, "CUSTOM_PCI", 1, None, CHILD, "pci")]
    assert invariants.check_conservation(before, after, [ROOT], [ROOT, CHILD], created) == []
    assert invariants.check_conservation(before, after, [ROOT], [ROOT, CHILD]) != []


def test_capacity_uses_reserved_and_ratio():
    inventories = {CHILD: {"VCPU": record(4, reserved=1, allocation_ratio=2.0)}}
    fits = {I1: body({CHILD: {"VCPU": 6}})}
    over = {I1: body({CHILD: {"VCPU": 6}}), I2: body({CHILD: {"VCPU": 1}})}
    assert invariants.check_capacity(inventories, fits) == []
    (violation,) = invariants.check_capacity(inventories, over, {CHILD: "child"})
    assert violation.code == "over_capacity"
    assert violation.message == "provider child would hold 7 VCPU, capacity 6"


def test_capacity_defaults_for_short_records():
    assert invariants.capacity({"total": 3}) == 3


def test_orphans_on_providers_without_that_inventory_or_gone():
    inventories = {ROOT: {"VCPU": record(4)}}
    allocations = {I1: body({ROOT: {"VCPU": 1, "VGPU": 1}, CHILD: {"VGPU": 1},
                             SHARED: {"DISK_GB": 1}})}
    violations = invariants.check_orphans(inventories, allocations, {ROOT, CHILD})
    assert [(v.provider, v.resource_class) for v in violations] == [
        (ROOT, "VGPU"), (CHILD, "VGPU")]


def test_check_node_combines_all_three():
    before = {I1: body({ROOT: {"VGPU": 1}})}
    after = {I1: body({ROOT: {"VGPU": 1}})}
    inventories = {ROOT: {}, CHILD: {"VGPU": record(1)}}
    codes = [v.code for v in invariants.check_node(before, after, [ROOT], inventories)]
    assert codes == ["orphan_allocation"]
