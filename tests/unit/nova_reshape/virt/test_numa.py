"""NUMA shim: VCPU/PCPU/MEMORY_MB move from the root to one child per cell."""

from __future__ import annotations

import pytest

from nova_reshape import exception
from nova_reshape.virt.numa import NumaShim, split_evenly
from tests.unit.nova_reshape.virt.helpers import (
    I1,
    I2,
    NODE,
    ROOT,
    body,
    held,
    node,
    record,
    tree_with_root,
)

N0, N1 = f"{NODE}_NUMA0", f"{NODE}_NUMA1"
CELLS = [{"id": 0, "cpus": "0-3", "pcpus": "4-7", "memory_mb": 8192},
         {"id": 1, "cpus": [8, 9, 10, 11], "memory_mb": 8192}]


def _flat():
    return tree_with_root({
        "VCPU": record(8, allocation_ratio=4.0, reserved=1),
        "PCPU": record(4),
        "MEMORY_MB": record(16384, reserved=512, allocation_ratio=1.5),
        "DISK_GB": record(100)})


def _node(consumers):
    return node(numa_cells=CELLS, consumers=consumers)


def test_cells_become_children_with_hw_numa_root_and_their_own_classes():
    tree = _flat()
    with pytest.raises(exception.ReshapeNeeded):
        NumaShim({NODE: _node([])}).update_provider_tree(tree, NODE)
    cell0, cell1 = tree.data(N0), tree.data(N1)
    assert cell0.parent_uuid == ROOT and cell1.parent_uuid == ROOT
    assert cell0.traits == {"HW_NUMA_ROOT", "OWNER_NOVA"}
    # Ratios carried over from the root; the root's reserved goes to the first cell.
    assert cell0.inventory == {"VCPU": record(4, allocation_ratio=4.0, reserved=1),
                               "PCPU": record(4),
                               "MEMORY_MB": record(8192, reserved=512, allocation_ratio=1.5)}
    assert cell1.inventory == {"VCPU": record(4, allocation_ratio=4.0),
                               "MEMORY_MB": record(8192, allocation_ratio=1.5)}


def test_even_split_across_the_cells_a_consumer_is_placed_on():
    tree = _flat()
    allocations = {I1: body({ROOT: {"VCPU": 3, "MEMORY_MB": 2049, "DISK_GB": 20}}),
                   I2: body({ROOT: {"PCPU": 2, "MEMORY_MB": 1024}})}
    desc = _node([{"uuid": I1, "numa": [0, 1]}, {"uuid": I2, "numa": [0]}])
    NumaShim({NODE: desc}).update_provider_tree(tree, NODE, allocations=allocations)
    assert held(allocations, I1, tree) == {NODE: {"DISK_GB": 20},
                                           N0: {"VCPU": 2, "MEMORY_MB": 1025},
                                           N1: {"VCPU": 1, "MEMORY_MB": 1024}}
    assert held(allocations, I2, tree) == {N0: {"PCPU": 2, "MEMORY_MB": 1024}}
    assert tree.data(NODE).inventory == {"DISK_GB": record(100)}


def test_explicit_per_cell_amounts_win():
    tree = _flat()
    allocations = {I1: body({ROOT: {"VCPU": 4, "MEMORY_MB": 4096}})}
    desc = _node([{"uuid": I1, "numa": [{"cell": 0, "vcpus": 1, "memory_mb": 4096},
                                        {"cell": 1, "vcpus": 3}]}])
    NumaShim({NODE: desc}).update_provider_tree(tree, NODE, allocations=allocations)
    assert held(allocations, I1, tree) == {N0: {"VCPU": 1, "MEMORY_MB": 4096},
                                           N1: {"VCPU": 3}}


def test_pcpu_only_goes_to_cells_with_dedicated_cpus():
    tree = _flat()
    allocations = {I1: body({ROOT: {"PCPU": 2}})}
    desc = _node([{"uuid": I1, "numa": [0, 1]}])
    NumaShim({NODE: desc}).update_provider_tree(tree, NODE, allocations=allocations)
    assert held(allocations, I1, tree) == {N0: {"PCPU": 2}}


def test_explicit_amounts_that_do_not_add_up_fail():
    allocations = {I1: body({ROOT: {"VCPU": 4}})}
    desc = _node([{"uuid": I1, "numa": [{"cell": 0, "vcpus": 1}]}])
    with pytest.raises(exception.ReshapeFailed, match="holds 4 VCPU but 1 could be placed"):
        NumaShim({NODE: desc}).update_provider_tree(_flat(), NODE, allocations=allocations)


def test_consumer_without_numa_placement_fails():
    allocations = {I1: body({ROOT: {"VCPU": 1}})}
    with pytest.raises(exception.ReshapeFailed, match="no NUMA placement"):
        NumaShim({NODE: _node([{"uuid": I1}])}).update_provider_tree(
            _flat(), NODE, allocations=allocations)


def test_unknown_cell_fails():
    allocations = {I1: body({ROOT: {"VCPU": 1}})}
    with pytest.raises(exception.ReshapeFailed, match="NUMA cell 7"):
        NumaShim({NODE: _node([{"uuid": I1, "numa": [7]}])}).update_provider_tree(
            _flat(), NODE, allocations=allocations)


def test_second_run_keeps_ratios_and_reservations_and_changes_nothing():
    tree = _flat()
    desc = _node([{"uuid": I1, "numa": [0]}])
    allocations = {I1: body({ROOT: {"VCPU": 1}})}
    NumaShim({NODE: desc}).update_provider_tree(tree, NODE, allocations=allocations)
    before = [tree.data(u) for u in tree.get_provider_uuids()]
    NumaShim({NODE: desc}).update_provider_tree(tree, NODE)
    assert [tree.data(u) for u in tree.get_provider_uuids()] == before


def test_per_cell_reserved_memory_overrides_the_root_reservation():
    cells = [dict(CELLS[0], reserved_memory_mb=256), dict(CELLS[1], reserved_memory_mb=128)]
    tree = _flat()
    NumaShim({NODE: node(numa_cells=cells)}).update_provider_tree(tree, NODE, allocations={})
    assert tree.data(N0).inventory["MEMORY_MB"]["reserved"] == 256
    assert tree.data(N1).inventory["MEMORY_MB"]["reserved"] == 128


def test_split_evenly():
    assert split_evenly(5, [0, 1, 2]) == {"0": 2, "1": 2, "2": 1}
    assert split_evenly(0, [3]) == {"3": 0}
    assert split_evenly(4, []) == {}
