"""PCI shim: devices as children; allocations moved from the root or created."""

from __future__ import annotations

import pytest

from nova_reshape import exception
from nova_reshape.virt.pci import PciShim, left_to_neutron, provider_name
from tests.unit.nova_reshape.virt.helpers import (
    I1,
    I2,
    MIG,
    NODE,
    ROOT,
    body,
    held,
    node,
    record,
    tree_with_root,
)

GPU = f"{NODE}_0000:D8:00.0"
PF = f"{NODE}_0000:3B:00.0"
DEVICES = [
    {"address": "0000:d8:00.0", "vendor_id": "10de", "product_id": "20b5",
     "traits": ["a100", "HW_GPU_CUDA_COMPUTE_CAPABILITY_V1_0"]},
    {"address": "0000:3b:00.2", "vendor_id": "8086", "product_id": "154c", "type": "type-VF",
     "parent": "0000:3b:00.0", "resource_class": "fast_nic"},
    {"address": "0000:3b:00.3", "vendor_id": "8086", "product_id": "154c", "type": "type-VF",
     "parent": "0000:3b:00.0", "resource_class": "fast_nic"},
    {"address": "0000:5e:00.0", "vendor_id": "15b3", "product_id": "1018",
     "physical_network": "physnet1"},
]


def _node(consumers=(), devices=DEVICES):
    return node(pci_devices=list(devices), consumers=list(consumers))


def test_provider_name_upper_cases_the_address():
    assert provider_name("cmp-07", "0000:d8:00.0") == "cmp-07_0000:D8:00.0"


def test_devices_and_pfs_become_children_vfs_count_on_their_pf():
    tree = tree_with_root({"VCPU": record(8)})
    PciShim({NODE: _node()}).update_provider_tree(tree, NODE)  # nobody uses a device
    assert tree.data(GPU).inventory == {"CUSTOM_PCI_10DE_20B5": {"total": 1, "max_unit": 1}}
    assert tree.data(GPU).traits == {"CUSTOM_A100", "HW_GPU_CUDA_COMPUTE_CAPABILITY_V1_0",
                                     "COMPUTE_MANAGED_PCI_DEVICE", "OWNER_NOVA"}
    assert tree.data(PF).inventory == {"CUSTOM_FAST_NIC": {"total": 2, "max_unit": 2}}
    # neutron's SR-IOV device (physical_network) is skipped.
    assert len(tree.get_provider_uuids(NODE)) == 3


def test_traits_are_replaced_so_foreign_ones_go():
    tree = tree_with_root({})
    PciShim({NODE: _node()}).update_provider_tree(tree, NODE)
    tree.add_traits(GPU, "CUSTOM_FROM_ELSEWHERE")
    PciShim({NODE: _node()}).update_provider_tree(tree, NODE)
    assert "CUSTOM_FROM_ELSEWHERE" not in tree.data(GPU).traits


def _reshaped(desc):
    """The tree, allocations (I1: 2 VCPU, I2: 1 on the root) and shim after the reshape
    the shim asks for on a root-only tree."""
    tree = tree_with_root({"VCPU": record(8)})
    shim = PciShim({NODE: desc})
    with pytest.raises(exception.ReshapeNeeded):
        shim.update_provider_tree(tree, NODE)
    allocations = {I1: body({ROOT: {"VCPU": 2}}), I2: body({ROOT: {"VCPU": 1}})}
    shim.update_provider_tree(tree, NODE, allocations=allocations)
    return tree, allocations, shim


def test_allocations_are_created_for_devices_in_use():
    tree, allocations, shim = _reshaped(_node([{"uuid": I1, "pci": ["0000:d8:00.0",
                                                                      "0000:3b:00.2"]},
                                               {"uuid": I2, "pci": ["0000:3b:00.3"]}]))
    assert held(allocations, I1, tree) == {NODE: {"VCPU": 2},
                                           GPU: {"CUSTOM_PCI_10DE_20B5": 1},
                                           PF: {"CUSTOM_FAST_NIC": 1}}
    assert held(allocations, I2, tree) == {NODE: {"VCPU": 1}, PF: {"CUSTOM_FAST_NIC": 1}}
    assert all(move.created for move in shim.moves) and len(shim.moves) == 3


def test_legacy_device_class_on_the_root_moves():
    tree = tree_with_root({"VCPU": record(8), "CUSTOM_FAST_NIC": record(2)})
    desc = _node([{"uuid": I1, "pci": ["0000:3b:00.2", "0000:3b:00.3"]}])
    allocations = {I1: body({ROOT: {"VCPU": 1, "CUSTOM_FAST_NIC": 2}})}
    shim = PciShim({NODE: desc})
    shim.update_provider_tree(tree, NODE, allocations=allocations)
    assert held(allocations, I1, tree) == {NODE: {"VCPU": 1}, PF: {"CUSTOM_FAST_NIC": 2}}
    assert "CUSTOM_FAST_NIC" not in tree.data(NODE).inventory
    assert [(m.source, m.amount) for m in shim.moves] == [(ROOT, 2)]


