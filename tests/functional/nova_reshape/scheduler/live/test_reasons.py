"""Why each root is not a candidate: every Placement-side reason, on a seeded database.

Each root is built to fail in exactly one way; the explain must name the
group, the reason and (for capacity) the numbers. Runs on every enabled
engine (``db_url``).
"""

from __future__ import annotations

from nova_reshape.nova.aggregate import Aggregate
from nova_reshape.scheduler.live.explain import PlacementHostStates
from nova_reshape.scheduler.live.placement import from_database
from nova_reshape.scheduler.live.reasons import Reason
from nova_reshape.scheduler.live.request import LiveRequest
from tests.functional.nova_reshape.scheduler.conftest import placement
from tests.functional.nova_reshape.scheduler.live.helpers import explain_on_database
from tests.functional.nova_reshape.scheduler.seeding import Provider, compute_node, seed

AZ_AGG = "a2a2a2a2-0000-4000-8000-000000000001"


def _verdicts(view):
    return {v.name: v for v in view.verdicts}


def test_each_root_gets_its_reason(db_url):
    seed(db_url, [
        compute_node("ok"),
        Provider("no-disk", inventories={"VCPU": 16, "MEMORY_MB": 32768}),
        compute_node("reserved", inventories={"MEMORY_MB": {"total": 4096, "reserved": 3900}}),
        compute_node("ratio", inventories={"VCPU": {"total": 1, "allocation_ratio": 1.5,
                                                     "max_unit": 16}}),
        compute_node("step", inventories={"DISK_GB": {"total": 500, "step_size": 4}}),
        compute_node("disabled", traits=["COMPUTE_STATUS_DISABLED"]),
        compute_node("foreign", owner_nova=False),
    ])
    with placement(db_url):  # the app starts on it, as a deployment would
        pass
    result = explain_on_database(db_url, LiveRequest(vcpus=2, ram_mb=1024, disk_gb=10))
    view = result.view
    assert view.candidate_roots == {next(u for u, n in view.roots.items() if n == "ok")}
    got = _verdicts(view)
    assert set(got) == {"no-disk", "reserved", "ratio", "step", "disabled", "foreign"}
    assert got["no-disk"].reason is Reason.MISSING_CLASS
    assert got["no-disk"].numbers["resource_class"] == "DISK_GB"
    reserved = got["reserved"]
    assert reserved.reason is Reason.CAPACITY and reserved.group == "(unsuffixed)"
    assert {k: reserved.numbers[k] for k in ("resource_class", "total", "reserved", "used",
                                             "free", "asked")} == {
        "resource_class": "MEMORY_MB", "total": 4096, "reserved": 3900, "used": 0,
        "free": 196, "asked": 1024}
    assert "(4096 - 3900) x 1 - 0 = 196 free, asked 1024" in reserved.detail
    assert got["ratio"].reason is Reason.CAPACITY and got["ratio"].numbers["free"] == 1
    assert got["step"].reason is Reason.UNITS and got["step"].numbers["step_size"] == 4
    assert got["disabled"].reason is Reason.ROOT_FORBIDDEN
    assert got["foreign"].reason is Reason.ROOT_REQUIRED
    assert got["foreign"].numbers["traits"] == ["OWNER_NOVA"]
    assert result.schedule.selected[0].host == "ok"


