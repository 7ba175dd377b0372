"""One node's plan: what the migration writes, as data, as text, and read back (compute/plan.py)."""

from __future__ import annotations

import copy

from nova_reshape.compute.plan import NewProvider, make_plan, unplanned
from nova_reshape.provider_tree import ProviderTree

NODE, ROOT, GPU = "cmp-07", "aaaaaaaa-0000-4000-8000-000000000001", "gggggggg-gpu"
OLD = "oooooooo-old"
I1 = "11111111-1111-4111-8111-111111111111"


def record(total: int) -> dict:
    return {"total": total, "reserved": 0, "min_unit": 1, "max_unit": total, "step_size": 1,
            "allocation_ratio": 1.0}


def held(rp: str, **resources: int) -> dict:
    return {"allocations": {rp: {"resources": resources}}, "consumer_generation": 1}


def trees() -> tuple[ProviderTree, ProviderTree]:
    """Before: VGPU on the root and an old child; after: VGPU on a new GPU child."""
    before = ProviderTree()
    before.new_root(NODE, ROOT, generation=3)
    before.update_inventory(NODE, {"VCPU": record(8), "VGPU": record(2)})
    before.new_child("old", ROOT, uuid=OLD)
    after = copy.deepcopy(before)
    after.remove(OLD)
    after.update_inventory(NODE, {"VCPU": record(8)})
    after.new_child(f"{NODE}_pci_0000_84_00_0", ROOT, uuid=GPU)
    after.update_inventory(GPU, {"VGPU": record(2)})
    after.update_traits(GPU, ["CUSTOM_NVIDIA_11"])
    return before, after


def test_the_plan_is_the_difference_between_read_and_simulated():
    before, after = trees()
    plan = make_plan(NODE, ROOT, before, after, {I1: held(ROOT, VCPU=1, VGPU=1)},
                     {I1: {"allocations": {ROOT: {"resources": {"VCPU": 1}},
                                           GPU: {"resources": {"VGPU": 1}}}}},
                     reshape=True)
    assert plan.create == [NewProvider(f"{NODE}_pci_0000_84_00_0", GPU, ROOT)]
    assert plan.delete == [OLD]
    assert set(plan.inventories) == {ROOT, GPU} and plan.traits == {GPU: ["CUSTOM_NVIDIA_11"]}
    assert list(plan.allocations) == [I1] and not plan.empty
    payload = plan.reshaper_payload()
    assert payload["inventories"][OLD] == {"inventories": {}}
    assert payload["inventories"][GPU] == {"inventories": {"VGPU": record(2)}}
    assert plan.as_dict()["delete"] == [{"uuid": OLD, "name": "old"}]
    assert plan.lines()[0] == f"create provider {NODE}_pci_0000_84_00_0 ({GPU}) under {NODE}"
    assert plan.lines()[-1] == "in one POST /reshaper: 2 inventories, 1 consumers"


def test_an_unchanged_node_has_an_empty_plan_and_no_reshaper():
    before, _ = trees()
    plan = make_plan(NODE, ROOT, before, copy.deepcopy(before), {I1: held(ROOT, VCPU=1)},
                     {I1: held(ROOT, VCPU=1) | {"consumer_generation": 7}}, reshape=False)
    assert plan.empty and plan.lines() == [] and plan.reshaper_payload() is None


def test_reading_back_names_every_difference_from_the_plan():
    before, after = trees()
    planned = {I1: held(GPU, VGPU=1)}
    plan = make_plan(NODE, ROOT, before, after, {I1: held(ROOT, VGPU=1)}, planned, True)
    assert unplanned(plan, after, copy.deepcopy(after), planned, planned) == []
    assert unplanned(plan, after, before, planned, {I1: held(ROOT, VGPU=1)}) == [
        f"provider {NODE}_pci_0000_84_00_0 ({GPU}) planned but missing",
        f"provider old ({OLD}) present but not planned",
        f"provider {NODE} ({ROOT}) has another inventory than planned",
        f"consumer {I1} holds {{'{ROOT}': {{'VGPU': 1}}}}, planned {{'{GPU}': {{'VGPU': 1}}}}"]
