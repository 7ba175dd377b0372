"""Cyborg shim: accelerator providers as Cyborg writes them; legacy allocations move."""

from __future__ import annotations

import uuid

import pytest

from nova_reshape import exception
from nova_reshape.virt.cyborg import CyborgShim, existing_provider, provider_uuid
from nova_reshape.virt.host import parse_host
from tests.unit.nova_reshape.virt.helpers import (
    I1,
    NODE,
    ROOT,
    body,
    held,
    node,
    record,
    tree_with_root,
)

FPGA = "cmp-07-fpga-0"
ACCELERATORS = [
    {"name": FPGA, "type": "FPGA", "address": "0000:5e:00.0", "capacity": 2,
     "traits": ["CUSTOM_FPGA_INTEL_PAC_ARRIA10"]},
    {"type": "qat", "address": "0000:3d:00.0", "capacity": 4},
]


def _node(consumers=()):
    return node(accelerators=ACCELERATORS, consumers=list(consumers))


def test_children_have_cyborg_uuid_inventory_and_traits():
    tree = tree_with_root({})
    CyborgShim({NODE: _node()}).update_provider_tree(tree, NODE)
    fpga = tree.data(FPGA)
    assert fpga.uuid == str(uuid.uuid3(uuid.NAMESPACE_DNS, FPGA)) == provider_uuid(FPGA)
    assert fpga.inventory == {"FPGA": {"total": 2, "max_unit": 2}}
    assert fpga.traits == {"OWNER_CYBORG", "CUSTOM_FPGA_INTEL_PAC_ARRIA10"}
    # Without a name, Cyborg's: <compute host>_<address> (the nodename when no host).
    qat = tree.data(f"{NODE}_0000:3d:00.0")
    assert qat.uuid == provider_uuid(f"{NODE}_0000:3d:00.0")
    assert qat.inventory == {"CUSTOM_QAT": {"total": 4, "max_unit": 4}}


def test_default_name_uses_the_compute_host():
    desc = parse_host({"host": "cmp-07", "nodes": [{
        "nodename": "cmp-07.example.org", "accelerators": [ACCELERATORS[1]]}]}).nodes[0]
    assert desc.accelerators[0].name == "cmp-07_0000:3d:00.0"


def test_existing_cyborg_provider_at_the_address_is_reused():
    tree = tree_with_root({"CUSTOM_QAT": record(4)})
    name = "cmp-07.example.org_0000:3d:00.0"  # Cyborg named it after another host name
    tree.new_child(name, ROOT, uuid=provider_uuid(name))
    tree.update_inventory(name, {"CUSTOM_QAT": {"total": 4, "max_unit": 4}})
    tree.add_traits(name, "OWNER_CYBORG")
    desc = node(accelerators=[ACCELERATORS[1]],
                consumers=[{"uuid": I1, "accelerators": [{"device": "0000:3d:00.0"}]}])
    existing, problem = existing_provider(desc.accelerators[0], tree, NODE)
    assert (existing.name, problem) == (name, None)
    allocations = {I1: body({ROOT: {"CUSTOM_QAT": 1}})}
    CyborgShim({NODE: desc}).update_provider_tree(tree, NODE, allocations=allocations)
    assert held(allocations, I1, tree) == {name: {"CUSTOM_QAT": 1}}
    assert len(tree.get_provider_uuids()) == 2  # no second provider for the device


def test_two_cyborg_providers_at_one_address_are_a_problem():
    tree = tree_with_root({})
    for name in ("a_0000:3d:00.0", "b_0000:3d:00.0"):
        tree.new_child(name, ROOT)
        tree.update_inventory(name, {"CUSTOM_QAT": {"total": 4, "max_unit": 4}})
        tree.add_traits(name, "OWNER_CYBORG")
    desc = node(accelerators=[ACCELERATORS[1]])
    existing, problem = existing_provider(desc.accelerators[0], tree, NODE)
    assert existing is None and "a_0000:3d:00.0, b_0000:3d:00.0" in problem


def test_legacy_root_allocations_move_to_the_device_held():
    tree = tree_with_root({"FPGA": record(2), "VCPU": record(4)})
    desc = _node([{"uuid": I1, "accelerators": [{"device": FPGA, "count": 2}]}])
    shim = CyborgShim({NODE: desc})
    with pytest.raises(exception.ReshapeNeeded):
        shim.update_provider_tree(tree, NODE)
    allocations = {I1: body({ROOT: {"FPGA": 2, "VCPU": 1}})}
    shim.update_provider_tree(tree, NODE, allocations=allocations)
    assert held(allocations, I1, tree) == {NODE: {"VCPU": 1}, FPGA: {"FPGA": 2}}
    assert tree.data(NODE).inventory == {"VCPU": record(4)}


def test_accelerator_can_be_referenced_by_address():
    tree = tree_with_root({"FPGA": record(2)})
    desc = _node([{"uuid": I1, "accelerators": [{"device": "0000:5E:00.0"}]}])
    allocations = {I1: body({ROOT: {"FPGA": 1}})}
    CyborgShim({NODE: desc}).update_provider_tree(tree, NODE, allocations=allocations)
    assert held(allocations, I1, tree) == {FPGA: {"FPGA": 1}}


def test_existing_cyborg_provider_is_adopted_and_foreign_children_kept():
    tree = tree_with_root({})
    tree.new_child(FPGA, ROOT, uuid=provider_uuid(FPGA))
    tree.update_traits(FPGA, ["OWNER_CYBORG", "CUSTOM_SET_BY_CYBORG"])
    tree.new_child("some-neutron-agent", ROOT)
    CyborgShim({NODE: _node()}).update_provider_tree(tree, NODE)
    assert "CUSTOM_SET_BY_CYBORG" in tree.data(FPGA).traits
    assert tree.exists("some-neutron-agent")


def test_unknown_accelerator_fails():
    tree = tree_with_root({"FPGA": record(2)})
    desc = _node([{"uuid": I1, "accelerators": [{"device": "nope"}]}])
    with pytest.raises(exception.ReshapeFailed, match="accelerator nope"):
        CyborgShim({NODE: desc}).update_provider_tree(
            tree, NODE, allocations={I1: body({ROOT: {"FPGA": 1}})})
