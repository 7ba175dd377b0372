"""The change back: from a node's current snapshot to its journaled "before"."""

from __future__ import annotations

import dataclasses

import pytest

from nova_reshape.journal import plan
from nova_reshape.journal.snapshot import Snapshot

ROOT, GPU = "r" * 8, "g" * 8
VM = "c" * 8


def _record(total: int) -> dict:
    return {"total": total, "reserved": 0, "min_unit": 1, "max_unit": total, "step_size": 1,
            "allocation_ratio": 1.0}


BEFORE = Snapshot(
    root=ROOT, providers=[{"uuid": ROOT, "name": "cmp", "parent": None, "generation": 1}],
    inventories={ROOT: {"VCPU": _record(8), "VGPU": _record(4)}},
    traits={ROOT: ["COMPUTE_NODE"]}, aggregates={ROOT: ["a1"]},
    allocations={VM: {"allocations": {ROOT: {"VCPU": 1, "VGPU": 1}}, "project_id": "p",
                      "user_id": "u", "consumer_generation": 1}})

AFTER = Snapshot(
    root=ROOT, providers=[{"uuid": ROOT, "name": "cmp", "parent": None, "generation": 4},
                          {"uuid": GPU, "name": "cmp_gpu", "parent": ROOT, "generation": 2}],
    inventories={ROOT: {"VCPU": _record(8)}, GPU: {"VGPU": _record(4)}},
    traits={ROOT: ["COMPUTE_NODE"], GPU: ["CUSTOM_A100"]}, aggregates={ROOT: ["a1"], GPU: ["a1"]},
    allocations={VM: {"allocations": {ROOT: {"VCPU": 1}, GPU: {"VGPU": 1}}, "project_id": "p",
                      "user_id": "u", "consumer_generation": 2}})


def test_a_migrated_node_is_put_back_in_one_reshape():
    change = plan.change_for(BEFORE, AFTER)
    assert change.create == [] and change.delete == [GPU]
    assert change.reshape and change.traits == {} and change.aggregates == {}
    assert [r.resource_class for r in change.inventories[ROOT]] == ["VCPU", "VGPU"]
    assert change.inventories[GPU] == []
    [consumer] = change.allocations
    assert consumer.allocations == {ROOT: {"VCPU": 1, "VGPU": 1}}
    assert consumer.consumer_generation == 2  # the current one: the write moves it on
    assert change.generations == {ROOT: 4, GPU: 2}
    change.check()


def test_the_way_back_of_the_way_back_recreates_the_providers_with_their_uuids():
    change = plan.change_for(AFTER, BEFORE)
    assert [(p.uuid, p.name, p.parent_uuid) for p in change.create] == [(GPU, "cmp_gpu", ROOT)]
    assert change.traits == {GPU: ["CUSTOM_A100"]} and change.aggregates == {GPU: ["a1"]}
    assert change.generations == {ROOT: 1}


def test_nothing_to_write_when_the_node_is_its_before():
    change = plan.change_for(BEFORE, BEFORE)
    assert plan.is_empty(change)
    assert plan.summary(plan.describe(change)) == "nothing"


def test_a_renamed_or_moved_provider_cannot_be_reverted():
    renamed = dataclasses.replace(AFTER, providers=[
        {**AFTER.providers[0], "name": "other"}, AFTER.providers[1]])
    with pytest.raises(plan.CannotRevert, match="renamed from cmp to other"):
        plan.change_for(BEFORE, renamed)


def test_the_description_is_plain_data_and_its_summary_one_line():
    description = plan.describe(plan.change_for(BEFORE, AFTER))
    assert description["delete"] == [GPU] and description["create"] == []
    assert description["inventories"][ROOT]["VGPU"]["total"] == 4
    assert description["allocations"] == {VM: {"allocations": {ROOT: {"VCPU": 1, "VGPU": 1}},
                                               "project_id": "p", "user_id": "u"}}
    assert plan.summary(description) == ("1 provider(s) deleted, 2 inventories set, "
                                         "1 consumer(s) moved back")
