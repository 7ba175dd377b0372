"""A written node checked from its state as read back: invariants and the plan."""

from __future__ import annotations

import copy

import pytest

from nova_reshape.compute import readback
from nova_reshape.compute.plan import NodePlan
from nova_reshape.compute.preflight import Simulation
from nova_reshape.compute.tree_source import NodeState
from nova_reshape.provider_tree import ProviderTree

CN, OTHER = "11111111-0000-4000-8000-000000000000", "99999999-0000-4000-8000-000000000000"
HELD = {"c1": {"allocations": {CN: {"resources": {"VCPU": 2}}}},
        "c2": {"allocations": {CN: {"resources": {"VCPU": 1}},
                               OTHER: {"resources": {"DISK_GB": 10}}}}}


def node_tree(vcpus: int = 8, traits: tuple[str, ...] = ()) -> ProviderTree:
    tree = ProviderTree()
    tree.new_root("cn1", CN)
    tree.update_inventory(CN, {"VCPU": {"total": vcpus, "reserved": 0, "min_unit": 1,
                                        "max_unit": vcpus, "step_size": 1,
                                        "allocation_ratio": 1.0}})
    tree.update_traits(CN, traits)
    return tree


@pytest.fixture
def unchanged() -> Simulation:
    """The node planned as it is: nothing to write."""
    return Simulation(node_tree(), node_tree(), copy.deepcopy(HELD), copy.deepcopy(HELD), [],
                      False, NodePlan("cn1", CN))


def test_only_allocations_on_the_trees_providers_are_kept():
    held = readback.held_in_tree(NodeState(CN, node_tree(), HELD), {CN: {}})
    assert held == {"c1": {"allocations": {CN: {"resources": {"VCPU": 2}}}},
                    "c2": {"allocations": {CN: {"resources": {"VCPU": 1}}}}}


def test_a_node_read_back_as_planned_has_no_violation(unchanged):
    assert readback.violations("cn1", unchanged, [], NodeState(CN, node_tree(), HELD)) == []


def test_a_lost_allocation_breaks_conservation(unchanged):
    state = NodeState(CN, node_tree(), {"c2": HELD["c2"]})
    found = readback.violations("cn1", unchanged, [], state)
    # c1 is not in the plan (nothing to write), so only the invariant sees it
    assert [(violation.code, violation.consumer) for violation in found] == [
        ("not_conserved", "c1")]


def test_a_tree_other_than_planned_is_not_as_planned(unchanged):
    state = NodeState(CN, node_tree(traits=("CUSTOM_LATE",)), HELD)
    found = readback.violations("cn1", unchanged, [], state)
    assert [(violation.code, violation.message) for violation in found] == [
        ("not_as_planned", f"provider cn1 ({CN}) has traits ['CUSTOM_LATE'], planned []")]


def test_an_inventory_too_small_for_what_it_holds_is_over_capacity():
    planned_small = Simulation(node_tree(), node_tree(vcpus=2), copy.deepcopy(HELD),
                               copy.deepcopy(HELD), [], False, NodePlan("cn1", CN))
    found = readback.violations("cn1", planned_small, [], NodeState(CN, node_tree(2), HELD))
    assert [violation.code for violation in found] == ["over_capacity"]


CHILD = "22222222-0000-4000-8000-000000000000"


def _written(reshaped: bool = True) -> readback.WrittenTree:
    """cn1 with one child, as a reshape left it (or as PUTs answered it)."""
    tree = node_tree()
    tree.new_child("cn1_child", CN, CHILD)
    tree.update_inventory(CHILD, {"VGPU": {"total": 1, "reserved": 0, "min_unit": 1,
                                           "max_unit": 1, "step_size": 1,
                                           "allocation_ratio": 1.0}})
    tree.update_traits(CHILD, ["OWNER_NOVA"])
    held = {"c1": {"allocations": {CN: {"resources": {"VCPU": 2}},
                                   CHILD: {"resources": {"VGPU": 1}},
                                   OTHER: {"resources": {"DISK_GB": 10}}},
                   "project_id": "p", "user_id": "u", "consumer_generation": 1}}
    if reshaped:
        return readback.WrittenTree("cn1", tree, held, {CN: 4, CHILD: 1}, {CN: 4, CHILD: 1})
    return readback.WrittenTree("cn1", tree, held, {CN: 4, CHILD: 1}, {})


def _records(cn: int = 6, child: int = 3, parent: str | None = CN, extra: bool = False):
    records = [{"uuid": CN, "name": "cn1", "parent_provider_uuid": None,
                "root_provider_uuid": CN, "generation": cn},
               {"uuid": CHILD, "name": "cn1_child", "parent_provider_uuid": parent,
                "root_provider_uuid": CN, "generation": child}]
    if extra:
        records.append({"uuid": OTHER, "name": "stranger", "parent_provider_uuid": CN,
                        "root_provider_uuid": CN, "generation": 0})
    return records


def test_a_listing_the_writes_explain_is_the_node_as_planned():
    state = readback.as_listed(_written(), _records())
    assert state is not None and state.root == CN
    tree = state.tree
    assert tree.get_provider_uuids("cn1") == [CN, CHILD]
    assert (tree.data(CN).generation, tree.data(CHILD).generation) == (6, 3)
    assert tree.data(CHILD).inventory["VGPU"]["total"] == 1
    assert tree.data(CHILD).traits == {"OWNER_NOVA"}
    # Each consumer's share on the tree only, partial, as a provider listing gives it.
    assert state.allocations == {"c1": {"allocations": {CN: {"resources": {"VCPU": 2}},
                                                        CHILD: {"resources": {"VGPU": 1}}}}}
    assert state.partial == {"c1"}


@pytest.mark.parametrize("records", [
    _records(cn=4),  # the reshaper's provider not past the generation it was sent
    _records(extra=True),  # a provider added to the tree
    _records()[:1],  # a planned provider missing
    _records(parent=None),  # placed elsewhere
])
def test_a_listing_the_writes_do_not_explain_proves_nothing(records):
    assert readback.as_listed(_written(), records) is None


def test_without_the_reshaper_each_generation_is_the_one_answered():
    assert readback.as_listed(_written(reshaped=False), _records(cn=4, child=1)) is not None
    assert readback.as_listed(_written(reshaped=False), _records(cn=5, child=1)) is None
