"""Worked examples of request shapes and their answers, on every engine."""

from __future__ import annotations

import pytest

from tests.functional.placement_wsgi.candidates.world import World


@pytest.fixture
def world(database) -> World:
    world = World(database)
    world.provider("CN", inventory={"MEMORY_MB": 2048}, traits=("HW_CPU_X86_AVX",),
                   aggregates=("AG",))
    world.provider("N0", "CN", inventory={"VCPU": 4})
    world.provider("N1", "CN", inventory={"VCPU": 4}, traits=("HW_CPU_X86_SSE",))
    world.provider("SS", inventory={"DISK_GB": {"total": 1000, "reserved": 100}},
                   traits=("MISC_SHARES_VIA_AGGREGATE",), aggregates=("AG",))
    return world


def _sorted(requests: list) -> list:
    """Requests as a sorted list, independent of dict insertion order."""
    return sorted(repr(sorted(request.items())) for request in requests)


def test_not_nested_aware_sharing_plus_child(world: World) -> None:
    body = world.candidates("resources=VCPU:1,DISK_GB:10", "1.10")
    assert _sorted(world.requests(body)) == _sorted([
        {"N0": {"VCPU": 1}, "SS": {"DISK_GB": 10}},
        {"N1": {"VCPU": 1}, "SS": {"DISK_GB": 10}},
    ])
    summaries = world.summaries(body)
    assert summaries == {
        "N0": {"resources": {"VCPU": {"capacity": 4, "used": 0}}},
        "N1": {"resources": {"VCPU": {"capacity": 4, "used": 0}}},
        "SS": {"resources": {"DISK_GB": {"capacity": 900, "used": 0}}},
    }
    assert isinstance(body["allocation_requests"][0]["allocations"], list)


def test_limit_keeps_whole_trees_in_summaries(world: World) -> None:
    body = world.candidates("resources=VCPU:1,DISK_GB:10&limit=1", "1.29")
    assert len(body["allocation_requests"]) == 1
    summaries = world.summaries(body)
    assert set(summaries) == {"CN", "N0", "N1", "SS"}
    assert summaries["N0"]["parent_provider_uuid"] == world.expand("{CN}")
    assert summaries["N0"]["root_provider_uuid"] == world.expand("{CN}")
    assert summaries["CN"]["parent_provider_uuid"] is None
    assert summaries["SS"]["root_provider_uuid"] == world.expand("{SS}")
    assert sorted(summaries["CN"]["traits"]) == ["HW_CPU_X86_AVX"]


def test_trait_on_provider_without_resources_does_not_count(world: World) -> None:
    body = world.candidates("resources=VCPU:1&required=HW_CPU_X86_AVX", "1.29")
    assert body == {"allocation_requests": [], "provider_summaries": {}}


def test_trait_counts_when_its_provider_contributes(world: World) -> None:
    body = world.candidates("resources=VCPU:1,MEMORY_MB:1&required=HW_CPU_X86_AVX", "1.29")
    assert _sorted(world.requests(body)) == _sorted([
        {"CN": {"MEMORY_MB": 1}, "N0": {"VCPU": 1}},
        {"CN": {"MEMORY_MB": 1}, "N1": {"VCPU": 1}},
    ])


def test_forbidden_trait(world: World) -> None:
    body = world.candidates("resources=VCPU:1&required=!HW_CPU_X86_SSE", "1.22")
    assert world.requests(body) == [{"N0": {"VCPU": 1}}]


def test_any_of_traits(world: World) -> None:
    body = world.candidates(
        "resources=VCPU:1&required=in:HW_CPU_X86_SSE,HW_CPU_X86_AVX", "1.39")
    assert world.requests(body) == [{"N1": {"VCPU": 1}}]


def test_in_tree_excludes_sharing(world: World) -> None:
    body = world.candidates("resources=VCPU:1,DISK_GB:1&in_tree={CN}", "1.31")
    assert body["allocation_requests"] == []


def test_granular_in_tree_on_sharing_provider(world: World) -> None:
    body = world.candidates("resources=VCPU:1&resources1=DISK_GB:1&in_tree1={SS}", "1.31")
    assert _sorted(world.requests(body)) == _sorted([
        {"N0": {"VCPU": 1}, "SS": {"DISK_GB": 1}},
        {"N1": {"VCPU": 1}, "SS": {"DISK_GB": 1}},
    ])


def test_root_required_forbidden(world: World) -> None:
    body = world.candidates("resources=VCPU:1&root_required=!HW_CPU_X86_AVX", "1.35")
    assert body["allocation_requests"] == []
    body = world.candidates("resources=VCPU:1&root_required=HW_CPU_X86_AVX", "1.35")
    assert len(body["allocation_requests"]) == 2


def test_isolate_mappings(world: World) -> None:
    body = world.candidates(
        "resources_A=VCPU:1&resources_B=VCPU:1&group_policy=isolate&resources=MEMORY_MB:10",
        "1.34")
    assert _sorted(world.mappings(body)) == _sorted([
        {"": ["CN"], "_A": ["N0"], "_B": ["N1"]},
        {"": ["CN"], "_A": ["N1"], "_B": ["N0"]},
    ])
    assert world.requests(body)[0] == {
        "CN": {"MEMORY_MB": 10}, "N0": {"VCPU": 1}, "N1": {"VCPU": 1}}
    summaries = world.summaries(body)
    assert summaries["CN"]["resources"] == {"MEMORY_MB": {"capacity": 2048, "used": 0}}
    assert set(summaries) == {"CN", "N0", "N1"}


def test_resourceless_group_in_same_subtree(world: World) -> None:
    body = world.candidates(
        "resources_A=VCPU:1&required_B=HW_CPU_X86_SSE&same_subtree=_A,_B&group_policy=none",
        "1.36")
    assert world.requests(body) == [{"N1": {"VCPU": 1}}]
    assert world.mappings(body) == [{"_A": ["N1"], "_B": ["N1"]}]


def test_same_subtree_siblings_fail(world: World) -> None:
    body = world.candidates(
        "resources_A=VCPU:1&resources_B=VCPU:1&same_subtree=_A,_B&group_policy=isolate",
        "1.36")
    assert body["allocation_requests"] == []


def test_group_policy_none_keeps_swapped_mappings(world: World) -> None:
    body = world.candidates("resources1=VCPU:1&resources2=VCPU:1&group_policy=none", "1.34")
    assert _sorted(world.requests(body)) == _sorted([
        {"N0": {"VCPU": 2}},
        {"N1": {"VCPU": 2}},
        {"N0": {"VCPU": 1}, "N1": {"VCPU": 1}},
        {"N0": {"VCPU": 1}, "N1": {"VCPU": 1}},
    ])
    assert len({repr(sorted(m.items())) for m in world.mappings(body)}) == 4


def test_pre_1_29_drops_two_providers_of_one_tree(world: World) -> None:
    body = world.candidates("resources=VCPU:1,MEMORY_MB:5", "1.28")
    assert body["allocation_requests"] == []
    body = world.candidates("resources=VCPU:1,MEMORY_MB:5", "1.29")
    assert len(body["allocation_requests"]) == 2
