"""VGPU shim: root VGPU inventory and allocations move to one child per GPU."""

from __future__ import annotations

import pytest

from nova_reshape import exception
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

GPU_A = f"{NODE}_pci_0000_84_00_0"
GPU_B = f"{NODE}_pci_0000_85_00_0"


def _node(**extra):
    return node(gpus=[{"address": "0000:84:00.0", "capacity": 8, "traits": ["nvidia_11"]},
                      {"address": "0000:85:00.0", "capacity": 4}],
                consumers=[{"uuid": I1, "mdevs": [{"gpu": "0000:84:00.0"},
                                                  {"gpu": "0000:85:00.0"}]},
                           {"uuid": I2, "mdevs": [{"gpu": "0000:85:00.0"}]}], **extra)


def _flat():
    return tree_with_root({"VCPU": record(16), "VGPU": record(12)})


def _allocations():
    return {I1: body({ROOT: {"VCPU": 2, "VGPU": 2}, SHARED: {"DISK_GB": 10}}),
            I2: body({ROOT: {"VGPU": 1}})}


def test_without_allocations_creates_children_then_asks_for_reshape():
    tree = _flat()
    shim = VgpuShim({NODE: _node()})
    with pytest.raises(exception.ReshapeNeeded):
        shim.update_provider_tree(tree, NODE)
    # Children exist (named after the libvirt nodedev) but the root keeps VGPU.
    assert tree.data(GPU_A).parent_uuid == ROOT
    assert tree.data(GPU_A).inventory == {"VGPU": record(8)}
    assert tree.data(GPU_B).inventory == {"VGPU": record(4)}
    assert "VGPU" in tree.data(NODE).inventory


def test_with_allocations_moves_each_vgpu_to_the_gpu_of_its_mdevs():
    tree = _flat()
    allocations = _allocations()
    shim = VgpuShim({NODE: _node()})
    shim.update_provider_tree(tree, NODE, allocations=allocations)
    assert tree.data(NODE).inventory == {"VCPU": record(16)}
    assert held(allocations, I1, tree) == {NODE: {"VCPU": 2}, GPU_A: {"VGPU": 1},
                                           GPU_B: {"VGPU": 1}, SHARED: {"DISK_GB": 10}}
    # The root entry disappears when nothing is left on it.
    assert held(allocations, I2, tree) == {GPU_B: {"VGPU": 1}}
    assert sorted((m.consumer, m.amount, m.target == tree.data(GPU_B).uuid)
                  for m in shim.moves) == [(I1, 1, False), (I1, 1, True), (I2, 1, True)]
    assert all(m.source == ROOT for m in shim.moves)


def test_traits_owner_nova_and_normalized_description_traits_are_added():
    tree = _flat()
    VgpuShim({NODE: _node()}).update_provider_tree(tree, NODE, allocations=_allocations())
    assert tree.data(GPU_A).traits == {"OWNER_NOVA", "CUSTOM_NVIDIA_11"}
    tree.add_traits(GPU_B, "CUSTOM_OPERATOR")
    VgpuShim({NODE: _node()}).update_provider_tree(tree, NODE)
    assert "CUSTOM_OPERATOR" in tree.data(GPU_B).traits


def test_new_shape_is_a_no_op():
    tree = _flat()
    allocations = _allocations()
    VgpuShim({NODE: _node()}).update_provider_tree(tree, NODE, allocations=allocations)
    before = {u: tree.data(u) for u in tree.get_provider_uuids()}
    shim = VgpuShim({NODE: _node()})
    shim.update_provider_tree(tree, NODE)  # no ReshapeNeeded
    assert {u: tree.data(u) for u in tree.get_provider_uuids()} == before
    assert shim.moves == []


def test_allocation_count_not_matching_mdevs_fails():
    tree = _flat()
    allocations = {I1: body({ROOT: {"VGPU": 3}})}
    with pytest.raises(exception.ReshapeFailed, match="holds 3 VGPU but 2 could be placed"):
        VgpuShim({NODE: _node()}).update_provider_tree(tree, NODE, allocations=allocations)


def test_consumer_without_mdevs_fails():
    tree = _flat()
    allocations = {"44444444-4444-4444-8444-444444444444": body({ROOT: {"VGPU": 1}})}
    with pytest.raises(exception.ReshapeFailed, match="lists no mediated device"):
        VgpuShim({NODE: _node()}).update_provider_tree(tree, NODE, allocations=allocations)


def test_mdev_on_unknown_gpu_fails():
    desc = node(gpus=[{"address": "0000:84:00.0", "capacity": 8}],
                consumers=[{"uuid": I1, "mdevs": [{"gpu": "0000:99:00.0"}]}])
    with pytest.raises(exception.ReshapeFailed, match="GPU 0000:99:00.0"):
        VgpuShim({NODE: desc}).update_provider_tree(
            _flat(), NODE, allocations={I1: body({ROOT: {"VGPU": 1}})})


def test_capacity_zero_gets_no_child_and_stale_gpu_children_are_removed():
    tree = _flat()
    VgpuShim({NODE: _node()}).update_provider_tree(tree, NODE, allocations=_allocations())
    desc = node(gpus=[{"address": "0000:84:00.0", "capacity": 8},
                      {"address": "0000:85:00.0", "capacity": 0}])
    VgpuShim({NODE: desc}).update_provider_tree(tree, NODE)
    assert tree.exists(GPU_A) and not tree.exists(GPU_B)


def test_children_of_others_are_kept():
    tree = _flat()
    tree.new_child("cyborg-fpga", ROOT)
    tree.update_inventory("cyborg-fpga", {"FPGA": record(1)})
    VgpuShim({NODE: _node()}).update_provider_tree(tree, NODE, allocations=_allocations())
    assert tree.exists("cyborg-fpga")


def test_custom_mdev_class_moves_only_that_class():
    desc = node(gpus=[{"address": "0000:84:00.0", "capacity": 2, "mdev_class": "CUSTOM_MDEV"},
                      {"address": "0000:85:00.0", "capacity": 2}],
                consumers=[{"uuid": I1, "mdevs": [{"gpu": "0000:84:00.0"},
                                                  {"gpu": "0000:85:00.0"}]}])
    tree = tree_with_root({"VGPU": record(2), "CUSTOM_MDEV": record(2)})
    allocations = {I1: body({ROOT: {"VGPU": 1, "CUSTOM_MDEV": 1}})}
    VgpuShim({NODE: desc}).update_provider_tree(tree, NODE, allocations=allocations)
    assert held(allocations, I1, tree) == {GPU_A: {"CUSTOM_MDEV": 1}, GPU_B: {"VGPU": 1}}
    assert tree.data(GPU_A).inventory == {"CUSTOM_MDEV": record(2)}


def test_undescribed_node_is_left_alone():
    tree = _flat()
    VgpuShim({}).update_provider_tree(tree, NODE)
    assert tree.get_provider_uuids() == [ROOT]
