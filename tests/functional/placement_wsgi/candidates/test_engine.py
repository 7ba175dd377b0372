"""Engine behaviour on fixed deployments, on every engine: filters, sharing,
summaries, sums, ordering, limit/ceiling/randomisation, name errors."""

from __future__ import annotations

import collections

import pytest

from placement_wsgi import errors
from tests.functional.placement_wsgi.candidates.world import World


def _names(world: World, body: dict) -> list[list[str]]:
    return sorted(sorted(request) for request in world.requests(body))


@pytest.fixture
def two_computes(database) -> World:
    """cn1 (in AGG1) with numa children; cn2 (in AGG2); a sharing disk in both."""
    world = World(database)
    world.provider("cn1", inventory={"MEMORY_MB": 1024}, aggregates=("AGG1",),
                   traits=("CUSTOM_ROOT",))
    world.provider("numa0", "cn1", inventory={"VCPU": 2}, traits=("CUSTOM_FAST",))
    world.provider("numa1", "cn1", inventory={"VCPU": {"total": 4, "max_unit": 2}},
                   used={"VCPU": 1})
    world.provider("cn2", inventory={"VCPU": 8, "MEMORY_MB": 2048}, aggregates=("AGG2",))
    world.provider("disk", inventory={"DISK_GB": 100},
                   traits=("MISC_SHARES_VIA_AGGREGATE",), aggregates=("AGG1", "AGG2"))
    return world


def test_member_of_on_root_covers_the_tree(two_computes: World) -> None:
    body = two_computes.candidates("resources=VCPU:1&member_of={AGG1}")
    assert _names(two_computes, body) == [["numa0"], ["numa1"]]


def test_forbidden_aggregate_on_the_anchor_excludes_the_tree(two_computes: World) -> None:
    body = two_computes.candidates("resources=VCPU:1&member_of=!{AGG1}")
    assert _names(two_computes, body) == [["cn2"]]


def test_granular_member_of_uses_own_aggregates_only(two_computes: World) -> None:
    body = two_computes.candidates("resources1=VCPU:1&member_of1={AGG1}")
    assert body["allocation_requests"] == []


def test_sharing_provider_joins_every_anchor(two_computes: World) -> None:
    body = two_computes.candidates("resources=VCPU:1,DISK_GB:5")
    assert _names(two_computes, body) == [["cn2", "disk"], ["disk", "numa0"], ["disk", "numa1"]]


def test_sharing_member_of_needs_the_sharing_provider_itself(two_computes: World) -> None:
    body = two_computes.candidates("resources=VCPU:1,DISK_GB:5&member_of={AGG2}")
    assert _names(two_computes, body) == [["cn2", "disk"]]


def test_only_sharing_candidates_are_deduplicated(database) -> None:
    world = World(database)
    world.provider("ss1", inventory={"DISK_GB": 10}, traits=("MISC_SHARES_VIA_AGGREGATE",),
                   aggregates=("AG",))
    world.provider("ss2", inventory={"IPV4_ADDRESS": 4},
                   traits=("MISC_SHARES_VIA_AGGREGATE",), aggregates=("AG",))
    world.provider("cn", inventory={"VCPU": 1}, aggregates=("AG",))
    body = world.candidates("resources=DISK_GB:1,IPV4_ADDRESS:1")
    # anchored at ss1, ss2 and cn: the same request three times, returned once
    assert world.requests(body) == [{"ss1": {"DISK_GB": 1}, "ss2": {"IPV4_ADDRESS": 1}}]