def test_granular_group_traits_and_member_of(db_url):
    def gpu_host(name, gpu_traits, **kwargs):
        return compute_node(name, children=[Provider(f"{name}-gpu", inventories={"VGPU": 4},
                                                     traits=gpu_traits)], **kwargs)
    seed(db_url, [
        gpu_host("good", ["CUSTOM_FAST"], aggregates=[AZ_AGG]),
        gpu_host("slow", [], aggregates=[AZ_AGG]),
        gpu_host("old", ["CUSTOM_FAST", "CUSTOM_OLD"], aggregates=[AZ_AGG]),
        gpu_host("elsewhere", ["CUSTOM_FAST"]),
        compute_node("no-gpu", aggregates=[AZ_AGG]),
    ])

    class Source(PlacementHostStates):
        def aggregates(self):
            return [Aggregate("az1", frozenset(), {"availability_zone": "az1"}, uuid=AZ_AGG)]

    live = LiveRequest(vcpus=1, ram_mb=512, disk_gb=1, availability_zone="az1", extra_specs={
        "resources1:VGPU": "1", "trait1:CUSTOM_FAST": "required",
        "trait1:CUSTOM_OLD": "forbidden"})
    result = explain_on_database(db_url, live, source=Source())
    got = _verdicts(result.view)
    assert set(got) == {"slow", "old", "elsewhere", "no-gpu"}
    assert (got["no-gpu"].reason, got["no-gpu"].group) == (Reason.MISSING_CLASS, "1")
    assert (got["slow"].reason, got["slow"].group) == (Reason.MISSING_TRAIT, "1")
    assert got["old"].reason is Reason.FORBIDDEN_TRAIT
    assert (got["elsewhere"].reason, got["elsewhere"].group) == (Reason.NOT_MEMBER,
                                                                 "(unsuffixed)")
    step = {s.name: s for s in result.steps}["map_az_to_placement_aggregate"]
    assert step.added == {"member_of": [AZ_AGG]}


def test_in_tree_and_combination(db_url):
    first = compute_node("first")
    seed(db_url, [first, compute_node("second"),
                  compute_node("twins", children=[
                      Provider("twins-a", inventories={"VGPU": 1}),
                      Provider("twins-b", inventories={"VGPU": 1})])])
    view = from_database(db_url, [("resources", "VCPU:1"), ("in_tree", first.uuid)])
    got = _verdicts(view)
    assert got["second"].reason is Reason.IN_TREE and got["twins"].reason is Reason.IN_TREE
    # two granular groups of 1 VGPU each, isolated: only twins has two GPU providers;
    # asking for 2 each makes every group fit nowhere -> capacity; 1 each with
    # isolate on one-GPU trees -> combination is not reachable here, so use same_subtree
    view = from_database(db_url, [
        ("resources", "VCPU:1"), ("resources_a", "VGPU:1"), ("resources_b", "VGPU:1"),
        ("group_policy", "isolate"), ("same_subtree", "_a,_b")])
    assert {v.reason for v in view.verdicts} <= {Reason.MISSING_CLASS, Reason.COMBINATION}
    assert _verdicts(view)["first"].reason is Reason.MISSING_CLASS
    assert _verdicts(view)["twins"].reason is Reason.COMBINATION


def test_sharing_provider_counts_for_the_roots_it_shares_with(db_url):
    share_agg = "5a5a5a5a-0000-4000-8000-000000000001"
    seed(db_url, [
        Provider("nfs", inventories={"DISK_GB": 10000},
                 traits=["MISC_SHARES_VIA_AGGREGATE"], aggregates=[share_agg]),
        Provider("diskless-shared", inventories={"VCPU": 16, "MEMORY_MB": 32768},
                 aggregates=[share_agg]),
        Provider("diskless-alone", inventories={"VCPU": 16, "MEMORY_MB": 32768}),
    ])
    result = explain_on_database(db_url, LiveRequest(vcpus=1, ram_mb=512, disk_gb=100))
    names = {result.view.roots[u] for u in result.view.candidate_roots}
    assert names == {"diskless-shared"}
    got = _verdicts(result.view)
    assert got["diskless-alone"].reason is Reason.MISSING_CLASS
    assert got["diskless-alone"].numbers["resource_class"] == "DISK_GB"
    # the sharing provider is a root too, and it has no VCPU of its own
    assert got["nfs"].reason is Reason.MISSING_CLASS
    assert result.schedule.instances[0].candidates[0].host == "diskless-shared"
    assert len(result.schedule.instances[0].candidates) == 1
