"""All shims composed: one ReshapeNeeded, every child created, moves recorded, idempotent."""

from __future__ import annotations

import copy

import pytest

from nova_reshape import exception
from nova_reshape.compute import invariants
from nova_reshape.virt.described import ALL_SHIMS, DescribedDriver
from nova_reshape.virt.numa import NumaShim
from nova_reshape.virt.vgpu import VgpuShim
from tests.unit.nova_reshape.virt.helpers import (
    I1,
    I2,
    NODE,
    ROOT,
    SHARED,
    body,
    held,
    node,
    record,
    tree_with_root,
)

DESC = node(
    gpus=[{"address": "0000:84:00.0", "capacity": 2}],
    numa_cells=[{"id": 0, "cpus": "0-3", "memory_mb": 4096},
                {"id": 1, "cpus": "4-7", "memory_mb": 4096}],
    pci_devices=[{"address": "0000:d8:00.0", "vendor_id": "10de", "product_id": "20b5"}],
    accelerators=[{"name": "fpga0", "type": "FPGA", "capacity": 1}],
    consumers=[
        {"uuid": I1, "mdevs": [{"gpu": "0000:84:00.0"}], "numa": [0, 1],
         "pci": ["0000:d8:00.0"], "accelerators": [{"device": "fpga0"}]},
        {"uuid": I2, "numa": [1]}])


def _flat():
    return tree_with_root({"VCPU": record(8), "MEMORY_MB": record(8192), "DISK_GB": record(50),
                           "VGPU": record(2), "FPGA": record(1)})


def _allocations():
    return {I1: body({ROOT: {"VCPU": 2, "MEMORY_MB": 1024, "DISK_GB": 5, "VGPU": 1, "FPGA": 1},
                      SHARED: {"IPV4_ADDRESS": 1}}),
            I2: body({ROOT: {"VCPU": 1, "MEMORY_MB": 512}})}


def test_every_shim_runs_before_the_single_reshape_needed():
    tree = _flat()
    driver = DescribedDriver({NODE: DESC})
    with pytest.raises(exception.ReshapeNeeded):
        driver.update_provider_tree(tree, NODE)
    names = {tree.data(u).name for u in tree.get_provider_uuids(NODE)}
    assert names == {NODE, f"{NODE}_pci_0000_84_00_0", f"{NODE}_NUMA0", f"{NODE}_NUMA1",
                     f"{NODE}_0000:D8:00.0", "fpga0"}


def test_all_together_moves_everything_and_conserves():
    tree = _flat()
    before_tree = copy.deepcopy(tree)
    allocations = _allocations()
    before = copy.deepcopy(allocations)
    driver = DescribedDriver({NODE: DESC})
    driver.update_provider_tree(tree, NODE, allocations=allocations)
    assert held(allocations, I1, tree) == {
        NODE: {"DISK_GB": 5}, SHARED: {"IPV4_ADDRESS": 1},
        f"{NODE}_pci_0000_84_00_0": {"VGPU": 1},
        f"{NODE}_NUMA0": {"VCPU": 1, "MEMORY_MB": 512},
        f"{NODE}_NUMA1": {"VCPU": 1, "MEMORY_MB": 512},
        f"{NODE}_0000:D8:00.0": {"CUSTOM_PCI_10DE_20B5": 1}, "fpga0": {"FPGA": 1}}
    assert held(allocations, I2, tree) == {f"{NODE}_NUMA1": {"VCPU": 1, "MEMORY_MB": 512}}
    assert tree.data(NODE).inventory == {"DISK_GB": record(50)}
    inventories = {u: tree.data(u).inventory for u in tree.get_provider_uuids(NODE)}
    created = [m for m in driver.moves if m.created]
    assert [(m.consumer, m.resource_class) for m in created] == [(I1, "CUSTOM_PCI_10DE_20B5")]
    assert invariants.check_node(before, allocations, before_tree.get_provider_uuids(NODE),
                                 inventories, created) == []
    assert {m.shim for m in driver.moves} == {"vgpu", "numa", "pci", "cyborg"}


def test_idempotent_second_pass():
    tree = _flat()
    allocations = _allocations()
    driver = DescribedDriver({NODE: DESC})
    driver.update_provider_tree(tree, NODE, allocations=allocations)
    snapshot = [tree.data(u) for u in tree.get_provider_uuids()]
    driver.update_provider_tree(tree, NODE)
    assert [tree.data(u) for u in tree.get_provider_uuids()] == snapshot
    assert driver.moves == []


def test_shims_compose_in_any_subset():
    tree = _flat()
    allocations = _allocations()
    DescribedDriver({NODE: DESC}, shims=(NumaShim, VgpuShim)).update_provider_tree(
        tree, NODE, allocations=allocations)
    assert set(tree.data(NODE).inventory) == {"DISK_GB", "FPGA"}
    assert ALL_SHIMS[0] is VgpuShim


def test_unknown_node():
    with pytest.raises(exception.ComputeHostNotFound):
        DescribedDriver({}).update_provider_tree(_flat(), NODE)