def test_no_reshape_once_device_providers_have_their_inventory():
    tree = tree_with_root({})
    desc = _node([{"uuid": I1, "pci": ["0000:d8:00.0"]}])
    PciShim({NODE: desc}).update_provider_tree(tree, NODE, allocations={I1: body({})})
    PciShim({NODE: desc}).update_provider_tree(tree, NODE)  # no ReshapeNeeded


def test_child_created_by_a_killed_run_without_inventory_still_needs_the_reshape():
    tree = tree_with_root({})
    tree.new_child(GPU, ROOT)
    desc = _node([{"uuid": I1, "pci": ["0000:d8:00.0"]}])
    with pytest.raises(exception.ReshapeNeeded):
        PciShim({NODE: desc}).update_provider_tree(tree, NODE)


def test_pf_listed_with_its_vfs_is_refused():
    devices = [*DEVICES, {"address": "0000:3b:00.0", "vendor_id": "8086", "product_id": "1572",
                          "type": "type-PF"}]
    with pytest.raises(exception.PlacementPciDependentDeviceException, match="0000:3b:00.0"):
        PciShim({NODE: _node(devices=devices)}).update_provider_tree(tree_with_root({}), NODE)


def test_vfs_of_one_pf_with_different_classes_are_refused():
    devices = [dict(DEVICES[1]), dict(DEVICES[2], resource_class="slow_nic")]
    with pytest.raises(exception.PlacementPciMixedResourceClassException):
        PciShim({NODE: _node(devices=devices)}).update_provider_tree(tree_with_root({}), NODE)


def test_vfs_of_one_pf_with_different_traits_are_refused():
    devices = [dict(DEVICES[1]), dict(DEVICES[2], traits=["x"])]
    with pytest.raises(exception.PlacementPciMixedTraitsException):
        PciShim({NODE: _node(devices=devices)}).update_provider_tree(tree_with_root({}), NODE)


def test_removed_devices_lose_their_provider_but_other_children_stay():
    tree = tree_with_root({})
    PciShim({NODE: _node()}).update_provider_tree(tree, NODE)
    tree.new_child("neutron-agent", ROOT)
    PciShim({NODE: _node(devices=DEVICES[:1])}).update_provider_tree(tree, NODE)
    assert tree.exists(GPU) and not tree.exists(PF) and tree.exists("neutron-agent")


def test_unknown_device_in_use_fails():
    desc = _node([{"uuid": I1, "pci": ["0000:99:00.0"]}])
    with pytest.raises(exception.ReshapeFailed, match="0000:99:00.0"):
        PciShim({NODE: desc}).update_provider_tree(tree_with_root({}), NODE)


RM_PF = f"{NODE}_0000:AF:00.0"
NEUTRON_DEVICES = [
    *DEVICES,
    {"address": "0000:af:00.2", "vendor_id": "15b3", "product_id": "101e", "type": "type-VF",
     "parent": "0000:af:00.0", "remote_managed": True},
]


def test_physnet_devices_get_no_provider_and_are_listed_remote_managed_ones_do():
    tree = tree_with_root({"VCPU": record(8)})
    desc = _node(devices=NEUTRON_DEVICES)
    PciShim({NODE: desc}).update_provider_tree(tree, NODE)
    assert sorted(tree.data(rp).name for rp in tree.get_provider_uuids(NODE)) == sorted(
        [NODE, GPU, PF, RM_PF])
    # nova 34 reports a remote_managed VF without physical network on its PF's provider.
    assert tree.data(RM_PF).inventory == {"CUSTOM_PCI_15B3_101E": {"total": 1, "max_unit": 1}}
    assert left_to_neutron(desc) == ("0000:5e:00.0 (type-PCI, physical_network physnet1)",)


def test_port_held_physnet_devices_keep_their_allocations_remote_managed_ones_get_one():
    """What nova's healing does: a physnet device held through a port is left alone; a
    remote_managed one counts for its holder when Placement has the consumer, and
    nothing is made for a holder Placement does not have (MIG)."""
    tree, allocations, shim = _reshaped(_node(
        [{"uuid": I1, "pci": ["0000:d8:00.0", "0000:5e:00.0"]},
         {"uuid": I2, "pci": ["0000:af:00.2"]},
         {"uuid": MIG, "pci": ["0000:3b:00.2"]}], devices=NEUTRON_DEVICES))
    assert held(allocations, I1, tree) == {NODE: {"VCPU": 2},
                                           GPU: {"CUSTOM_PCI_10DE_20B5": 1}}
    assert held(allocations, I2, tree) == {NODE: {"VCPU": 1},
                                           RM_PF: {"CUSTOM_PCI_15B3_101E": 1}}
    assert MIG not in allocations
    assert sorted((m.consumer, m.resource_class) for m in shim.moves) == [
        (I1, "CUSTOM_PCI_10DE_20B5"), (I2, "CUSTOM_PCI_15B3_101E")]
