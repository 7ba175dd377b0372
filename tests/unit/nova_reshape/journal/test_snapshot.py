"""Snapshots: both builders agree; differences name what changed, generations aside."""

from __future__ import annotations

import copy
import dataclasses

from nova_reshape.compute.tree_source import provider_tree
from nova_reshape.journal.snapshot import Snapshot, differences, of_state, of_tree
from placement_wsgi.objects.tree_state import TreeState

ROOT, GPU, SHARED = "r" * 8, "g" * 8, "s" * 8
VM = "c" * 8
RECORD = {"total": 4, "reserved": 0, "min_unit": 1, "max_unit": 4, "step_size": 1,
          "allocation_ratio": 1.0}


def _state() -> TreeState:
    return TreeState(
        root=ROOT,
        providers=[
            {"uuid": ROOT, "name": "cmp", "generation": 5, "parent_provider_uuid": None,
             "root_provider_uuid": ROOT},
            {"uuid": GPU, "name": "cmp_gpu", "generation": 2, "parent_provider_uuid": ROOT,
             "root_provider_uuid": ROOT}],
        sharing=[{"uuid": SHARED, "name": "nfs", "generation": 1,
                  "parent_provider_uuid": None, "root_provider_uuid": SHARED}],
        sharing_of={ROOT: [SHARED]},
        inventories={ROOT: {"VCPU": dict(RECORD)}, GPU: {"VGPU": dict(RECORD)},
                     SHARED: {"DISK_GB": dict(RECORD)}},
        traits={ROOT: ["COMPUTE_NODE"], SHARED: ["MISC_SHARES_VIA_AGGREGATE"]},
        aggregates={ROOT: ["a1"], SHARED: ["a1"]},
        allocations={VM: {"allocations": {ROOT: {"generation": 5, "resources": {"VCPU": 1}},
                                          SHARED: {"generation": 1,
                                                   "resources": {"DISK_GB": 1}}},
                          "project_id": "p", "user_id": "u", "consumer_generation": 3}})


def test_both_builders_give_the_same_snapshot_without_the_sharing_providers():
    state = _state()
    from_state = of_state(state)
    assert of_tree(provider_tree(state), ROOT, state.allocations) == from_state
    assert [p["uuid"] for p in from_state.providers] == [ROOT, GPU]
    assert from_state.traits == {ROOT: ["COMPUTE_NODE"], GPU: []}
    assert from_state.allocations[VM] == {
        "allocations": {ROOT: {"VCPU": 1}, SHARED: {"DISK_GB": 1}}, "project_id": "p",
        "user_id": "u", "consumer_generation": 3}
    assert Snapshot.from_dict(from_state.to_dict()) == from_state


def test_provider_generations_never_count_as_a_difference():
    state = _state()
    later = copy.deepcopy(state)
    for provider in later.providers:
        provider["generation"] += 7
    assert differences(of_state(state), of_state(later)) == []
    assert of_state(state).normalized() == of_state(later).normalized()


def test_differences_name_each_change_in_a_phrase():
    before = of_state(_state())
    changed = _state()
    changed.providers.append({"uuid": "n" * 8, "name": "cmp_new", "generation": 0,
                              "parent_provider_uuid": ROOT, "root_provider_uuid": ROOT})
    changed.inventories[GPU]["VGPU"]["total"] = 2
    changed.traits[GPU] = ["CUSTOM_X"]
    changed.allocations[VM]["consumer_generation"] = 4
    after = of_state(changed)
    assert differences(before, after) == [
        f"provider {'n' * 8} (cmp_new) is new",
        "inventory VGPU of cmp_gpu total 4 -> 2",
        "traits of cmp_gpu +CUSTOM_X",
        f"consumer {VM} generation 3 -> 4"]
    assert differences(before, after, consumer_generations=False) == differences(
        before, after)[:3]


def test_a_consumer_leaving_the_tree_and_a_provider_gone_are_named():
    before = of_state(_state())
    after = dataclasses.replace(before, providers=before.providers[:1], allocations={})
    assert differences(before, after) == [f"provider {GPU} (cmp_gpu) is gone",
                                          f"consumer {VM} left the tree"]


def test_a_consumer_holding_nothing_equals_one_not_known():
    """Placement keeps no consumer without allocations: a snapshot that records one
    as holding nothing (read outside the tree) and one that never saw it agree."""
    gone = "d" * 8
    plain = of_state(_state())
    with_nothing = of_state(_state(), {gone: None})
    assert with_nothing.allocations[gone]["allocations"] == {}
    assert differences(plain, with_nothing) == []
    assert differences(with_nothing, plain) == []
    holding = of_state(_state(), {gone: {"allocations": {SHARED: {"resources": {"DISK_GB": 1}}},
                                         "project_id": "p", "user_id": "u",
                                         "consumer_generation": 1}})
    assert differences(plain, holding) == [f"consumer {gone} arrived in the tree"]
