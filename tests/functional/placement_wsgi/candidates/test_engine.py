"""Engine behaviour on fixed deployments, on every engine: answer formats per microversion."""

from __future__ import annotations

from tests.functional.placement_wsgi.candidates.world import World, request_names


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
    assert request_names(two_computes, body) == [
        ["cn2", "disk"], ["disk", "numa0"], ["disk", "numa1"]]