def test_sums_respect_capacity_and_max_unit(two_computes: World) -> None:
    # numa1: capacity 4, used 1, max_unit 2 -> at most 2 more per request
    body = two_computes.candidates(
        "resources1=VCPU:1&resources2=VCPU:1&resources3=VCPU:1&group_policy=none"
        "&in_tree1={cn1}&in_tree2={cn1}&in_tree3={cn1}")
    totals = collections.Counter()
    for request in two_computes.requests(body):
        assert request.get("numa1", {}).get("VCPU", 0) <= 2
        assert request.get("numa0", {}).get("VCPU", 0) <= 2
        totals[tuple(sorted((name, r["VCPU"]) for name, r in request.items()))] += 1
    # 3 ordered groups over (numa0 <= 2, numa1 <= 2): 2^3 assignments minus the two
    # that put all three on one child
    assert sum(totals.values()) == 6


def test_unknown_aggregate_and_in_tree_mean_no_candidates(two_computes: World) -> None:
    assert two_computes.candidates(
        "resources=VCPU:1&member_of={NOPE}")["allocation_requests"] == []
    assert two_computes.candidates(
        "resources=VCPU:1&in_tree={NOPE}")["allocation_requests"] == []


def test_in_tree_with_a_child_means_its_whole_tree(two_computes: World) -> None:
    body = two_computes.candidates("resources=VCPU:1&in_tree={numa1}")
    assert _names(two_computes, body) == [["numa0"], ["numa1"]]


def test_root_required_checks_the_anchor(two_computes: World) -> None:
    body = two_computes.candidates("resources=VCPU:1,DISK_GB:1&root_required=CUSTOM_ROOT")
    assert _names(two_computes, body) == [["disk", "numa0"], ["disk", "numa1"]]


def test_summaries_by_version(two_computes: World) -> None:
    query = "resources=VCPU:1&in_tree={cn1}&limit=1"
    old = two_computes.summaries(two_computes.candidates(query, "1.26"))
    (only,) = old.values()
    assert set(only) == {"resources", "traits"}
    assert set(only["resources"]) == {"VCPU"}
    nested = two_computes.summaries(two_computes.candidates(query, "1.29"))
    assert set(nested) == {"cn1", "numa0", "numa1"}
    assert nested["cn1"]["resources"] == {"MEMORY_MB": {"capacity": 1024, "used": 0}}
    assert nested["numa1"]["resources"] == {"VCPU": {"capacity": 4, "used": 1}}
    assert nested["numa0"]["traits"] == ["CUSTOM_FAST"]
    assert set(two_computes.summaries(two_computes.candidates(query, "1.16"))) <= {
        "numa0", "numa1"}
    assert "traits" not in next(iter(two_computes.candidates(
        query, "1.16")["provider_summaries"].values()))


def test_summaries_show_every_class_from_1_27(two_computes: World) -> None:
    body = two_computes.candidates("resources=VCPU:1&in_tree={cn2}", "1.27")
    assert two_computes.summaries(body)["cn2"]["resources"] == {
        "VCPU": {"capacity": 8, "used": 0}, "MEMORY_MB": {"capacity": 2048, "used": 0}}
    body = two_computes.candidates("resources=VCPU:1&in_tree={cn2}", "1.26")
    assert two_computes.summaries(body)["cn2"]["resources"] == {
        "VCPU": {"capacity": 8, "used": 0}}


def test_list_format_before_1_12(two_computes: World) -> None:
    body = two_computes.candidates("resources=VCPU:1,MEMORY_MB:1&member_of={AGG2}", "1.11")
    (request,) = body["allocation_requests"]
    assert request == {"allocations": [{
        "resource_provider": {"uuid": two_computes.expand("{cn2}")},
        "resources": {"VCPU": 1, "MEMORY_MB": 1}}]}


def test_mappings_only_from_1_34(two_computes: World) -> None:
    body = two_computes.candidates("resources=VCPU:1&in_tree={cn2}", "1.33")
    assert "mappings" not in body["allocation_requests"][0]
    body = two_computes.candidates("resources=VCPU:1&in_tree={cn2}", "1.34")
    assert body["allocation_requests"][0]["mappings"] == {"": [two_computes.expand("{cn2}")]}


