"""Anchors to candidates: order, limit, ceiling, sampling, dedupe, cheap refusals (plan.py)."""

from __future__ import annotations

import pytest

from tests.functional.placement_wsgi.candidates.world import World


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
