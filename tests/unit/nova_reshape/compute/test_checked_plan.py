"""A checked plan is written as is only when the read before the write shows
exactly what the check read."""

from __future__ import annotations

import pickle

import pytest

from nova_reshape.compute import checked_plan
from nova_reshape.compute.plan import NodePlan
from nova_reshape.compute.preflight import Simulation
from nova_reshape.compute.tree_source import NodeState
from nova_reshape.provider_tree import ProviderTree


def _state(root_generation=3, child=("gpu", 1), consumer_generation=7, partial=()):
    tree = ProviderTree()
    tree.new_root("node", "root", generation=root_generation)
    if child is not None:
        tree.new_child(child[0], "root", uuid=f"{child[0]}-uuid", generation=child[1])
    allocations = {"c1": {"allocations": {"root": {"resources": {"VGPU": 1}}},
                          "consumer_generation": consumer_generation}}
    return NodeState("root", tree, allocations, frozenset(partial))


def _checked():
    before = _state()
    after = ProviderTree()
    after.new_root("node", "root", generation=3)
    plan = NodePlan("node", "root", reshape=True, allocations={"c1": {"allocations": {}}})
    simulation = Simulation(before.tree, after, before.allocations, {"c1": {"allocations": {}}},
                            [], True, plan, ("0000:01:00.0",))
    return checked_plan.checked_plan(simulation, before), plan, after


def test_the_same_read_gives_the_checked_plan_on_the_state_read_before_the_write():
    checked, plan, after = _checked()
    again = _state()
    simulation = checked_plan.still_valid(checked, again)
    assert simulation is not None
    assert simulation.plan is plan and simulation.tree_after is after
    assert simulation.tree_before is again.tree
    assert simulation.allocations_before is again.allocations
    assert simulation.reshape and simulation.left_to_neutron == ("0000:01:00.0",)


@pytest.mark.parametrize("moved", [
    {"root_generation": 4},  # the root's inventories, traits, aggregates or allocations
    {"child": ("gpu", 2)},  # a child's
    {"child": ("other", 1)},  # a provider renamed, or another one in its place
    {"child": None},  # a provider gone
    {"consumer_generation": 8},  # a consumer's allocations, here or elsewhere
    {"partial": ("c1",)},  # read only in part: its generation unknown
])
def test_anything_moved_plans_again(moved):
    checked, _plan, _after = _checked()
    assert checked_plan.still_valid(checked, _state(**moved)) is None


def test_a_provider_added_to_the_tree_plans_again():
    checked, _plan, _after = _checked()
    state = _state()
    state.tree.new_child("new", "root", uuid="new-uuid", generation=0)
    assert checked_plan.still_valid(checked, state) is None


def test_the_checked_plan_spools():
    checked, _plan, _after = _checked()
    kept = pickle.loads(pickle.dumps(checked))
    assert checked_plan.still_valid(kept, _state()) is not None