def test_pre_1_29_sharing_plus_child_is_fine(two_computes: World) -> None:
    body = two_computes.candidates("resources=VCPU:1,DISK_GB:1", "1.28")
    assert _names(two_computes, body) == [["cn2", "disk"], ["disk", "numa0"], ["disk", "numa1"]]


def test_unknown_names(two_computes: World) -> None:
    with pytest.raises(errors.BadRequest) as caught:
        two_computes.candidates("resources=VCPU:1,CUSTOM_NOPE:1")
    assert caught.value.message == (
        "Invalid resource class in resources parameter: No such resource class CUSTOM_NOPE.")
    with pytest.raises(errors.BadRequest) as caught:
        two_computes.candidates("resources=VCPU:1&required=CUSTOM_Z,!CUSTOM_Y")
    assert caught.value.message == "No such trait(s): CUSTOM_Y, CUSTOM_Z."
    with pytest.raises(errors.BadRequest) as caught:  # root_required first
        two_computes.candidates("resources=CUSTOM_NOPE:1&root_required=CUSTOM_W")
    assert caught.value.message == "No such trait(s): CUSTOM_W."


@pytest.fixture
def many_trees(database) -> World:
    world = World(database)
    for tree in range(3):
        world.provider(f"cn{tree}", inventory={"VCPU": 1})
        for child in range(2):
            world.provider(f"gpu{tree}{child}", f"cn{tree}", inventory={"VGPU": 2})
    return world


QUERY = "resources=VCPU:1&resources_A=VGPU:1&resources_B=VGPU:1&group_policy=none"


def _trees(world: World, body: dict) -> list[str]:
    return [sorted(request)[0] for request in world.requests(body)]


def test_breadth_first_spreads_a_limit_over_trees(many_trees: World) -> None:
    body = many_trees.candidates(QUERY + "&limit=3")
    assert sorted(_trees(many_trees, body)) == ["cn0", "cn1", "cn2"]
    body = many_trees.candidates(QUERY + "&limit=3", strategy="depth-first")
    assert _trees(many_trees, body) == ["cn0", "cn0", "cn0"]


def test_ceiling_stops_generation(many_trees: World) -> None:
    assert len(many_trees.candidates(QUERY)["allocation_requests"]) == 12
    body = many_trees.candidates(QUERY, max_candidates=5)
    assert len(body["allocation_requests"]) == 5
    body = many_trees.candidates(QUERY + "&limit=2", max_candidates=5)
    assert len(body["allocation_requests"]) == 2


def test_randomised_limit_is_a_sample(many_trees: World) -> None:
    everything = {repr(sorted(r.items())) for r in many_trees.requests(
        many_trees.candidates(QUERY, "1.29"))}
    seen = set()
    for _ in range(8):
        body = many_trees.candidates(QUERY + "&limit=4", "1.29", randomize=True)
        requests = {repr(sorted(r.items())) for r in many_trees.requests(body)}
        assert len(body["allocation_requests"]) == 4
        assert requests <= everything
        seen |= requests
    assert len(seen) > 4  # not always the same four


def test_limit_drops_summaries_of_unused_trees(many_trees: World) -> None:
    body = many_trees.candidates(QUERY + "&limit=1", strategy="depth-first")
    assert set(many_trees.summaries(body)) == {"cn0", "gpu00", "gpu01"}


def test_more_groups_than_capacity_is_answered_without_search(database) -> None:
    world = World(database)
    world.provider("cn", inventory={"VCPU": 1})
    for device in range(63):
        world.provider(f"dev{device}", "cn", inventory={"VGPU": 1})
    groups = "".join(f"&resources_G{index}=VGPU:1" for index in range(64))
    for policy in ("none", "isolate"):
        body = world.candidates(f"resources=VCPU:1{groups}&group_policy={policy}")
        assert body["allocation_requests"] == []
    groups = "".join(f"&resources_G{index}=VGPU:1" for index in range(63))
    body = world.candidates(f"resources=VCPU:1{groups}&group_policy=isolate&limit=1")
    assert len(world.requests(body)[0]) == 64
