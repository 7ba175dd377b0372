"""Which providers may serve each slot: aggregates, sharing, in_tree, root traits (options.py).

On fixed deployments, through the engine, on every engine.
"""

from __future__ import annotations

from tests.functional.placement_wsgi.candidates.world import World, request_names


def test_member_of_on_root_covers_the_tree(two_computes: World) -> None:
    body = two_computes.candidates("resources=VCPU:1&member_of={AGG1}")
    assert request_names(two_computes, body) == [["numa0"], ["numa1"]]


def test_forbidden_aggregate_on_the_anchor_excludes_the_tree(two_computes: World) -> None:
    body = two_computes.candidates("resources=VCPU:1&member_of=!{AGG1}")
    assert request_names(two_computes, body) == [["cn2"]]


def test_granular_member_of_uses_own_aggregates_only(two_computes: World) -> None:
    body = two_computes.candidates("resources1=VCPU:1&member_of1={AGG1}")
    assert body["allocation_requests"] == []


def test_sharing_provider_joins_every_anchor(two_computes: World) -> None:
    body = two_computes.candidates("resources=VCPU:1,DISK_GB:5")
    assert request_names(two_computes, body) == [
        ["cn2", "disk"], ["disk", "numa0"], ["disk", "numa1"]]


def test_sharing_member_of_needs_the_sharing_provider_itself(two_computes: World) -> None:
    body = two_computes.candidates("resources=VCPU:1,DISK_GB:5&member_of={AGG2}")
    assert request_names(two_computes, body) == [["cn2", "disk"]]


def test_unknown_aggregate_and_in_tree_mean_no_candidates(two_computes: World) -> None:
    assert two_computes.candidates(
        "resources=VCPU:1&member_of={NOPE}")["allocation_requests"] == []
    assert two_computes.candidates(
        "resources=VCPU:1&in_tree={NOPE}")["allocation_requests"] == []


def test_in_tree_with_a_child_means_its_whole_tree(two_computes: World) -> None:
    body = two_computes.candidates("resources=VCPU:1&in_tree={numa1}")
    assert request_names(two_computes, body) == [["numa0"], ["numa1"]]


def test_root_required_checks_the_anchor(two_computes: World) -> None:
    body = two_computes.candidates("resources=VCPU:1,DISK_GB:1&root_required=CUSTOM_ROOT")
    assert request_names(two_computes, body) == [["disk", "numa0"], ["disk", "numa1"]]
