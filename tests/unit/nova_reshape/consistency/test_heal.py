"""heal_allocations' decisions: nova's order, its pages and exit statuses, nothing written."""

from __future__ import annotations

from nova_reshape.consistency import heal
from nova_reshape.consistency.heal import Change, Options, Outcome, Problem
from nova_reshape.nova.pci import PciDevice
from tests.unit.nova_reshape.consistency.helpers import (
    NODE_UUID,
    FakePlacement,
    cell,
    held,
    instance,
)


def healed(plan):
    return [item.instance for item in plan.heals]


def test_instances_are_taken_oldest_first_and_busy_or_unplaced_ones_skipped():
    read = cell("c1", instance("late", 9), instance("busy", 1, task_state="migrating"),
                instance("nowhere", 2, host=None, node=None), instance("early", 0))
    plan = heal.plan([read], FakePlacement(), Options())
    assert healed(plan) == ["early", "late"] and plan.outcome is Outcome.HEALED
    assert plan.heals[0].body == {
        "allocations": {NODE_UUID: {"resources": {"VCPU": 2, "MEMORY_MB": 1024,
                                                  "DISK_GB": 5}}},
        "project_id": "p", "user_id": "u", "consumer_generation": None}


def test_wrong_owner_is_rewritten_with_the_same_allocations():
    state = FakePlacement({"a": held({"VCPU": 7}, project="x"), "b": held({"VCPU": 7})})
    plan = heal.plan([cell("c1", instance("a"), instance("b", 1))], state, Options())
    assert healed(plan) == ["a"] and plan.heals[0].change is Change.UPDATE
    assert plan.heals[0].body == {"allocations": {NODE_UUID: {"resources": {"VCPU": 7}}},
                                  "project_id": "p", "user_id": "u", "consumer_generation": 1}


def test_force_replaces_allocations_elsewhere_keeping_the_generation():
    state = FakePlacement({"a": held({"VCPU": 7}, provider="elsewhere")})
    read = cell("c1", instance("a"))
    assert heal.plan([read], state, Options()).outcome is Outcome.NOTHING
    plan = heal.plan([read], state, Options(instance="a", force=True))
    assert plan.outcome is Outcome.HEALED
    assert list(plan.heals[0].body["allocations"]) == [NODE_UUID]
    assert plan.heals[0].body["consumer_generation"] == 1


def test_vgpu_stops_the_run_after_the_older_heals_and_before_reading_allocations():
    state = FakePlacement()
    read = cell("c1", instance("a", 0), instance("g", 1, specs={"resources:VGPU": "1"}),
                instance("b", 2))
    plan = heal.plan([read], state, Options())
    assert plan.outcome is Outcome.UNSUPPORTED and healed(plan) == ["a"]
    assert state.asked == ["a"]


def test_missing_compute_node_stops_with_2():
    plan = heal.plan([cell("c1", instance("a", node="other"))], FakePlacement(), Options())
    assert plan.outcome is Outcome.NO_NODE and "no compute node other" in plan.stop.message


def test_max_count_pages_end_the_run_with_1_when_the_count_is_reached():
    read = cell("c1", *(instance(f"i{n}", n) for n in range(5)))
    plan = heal.plan([read], FakePlacement(), Options(max_count=2))
    assert healed(plan) == ["i0", "i1"] and plan.outcome is Outcome.MAX_COUNT


def test_max_count_pages_can_overshoot_as_nova_s_do():
    # Pages of 2: the first heals one (i0 is up to date), then the second two, and
    # the count (3) never equals 2 again: the whole cell is healed, exit 0.
    state = FakePlacement({"i0": held({"VCPU": 1})})
    read = cell("c1", *(instance(f"i{n}", n) for n in range(5)))
    plan = heal.plan([read], state, Options(max_count=2))
    assert healed(plan) == ["i1", "i2", "i3", "i4"] and plan.outcome is Outcome.HEALED


def test_without_max_count_exactly_fifty_heals_end_with_1_as_nova_s():
    read = cell("c1", *(instance(f"i{n}", n) for n in range(heal.PAGE)))
    assert heal.plan([read], FakePlacement(), Options()).outcome is Outcome.MAX_COUNT
    read = cell("c1", *(instance(f"i{n}", n) for n in range(heal.PAGE + 1)))
    assert heal.plan([read], FakePlacement(), Options()).outcome is Outcome.HEALED


def test_max_count_carries_over_cells():
    first, second = cell("c1", instance("a")), cell("c2", instance("b"), instance("c", 1))
    plan = heal.plan([first, second], FakePlacement(), Options(max_count=2))
    assert healed(plan) == ["a", "b"] and plan.outcome is Outcome.MAX_COUNT


def test_dry_run_counts_nothing_so_ends_with_4():
    read = cell("c1", *(instance(f"i{n}", n) for n in range(3)))
    plan = heal.plan([read], FakePlacement(), Options(dry_run=True, max_count=1))
    assert len(plan.heals) == 3 and plan.outcome is Outcome.NOTHING


def test_one_instance_is_looked_for_in_its_cell_only():
    read = cell("c1", instance("a"), instance("b", 1))
    plan = heal.plan([read], FakePlacement(), Options(instance="b"))
    assert healed(plan) == ["b"] and plan.outcome is Outcome.HEALED
    gone = heal.plan([read], FakePlacement(), Options(instance="zzz"))
    assert gone.outcome is Outcome.NOTHING


def test_missing_allocations_lists_every_finding_without_stopping():
    gpu = PciDevice(compute_node_id=1, address="0000:af:00.0", vendor_id="10de",
                    product_id="20b5", dev_type="type-PCI", status="allocated",
                    instance_uuid="g")
    read = cell("c1", instance("a"), instance("g", 1, specs={"resources:VGPU": "1"}),
                instance("o", 2), instance("n", 3, node="gone"), instance("ok", 4),
                devices=(gpu,))
    state = FakePlacement({"o": held({"VCPU": 2}, user="x"), "ok": held({"VCPU": 2})})
    found = heal.missing_allocations([read], state)
    assert [(item.instance, item.problem) for item in found] == [
        ("a", Problem.NO_ALLOCATIONS), ("g", Problem.UNHEALABLE),
        ("o", Problem.WRONG_OWNER), ("n", Problem.NO_COMPUTE_NODE)]
    assert "vGPU" in str(found[1])
