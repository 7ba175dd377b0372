"""The rebuild's in-memory steps: Placement's allocation rules, sync's plan on new roots."""

from __future__ import annotations

from nova_reshape.consistency import aggregates as syncing
from nova_reshape.consistency import rebuilt
from placement_wsgi.objects.bulk_load import LoadedProvider
from tests.unit.nova_reshape.consistency import helpers

ROOT = LoadedProvider("r1", "n1", None, {"VCPU": {"total": 4, "allocation_ratio": 2.0},
                                          "DISK_GB": {"total": 100, "step_size": 10,
                                                      "min_unit": 10, "max_unit": 50}})
INVENTORIES = {"r1": rebuilt.records(ROOT)}


def test_records_fill_in_what_placement_would():
    assert INVENTORIES["r1"]["VCPU"] == {"total": 4, "reserved": 0, "min_unit": 1,
                                         "max_unit": 2147483647, "step_size": 1,
                                         "allocation_ratio": 2.0}


def test_a_write_within_the_rules_is_accepted_and_counted():
    used = {}
    assert rebuilt.refusal({"r1": {"VCPU": 5, "DISK_GB": 20}}, INVENTORIES, used) is None
    assert used == {("r1", "VCPU"): 5, ("r1", "DISK_GB"): 20}
    assert "capacity" in rebuilt.refusal({"r1": {"VCPU": 4}}, INVENTORIES, used)
    assert used == {("r1", "VCPU"): 5, ("r1", "DISK_GB"): 20}  # a refused write counts nothing


def test_placement_refuses_what_its_units_or_classes_do_not_allow():
    for resources in ({"DISK_GB": 15}, {"DISK_GB": 5}, {"DISK_GB": 60}):
        assert "units" in rebuilt.refusal({"r1": resources}, INVENTORIES, {})
    assert "no PCPU inventory" in rebuilt.refusal({"r1": {"PCPU": 1}}, INVENTORIES, {})
    assert "no VCPU inventory" in rebuilt.refusal({"r2": {"VCPU": 1}}, INVENTORIES, {})


def test_memberships_add_each_aggregate_once_and_name_hosts_without_a_provider():
    plan = syncing.SyncPlan(memberships=[
        syncing.Membership("a1", "az1", "h1", "r1"), syncing.Membership("a2", "fast", "h1", "r1"),
        syncing.Membership("a1", "az1", "h2", "gone")])
    outcome, added = rebuilt.memberships(plan, {"r1": [ROOT]})
    assert added == {"r1": ["a1", "a2"]}
    assert [m.aggregate for m in outcome.added] == ["a1", "a2"]
    assert outcome.no_provider == {"h2": "gone"}
    assert outcome.status is syncing.SyncStatus.NO_PROVIDER


def test_a_plan_stopped_by_a_host_with_several_nodes_is_left_to_the_requests():
    assert rebuilt.memberships(syncing.SyncPlan(too_many=("h1", 2)), {}) is None


def test_heal_reads_no_consumer_and_the_trees_root_first():
    child = LoadedProvider("c1", "n1_gpu", "r1", {"VGPU": {"total": 2}})
    state = rebuilt.MemoryState({"r1": [ROOT, child]})
    assert state.allocations_of("anything") == {"allocations": {}}
    view = state.tree("r1")
    assert [p["uuid"] for p in view.providers] == ["r1", "c1"] and view.usages == {}
    assert view.fits("c1", {"VGPU": 2}) and not view.fits("c1", {"VGPU": 3})
    assert state.tree("other") is None


def _root(vcpus):
    return {helpers.NODE_UUID: [LoadedProvider(helpers.NODE_UUID, helpers.NODE, None, {
        "VCPU": {"total": vcpus}, "MEMORY_MB": {"total": 8192}, "DISK_GB": {"total": 100}})]}


def test_heal_in_memory_places_every_instance_on_its_nodes_tree():
    cells = [helpers.cell("cell1", helpers.instance("i1"), helpers.instance("i2", minute=1))]
    result, by_root = rebuilt.heal_in_memory(cells, _root(8))
    assert result.outcome is rebuilt.healing.Outcome.HEALED and result.written == 2
    [consumers] = by_root.values()
    assert [(c.uuid, c.project_id, c.allocations) for c in consumers] == [
        (uuid, "p", {helpers.NODE_UUID: {"VCPU": 2, "MEMORY_MB": 1024, "DISK_GB": 5}})
        for uuid in ("i1", "i2")]


def test_what_placement_or_heal_would_refuse_is_left_to_the_requests():
    two = [helpers.cell("cell1", helpers.instance("i1"), helpers.instance("i2", minute=1))]
    assert rebuilt.heal_in_memory(two, _root(3)) is None  # the second exceeds VCPU
    assert rebuilt.heal_in_memory(two, {}) is None  # no tree: no provider to write on
    twice = [helpers.cell("cell1", helpers.instance("i1")),
             helpers.cell("cell2", helpers.instance("i1"))]
    assert rebuilt.heal_in_memory(twice, _root(8)) is None
    profile = [helpers.cell("cell1", helpers.instance(
        "i1", specs={"accel:device_profile": "fpga"}))]
    assert rebuilt.heal_in_memory(profile, _root(8)) is None  # heal stops (exit 8)
